import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import Metrics
import NIOCore
import SigilCore
import SigilHummingbird
import SigilRSA
import SigilServer
import SigilTLS
import X509

/// The registration API of `sigil serve`: discovery, device registration with proof of possession,
/// per-device HMAC secrets, key rotation, revocation, client certificates, and an echo route.
struct RegistrationAPI: Sendable {
    let registry: any KeyRegistry
    let nonces: any NonceStore
    let verifierConfiguration: VerifierConfiguration
    let middleware: SigilMiddleware<SigilBasicRequestContext>
    let policy: EnrollmentPolicy
    let responseSigner: ResponseSigner
    let responseKey: VerificationKey
    let certificateAuthority: CertificateAuthority?
    let pins: [String]
    let backupPins: [String]
    let metricsFactory: any MetricsFactory
    let secretOverlap: Int64
    let rotationGrace: Int64
    let clock: any UnixClock

    /// The most a registration body may hold (an ML-DSA-87 public key in PEM is about 3.5 KB).
    static let registrationBodyLimit = 64 << 10

    func addRoutes(to router: Router<SigilBasicRequestContext>) {
        router.get(".well-known/sigil") { _, _ in try json(discovery()) }
        router.post("v1/devices") { request, _ in try await register(request) }
        let signed = router.group().add(middleware: middleware)
        signed.post("v1/devices/:keyId/secret") { request, context in
            try await issueSecret(request, context: context)
        }
        signed.post("v1/keys/rotate") { request, context in try await rotate(request, context: context) }
        signed.delete("v1/devices/:keyId") { request, context in try await revoke(request, context: context) }
        signed.post("v1/certificates") { request, context in try await issueCertificate(request, context: context) }
        signed.post("v1/echo") { request, context in try await echo(request, context: context) }
    }

    // MARK: Discovery

    struct Discovery: Encodable {
        struct Key: Encodable {
            let keyId: String
            let alg: String
            let publicKey: String
        }
        let responseKeys: [Key]
        let profiles: [String]
        let algorithms: [String]
        let maxSkew: Int64
        let serverTime: Int64
        let pins: [String]
        let backupPins: [String]
    }

    func discovery() -> Discovery {
        Discovery(
            responseKeys: [
                .init(
                    keyId: responseSigner.keyID,
                    alg: responseKey.algorithm.rawValue,
                    publicKey: KeyFile.publicKeyFile(for: responseKey) ?? ""
                )
            ],
            profiles: verifierConfiguration.profiles.map(\.rawValue).sorted(),
            algorithms: SignatureAlgorithm.allCases.map(\.rawValue),
            maxSkew: verifierConfiguration.maxSkew,
            serverTime: clock.now(),
            pins: pins,
            backupPins: backupPins
        )
    }

    // MARK: Registration

    struct KeySubmission: Decodable {
        let alg: String
        let publicKey: String
    }

    struct Registered: Encodable {
        let keyId: String
        let deviceId: String
        let alg: String
        let userId: String?
    }

    /// `POST /v1/devices`: a public key whose own signature is on the request, and the enrollment
    /// policy, judged when the body has arrived.
    func register(_ request: Request) async throws -> Response {
        var verified = false
        do {
            let body = try await Self.readBody(request, limit: Self.registrationBodyLimit)
            let userID = try await policy.authorize(request.head)
            let key = try Self.publicKey(from: body)
            guard let keyID = key.derivedKeyID else { throw SigilError(.invalidRegistration, "not a public key") }
            var configuration = verifierConfiguration
            configuration.bodyLimit = Self.registrationBodyLimit
            let proof = RequestVerifier(
                keys: MemoryKeyDirectory([RegisteredKey(keyID: keyID, key: key)]),
                nonces: nonces,
                clock: clock,
                configuration: configuration,
                metricsFactory: metricsFactory
            )
            let identity = try await proof.verify(request.head, body: body)
            verified = true
            let deviceID = "dev-" + Hex.random(bytes: 16)
            try await registry.apply(
                DirectoryChange(added: [
                    RegisteredKey(keyID: keyID, key: key, deviceID: deviceID, userID: userID, createdAt: clock.now())
                ])
            )
            let response = try json(
                Registered(keyId: keyID, deviceId: deviceID, alg: key.algorithm.rawValue, userId: userID),
                status: .created
            )
            guard let signer = middleware.responseSigner else { return response }
            return try await response.signed(with: signer, answering: request.head, verified: identity)
        } catch let error as SigilError {
            throw middleware.refusal(error, for: request.head, requestVerified: verified)
        }
    }

