import Crypto
import Foundation
import HTTPTypes
import Logging
import Metrics
@_spi(Sigil) import SigilCore

/// The registration API, free of any web framework: device registration with proof of possession,
/// enrollment policy, per-device HMAC secrets, key rotation, revocation and client certificates.
///
/// Each operation takes the request as verified (or, for registration, the request and its body) and
/// returns the typed answer of ``Registration``; an adapter (SigilHummingbird's
/// `SigilRegistrationRoutes`) reads bodies, encodes answers and turns a thrown ``SigilError`` into a
/// refusal, signed when ``SigilError/requestVerified`` says the request's signature verified.
///
/// Rules every operation keeps: only the device's active key (its current key pair or current HMAC
/// secret) manages the device, checked inside the write; nothing is added to a revoked device; an
/// HMAC secret is issued only to a request signed with the device's key pair.
public struct RegistrationService: Sendable {
    /// Timings and limits.
    public struct Configuration: Sendable {
        /// How requests are verified: profiles, window, labels. Registration bodies are read up to ``bodyLimit``.
        public var verifier: VerifierConfiguration
        /// How long a device's earlier HMAC secrets stay valid after a new one is issued, in seconds.
        public var secretOverlap: Int64 = 86_400
        /// How long a rotated-out key (and the secrets fetched with it) stays valid, in seconds.
        public var rotationGrace: Int64 = 86_400
        /// The most a registration, rotation or certificate body may hold (an ML-DSA-87 public key
        /// in PEM is about 3.5 KB).
        public var bodyLimit = 64 << 10
        /// The key kinds beyond the built-in ones devices may register (`.withRSA` from SigilRSA).
        public var keyFormats: KeyFormats = .builtIn
        /// The path prefixes whose routes take App Attest assertions only (the protected routes'
        /// ``Exchange/assertionPaths``), published in discovery so App Attest devices sign them so.
        public var assertionPaths: [String] = []
        /// The TLS pins discovery publishes, read at each discovery answer, when they move (a server
        /// whose TLS key rotates: the key served now, then the next key's and the backup pins); `nil`
        /// publishes the fixed pins the routes were given.
        public var publishedPins: (@Sendable () -> (pins: [String], backupPins: [String]))?

        /// Creates a configuration.
        public init(verifier: VerifierConfiguration = VerifierConfiguration()) { self.verifier = verifier }
    }

    let directory: Directory
    let nonces: any NonceStore
    let enrollment: any EnrollmentAuthorizer
    let certificates: (any ClientCertificateIssuer)?
    /// App Attest enrollment: the attestation verifier and the challenges it answers.
    let attestation: AttestationEnrollment?
    /// Android Key Attestation enrollment.
    let android: AndroidEnrollment?
    /// The configuration.
    public let configuration: Configuration
    let clock: any UnixClock
    let metricsFactory: any MetricsFactory
    let logger: Logger
    /// The registration of a key alone, proved by the request's own signature.
    let submittedKey: SubmittedKey
    /// The kinds of attestation a registration may carry (at most one), each with its devices' rights.
    let attestedKinds: [any EnrollmentEvidence]

    /// Creates the service.
    ///
    /// - Parameters:
    ///   - directory: where devices and keys live; every change is one atomic ``DirectoryChange``.
    ///   - nonces: the nonce store the rest of the server verifies with, so a registration cannot be replayed.
    ///   - enrollment: who may register.
    ///   - certificates: the client CA, if the server issues client certificates.
    ///   - attestation: App Attest enrollment (`apple-appattest` keys admitted by attestation); the
    ///     verifier's ``VerifierConfiguration/assertions`` must then check their assertions.
    ///   - android: Android Key Attestation enrollment (`ecdsa-p256-sha256` Keystore keys admitted by
    ///     their attestation chain).
    public init(
        directory: Directory,
        nonces: any NonceStore,
        enrollment: any EnrollmentAuthorizer,
        certificates: (any ClientCertificateIssuer)? = nil,
        attestation: AttestationEnrollment? = nil,
        android: AndroidEnrollment? = nil,
        configuration: Configuration = Configuration(),
        clock: any UnixClock = SystemUnixClock(),
        metricsFactory: any MetricsFactory = MetricsSystem.factory,
        logger: Logger = Logger(label: "sigil.registration")
    ) {
        self.directory = directory
        self.nonces = nonces
        self.enrollment = enrollment
        self.certificates = certificates
        self.attestation = attestation
        self.android = android
        self.configuration = configuration
        self.clock = clock
        self.metricsFactory = metricsFactory
        self.logger = logger
        let submitted = SubmittedKey(keyFormats: configuration.keyFormats)
        self.submittedKey = submitted
        self.attestedKinds = [
            AppAttestEvidence(
                enrollment: attestation, submittedKey: submitted,
                checksAssertions: configuration.verifier.assertions != nil),
            AndroidKeyEvidence(enrollment: android, submittedKey: submitted),
        ]
        if attestation != nil && configuration.verifier.assertions == nil {
            // Said at start, not at the first enrollment: one half of App Attest's wiring is missing.
            logger.error(
                "App Attest enrollment is on, but the verifier checks no assertions (VerifierConfiguration.assertions): every App Attest enrollment is refused until it does"
            )
        }
    }

