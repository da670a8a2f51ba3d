import HTTPTypes
@_spi(Sigil) import SigilCore

/// One wire profile as the server handles it: finding and parsing a request's signature, the base it
/// covers, the binding of a response to it, and signing that response. The verifier and the response
/// signer go through this protocol and never switch on the profile themselves.
protocol ProfileFormat: Sendable {
    /// The profile.
    static var profile: SignatureProfile { get }
    /// Whether `fields` carry any of this profile's signature headers.
    static func isPresent(in fields: HTTPFields) -> Bool
    /// Parses and checks the signature headers (PROTOCOL.md section 2.6 step 1, or the section 3 policy).
    static func parse(_ fields: HTTPFields, configuration: VerifierConfiguration) throws -> Self
    /// What binds a response to the request with `fields`, read without verifying (for refusals).
    static func binding(of fields: HTTPFields, configuration: VerifierConfiguration) -> ResponseBinding?
    /// Signs `response` for the request it answers.
    static func sign(
        _ response: inout HTTPResponse,
        body: [UInt8],
        answering request: HTTPRequest,
        binding: ResponseBinding,
        signer: ResponseSigner
    ) throws

    var keyID: String { get }
    var nonce: String { get }
    var timestamp: Int64 { get }
    /// rfc9421 `expires`.
    var expires: Int64? { get }
    /// rfc9421 `alg`.
    var declaredAlgorithm: SignatureAlgorithm? { get }
    /// The signature bytes.
    var signature: [UInt8] { get }
    /// rfc9421: the signature's label.
    var label: String? { get }
    /// What binds an answer to this request.
    var binding: ResponseBinding { get }
    /// Whether the signature covers the request's authority (rfc9421 `@authority`); sigil-v1 never does.
    var coversAuthority: Bool { get }
    /// The base the signature covers, with the body's checks (its hash, or its Content-Digest).
    func base(of request: HTTPRequest, body: [UInt8], configuration: VerifierConfiguration) throws -> [UInt8]
}

extension SignatureProfile {
    /// The implementation of the profile: the one place that maps a profile to its code.
    var format: any ProfileFormat.Type {
        switch self {
        case .sigilV1: return SigilV1Format.self
        case .rfc9421: return RFC9421Format.self
        }
    }

    /// The profiles in the order a request is tried against them: sigil-v1's headers first.
    static let verificationOrder: [SignatureProfile] = [.sigilV1, .rfc9421]
}

/// sigil-v1 (PROTOCOL.md section 2).
struct SigilV1Format: ProfileFormat {
    let headers: SigilV1.RequestHeaders

    static var profile: SignatureProfile { .sigilV1 }

    static func isPresent(in fields: HTTPFields) -> Bool {
        fields.contains { field in
            // All four names start with "x-": most fields are passed over on their first byte.
            guard field.name.canonicalName.utf8.first == UInt8(ascii: "x") else { return false }
            switch field.name {
            case SigilV1.signatureField, SigilV1.timestampField, SigilV1.nonceField, SigilV1.keyIDField: return true
            default: return false
            }
        }
    }

    static func parse(_ fields: HTTPFields, configuration: VerifierConfiguration) throws -> SigilV1Format {
        SigilV1Format(headers: try SigilV1.parseRequestHeaders(fields))
    }

    static func binding(of fields: HTTPFields, configuration: VerifierConfiguration) -> ResponseBinding? {
        guard let answered = SigilV1.AnsweredRequest(fields), SigilV1.isValidNonce(answered.nonce),
            KeyID.isValid(answered.keyID)
        else { return nil }
        return ResponseBinding(
            profile: .sigilV1, keyID: answered.keyID, nonce: answered.nonce, signature: answered.signature, label: nil)
    }

    static func sign(
        _ response: inout HTTPResponse,
        body: [UInt8],
        answering request: HTTPRequest,
        binding: ResponseBinding,
        signer: ResponseSigner
    ) throws {
        guard let answered = binding.answered else {
            throw SigilInputError("a sigil-v1 answer needs the request's X-Signature")
        }
        response.headerFields.append(
            contentsOf: try signer.sigilV1Fields(for: response, body: body, answering: answered))
    }

    var keyID: String { headers.keyID }
    var nonce: String { headers.nonce }
    var timestamp: Int64 { headers.timestamp }
    var expires: Int64? { nil }
    var declaredAlgorithm: SignatureAlgorithm? { nil }
    var signature: [UInt8] { headers.signature }
    var label: String? { nil }
    var coversAuthority: Bool { false }
    var binding: ResponseBinding {
        ResponseBinding(
            profile: .sigilV1, keyID: headers.keyID, nonce: headers.nonce, signature: headers.signatureText, label: nil)
    }