    /// The public key of a registration or rotation body: PEM or base64 SubjectPublicKeyInfo, with its algorithm.
    static func publicKey(from body: [UInt8]) throws -> VerificationKey {
        let submission: KeySubmission
        do {
            submission = try JSONDecoder().decode(KeySubmission.self, from: Data(body))
        } catch {
            throw SigilError(.invalidRegistration, "the body must be JSON with alg and publicKey")
        }
        return try publicKey(submission)
    }

    static func publicKey(_ submission: KeySubmission) throws -> VerificationKey {
        let algorithm: SignatureAlgorithm
        do {
            algorithm = try SignatureAlgorithm.named(submission.alg)
        } catch {
            throw SigilError(.invalidRegistration, "unknown algorithm")
        }
        guard algorithm != .hmacSHA256 else {
            throw SigilError(.invalidRegistration, "HMAC secrets are issued by the server, never registered")
        }
        var pem = submission.publicKey
        if !pem.hasPrefix("-----BEGIN") {
            guard let der = Base64.decode(pem.filter { !$0.isWhitespace }) else {
                throw SigilError(.invalidRegistration, "publicKey is neither PEM nor base64 DER")
            }
            pem = PEM.encode(der, label: "PUBLIC KEY")
        }
        let loaded: LoadedKey
        do {
            loaded = try KeyFile.load(Array(pem.utf8), algorithm: algorithm, formats: .withRSA)
        } catch let error as SigilError where error.code == .algorithmMismatch {
            throw SigilError(.invalidRegistration, "the key cannot be used with \(algorithm)")
        } catch {
            throw SigilError(.invalidRegistration, "publicKey is not a usable public key")
        }
        guard loaded.signingKey == nil else {
            throw SigilError(.invalidRegistration, "publicKey holds a private key; send only the public key")
        }
        return loaded.verificationKey
    }

    // MARK: Secrets

    struct IssuedSecret: Encodable {
        let keyId: String
        let alg: String
        let secret: String
        let previousKeysValidUntil: Int64?
    }

    /// `POST /v1/devices/{keyId}/secret`: a fresh 32-byte HMAC secret for the signer's device; earlier
    /// secrets stay valid for the overlap.
    func issueSecret(_ request: Request, context: SigilBasicRequestContext) async throws -> Response {
        let identity = try context.requireSigilIdentity()
        do {
            let deviceID = try await ownDevice(of: context.parameters.get("keyId"), identity: identity)
            guard identity.request.algorithm != .hmacSHA256 else {
                throw SigilError(.forbidden, "a secret is issued only to a request signed with the device's key")
            }
            let now = clock.now()
            let previous = try await registry.keys(ofDevice: deviceID).filter {
                $0.key.algorithm == .hmacSHA256 && $0.isUsable(at: now)
            }
            let secret = SymmetricKey(size: .bits256)
            let keyID = "hmac-" + Hex.random(bytes: 8)
            let end = now + secretOverlap
            try await registry.apply(
                DirectoryChange(
                    added: [
                        RegisteredKey(
                            keyID: keyID,
                            key: try VerificationKey(hmacSecret: secret),
                            deviceID: deviceID,
                            userID: identity.userID,
                            createdAt: now
                        )
                    ],
                    retiring: previous.map { ($0.keyID, end) },
                    actingKeyID: identity.keyID
                )
            )
            context.logger.info(
                "secret issued", metadata: ["sigil.device": "\(deviceID)", "sigil.secret-key-id": "\(keyID)"])
            var response = try json(
                IssuedSecret(
                    keyId: keyID,
                    alg: SignatureAlgorithm.hmacSHA256.rawValue,
                    secret: secret.withUnsafeBytes { Base64.encode(Array($0)) },
                    previousKeysValidUntil: previous.isEmpty ? nil : end
                ),
                status: .created
            )
            response.headers[HTTPField.Name.cacheControl] = "no-store"
            return response
        } catch let error as SigilError {
            throw middleware.refusal(error, for: request.head, requestVerified: true)
        }
    }