    // MARK: Discovery

    /// The algorithms discovery lists: those whose keys this server reads (RSA only with a format
    /// added, `.withRSA`), App Attest only when attestations are taken.
    var advertisedAlgorithms: [SignatureAlgorithm] {
        SignatureAlgorithm.allCases.filter { algorithm in
            guard let entry = AlgorithmEntry.of(algorithm) else { return false }
            if algorithm == .appleAppAttest { return attestation != nil }
            return entry.isBuiltIn || configuration.keyFormats.formats.contains { $0.algorithms.contains(algorithm) }
        }
    }

    /// The discovery document (`GET /.well-known/sigil`).
    ///
    /// - Parameters:
    ///   - responseSigner: the key responses are signed with, published so devices can check them.
    ///   - pins: the SPKI pins of the server's TLS chain; `backupPins`: the keys it may move to.
    ///   - sealing: the keys request bodies may be sealed to, listed current first.
    public func discovery(
        responseSigner: ResponseSigner?, pins: [String], backupPins: [String], sealing: SealedBodies? = nil
    ) -> Registration.Discovery {
        let keys = (responseSigner?.publishedKeys ?? []).compactMap { keyID, key, state in
            Registration.Discovery.Key(keyID: keyID, key: key, state: state)
        }
        var discovery = Registration.Discovery(
            responseKeys: keys,
            profiles: configuration.verifier.profiles.map(\.rawValue).sorted(),
            algorithms: advertisedAlgorithms.map(\.rawValue),
            maxSkew: configuration.verifier.maxSkew,
            serverTime: clock.now(),
            pins: pins,
            backupPins: backupPins
        )
        discovery.sealingKeys = sealing?.discoveryKeys
        discovery.sealedSecrets = true
        if !configuration.assertionPaths.isEmpty { discovery.assertionPaths = configuration.assertionPaths }
        discovery.keysTag = responseSigner?.ring?.keysTag
        return discovery
    }

    // MARK: Registration