    func base(of request: HTTPRequest, body: [UInt8], configuration: VerifierConfiguration) throws -> [UInt8] {
        SigilV1.requestBase(
            for: request, body: body, timestamp: headers.timestampText, nonce: headers.nonce,
            canonicalJSON: configuration.canonicalJSON)
    }
}

/// HTTP Message Signatures (RFC 9421) under the section 3 policy.
struct RFC9421Format: ProfileFormat {
    let entry: MessageSignatures.Entry
    let keyID: String
    let nonce: String
    let timestamp: Int64
    let expires: Int64?
    let declaredAlgorithm: SignatureAlgorithm?

    static var profile: SignatureProfile { .rfc9421 }

    static func isPresent(in fields: HTTPFields) -> Bool {
        fields.has(MessageSignatures.signatureInputField) || fields.has(MessageSignatures.signatureField)
    }

    static func parse(_ fields: HTTPFields, configuration: VerifierConfiguration) throws -> RFC9421Format {
        let signatures = try MessageSignatures(fields)
        let entry: MessageSignatures.Entry
        if let label = configuration.label {
            guard let found = signatures.entry(label: label) else {
                throw SigilError(.missingSignature, "no signature labelled '\(label)'")
            }
            entry = found
        } else {
            guard let first = signatures.entries.first else {
                throw SigilError(.malformedSignature, "Signature-Input is empty")
            }
            entry = first
        }
        let input = entry.input
        for component in configuration.requiredComponents where !input.components.contains(component) {
            throw SigilError(.missingComponent, "the signature must cover \(component.serialized)")
        }
        guard let created = try input.created else { throw SigilError(.missingComponent, "created is required") }
        guard let keyID = try input.keyID else { throw SigilError(.missingComponent, "keyid is required") }
        guard let nonce = try input.nonce else { throw SigilError(.missingComponent, "nonce is required") }
        guard KeyID.isValid(keyID) else {
            throw SigilError(.malformedSignature, "keyid must match [A-Za-z0-9._~-]{1,128}")
        }
        guard SigilV1.isValidNonce(nonce) else {
            throw SigilError(.malformedSignature, "nonce must match [A-Za-z0-9._~-]{16,128}")
        }
        return RFC9421Format(
            entry: entry, keyID: keyID, nonce: nonce, timestamp: created, expires: try input.expires,
            declaredAlgorithm: try input.algorithm.map(SignatureAlgorithm.named))
    }

    static func binding(of fields: HTTPFields, configuration: VerifierConfiguration) -> ResponseBinding? {
        guard let signatures = try? MessageSignatures(fields),
            let entry = configuration.label.map({ signatures.entry(label: $0) }) ?? signatures.entries.first,
            let nonce = try? entry.input.nonce, SigilV1.isValidNonce(nonce),
            let keyID = try? entry.input.keyID, KeyID.isValid(keyID)
        else { return nil }
        return ResponseBinding(profile: .rfc9421, keyID: keyID, nonce: nonce, signature: nil, label: entry.label)
    }

    static func sign(
        _ response: inout HTTPResponse,
        body: [UInt8],
        answering request: HTTPRequest,
        binding: ResponseBinding,
        signer: ResponseSigner
    ) throws {
        try signer.signRFC9421(&response, body: body, answering: request, requestLabel: binding.label)
    }

    var signature: [UInt8] { entry.signature }
    var label: String? { entry.label }
    var coversAuthority: Bool { entry.input.components.contains(.authority) }
    var binding: ResponseBinding {
        ResponseBinding(profile: .rfc9421, keyID: keyID, nonce: nonce, signature: nil, label: entry.label)
    }

    func base(of request: HTTPRequest, body: [UInt8], configuration: VerifierConfiguration) throws -> [UInt8] {
        let coversDigest = entry.input.components.contains(.contentDigest)
        if !body.isEmpty && !coversDigest {
            throw SigilError(.missingComponent, "a request with a body must cover content-digest")
        }
        if coversDigest { try ContentDigest.verify(request.headerFields, body: body) }
        if request.headerFields[.contentEncoding] != nil && !entry.input.components.contains(.contentEncoding) {
            throw SigilError(.missingComponent, "a request with Content-Encoding must cover content-encoding")
        }
        return try RFC9421.signatureBase(for: entry.input, message: RFC9421Message(request: request))
    }
}