    /// The device of the key named in the path, which must be the signer's own device.
    func ownDevice(of keyID: String?, identity: SigilIdentity) async throws -> String {
        guard let keyID, let deviceID = identity.deviceID else {
            throw SigilError(.forbidden, "the signing key belongs to no device")
        }
        let named = keyID == identity.keyID ? nil : try await registry.key(for: keyID)
        guard keyID == identity.keyID || named?.deviceID == deviceID else {
            throw SigilError(.forbidden, "key \(identity.keyID) may not act on key \(keyID)")
        }
        return deviceID
    }

    // MARK: Rotation and revocation

    struct Rotation: Decodable {
        let alg: String
        let publicKey: String
        /// base64url of the new key's signature (sigil-v1 encoding) over the ``RotationProof`` message.
        let proof: String
    }

    /// `POST /v1/keys/rotate`, signed by the current key: registers the next key; the current one and
    /// the device's HMAC secrets stay valid for the grace period (the new key fetches a new secret).
    func rotate(_ request: Request, context: SigilBasicRequestContext) async throws -> Response {
        let identity = try context.requireSigilIdentity()
        do {
            guard let deviceID = identity.deviceID, identity.request.algorithm != .hmacSHA256 else {
                throw SigilError(.forbidden, "rotation must be signed with the device's current key")
            }
            let body = try await Self.readBody(request, limit: Self.registrationBodyLimit)
            let rotation: Rotation
            do {
                rotation = try JSONDecoder().decode(Rotation.self, from: Data(body))
            } catch {
                throw SigilError(.invalidRegistration, "the body must be JSON with alg, publicKey and proof")
            }
            let key = try Self.publicKey(KeySubmission(alg: rotation.alg, publicKey: rotation.publicKey))
            guard let newKeyID = key.derivedKeyID else { throw SigilError(.invalidRegistration, "not a public key") }
            let message = RotationProof.message(
                currentKeyID: identity.keyID, newKeyID: newKeyID, nonce: identity.request.nonce)
            guard let proof = Base64URL.decode(rotation.proof),
                key.isValidSignature(proof, for: message, profile: .sigilV1)
            else {
                throw SigilError(.invalidRegistration, "proof is not the new key's signature of the rotation message")
            }
            let now = clock.now()
            try await registry.apply(
                DirectoryChange(
                    added: [
                        RegisteredKey(
                            keyID: newKeyID,
                            key: key,
                            deviceID: deviceID,
                            userID: identity.userID,
                            createdAt: now
                        )
                    ],
                    retiring: [(identity.keyID, now + rotationGrace)],
                    // A secret fetched with the old key (perhaps by whoever stole it) ends with it.
                    retiringSecrets: (deviceID, now + rotationGrace),
                    actingKeyID: identity.keyID
                )
            )
            return try json(
                Registered(keyId: newKeyID, deviceId: deviceID, alg: key.algorithm.rawValue, userId: identity.userID),
                status: .created
            )
        } catch let error as SigilError {
            throw middleware.refusal(error, for: request.head, requestVerified: true)
        }
    }

    /// `DELETE /v1/devices/{keyId}`, signed by the active key of the same device (the current
    /// asymmetric key or the current HMAC secret): revokes every key of the device, effective from the
    /// next request.
    func revoke(_ request: Request, context: SigilBasicRequestContext) async throws -> Response {
        let identity = try context.requireSigilIdentity()
        do {
            let deviceID = try await ownDevice(of: context.parameters.get("keyId"), identity: identity)
            // Checked before the write, not inside it: a revocation only takes rights away, so one that a
            // racing rotation overtakes still revokes the key that rotation added.
            let acting = try await registry.key(for: identity.keyID)
            if let refusal = DirectoryChange.refusal(actingKey: acting, keyID: identity.keyID, now: clock.now()) {
                throw refusal
            }
            try await registry.apply(DirectoryChange(revokedDevices: [deviceID]))
            context.logger.info("device revoked", metadata: ["sigil.device": "\(deviceID)"])
            return Response(status: .noContent)
        } catch let error as SigilError {
            throw middleware.refusal(error, for: request.head, requestVerified: true)
        }
    }

    // MARK: Certificates

    struct CertificateRequest: Decodable { let csr: String }
    struct IssuedCertificate: Encodable {
        let certificate: String
        let caCertificate: String
    }