    /// Registers a device (`POST /v1/devices`): the enrollment policy admits the request, and the
    /// public key in `body` must have signed the request itself (proof of possession, nonce recorded).
    ///
    /// - Parameters:
    ///   - request: the request's head, with its signature headers and credentials.
    ///   - body: the whole body, a ``Registration/KeySubmission`` read up to ``Configuration/bodyLimit``.
    /// - Returns: the answer and the verified request, to sign the answer for.
    /// - Throws: ``SigilError``: `enrollment-refused`, `invalid-registration`, or any verification code.
    public func register(_ request: HTTPRequest, body: [UInt8]) async throws
        -> (registered: Registration.Registered, verified: VerifiedRequest)
    {
        try BodyReader.check(body.count, limit: configuration.bodyLimit)
        let submission = try decode(Registration.KeySubmission.self, from: body, fields: "alg and publicKey")
        let carried = attestedKinds.filter { $0.isCarried(by: submission) }
        try Self.checkCredential(submission, request: request, attested: !carried.isEmpty)
        guard carried.count <= 1 else {
            throw SigilError(.invalidRegistration, "a registration carries one attestation")
        }
        let evidence = carried.first ?? submittedKey
        // Evidence that admits the device by itself takes a credential only to name the user;
        // otherwise the enrollment policy admits the request before the key is read.
        var userID = evidence.admitsByItself ? nil : try await enrollment.authorize(request)
        let proven = try await evidence.provenKey(submission, now: clock.now())
        if evidence.admitsByItself, request.headerFields[.authorization] != nil {
            userID = try await enrollment.authorize(request)
        }
        let key = proven.key
        let sealingKey = try Self.sealingKey(of: submission)
        guard let keyID = key.derivedKeyID else { throw SigilError(.invalidRegistration, "not a public key") }
        var verifierConfiguration = configuration.verifier
        verifierConfiguration.bodyLimit = configuration.bodyLimit
        // The proof's key is in no directory yet: its first use is the first request it signs once
        // registered (noted now, it would be written to no row and then hold back that first use).
        verifierConfiguration.usage = nil
        // Its directory holds the submitted key alone: its refusals say nothing of the server's keys.
        verifierConfiguration.statesKeyFacts = false
        let proof = RequestVerifier(
            keys: MemoryKeyDirectory([RegisteredKey(keyID: keyID, key: key)]),
            nonces: nonces,
            clock: clock,
            configuration: verifierConfiguration,
            metricsFactory: metricsFactory
        )
        let verified = try await proof.verify(request, body: body)
        return try await verifiedRequest {
            // What the registration uses up, now that it is authentic, in its own transaction: the
            // attestation's challenge, a single-use credential.
            var spent = proven.spends.map { [$0] } ?? []
            if let credential = try await enrollment.singleUse(of: request) { spent.append(credential) }
            let deviceID = "dev-" + Hex.random(bytes: 16)
            // The App Attest key an attestation vouched for the key with, registered beside it.
            let assertionKey = proven.assertionKey.flatMap { key in
                key.derivedKeyID.map { (keyID: $0, key: key) }
            }
            try await directory.apply(
                DirectoryChange(
                    added: [
                        RegisteredKey(
                            keyID: keyID, key: key, deviceID: deviceID, userID: userID, createdAt: clock.now(),
                            deviceAttestation: proven.attestation)
                    ]
                        + (assertionKey.map { assertion in
                            [
                                RegisteredKey(
                                    keyID: assertion.keyID, key: assertion.key, deviceID: deviceID, userID: userID,
                                    createdAt: clock.now(), deviceAttestation: proven.attestation)
                            ]
                        } ?? []),
                    sealingKeys: sealingKey.map { [(deviceID, $0)] } ?? [],
                    audit: [
                        audit(
                            evidence.admitsByItself ? .attested : .registered,
                            device: deviceID, key: keyID, user: userID, actor: keyID, reason: proven.attestation)
                    ],
                    spent: spent
                )
            )
            logger.info("device registered", metadata: ["sigil.device": "\(deviceID)", "sigil.key-id": "\(keyID)"])
            if proven.attestation == RegisteredKey.appAttestDebug {
                logger.warning(
                    "device enrolled with an App Attest debug token: it proves no genuine device",
                    metadata: ["sigil.device": "\(deviceID)", "sigil.key-id": "\(keyID)"])
            }
            if let receipt = proven.receipt, let store = attestation?.store {
                // Once the key is registered (a key registered already keeps its receipt); the
                // enrollment stands without it, the fraud metric being a later, optional read.
                do {
                    try await store.keepReceipt(receipt, keyID: assertionKey?.keyID ?? keyID)
                } catch {
                    logger.warning("the attestation's receipt was not kept", metadata: ["sigil.key-id": "\(keyID)"])
                }
            }
            let registered = Registration.Registered(
                keyId: keyID, deviceId: deviceID, alg: key.algorithm.rawValue, userId: userID)
            return (registered, verified)
        }
    }

    /// A challenge for App Attest enrollment.
    ///
    /// - Throws: `forbidden` when this server does not enroll by attestation.
    public func attestationChallenge() throws -> Registration.AttestationChallenge {
        guard let challenges = attestation?.challenges ?? android?.challenges else {
            throw SigilError(.forbidden, "this server does not enroll by attestation")
        }
        return challenges.issue(now: clock.now())
    }

