import Foundation
import HTTPTypes
import SigilCore

/// The device's side of the registration API of `sigil serve`: discovery, enrollment, the HMAC
/// secret, key rotation and client certificates, each request signed and each answer checked.
public struct DeviceRegistration: Sendable {
    /// Sends the requests.
    public let transport: any SigilTransport
    /// `https`, normally.
    public let scheme: String
    /// The server's `host:port`.
    public let authority: String
    /// The server-corrected clock shared with the device's other requests.
    public let clock: ServerClock

    /// Creates the registration client for a server.
    public init(transport: any SigilTransport, scheme: String = "https", authority: String, clock: ServerClock) {
        self.transport = transport
        self.scheme = scheme
        self.authority = authority
        self.clock = clock
    }

    /// What `GET /.well-known/sigil` says.
    public struct Discovery: Sendable, Decodable {
        /// A response-signing key.
        public struct Key: Sendable, Decodable {
            /// Its key ID.
            public let keyId: String
            /// Its algorithm.
            public let alg: String
            /// SubjectPublicKeyInfo PEM.
            public let publicKey: String
        }
        /// The keys the server signs responses with.
        public let responseKeys: [Key]
        /// The accepted profiles.
        public let profiles: [String]
        /// The accepted window, in seconds.
        public let maxSkew: Int64
        /// The server's time when it answered.
        public let serverTime: Int64
        /// The SPKI pins of the server's TLS certificate chain.
        public let pins: [String]
        /// Pins of keys the server may move to, if it publishes any.
        public let backupPins: [String]?

        /// A verifier for the server's first response key.
        public func responseVerifier(clock: any UnixClock) throws -> ResponseVerifier {
            guard let key = responseKeys.first else {
                throw SigilError(.unknownKey, "the server publishes no response key")
            }
            let loaded = try KeyFile.load(Array(key.publicKey.utf8), algorithm: try SignatureAlgorithm.named(key.alg))
            return ResponseVerifier(key: loaded.verificationKey, keyID: key.keyId, clock: clock)
        }
    }

    /// Reads the server's discovery document.
    ///
    /// The document is not signed, so its `serverTime` does not move the clock: the first signed
    /// answer does (a signed `timestamp-out-of-window` refusal of the enrollment, at worst).
    public func discover() async throws -> Discovery {
        let (head, body) = try await transport.send(request(.get, "/.well-known/sigil"), body: [])
        return try decode(head, body)
    }

    /// The answer to a registration or rotation.
    public struct Registered: Sendable, Decodable {
        /// The key ID the server registered.
        public let keyId: String
        /// The device it belongs to.
        public let deviceId: String
        /// The key's algorithm.
        public let alg: String
        /// The user, when enrollment went through a JWT.
        public let userId: String?
    }

    /// Registers `key` with the bootstrap token or an enrollment JWT, signing with the key itself.
    public func enroll(_ key: SigningKey, token: String, server: ResponseVerifier) async throws -> Registered {
        let verification = try key.verificationKey
        guard let keyID = verification.derivedKeyID, let publicKey = KeyFile.publicKeyFile(for: verification) else {
            throw SigilInputError("only an asymmetric key can be enrolled")
        }
        var head = request(.post, "/v1/devices")
        head.headerFields[.authorization] = "Bearer \(token)"
        let body = try json(["alg": key.algorithm.rawValue, "publicKey": publicKey])
        return try await signedCall(head, body: body, key: key, keyID: keyID, server: server, expect: 201)
    }

    /// The answer to a secret request.
    public struct IssuedSecret: Sendable, Decodable {
        /// The secret's key ID.
        public let keyId: String
        /// The standard base64 of the 32-byte secret.
        public let secret: String
        /// Until when the previous secret stays valid, if there was one.
        public let previousKeysValidUntil: Int64?

        /// The secret as a signing key.
        public var signingKey: SigningKey {
            get throws {
                guard let bytes = Base64.decode(secret) else { throw SigilError(.malformedSignature, "bad secret") }
                return try SigningKey(hmacSecret: bytes)
            }
        }
    }

    /// Fetches a fresh per-device HMAC secret, signing with the device's key.
    public func fetchSecret(key: SigningKey, keyID: String, server: ResponseVerifier) async throws -> IssuedSecret {
        try await signedCall(
            request(.post, "/v1/devices/\(keyID)/secret"), body: [], key: key, keyID: keyID, server: server,
            expect: 201)
    }

