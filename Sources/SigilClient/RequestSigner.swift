import Foundation
import HTTPTypes
import HTTPTypesFoundation
@_spi(Sigil) import SigilCore

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Signs an app's requests with either profile, with server-corrected time and fresh nonces.
///
/// ```swift
/// let signer = RequestSigner(key: key, keyID: keyID)
/// var request = HTTPRequest(method: .post, scheme: "https", authority: "api.example.com", path: "/v1/echo")
/// request.headerFields[.contentType] = "application/json"
/// let nonce = try signer.sign(&request, body: body)
/// ```
public struct RequestSigner: Sendable {
    /// The signing key (in memory, a Secure Enclave key, or an HMAC secret).
    public let key: any SignatureProvider
    /// The key ID the server knows the key by.
    public let keyID: String
    /// The profile used.
    public var profile: SignatureProfile
    /// Server-corrected time.
    public let clock: any UnixClock
    /// Nonces.
    public let nonces: any NonceSource
    /// sigil-v1: whether JSON bodies are canonicalized before hashing (must match the server).
    public var canonicalJSON = true
    /// rfc9421: the label.
    public var label = "sig1"
    /// rfc9421: the covered components (content-digest is added when there is a body).
    public var components: [ComponentIdentifier] = [.method, .authority, .path, .query]
    /// rfc9421: whether to send `alg`.
    public var includeAlgorithm = false

    /// Creates a signer.
    public init(
        key: any SignatureProvider,
        keyID: String,
        profile: SignatureProfile = .sigilV1,
        clock: any UnixClock = SystemUnixClock(),
        nonces: any NonceSource = RandomNonceSource()
    ) {
        self.key = key
        self.keyID = keyID
        self.profile = profile
        self.clock = clock
        self.nonces = nonces
    }

    /// Signs `request` in place, adding the profile's headers (and `Content-Digest` for rfc9421 with a body).
    ///
    /// - Returns: the nonce sent, which a signed response must echo.
    @discardableResult
    public func sign(_ request: inout HTTPRequest, body: [UInt8]) throws -> String {
        let nonce = nonces.next()
        try sign(&request, body: body, nonce: nonce)
        return nonce
    }

    /// Signs `request` in place with `nonce`, which a body sealed for this request was bound to
    /// (PROTOCOL.md section 6.2).
    public func sign(_ request: inout HTTPRequest, body: [UInt8], nonce: String) throws {
        try sign(&request, body: .bytes(body), nonce: nonce, timestamp: clock.now(), key: key)
    }

    /// What a signature covers of a body: the body, or its digest (a body streamed from a file).
    enum SignedBody {
        case bytes([UInt8])
        case digest(BodyDigest)
    }

    /// Signs `request` in place with `nonce`, asking the key with
    /// ``SignatureProvider/asyncSignature(for:)``: no thread waits while a key held elsewhere (App
    /// Attest) answers. What ``SigilSession`` signs with.
    func signWithoutBlocking(_ request: inout HTTPRequest, body: SignedBody, nonce: String) async throws {
        let timestamp = clock.now()
        // The base comes from the same code as the synchronous path: a first pass hands it to a
        // recorder, the key signs it, and a second pass puts that signature on the request.
        let recorder = MessageRecorder(key)
        var probe = request
        do {
            try sign(&probe, body: body, nonce: nonce, timestamp: timestamp, key: recorder)
        } catch is MessageRecorder.Recorded {}
        guard let message = recorder.message else { throw SigilInputError("the request has no signature base") }
        let signature = try await key.asyncSignature(for: message)
        try sign(
            &request, body: body, nonce: nonce, timestamp: timestamp,
            key: Presigned(key: key, message: message, signature: signature))
    }

    func sign(
        _ request: inout HTTPRequest, body: SignedBody, nonce: String, timestamp: Int64, key: any SignatureProvider
    ) throws {
        switch profile {
        case .sigilV1:
            for name in [SigilV1.timestampField, SigilV1.nonceField, SigilV1.keyIDField, SigilV1.signatureField] {
                request.headerFields[name] = nil
            }
            let contentType = request.headerFields.value(.contentType)
            let contentEncoding = request.headerFields[.contentEncoding]
            let bodyHash =
                switch body {
                case .bytes(let bytes):
                    BodyHash.bytes(
                        bytes, contentType: contentType, contentEncoding: contentEncoding, canonicalJSON: canonicalJSON)
                case .digest(let digest):
                    try digest.bodyHash(
                        contentType: contentType, contentEncoding: contentEncoding, canonicalJSON: canonicalJSON)
                }
            request.headerFields.append(
                contentsOf: try SigilV1.sign(
                    request, bodyHash: bodyHash, signer: key, keyID: keyID, timestamp: timestamp, nonce: nonce))
        case .rfc9421:
            var covered = components
            // A digest from an earlier signing of this request is replaced: the body may have changed.
            request.headerFields[MessageSignatures.contentDigestField] = nil
            switch body {
            case .bytes(let bytes): ContentDigest.cover(bytes, in: &request.headerFields, components: &covered)
            case .digest(let digest): ContentDigest.cover(digest, in: &request.headerFields, components: &covered)
            }
            // A sealed body's coding is signed too: without it the server would not open the body.
            if request.headerFields[.contentEncoding] != nil, !covered.contains(.contentEncoding) {
                covered.append(.contentEncoding)
            }
            let input = SignatureInput(
                components: covered,
                created: timestamp,
                keyID: keyID,
                nonce: nonce,
                algorithm: includeAlgorithm ? key.algorithm : nil
            )
            let (inputMember, signatureMember) = try RFC9421.sign(
                RFC9421Message(request: request),
                input: input,
                label: label,
                signer: key
            )
            request.headerFields[MessageSignatures.signatureInputField] = inputMember
            request.headerFields[MessageSignatures.signatureField] = signatureMember
        }
    }

    /// Signs a Foundation `URLRequest` in place (its `httpBody` is the body).
    @discardableResult
    public func sign(_ urlRequest: inout URLRequest) throws -> String {
        guard var request = urlRequest.httpRequest, request.scheme != nil, request.authority != nil else {
            throw SigilInputError("the URLRequest has no absolute URL")
        }
        let body = urlRequest.httpBody.map(Array.init) ?? []
        let before = request.headerFields
        let nonce = try sign(&request, body: body)
        for field in request.headerFields where !before.contains(field) {
            urlRequest.setValue(field.value, forHTTPHeaderField: field.name.rawName)
        }
        return nonce
    }
}

/// Takes the message a signing would sign, and stops it there.
final class MessageRecorder: SignatureProvider, @unchecked Sendable {
    struct Recorded: Error {}
    let algorithm: SignatureAlgorithm
    let publicKey: VerificationKey?
    private(set) var message: [UInt8]?

    init(_ key: any SignatureProvider) {
        algorithm = key.algorithm
        publicKey = key.publicKey
    }

    func signature(for message: [UInt8]) throws -> [UInt8] {
        self.message = message
        throw Recorded()
    }
}

/// A signature made already, over exactly one message.
struct Presigned: SignatureProvider {
    let key: any SignatureProvider
    let message: [UInt8]
    let signature: [UInt8]

    var algorithm: SignatureAlgorithm { key.algorithm }
    var publicKey: VerificationKey? { key.publicKey }

    func signature(for message: [UInt8]) throws -> [UInt8] {
        guard message == self.message else { throw SigilInputError("the signature base changed while signing") }
        return signature
    }
}