    /// `POST /v1/certificates`: a CSR signed by the same key that signed the request, the device's
    /// active key, gets a client certificate, recorded in the directory in the same transaction that
    /// checks the key.
    func issueCertificate(_ request: Request, context: SigilBasicRequestContext) async throws -> Response {
        let identity = try context.requireSigilIdentity()
        do {
            guard let certificateAuthority else {
                throw SigilError(.forbidden, "this server has no client CA (run `sigil ca init`)")
            }
            guard let deviceID = identity.deviceID else {
                throw SigilError(.forbidden, "the signing key belongs to no device")
            }
            let body = try await Self.readBody(request, limit: Self.registrationBodyLimit)
            let submission: CertificateRequest
            do {
                submission = try JSONDecoder().decode(CertificateRequest.self, from: Data(body))
            } catch {
                throw SigilError(.invalidRegistration, "the body must be JSON with csr")
            }
            let csr = try CertificateAuthority.parseCSR(Array(submission.csr.utf8))
            let certificate = try certificateAuthority.issue(csr, keyID: identity.keyID)
            try await registry.apply(
                DirectoryChange(
                    certificates: [
                        IssuedCertificateRecord(
                            serial: Hex.encode(Array(certificate.serialNumber.bytes)),
                            keyID: identity.keyID,
                            deviceID: deviceID,
                            notAfter: Int64(certificate.notValidAfter.timeIntervalSince1970)
                        )
                    ],
                    actingKeyID: identity.keyID
                )
            )
            return try json(
                IssuedCertificate(
                    certificate: try certificate.serializeAsPEM().pemString + "\n",
                    caCertificate: try certificateAuthority.certificate.serializeAsPEM().pemString + "\n"
                ),
                status: .created
            )
        } catch let error as SigilError {
            throw middleware.refusal(error, for: request.head, requestVerified: true)
        }
    }

    // MARK: Echo

    struct Echo: Encodable {
        struct Certificate: Encodable {
            let subject: String
            let keyId: String?
            let pin: String
        }
        let keyId: String
        let deviceId: String?
        let userId: String?
        let alg: String
        let profile: String
        let clientCertificate: Certificate?
        let body: String?
        let bodyBase64: String?
    }

    /// `POST /v1/echo`: the verified identity and the body.
    func echo(_ request: Request, context: SigilBasicRequestContext) async throws -> Response {
        let identity = try context.requireSigilIdentity()
        let body = try await Self.readBody(request, limit: verifierConfiguration.bodyLimit)
        let text = String(validating: body, as: UTF8.self)
        return try json(
            Echo(
                keyId: identity.keyID,
                deviceId: identity.deviceID,
                userId: identity.userID,
                alg: identity.request.algorithm.rawValue,
                profile: identity.request.profile.rawValue,
                clientCertificate: identity.clientCertificate.map {
                    .init(subject: $0.subject, keyId: $0.sigilKeyID, pin: $0.pin)
                },
                body: text,
                bodyBase64: text == nil ? Base64.encode(body) : nil
            )
        )
    }

    /// `POST /bench/unverified`: what `/v1/echo` does, without verification (the baseline of `sigil bench http`).
    func addBenchmarkRoute(to router: Router<SigilBasicRequestContext>) {
        router.post("bench/unverified") { request, _ in
            let body = try await Self.readBody(request, limit: verifierConfiguration.bodyLimit)
            let text = String(validating: body, as: UTF8.self)
            return try json(
                Echo(
                    keyId: "", deviceId: nil, userId: nil, alg: "", profile: "", clientCertificate: nil, body: text,
                    bodyBase64: text == nil ? Base64.encode(body) : nil))
        }
    }

    // MARK: Helpers

    /// Reads a body, refusing with `body-too-large` as soon as it passes `limit`.
    static func readBody(_ request: Request, limit: Int) async throws -> [UInt8] {
        if let length = request.headers[.contentLength].flatMap(Int.init), length > limit {
            throw SigilError(.bodyTooLarge, "the body is larger than \(limit) bytes")
        }
        var body = [UInt8]()
        for try await chunk in request.body {
            guard body.count + chunk.readableBytes <= limit else {
                throw SigilError(.bodyTooLarge, "the body is larger than \(limit) bytes")
            }
            body += chunk.readableBytesView
        }
        return body
    }
}

/// A JSON response with sorted keys.
func json(_ value: some Encodable, status: HTTPResponse.Status = .ok) throws -> Response {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    let data = try encoder.encode(value)
    return Response(
        status: status,
        headers: [.contentType: "application/json"],
        body: .init(byteBuffer: ByteBuffer(bytes: data))
    )
}