    /// The credential the signed body names must be the request's `Authorization`, which no
    /// signature covers. A body that names none may come with a credential only when it registers a
    /// key by itself (an older client); an attested registration (App Attest or Android), which needs no credential, takes
    /// one only bound, so a proxy cannot add its own JWT to tie the device to its account.
    ///
    /// - Throws: `enrollment-refused`.
    static func checkCredential(_ submission: Registration.KeySubmission, request: HTTPRequest, attested: Bool) throws {
        let authorization = request.headerFields[.authorization]
        if let credential = submission.credential {
            guard let authorization,
                credential.lowercased() == Registration.KeySubmission.credentialHash(of: authorization)
            else {
                throw SigilError(.enrollmentRefused, "the Authorization field is not the credential the body names")
            }
        } else if authorization != nil, attested {
            throw SigilError(
                .enrollmentRefused, "a credential sent with an attestation must be named in the body (credential)")
        }
    }

    /// The verification key of a ``Registration/KeySubmission``.
    ///
    /// - Throws: `invalid-registration` for an unknown algorithm, an HMAC secret, a private key, or
    ///   a key that does not parse or cannot be used with the algorithm.
    public func publicKey(of submission: Registration.KeySubmission) throws -> VerificationKey {
        try submittedKey.key(of: submission)
    }

    /// What the device whose keys are `keys` may do, and the name of the kind it enrolled by: the
    /// first attested kind that recorded one of its keys; a device recorded by an attestation no kind
    /// here knows may do nothing beyond signing (fail closed); else a device enrolled by its key.
    func rights(of keys: [RegisteredKey]) -> (rights: DeviceRights, kind: String) {
        for kind in attestedKinds where keys.contains(where: kind.enrolled) { return (kind.rights, kind.name) }
        if keys.contains(where: { $0.deviceAttestation != nil }) {
            return (.unknown, "an attestation this server does not know")
        }
        return (submittedKey.rights, submittedKey.name)
    }

    /// Refuses (`forbidden`) an HMAC secret to a device whose kind gives it none.
    func refuseSecret(_ keys: [RegisteredKey]) throws {
        let (rights, kind) = rights(of: keys)
        guard rights.getsSecrets else {
            throw SigilError(
                .forbidden,
                "a device enrolled by \(kind) gets no HMAC secret (it would sign from anywhere, outside the attested key)"
            )
        }
    }

    /// The device's X-Wing key a submission names, if any.
    ///
    /// - Throws: `invalid-registration` for a key that is not X-Wing, does not decode or has another ID.
    static func sealingKey(of submission: Registration.KeySubmission) throws -> SealingPublicKey? {
        do {
            return try submission.sealingKey?.key()
        } catch {
            throw SigilError(.invalidRegistration, "sealingKey is not an X-Wing key in base64 under its own key ID")
        }
    }

    // MARK: Secrets

    /// Issues a fresh 32-byte HMAC secret to the device of `keyID` (`POST /v1/devices/{keyId}/secret`);
    /// the device's earlier secrets stay valid for ``Configuration/secretOverlap``.
    ///
    /// - Parameter request: the verified request, which must be signed with the device's key pair.
    /// - Warning: the answer holds the secret: send it with `Cache-Control: no-store`, never log it.
    public func issueSecret(toDeviceOf keyID: String, for request: VerifiedRequest) async throws
        -> Registration.IssuedSecret
    {
        try await verifiedRequest {
            let deviceID = try await ownDevice(of: keyID, request: request)
            guard request.algorithm != .hmacSHA256 else {
                throw SigilError(.forbidden, "a secret is issued only to a request signed with the device's key")
            }
            try refuseSecret(try await directory.keys(ofDevice: deviceID))
            return try await newSecret(forDevice: deviceID, userID: request.userID, actingKeyID: request.keyID)
        }
    }

