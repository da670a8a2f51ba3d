import Foundation
import HTTPTypes
@_spi(Sigil) import SigilCore

/// The device's side of the registration API: discovery, enrollment, the HMAC secret, key rotation,
/// client certificates and revocation, each request signed by any ``SignatureProvider`` (a software
/// key, the Secure Enclave) and each answer's signature checked, over any ``SigilTransport``.
///
/// A refusal the server signed throws ``SigilError`` with its code; an unsigned one, an answer not
/// signed, or a transport failure throws ``SigilClientError``; an answer that is neither the expected
/// one nor a refusal throws ``UnexpectedResponse``.
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

    /// Reads the server's discovery document.
    ///
    /// The document is not signed, so its `serverTime` does not move the clock: the first signed
    /// answer does (a signed `timestamp-out-of-window` refusal of the enrollment, at worst).
    public func discover() async throws -> Registration.Discovery {
        let (head, body) = try await sendUnsigned(request(.get, Registration.Path.discovery))
        return try decode(head, body)
    }

    /// Registers `key` with the bootstrap token or an enrollment JWT (or none, for a server whose
    /// enrollment is open or attested), signing the request with the key itself.
    ///
    /// - Parameter sealingKey: the device's X-Wing key, registered with `key`: the device's HMAC
    ///   secrets then come back sealed to it (PROTOCOL.md section 6.4).
    public func enroll(
        _ key: any SignatureProvider, token: String?, sealingKey: SealingPublicKey? = nil, server: ResponseVerifier
    ) async throws -> Registration.Registered {
        guard let publicKey = key.publicKey, let keyID = publicKey.derivedKeyID else {
            throw SigilInputError("only a key pair can be enrolled")
        }
        var head = request(.post, Registration.Path.devices)
        var submission = try Registration.KeySubmission(publicKey, sealingKey: sealingKey)
        Self.present(token, on: &head, naming: &submission)
        let body = try json(submission)
        return try await call(head, body: body, signer: signer(key, keyID), server: server, expect: 201)
    }

    /// A one-time challenge for App Attest enrollment (unsigned: the device has no key yet).
    public func attestationChallenge() async throws -> Registration.AttestationChallenge {
        let (head, body) = try await sendUnsigned(request(.post, Registration.Path.attestChallenge))
        return try decode(head, body)
    }

    /// Registers an App Attest key by its attestation, the request signed by the key's own assertion.
    ///
    /// - Parameters:
    ///   - signer: the App Attest key (`apple-appattest`), which signs with assertions.
    ///   - appAttestKeyID: its App Attest key ID (`DCAppAttestService.generateKey`).
    ///   - attestation: `attestKey` of that key for SHA-256 of `challenge`'s UTF-8 bytes.
    ///   - token: the logged-in user's enrollment JWT, sent beside the attestation: the device is then
    ///     that user's (the attestation proves the app, the token the user). `nil`: a device of no user.
    public func enroll(
        attestedBy signer: any SignatureProvider,
        appAttestKeyID: [UInt8],
        attestation: [UInt8],
        challenge: String,
        token: String? = nil,
        server: ResponseVerifier
    ) async throws -> Registration.Registered {
        guard signer.algorithm == .appleAppAttest else {
            throw SigilInputError("an attestation enrolls an apple-appattest signer")
        }
        var submission = Registration.KeySubmission(alg: SignatureAlgorithm.appleAppAttest.rawValue, publicKey: "")
        submission.attestation = Registration.Attestation(
            keyId: Base64.encode(appAttestKeyID), attestation: Base64.encode(attestation), challenge: challenge)
        var head = request(.post, Registration.Path.devices)
        Self.present(token, on: &head, naming: &submission)
        return try await call(
            head, body: try json(submission),
            signer: self.signer(signer, AppAttestAssertion.keyID(appAttestKeyID: appAttestKeyID)), server: server,
            expect: 201)
    }

    /// Registers `key` (a Secure Enclave P-256 key, `ecdsa-p256-sha256`) with an App Attest
    /// attestation that vouches for it: made for ``Registration/AttestedKey/clientDataHash(challenge:vouchingFor:)``
    /// of `challenge` and the key's ID. The request is signed by `key` itself; the server registers
    /// the App Attest key beside it for assertions (PROTOCOL.md section 7).
    ///
    /// - Parameters:
    ///   - appAttestKeyID: the App Attest key ID (`DCAppAttestService.generateKey`).
    ///   - token: the logged-in user's enrollment JWT, naming the device's user; `nil`: no user's.
    public func enroll(
        _ key: any SignatureProvider,
        vouchedBy appAttestKeyID: [UInt8],
        attestation: [UInt8],
        challenge: String,
        token: String? = nil,
        server: ResponseVerifier
    ) async throws -> Registration.Registered {
        guard key.algorithm == .ecdsaP256SHA256, let publicKey = key.publicKey, let keyID = publicKey.derivedKeyID
        else { throw SigilInputError("App Attest vouches for an ecdsa-p256-sha256 key pair (a Secure Enclave key)") }
        var submission = try Registration.KeySubmission(publicKey)
        submission.attestation = Registration.Attestation(
            keyId: Base64.encode(appAttestKeyID), attestation: Base64.encode(attestation), challenge: challenge)
        var head = request(.post, Registration.Path.devices)
        Self.present(token, on: &head, naming: &submission)
        return try await call(head, body: try json(submission), signer: signer(key, keyID), server: server, expect: 201)
    }

    /// Registers an Android Keystore key by its Key Attestation chain (no token), the request signed by
    /// the key itself. (On Android the same flow is a few lines of Kotlin: README, "Android devices".)
    ///
    /// - Parameters:
    ///   - key: the attested key (`ecdsa-p256-sha256`).
    ///   - chain: the key's certificate chain (`KeyStore.getCertificateChain`), DER, leaf first, made
    ///     with `setAttestationChallenge` of ``attestationChallenge()``'s UTF-8 bytes.
    public func enroll(
        androidKey key: any SignatureProvider, chain: [[UInt8]], sealingKey: SealingPublicKey? = nil,
        server: ResponseVerifier
    ) async throws -> Registration.Registered {
        guard key.algorithm == .ecdsaP256SHA256, let publicKey = key.publicKey, let keyID = publicKey.derivedKeyID
        else { throw SigilInputError("an Android Key Attestation enrolls an ecdsa-p256-sha256 key pair") }
        var submission = try Registration.KeySubmission(publicKey, sealingKey: sealingKey)
        submission.androidKeyAttestation = chain.map(Base64.encode)
        return try await call(
            request(.post, Registration.Path.devices), body: try json(submission), signer: signer(key, keyID),
            server: server, expect: 201)
    }

    /// Fetches a fresh per-device HMAC secret, signing with the device's key pair; it comes sealed
    /// when the device registered a sealing key (open it with ``Registration/IssuedSecret/secretBytes(openingWith:)``).
    public func fetchSecret(key: any SignatureProvider, keyID: String, server: ResponseVerifier) async throws
        -> Registration.IssuedSecret
    {
        try await call(
            request(.post, Registration.Path.secret(keyID: keyID)), body: [], signer: signer(key, keyID),
            server: server, expect: 201)
    }

    /// Registers `next` as the device's key, signing with `current`; the current key lasts the
    /// server's grace period.
    ///
    /// - Parameter sealingKey: a new X-Wing key for the device's sealed secrets; `nil` keeps the one
    ///   it has.
    public func rotate(
        from current: any SignatureProvider,
        keyID: String,
        to next: any SignatureProvider,
        sealingKey: SealingPublicKey? = nil,
        server: ResponseVerifier
    ) async throws -> Registration.Registered {
        // The proof names the request's nonce: each attempt (the one resend after a signed
        // timestamp-out-of-window included) builds its body for its own new nonce.
        try await call(
            request(.post, Registration.Path.rotate), signer: signer(current, keyID), server: server, expect: 201
        ) { nonce in
            try self.json(
                try Registration.Rotation(
                    from: keyID, to: next, serverKeyID: server.keyID, nonce: nonce, sealingKey: sealingKey))
        }
    }

    /// Sends a CSR that `key` signs itself (``CSR``) and returns the client certificate.
    public func requestCertificate(key: any SignatureProvider, keyID: String, server: ResponseVerifier) async throws
        -> Registration.IssuedCertificate
    {
        let body = try json(Registration.CertificateRequest(csr: try CSR.pem(for: key, commonName: keyID)))
        return try await call(
            request(.post, Registration.Path.certificates), body: body, signer: signer(key, keyID), server: server,
            expect: 201)
    }

    /// Revokes the device (every key it has), signing with its active key.
    public func revoke(key: any SignatureProvider, keyID: String, server: ResponseVerifier) async throws {
        let _: Empty = try await call(
            request(.delete, Registration.Path.device(keyID: keyID)), body: [], signer: signer(key, keyID),
            server: server, expect: 204)
    }

    // MARK: Plumbing

    /// `token` as the registration's `Authorization`, named in the signed body (`credential`): the
    /// server refuses the registration under any other credential.
    static func present(
        _ token: String?, on head: inout HTTPRequest, naming submission: inout Registration.KeySubmission
    ) {
        guard let token else { return }
        let authorization = "Bearer \(token)"
        head.headerFields[.authorization] = authorization
        submission.credential = Registration.KeySubmission.credentialHash(of: authorization)
    }

    func request(_ method: HTTPRequest.Method, _ path: String) -> HTTPRequest {
        var request = HTTPRequest(method: method, scheme: scheme, authority: authority, path: path)
        request.headerFields[.accept] = "application/json"
        if method == .post { request.headerFields[.contentType] = "application/json" }
        return request
    }

    func signer(_ key: any SignatureProvider, _ keyID: String) -> RequestSigner {
        RequestSigner(key: key, keyID: keyID, clock: clock)
    }

    func call<Answer: Decodable>(
        _ head: HTTPRequest,
        body: [UInt8],
        signer: RequestSigner,
        server: ResponseVerifier,
        expect status: Int
    ) async throws -> Answer {
        try await call(head, signer: signer, server: server, expect: status) { _ in body }
    }

    /// ``call(_:body:signer:server:expect:)`` with a body built for each attempt's nonce.
    func call<Answer: Decodable>(
        _ head: HTTPRequest,
        signer: RequestSigner,
        server: ResponseVerifier,
        expect status: Int,
        body: (_ nonce: String) throws -> [UInt8]
    ) async throws -> Answer {
        let session = SigilSession(
            transport: transport, signer: signer, clock: clock, responses: server, requireSignedResponses: false)
        let response = try await session.send(head, body: body)
        guard response.head.status.code == status else {
            throw response.failure ?? UnexpectedResponse(status: response.head.status.code)
        }
        guard response.signatureVerified else {
            throw SigilClientError.untrusted(response, reason: "the server's answer is not signed")
        }
        return try decode(response.head, response.body)
    }

    /// Sends an unsigned request of the public routes (discovery, a challenge).
    func sendUnsigned(_ request: HTTPRequest) async throws -> (HTTPResponse, [UInt8]) {
        do {
            return try await transport.send(request, body: [])
        } catch {
            throw SigilClientError.transport(error)
        }
    }

    /// The answer decoded; a refusal, which on these routes is never signed, is an untrusted one.
    func decode<Answer: Decodable>(_ head: HTTPResponse, _ body: [UInt8]) throws -> Answer {
        guard head.status.code < 300 else {
            if SigilResponse.refusal(head: head, body: body) != nil {
                throw SigilClientError.untrusted(head: head, body: body, reason: "an unsigned route's refusal")
            }
            throw UnexpectedResponse(status: head.status.code)
        }
        if Answer.self == Empty.self, let empty = Empty() as? Answer { return empty }
        do {
            return try JSONDecoder().decode(Answer.self, from: Data(body))
        } catch {
            throw SigilInputError("the server's answer (\(Answer.self)) does not decode")
        }
    }

    func json(_ message: some Encodable) throws -> [UInt8] { try Registration.json(message) }

    /// A `204 No Content` answer.
    struct Empty: Decodable {}
}

extension Registration.Discovery {
    /// A verifier for the server's first response key.
    ///
    /// - Parameter formats: the key kinds beyond the built-in ones the server's key may be of.
    public func responseVerifier(clock: any UnixClock, formats: KeyFormats = .builtIn) throws -> ResponseVerifier {
        guard let key = responseKeys.first else {
            throw SigilClientError(.untrustedAnswer, "the server's discovery publishes no response key")
        }
        let loaded = try KeyFile.load(
            Array(key.publicKey.utf8), algorithm: try SignatureAlgorithm.named(key.alg), formats: formats)
        return ResponseVerifier(key: loaded.verificationKey, keyID: key.keyId, clock: clock)
    }
}

/// An answer that is neither the one expected nor a problem+json refusal with a Sigil code (a proxy's
/// error page, a server error).
public struct UnexpectedResponse: Error, Sendable, Hashable, CustomStringConvertible {
    /// The HTTP status.
    public let status: Int

    /// Creates the error.
    public init(status: Int) { self.status = status }

    public var description: String { "the server answered \(status) without a Sigil refusal" }
}