    /// Registers `next` as the device's key, signing with `current`; the current key lasts the
    /// server's grace period.
    public func rotate(
        from current: SigningKey,
        keyID: String,
        to next: SigningKey,
        server: ResponseVerifier
    ) async throws -> Registered {
        let nextKey = try next.verificationKey
        guard let nextID = nextKey.derivedKeyID, let publicKey = KeyFile.publicKeyFile(for: nextKey) else {
            throw SigilInputError("only an asymmetric key can be rotated to")
        }
        let nonce = RandomNonceSource().next()
        let proof = try next.signature(
            for: RotationProof.message(currentKeyID: keyID, newKeyID: nextID, nonce: nonce), profile: .sigilV1)
        let body = try json(["alg": next.algorithm.rawValue, "publicKey": publicKey, "proof": Base64URL.encode(proof)])
        let signer = RequestSigner(key: current, keyID: keyID, clock: clock, nonces: OneNonce(value: nonce))
        return try await call(
            request(.post, "/v1/keys/rotate"), body: body, signer: signer, server: server, expect: 201)
    }

    /// The answer to a certificate request.
    public struct IssuedCertificate: Sendable, Decodable {
        /// The client certificate, PEM.
        public let certificate: String
        /// The issuing CA's certificate, PEM.
        public let caCertificate: String
    }

    /// Sends a CSR made with the device's key and returns the client certificate.
    public func requestCertificate(
        csrPEM: String,
        key: SigningKey,
        keyID: String,
        server: ResponseVerifier
    ) async throws -> IssuedCertificate {
        try await signedCall(
            request(.post, "/v1/certificates"), body: try json(["csr": csrPEM]), key: key, keyID: keyID,
            server: server, expect: 201)
    }

    // MARK: Plumbing

    func request(_ method: HTTPRequest.Method, _ path: String) -> HTTPRequest {
        var request = HTTPRequest(method: method, scheme: scheme, authority: authority, path: path)
        request.headerFields[.accept] = "application/json"
        if method == .post { request.headerFields[.contentType] = "application/json" }
        return request
    }

    func signedCall<Answer: Decodable>(
        _ head: HTTPRequest,
        body: [UInt8],
        key: SigningKey,
        keyID: String,
        server: ResponseVerifier,
        expect status: Int
    ) async throws -> Answer {
        try await call(
            head, body: body, signer: RequestSigner(key: key, keyID: keyID, clock: clock), server: server,
            expect: status)
    }

    func call<Answer: Decodable>(
        _ head: HTTPRequest,
        body: [UInt8],
        signer: RequestSigner,
        server: ResponseVerifier,
        expect status: Int
    ) async throws -> Answer {
        let session = SigilSession(
            transport: transport, signer: signer, clock: clock, responses: server, requireSignedResponses: false)
        let response = try await session.send(head, body: body)
        guard response.head.status.code == status else { throw RegistrationError(response) }
        guard response.signatureVerified else {
            throw SigilError(.missingSignature, "the server's answer is not signed")
        }
        return try decode(response.head, response.body)
    }

    func decode<Answer: Decodable>(_ head: HTTPResponse, _ body: [UInt8]) throws -> Answer {
        guard head.status.code < 300 else {
            throw RegistrationError(
                SigilResponse(
                    head: head, body: body, signatureVerified: false, attempts: 1,
                    sentRequest: HTTPRequest(method: .get, scheme: nil, authority: nil, path: nil)))
        }
        do {
            return try JSONDecoder().decode(Answer.self, from: Data(body))
        } catch {
            throw SigilInputError("the server's answer (\(Answer.self)) does not decode")
        }
    }

    func json(_ object: [String: String]) throws -> [UInt8] {
        Array(try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]))
    }
}

/// A refusal from the registration API: the status and the PROTOCOL.md code the server sent.
public struct RegistrationError: Error, Sendable, CustomStringConvertible {
    /// The HTTP status.
    public let status: Int
    /// The problem+json `code`, if any.
    public let code: String?
    /// The problem+json `detail`, if any.
    public let detail: String?

    init(_ response: SigilResponse) {
        status = response.head.status.code
        code = response.problemCode
        detail = response.problem?["detail"] as? String
    }

    public var description: String {
        "the server answered \(status)" + (code.map { " \($0)" } ?? "") + (detail.map { ": \($0)" } ?? "")
    }
}

/// The one nonce a rotation's proof names.
struct OneNonce: NonceSource {
    let value: String
    func next() -> String { value }
}