    /// Issues a fresh HMAC secret to a device that registered a sealing key, sealed to it, on the
    /// server's own initiative: for delivery by push (``Registration/SecretPush``, signed with the
    /// response key). The device's earlier secrets stay valid for ``Configuration/secretOverlap``.
    ///
    /// - Parameter actor: who issues it, for the audit trail (`operator:<name>` for an operator's
    ///   command); `server` when `nil`.
    /// - Throws: `forbidden` for a device with no sealing key (a secret is never pushed in the clear),
    ///   `unknown-key` for an unknown device, `revoked-key` for a revoked one.
    public func issueSealedSecret(toDevice deviceID: String, actor: String? = nil) async throws
        -> Registration.IssuedSecret
    {
        let keys = try await directory.keys(ofDevice: deviceID)
        guard let userID = keys.first.map(\.userID) else {
            throw SigilError(.unknownKey, "no device \(deviceID.prefix(128))")
        }
        try refuseSecret(keys)
        return try await newSecret(
            forDevice: deviceID, userID: userID, actingKeyID: nil, actor: actor, requireSealed: true)
    }

    /// A new secret for `deviceID`, sealed to the device's X-Wing key when it has one; the device's
    /// usable secrets retire after the overlap, in the same write.
    func newSecret(
        forDevice deviceID: String, userID: String?, actingKeyID: String?, actor: String? = nil,
        requireSealed: Bool = false
    ) async throws -> Registration.IssuedSecret {
        let now = clock.now()
        let keys = try await directory.keys(ofDevice: deviceID)
        // Read uncached with the device's keys: a sealing key replaced by a rotation is never used.
        let sealingKey = keys.lazy.compactMap(\.sealingKey).first
        guard sealingKey != nil || !requireSealed else {
            throw SigilError(.forbidden, "device \(deviceID) registered no sealing key; its secret cannot be pushed")
        }
        let previous = keys.filter { $0.key.algorithm == .hmacSHA256 && $0.isUsable(at: now) }
        let secret = SymmetricKey(size: .bits256)
        let secretKeyID = "hmac-" + Hex.random(bytes: 8)
        let end = now + configuration.secretOverlap
        try await directory.apply(
            DirectoryChange(
                added: [
                    RegisteredKey(
                        keyID: secretKeyID,
                        key: try VerificationKey(hmacSecret: secret),
                        deviceID: deviceID,
                        userID: userID,
                        createdAt: now
                    )
                ],
                retiring: previous.map { ($0.keyID, end) },
                sealingKeyRead: (deviceID, sealingKey),
                actingKeyID: actingKeyID,
                audit: [
                    audit(
                        .secretIssued, device: deviceID, key: secretKeyID, user: userID,
                        actor: actor ?? actingKeyID ?? "server", reason: sealingKey == nil ? nil : "sealed")
                ]
            )
        )
        logger.info(
            "secret issued",
            metadata: [
                "sigil.device": "\(deviceID)", "sigil.secret-key-id": "\(secretKeyID)",
                "sigil.sealed": "\(sealingKey != nil)",
            ])
        let bytes = secret.withUnsafeBytes { Array($0) }
        return Registration.IssuedSecret(
            keyId: secretKeyID,
            alg: SignatureAlgorithm.hmacSHA256.rawValue,
            secret: sealingKey == nil ? Base64.encode(bytes) : nil,
            sealedSecret: try sealingKey.map {
                Base64.encode(try Sealing.sealSecret(bytes, keyID: secretKeyID, to: $0))
            },
            issuedAt: now,
            previousKeysValidUntil: previous.isEmpty ? nil : end
        )
    }

    /// The device of the key `keyID`, which must be the signer's own device.
    func ownDevice(of keyID: String, request: VerifiedRequest) async throws -> String {
        guard let deviceID = request.deviceID else {
            throw SigilError(.forbidden, "the signing key belongs to no device")
        }
        let own = Identifiers.same(keyID, request.keyID)
        let named = own ? nil : try await directory.key(for: keyID)
        guard own || Identifiers.same(named?.deviceID, deviceID) else {
            throw SigilError(.forbidden, "key \(request.keyID) may not act on key \(keyID.prefix(128))")
        }
        return deviceID
    }

    // MARK: Rotation and revocation

