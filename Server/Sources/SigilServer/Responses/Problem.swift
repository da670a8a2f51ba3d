import HTTPTypes
@_spi(Sigil) import SigilCore

/// RFC 9457 problem+json for a refused request (PROTOCOL.md section 4).
public enum Problem {
    /// The media type.
    public static let contentType = "application/problem+json"

    /// The JSON body for `error`.
    ///
    /// - Parameters:
    ///   - serverTime: the server's Unix time, so a client can re-sync its clock.
    ///   - includeSignatureBase: the debug option: adds the server's computed `signatureBase` when known.
    ///   - status: the HTTP status the answer carries when it is not the code's own (the admin API
    ///     answers `unknown-key` with 404), so that the body's `status` agrees with it.
    public static func body(
        for error: SigilError, serverTime: Int64, includeSignatureBase: Bool = false, status: Int? = nil
    ) -> [UInt8] {
        var json = "{\"type\":\"urn:sigil:error:\(error.code.rawValue)\""
        json += ",\"title\":" + quoted(error.code.title)
        json += ",\"status\":\(status ?? error.code.httpStatus)"
        json += ",\"detail\":" + quoted(error.detail)
        json += ",\"code\":\"\(error.code.rawValue)\""
        json += ",\"serverTime\":\(serverTime)"
        if includeSignatureBase, let base = error.signatureBase {
            json += ",\"signatureBase\":" + quoted(base)
        }
        json += "}"
        return Array(json.utf8)
    }

    /// A JSON string literal: quotes, backslashes and control characters escaped (C0, DEL and C1, and
    /// the line and paragraph separators U+2028 and U+2029, which some readers take for line breaks),
    /// nothing else; every JSON Sigil writes by hand goes through here.
    public static func quoted(_ text: String) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(text.utf8.count + 2)
        appendQuoted(text, to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// ``quoted(_:)`` appended to `out` as UTF-8, for writers that build their JSON as bytes (the
    /// access log): runs of bytes that need no escape are copied whole.
    public static func appendQuoted(_ text: String, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        var text = text
        text.withUTF8 { bytes in
            var run = 0
            var index = 0
            while index < bytes.count {
                let byte = bytes[index]
                // The scalar's code if it is escaped as \uXXXX, and its length in bytes.
                let escaped: (code: UInt32, length: Int)?
                switch byte {
                case 0..<0x20, 0x7F: escaped = (UInt32(byte), 1)
                case 0xC2 where index + 1 < bytes.count && (0x80...0x9F).contains(bytes[index + 1]):
                    escaped = (UInt32(bytes[index + 1]), 2)
                case 0xE2
                where index + 2 < bytes.count && bytes[index + 1] == 0x80
                    && (0xA8...0xA9).contains(bytes[index + 2]):
                    escaped = (0x2000 | UInt32(bytes[index + 2]) & 0x3F, 3)
                case UInt8(ascii: "\""), UInt8(ascii: "\\"): escaped = nil
                default:
                    index += 1
                    continue
                }
                out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[run..<index]))
                out.append(UInt8(ascii: "\\"))
                switch (byte, escaped) {
                case (_, nil): out.append(byte)
                case (UInt8(ascii: "\n"), _): out.append(UInt8(ascii: "n"))
                case (UInt8(ascii: "\r"), _): out.append(UInt8(ascii: "r"))
                case (UInt8(ascii: "\t"), _): out.append(UInt8(ascii: "t"))
                case (_, let (code, _)?):
                    out.append(UInt8(ascii: "u"))
                    for shift in stride(from: 12, through: 0, by: -4) {
                        out.append(hexDigits[Int(code >> UInt32(shift) & 0xF)])
                    }
                }
                index += escaped?.length ?? 1
                run = index
            }
            out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[run...]))
        }
        out.append(UInt8(ascii: "\""))
    }

    static let hexDigits = Array("0123456789abcdef".utf8)
}

extension RequestVerifier {
    /// The problem+json refusal of `request` for `error` (PROTOCOL.md section 4): `serverTime`,
    /// `Cache-Control: no-store`, `Accept-Signature` unless the request used sigil-v1, and, with a
    /// `signer`, the server's signature bound to the request's nonce (section 2.7) when the request's
    /// own signature verified (``SigilError/requestVerified``), or when the refusal states a fact of the
    /// key the request names (``SigilError/statesRequestKey``: `unknown-key`, `revoked-key`), within
    /// ``VerifierConfiguration/keyRefusals``.
    ///
    /// A request whose signature did not verify gets an unsigned refusal even when its nonce parsed:
    /// anyone can copy a client's nonce onto a tampered request, and a refusal signed for it would
    /// tell that client its request was not carried out (and, for `timestamp-out-of-window`, to send
    /// it again). A signed `replayed-nonce` says only that the nonce was seen: an earlier copy may
    /// have been carried out.
    ///
    /// - Parameter includeSignatureBase: the debug option: the body carries the server's base.
    public func refusal(
        _ error: SigilError,
        for request: HTTPRequest,
        signer: ResponseSigner?,
        includeSignatureBase: Bool = false
    ) -> (head: HTTPResponse, body: [UInt8]) {
        let body = Problem.body(for: error, serverTime: clock.now(), includeSignatureBase: includeSignatureBase)
        var head = HTTPResponse(status: .init(code: error.code.httpStatus))
        head.headerFields[.contentType] = Problem.contentType
        head.headerFields[.cacheControl] = "no-store"
        for field in error.fields { head.headerFields[field.name] = field.value }
        let binding = responseBinding(for: request)
        let usedSigilV1 = binding?.profile == .sigilV1 || request.headerFields[SigilV1.signatureField] != nil
        if configuration.profiles.contains(.rfc9421) && !usedSigilV1 {
            head.headerFields[MessageSignatures.acceptSignatureField] = configuration.acceptSignature
        }
        if let signer, error.maySign, let binding,
            error.requestVerified || configuration.keyRefusals.take(at: clock.now())
        {
            var signed = head
            // A request too broken to name its authority or path cannot be covered with ;req: unsigned.
            if (try? signer.sign(&signed, body: body, answering: request, binding: binding)) != nil { head = signed }
        }
        return (head, body)
    }

    /// What a response to `request` is bound to, when the request's signature headers parse far
    /// enough to name a well-formed nonce, read the way verification reads them.
    public func responseBinding(for request: HTTPRequest) -> ResponseBinding? {
        for profile in SignatureProfile.verificationOrder where configuration.profiles.contains(profile) {
            let format = profile.format
            guard format.isPresent(in: request.headerFields) else { continue }
            return format.binding(of: request.headerFields, configuration: configuration)
        }
        return nil
    }
}
