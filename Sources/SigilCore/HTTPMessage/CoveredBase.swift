import HTTPTypes

/// The signature base a signed request's signature covers, read back from its own headers.
@_spi(Sigil) public enum CoveredBase {
    /// The base of `request`'s signature: sigil-v1 when it carries `X-Signature` (or `profile` says
    /// so), else rfc9421 for the signature `label` (default: the first).
    ///
    /// - Throws: ``SigilError`` when the signature headers do not parse.
    @_spi(Sigil) public static func base(
        of request: HTTPRequest,
        body: [UInt8],
        profile: SignatureProfile? = nil,
        label: String? = nil
    ) throws -> [UInt8] {
        let useRFC9421 = profile == .rfc9421 || (profile == nil && request.headerFields[SigilV1.signatureField] == nil)
        if useRFC9421 {
            let signatures = try MessageSignatures(request.headerFields)
            guard let entry = label.map({ signatures.entry(label: $0) }) ?? signatures.entries.first else {
                throw SigilError(.missingSignature, "no signature labelled '\(label ?? "")'")
            }
            return try RFC9421.signatureBase(for: entry.input, message: RFC9421Message(request: request))
        }
        let headers = try SigilV1.parseRequestHeaders(request.headerFields)
        return SigilV1.requestBase(for: request, body: body, timestamp: headers.timestampText, nonce: headers.nonce)
    }
}