    /// Registers the device's next key (`POST /v1/keys/rotate`, signed by the current key pair); the
    /// current key and the device's HMAC secrets stay valid for ``Configuration/rotationGrace``.
    ///
    /// - Parameter body: a ``Registration/Rotation`` whose proof is the next key's signature over
    ///   ``RotationProof`` for this request's nonce.
    ///
    /// - Parameter serverKeyID: the key ID of the response key the answer is signed with, which the
    ///   proof must name (a proof for another server is refused).
    public func rotate(_ body: [UInt8], for request: VerifiedRequest, serverKeyID: String?) async throws
        -> Registration.Registered
    {
        try await rotate(body, for: request, serverKeyIDs: serverKeyID.map { [$0] } ?? [])
    }

    /// Registers the device's next key, as ``rotate(_:for:serverKeyID:)`` does, with a proof that may
    /// name any of `serverKeyIDs` (the response keys published around a server key's promotion).
    public func rotate(_ body: [UInt8], for request: VerifiedRequest, serverKeyIDs: Set<String>) async throws
        -> Registration.Registered
    {
        try await verifiedRequest {
            guard let deviceID = request.deviceID, request.algorithm != .hmacSHA256 else {
                throw SigilError(.forbidden, "rotation must be signed with the device's current key")
            }
            let deviceKeys = try await directory.keys(ofDevice: deviceID)
            let now = clock.now()
            // What the rotation retires: the signer, or, when the device's App Attest key signs it (an
            // assertion: the genuine app asks), the key its attestation vouched for. Nothing else moves
            // an attested device's key: its proof would end with the key it covers.
            let retiring: [String]
            let (rights, kind) = rights(of: deviceKeys)
            switch rights.rotation {
            case .bySigner:
                retiring = [request.keyID]
            case .byAssertion:
                guard request.algorithm == .appleAppAttest else {
                    throw SigilError(
                        .forbidden, "a key \(kind) vouched for rotates only by an assertion of the device's \(kind) key"
                    )
                }
                retiring = deviceKeys.filter { key in
                    key.key.algorithm != .appleAppAttest && key.key.algorithm != .hmacSHA256 && key.isActive(at: now)
                }.map(\.keyID)
                guard !retiring.isEmpty else {
                    // Its assertion key is the device's only key: rotating it away would drop the proof
                    // that the genuine app holds the key.
                    throw SigilError(
                        .forbidden, "a device enrolled by \(kind) does not rotate; it enrolls a new attested key")
                }
            case .never:
                throw SigilError(
                    .forbidden, "a device enrolled by \(kind) does not rotate; it enrolls a new attested key")
            }
            try BodyReader.check(body.count, limit: configuration.bodyLimit)
            let rotation = try decode(Registration.Rotation.self, from: body, fields: "alg, publicKey and proof")
            let key = try publicKey(of: rotation.submission)
            let sealingKey = try Self.sealingKey(of: rotation.submission)
            // A device that seals its secrets rotates its sealing key with its signing key: a key
            // copied with the device's store must not keep opening the secrets issued after it.
            let current = deviceKeys.lazy.compactMap(\.sealingKey).first
            if let current, sealingKey == nil || sealingKey == current {
                throw SigilError(
                    .invalidRegistration, "this device seals its secrets: the rotation must name a new sealingKey")
            }
            guard let newKeyID = key.derivedKeyID else { throw SigilError(.invalidRegistration, "not a public key") }
            guard !serverKeyIDs.isEmpty else {
                throw SigilError(.forbidden, "this server signs no answers, so a rotation cannot name it")
            }
            guard let proof = Base64URL.decode(rotation.proof),
                serverKeyIDs.sorted().contains(where: { serverKeyID in
                    let message = RotationProof.message(
                        serverKeyID: serverKeyID, currentKeyID: request.keyID, newKeyID: newKeyID,
                        nonce: request.nonce)
                    return key.isValidSignature(proof, for: message, profile: .sigilV1)
                })
            else {
                throw SigilError(.invalidRegistration, "proof is not the new key's signature of the rotation message")
            }
            try await directory.apply(
                DirectoryChange(
                    added: [
                        RegisteredKey(
                            keyID: newKeyID, key: key, deviceID: deviceID, userID: request.userID, createdAt: now)
                    ],
                    retiring: retiring.map { ($0, now + configuration.rotationGrace) },
                    // A secret fetched with the old key (perhaps by whoever stole it) ends with it.
                    retiringSecrets: (deviceID, now + configuration.rotationGrace),
                    sealingKeys: sealingKey.map { [(deviceID, $0)] } ?? [],
                    sealingKeyRead: (deviceID, current),
                    actingKeyID: request.keyID,
                    audit: [
                        audit(.rotated, device: deviceID, key: newKeyID, user: request.userID, actor: request.keyID)
                    ]
                )
            )
            logger.info("key rotated", metadata: ["sigil.device": "\(deviceID)", "sigil.key-id": "\(newKeyID)"])
            return Registration.Registered(
                keyId: newKeyID, deviceId: deviceID, alg: key.algorithm.rawValue, userId: request.userID)
        }
    }

