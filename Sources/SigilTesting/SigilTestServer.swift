import Crypto
import Foundation
import HTTPTypes
import SigilClient
@_spi(Sigil) import SigilCore

/// A Sigil backend in process, for an app's unit tests: it enrolls devices, verifies their signed
/// requests (sigil-v1) and signs its answers and refusals as `sigil serve` does, with no network and
/// no server code in the app. Link the `SigilTesting` product from the app's test target only.
///
/// ```swift
/// let server = try SigilTestServer { request, body, caller in
///     (HTTPResponse(status: .ok), Array(#"{"user":"\#(caller.userID ?? "")"}"#.utf8))
/// }
/// let device = try SigilDevice(store: FileDeviceStore(directory: NSTemporaryDirectory() + "sigil-test"),
///                              transport: { _, _ in server })
/// try await device.enroll(try SigningKey.generate(.ecdsaP256SHA256), server: server.origin, token: server.token)
/// let answer = try await device.send(request)                 // verified here, answer signed there
/// await server.revoke(deviceOf: try #require(await device.identity).keyID)  // next: a signed revoked-key
/// ```
///
/// What it serves: discovery (signed), registration by a key that signs its own registration, the HMAC
/// secret, rotation, revocation by the device, and every other path as a protected route answered by
/// `handler`. What it checks: the time window (its clock), the key (unknown and revoked keys refused
/// in a signed refusal, as PROTOCOL.md section 2.7 says), the signature, the nonce (a replay refused).
/// It is no server: no TLS, no stores, no attestation; test those against `sigil serve`.
public actor SigilTestServer: SigilTransport {
    /// Who signed a request the server admitted, as the handler sees it.
    public struct Caller: Sendable, Hashable {
        /// The key that signed.
        public let keyID: String
        /// Its device.
        public let deviceID: String
        /// The device's user, when its enrollment token named one.
        public let userID: String?
    }

    /// Answers the protected routes.
    public typealias Handler = @Sendable (HTTPRequest, [UInt8], Caller) async throws -> (HTTPResponse, [UInt8])

    /// The origin devices enroll with (`https://sigil.test`); every request must name its authority.
    public nonisolated let origin: String
    /// The bootstrap token enrollment takes (`Bearer <token>`); the device's user is none.
    public nonisolated let token: String
    /// The server's response key ID, as discovery publishes it.
    public nonisolated let responseKeyID: String
    nonisolated let responseKey: SigningKey
    nonisolated let clock: any UnixClock
    nonisolated let handler: Handler

    struct Registered {
        var key: VerificationKey
        var deviceID: String
        var userID: String?
        var revoked = false
    }

    var keys: [String: Registered] = [:]
    var nonces: Set<String> = []
    var users: [String: String] = [:]
    var devices = 0
    /// Every request received, in order: what an app's test asserts was sent.
    public private(set) var received: [HTTPRequest] = []

    /// A server at `origin` answering protected routes with `handler`.
    ///
    /// - Parameters:
    ///   - clock: the server's clock (a test's own, to move time).
    public init(
        origin: String = "https://sigil.test", token: String = "sigil-test-token",
        clock: any UnixClock = SystemUnixClock(), handler: @escaping Handler
    ) throws {
        self.origin = origin
        self.token = token
        self.clock = clock
        self.handler = handler
        let key = try SigningKey.generate(.ed25519)
        responseKey = key
        guard let keyID = try key.verificationKey.derivedKeyID else { throw SigilInputError("no response key ID") }
        responseKeyID = keyID
    }

    /// Enrollment with `token` names `user` as the device's user (as an enrollment JWT's `sub` does).
    public func addToken(_ token: String, user: String) { users[token] = user }

    /// Revokes every key of the device of `keyID`: its next request is refused `revoked-key`, signed.
    public func revoke(deviceOf keyID: String) {
        guard let device = keys[keyID]?.deviceID else { return }
        for (id, key) in keys where key.deviceID == device { keys[id]?.revoked = true }
    }

    /// Forgets a key, as a server whose directory lost it: its next request is refused `unknown-key`.
    public func forget(_ keyID: String) { keys[keyID] = nil }

    // MARK: Transport

    public func send(_ request: HTTPRequest, body: [UInt8]) async throws -> (HTTPResponse, [UInt8]) {
        received.append(request)
        guard Origin(request) == Origin(url: origin) else {
            return problem(SigilError(.forbidden, "this test server is \(origin)"), for: request, signed: false)
        }
        let path = request.path?.split(separator: "?", maxSplits: 1).first.map(String.init) ?? "/"
        if request.method == .get && path == Registration.Path.discovery { return try discovery() }
        if request.method == .post && path == Registration.Path.devices { return try await register(request, body) }
        do {
            let caller = try verify(request, body: body)
            let (head, answer) = try await route(request, path: path, body: body, caller: caller)
            return try signed(head, answer, for: request)
        } catch let error as SigilError {
            return problem(error, for: request, signed: error.maySign)
        }
    }

    /// The device routes a test server keeps, then the handler's.
    func route(_ request: HTTPRequest, path: String, body: [UInt8], caller: Caller) async throws
        -> (HTTPResponse, [UInt8])
    {
        let parts = path.split(separator: "/").map(String.init)
        if request.method == .post, parts.count == 4, parts[0] == "v1", parts[1] == "devices", parts[3] == "secret" {
            return try secret(for: caller, keyID: parts[2])
        }
        if request.method == .delete, parts.count == 3, parts[0] == "v1", parts[1] == "devices" {
            guard keys[parts[2]]?.deviceID == caller.deviceID else {
                throw SigilError(.forbidden, "not this device's key").ofVerifiedRequest()
            }
            revoke(deviceOf: caller.keyID)
            return (HTTPResponse(status: .noContent), [])
        }
        if request.method == .post && path == Registration.Path.rotate {
            return try rotate(request, body: body, caller: caller)
        }
        do {
            return try await handler(request, body, caller)
        } catch let error as SigilError {
            throw error.ofVerifiedRequest()
        }
    }

    // MARK: Verification

    /// Section 2.6 for sigil-v1: headers, window, key (a statement about it signed), signature, nonce.
    func verify(_ request: HTTPRequest, body: [UInt8], key given: VerificationKey? = nil) throws -> Caller {
        let headers = try SigilV1.parseRequestHeaders(request.headerFields)
        let now = clock.now()
        if let refusal = TimeWindow(maxSkew: 300).refusal(of: headers.timestamp, at: now) { throw refusal }
        let registered: Registered
        if let given {
            registered = Registered(key: given, deviceID: "")
        } else {
            guard let found = keys[headers.keyID] else {
                throw SigilError(.unknownKey, "no key is registered as \(headers.keyID)").aboutRequestKey()
            }
            guard !found.revoked else {
                throw SigilError(.revokedKey, "key \(headers.keyID) is revoked").aboutRequestKey()
            }
            registered = found
        }
        let base = SigilV1.requestBase(
            for: request, body: body, timestamp: headers.timestampText, nonce: headers.nonce)
        guard registered.key.isValidSignature(headers.signature, for: base, profile: .sigilV1) else {
            throw SigilError(.invalidSignature, "the signature does not verify with key \(headers.keyID)")
        }
        guard nonces.insert(headers.keyID + "\n" + headers.nonce).inserted else {
            throw SigilError(.replayedNonce, "nonce \(headers.nonce) was used before").ofVerifiedRequest()
        }
        return Caller(keyID: headers.keyID, deviceID: registered.deviceID, userID: registered.userID)
    }

    // MARK: Routes

    func discovery() throws -> (HTTPResponse, [UInt8]) {
        let published = try responseKey.verificationKey
        var document = Registration.Discovery(
            responseKeys: [Registration.Discovery.Key(keyID: responseKeyID, key: published, state: "current")]
                .compactMap { $0 },
            profiles: ["sigil-v1"], algorithms: SignatureAlgorithm.generatable.map(\.rawValue), maxSkew: 300,
            serverTime: clock.now(), pins: Self.pins, backupPins: [])
        document.sealedSecrets = false
        let body = try Registration.json(document)
        var head = HTTPResponse(status: .ok)
        head.headerFields[.contentType] = "application/json"
        if let field = HTTPField.Name(Registration.DiscoverySignature.field) {
            head.headerFields[field] = try Registration.DiscoverySignature.value(
                body: body, signers: [(responseKeyID, responseKey)])
        }
        return (head, body)
    }

    /// The pin discovery lists: no TLS here, so one no certificate has (the app's transport factory
    /// for tests ignores pins).
    public static let pins = ["sha256/" + Base64.encode([UInt8](repeating: 0, count: 32))]

    func register(_ request: HTTPRequest, _ body: [UInt8]) async throws -> (HTTPResponse, [UInt8]) {
        do {
            let authorization = request.headerFields[.authorization]
            guard let authorization,
                authorization == "Bearer \(token)" || users[String(authorization.dropFirst(7))] != nil
            else { throw SigilError(.enrollmentRefused, "no valid bootstrap token") }
            let submission = try JSONDecoder().decode(Registration.KeySubmission.self, from: Data(body))
            if let credential = submission.credential,
                credential != Registration.KeySubmission.credentialHash(of: authorization)
            {
                throw SigilError(.enrollmentRefused, "the Authorization field is not the credential the body names")
            }
            guard let algorithm = SignatureAlgorithm(rawValue: submission.alg), algorithm != .hmacSHA256,
                let key = try? KeyFile.load(Array(submission.publicKey.utf8), algorithm: algorithm).verificationKey,
                let keyID = key.derivedKeyID
            else { throw SigilError(.invalidRegistration, "publicKey is not a usable public key") }
            let proof = try verify(request, body: body, key: key)
            _ = proof
            devices += 1
            let deviceID = "dev-test-\(devices)"
            let user = users[String(authorization.dropFirst(7))]
            keys[keyID] = Registered(key: key, deviceID: deviceID, userID: user)
            let answer = Registration.Registered(
                keyId: keyID, deviceId: deviceID, alg: algorithm.rawValue, userId: user)
            var head = HTTPResponse(status: .created)
            head.headerFields[.contentType] = "application/json"
            return try signed(head, try Registration.json(answer), for: request)
        } catch let error as SigilError {
            return problem(error, for: request, signed: error.maySign)
        } catch {
            return problem(
                SigilError(.invalidRegistration, "the registration does not decode"), for: request, signed: false)
        }
    }

    func secret(for caller: Caller, keyID: String) throws -> (HTTPResponse, [UInt8]) {
        guard keys[keyID]?.deviceID == caller.deviceID, keys[caller.keyID]?.key.algorithm != .hmacSHA256 else {
            throw SigilError(.forbidden, "a secret is issued to the device's key pair").ofVerifiedRequest()
        }
        let secret = SymmetricKey(size: .bits256)
        let secretKeyID = "hmac-test-\(keys.count)"
        keys[secretKeyID] = Registered(
            key: try VerificationKey(hmacSecret: secret), deviceID: caller.deviceID, userID: caller.userID)
        let bytes = secret.withUnsafeBytes { Array($0) }
        let answer = Registration.IssuedSecret(
            keyId: secretKeyID, alg: SignatureAlgorithm.hmacSHA256.rawValue, secret: Base64.encode(bytes),
            issuedAt: clock.now(), previousKeysValidUntil: nil)
        var head = HTTPResponse(status: .created)
        head.headerFields[.contentType] = "application/json"
        head.headerFields[.cacheControl] = "no-store"
        return (head, try Registration.json(answer))
    }

    func rotate(_ request: HTTPRequest, body: [UInt8], caller: Caller) throws -> (HTTPResponse, [UInt8]) {
        guard let rotation = try? JSONDecoder().decode(Registration.Rotation.self, from: Data(body)),
            let algorithm = SignatureAlgorithm(rawValue: rotation.alg),
            let key = try? KeyFile.load(Array(rotation.publicKey.utf8), algorithm: algorithm).verificationKey,
            let newKeyID = key.derivedKeyID, let proof = Base64URL.decode(rotation.proof),
            let nonce = request.headerFields[SigilV1.nonceField],
            key.isValidSignature(
                proof,
                for: RotationProof.message(
                    serverKeyID: responseKeyID, currentKeyID: caller.keyID, newKeyID: newKeyID, nonce: nonce),
                profile: .sigilV1)
        else { throw SigilError(.invalidRegistration, "not a rotation this key proves").ofVerifiedRequest() }
        keys[newKeyID] = Registered(key: key, deviceID: caller.deviceID, userID: caller.userID)
        let answer = Registration.Registered(
            keyId: newKeyID, deviceId: caller.deviceID, alg: algorithm.rawValue, userId: caller.userID)
        var head = HTTPResponse(status: .created)
        head.headerFields[.contentType] = "application/json"
        return (head, try Registration.json(answer))
    }

    // MARK: Answers

    /// `head` and `body` signed for `request` (section 2.7).
    func signed(_ head: HTTPResponse, _ body: [UInt8], for request: HTTPRequest) throws -> (HTTPResponse, [UInt8]) {
        guard let answered = SigilV1.AnsweredRequest(request.headerFields) else { return (head, body) }
        var head = head
        let timestamp = String(clock.now())
        let base = SigilV1.responseBase(for: head, body: body, timestamp: timestamp, answering: answered)
        head.headerFields[SigilV1.timestampField] = timestamp
        head.headerFields[SigilV1.keyIDField] = responseKeyID
        head.headerFields[SigilV1.signatureField] = Base64URL.encode(
            try responseKey.signature(for: base, profile: .sigilV1))
        return (head, body)
    }

    /// The problem+json refusal for `error`, signed for `request` when `signed` (section 4).
    func problem(_ error: SigilError, for request: HTTPRequest, signed: Bool) -> (HTTPResponse, [UInt8]) {
        let object: [String: Any] = [
            "type": "urn:sigil:error:\(error.code.rawValue)", "title": error.code.title,
            "status": error.code.httpStatus, "detail": error.detail, "code": error.code.rawValue,
            "serverTime": clock.now(),
        ]
        let body = Array((try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data())
        var head = HTTPResponse(status: .init(code: error.code.httpStatus))
        head.headerFields[.contentType] = "application/problem+json"
        head.headerFields[.cacheControl] = "no-store"
        guard signed, let answer = try? self.signed(head, body, for: request) else { return (head, body) }
        return answer
    }
}