    /// Revokes every key of the device of `keyID` (`DELETE /v1/devices/{keyId}`), signed by the active
    /// key of the same device; effective from the next request.
    public func revoke(deviceOf keyID: String, for request: VerifiedRequest) async throws {
        try await verifiedRequest {
            let deviceID = try await ownDevice(of: keyID, request: request)
            // Checked before the write, not inside it: a revocation only takes rights away, so one that a
            // racing rotation overtakes still revokes the key that rotation added.
            let acting = try await directory.key(for: request.keyID)
            if let refusal = DirectoryChange.refusal(actingKey: acting, keyID: request.keyID, now: clock.now()) {
                throw refusal
            }
            try await directory.apply(
                DirectoryChange(
                    revokedDevices: [deviceID],
                    audit: [
                        audit(
                            .revoked, device: deviceID, user: request.userID, actor: request.keyID,
                            reason: "by the device")
                    ]))
            logger.info("device revoked", metadata: ["sigil.device": "\(deviceID)"])
        }
    }

    // MARK: Certificates

    /// Issues a client certificate (`POST /v1/certificates`) for a CSR signed by the key that signed
    /// the request, the device's active key; recorded in the same write that checks the key.
    ///
    /// - Parameter body: a ``Registration/CertificateRequest``.
    public func issueCertificate(_ body: [UInt8], for request: VerifiedRequest) async throws
        -> Registration.IssuedCertificate
    {
        try await verifiedRequest {
            guard let certificates else {
                throw SigilError(.forbidden, "this server has no client CA (run `sigil ca init`)")
            }
            guard let deviceID = request.deviceID else {
                throw SigilError(.forbidden, "the signing key belongs to no device")
            }
            try BodyReader.check(body.count, limit: configuration.bodyLimit)
            let submission = try decode(Registration.CertificateRequest.self, from: body, fields: "csr")
            let issued = try certificates.issue(csrPEM: submission.csr, keyID: request.keyID)
            try await directory.apply(
                DirectoryChange(
                    certificates: [
                        IssuedCertificateRecord(
                            serial: issued.serial, keyID: request.keyID, deviceID: deviceID, notAfter: issued.notAfter)
                    ],
                    actingKeyID: request.keyID,
                    audit: [
                        audit(
                            .certificateIssued, device: deviceID, key: request.keyID, user: request.userID,
                            actor: request.keyID, reason: "serial \(issued.serial)")
                    ]
                )
            )
            return Registration.IssuedCertificate(
                certificate: issued.certificatePEM, caCertificate: issued.caCertificatePEM)
        }
    }

    // MARK: Helpers

    /// An audit row of a change made now, from the client of the request being served.
    func audit(
        _ action: AuditEntry.Action, device: String, key: String? = nil, user: String?, actor: String,
        reason: String? = nil
    ) -> AuditEntry {
        AuditEntry(
            time: clock.now(), action: action, deviceID: device, keyID: key, userID: user, actor: actor,
            clientAddress: AuditContext.clientAddress, reason: reason)
    }

    /// Runs `body` for a request whose signature verified: its refusals say so, to be signed.
    func verifiedRequest<Result>(_ body: () async throws -> Result) async throws -> Result {
        do {
            return try await body()
        } catch let error as SigilError {
            throw error.ofVerifiedRequest()
        }
    }

    func decode<Message: Decodable>(_ type: Message.Type, from body: [UInt8], fields: String) throws -> Message {
        do {
            return try JSONDecoder().decode(type, from: Data(body))
        } catch {
            throw SigilError(.invalidRegistration, "the body must be JSON with \(fields)")
        }
    }
}
