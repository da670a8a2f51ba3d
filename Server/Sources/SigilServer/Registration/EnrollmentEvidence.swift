import Crypto
@_spi(Sigil) import SigilCore

/// One kind of evidence a registration proves its key with (PROTOCOL.md section 8): a public key the
/// request's own signature proves, an App Attest attestation, or an Android Key Attestation chain.
/// Each kind says what it carries, how it is verified, and what its devices may do (``rights``);
/// ``RegistrationService`` picks the kind a submission carries, asks it for the key, and reads a
/// device's rights from the kind that recorded it. It decides nothing by kind itself.
///
/// A new kind is a type here (or in its verifier's module), a field of the registration message,
/// its options, and a line in ``RegistrationService``'s list of kinds.
protocol EnrollmentEvidence: Sendable {
    /// The kind's name, as refusals say it (`App Attest`).
    var name: String { get }
    /// Whether `submission` carries this kind of evidence.
    func isCarried(by submission: Registration.KeySubmission) -> Bool
    /// Whether `key` belongs to a device this kind enrolled (its recorded attestation, or its algorithm).
    func enrolled(_ key: RegisteredKey) -> Bool
    /// What the devices it enrolled may do.
    var rights: DeviceRights { get }
    /// Whether the evidence admits the device by itself (an attestation), so that a credential is
    /// optional and, when sent, names the user; else the enrollment policy admits the request first.
    var admitsByItself: Bool { get }
    /// The key the evidence proves, checked before the registration's signature is; spends nothing.
    ///
    /// - Throws: ``SigilError`` `enrollment-refused` or `invalid-registration`, naming the failed step.
    func provenKey(_ submission: Registration.KeySubmission, now: Int64) async throws -> ProvenKey
}

/// What a device may do, by the kind of evidence it enrolled with.
struct DeviceRights: Sendable {
    /// How a device's keys are replaced.
    enum Rotation: Sendable {
        /// By the signer's own rotation request (`POST /v1/keys/rotate`).
        case bySigner
        /// Only by an assertion of the device's App Attest key, which retires the key it vouched for.
        case byAssertion
        /// Never: the device enrolls a new attested key.
        case never
    }

    /// Whether the device may hold an HMAC secret (which signs from anywhere, outside an attested key).
    var getsSecrets: Bool
    /// How its keys rotate.
    var rotation: Rotation

    /// A device enrolled by its key alone.
    static let plain = DeviceRights(getsSecrets: true, rotation: .bySigner)
    /// A device whose attestation no kind here knows: nothing beyond signing (fail closed).
    static let unknown = DeviceRights(getsSecrets: false, rotation: .never)
}

/// What a registration's evidence proved.
struct ProvenKey: Sendable {
    /// The key to register.
    let key: VerificationKey
    /// The device's attestation as the directory records it (``RegisteredKey/deviceAttestation``).
    var attestation: String?
    /// Apple's receipt for the key, kept once it is registered.
    var receipt: [UInt8]?
    /// What the registration spends once its own signature verified: the attestation's challenge.
    var spends: SingleUseCredential?
    /// The App Attest key registered beside ``key`` when an attestation vouched for that key: it signs
    /// the device's assertions (routes that require one, a rotation), the key everything else.
    var assertionKey: VerificationKey?
}

/// A public key in the submission, proved by the registration's own signature.
struct SubmittedKey: EnrollmentEvidence {
    let keyFormats: KeyFormats

    var name: String { "its key" }

    /// The fallback: carried when no other kind is.
    func isCarried(by submission: Registration.KeySubmission) -> Bool { true }

    func enrolled(_ key: RegisteredKey) -> Bool { key.deviceAttestation == nil }

    var rights: DeviceRights { .plain }

    var admitsByItself: Bool { false }

    func provenKey(_ submission: Registration.KeySubmission, now: Int64) throws -> ProvenKey {
        ProvenKey(key: try key(of: submission))
    }

    /// The verification key a submission names.
    ///
    /// - Throws: `invalid-registration` for an unknown algorithm, an HMAC secret, a private key, or
    ///   a key that does not parse or cannot be used with the algorithm.
    func key(of submission: Registration.KeySubmission) throws -> VerificationKey {
        guard let algorithm = SignatureAlgorithm(rawValue: submission.alg) else {
            throw SigilError(.invalidRegistration, "unknown algorithm")
        }
        guard algorithm != .hmacSHA256 else {
            throw SigilError(.invalidRegistration, "HMAC secrets are issued by the server, never registered")
        }
        guard algorithm != .appleAppAttest else {
            throw SigilError(.invalidRegistration, "an apple-appattest key is registered by its attestation")
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
            loaded = try KeyFile.load(Array(pem.utf8), algorithm: algorithm, formats: keyFormats)
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
}

/// An App Attest attestation (`attestation`): Apple's validation steps, then the challenge spent.
///
/// Either the attestation registers the App Attest key itself (`alg: apple-appattest`, every request an
/// assertion), or it vouches for the key the submission names beside it (`alg: ecdsa-p256-sha256`, a
/// Secure Enclave key): its `clientDataHash` then commits to the challenge and to that key's ID
/// (``Registration/AttestedKey``), the device signs with that key, any number of requests at once, and
/// the App Attest key is registered beside it for assertions.
struct AppAttestEvidence: EnrollmentEvidence {
    let enrollment: AttestationEnrollment?
    let submittedKey: SubmittedKey
    /// Whether the server's verifier checks App Attest assertions (``VerifierConfiguration/assertions``):
    /// without it, the App Attest key registered here could sign nothing, and a device would enroll
    /// only to be refused on every assertion.
    let checksAssertions: Bool

    var name: String { "App Attest" }

    func isCarried(by submission: Registration.KeySubmission) -> Bool { submission.attestation != nil }

    /// An App Attest key itself, or any key of a device recorded as `app-attest…`.
    func enrolled(_ key: RegisteredKey) -> Bool {
        key.key.algorithm == .appleAppAttest || key.deviceAttestation?.hasPrefix(RegisteredKey.appAttest) == true
    }

    /// No secret (it would sign with no assertion, so the app's proof would end at enrollment); keys
    /// rotate only by an assertion.
    var rights: DeviceRights { DeviceRights(getsSecrets: false, rotation: .byAssertion) }

    var admitsByItself: Bool { true }

    func provenKey(_ submission: Registration.KeySubmission, now: Int64) async throws -> ProvenKey {
        guard let evidence = submission.attestation else {
            throw SigilError(.invalidRegistration, "no attestation")
        }
        guard let enrollment else {
            throw SigilError(.enrollmentRefused, "this server does not enroll by App Attest")
        }
        guard checksAssertions else {
            throw SigilError(
                .enrollmentRefused,
                "this server enrolls by App Attest but checks no assertions (its VerifierConfiguration.assertions is not set)"
            )
        }
        // The key the attestation vouches for, when it is not the App Attest key itself.
        let vouched: VerificationKey?
        switch submission.alg {
        case SignatureAlgorithm.appleAppAttest.rawValue: vouched = nil
        case SignatureAlgorithm.ecdsaP256SHA256.rawValue: vouched = try submittedKey.key(of: submission)
        default:
            throw SigilError(
                .invalidRegistration,
                "an attestation registers an apple-appattest key, or vouches for an ecdsa-p256-sha256 key")
        }
        guard let keyID = Base64.decode(evidence.keyId), keyID.count == 32,
            let object = Base64.decode(evidence.attestation)
        else {
            throw SigilError(.invalidRegistration, "keyId and attestation must be standard base64")
        }
        // Cheap checks first (this server's, not expired), then Apple's steps. The challenge is spent
        // only with the registration, once its own signature verified too: neither bad attestations
        // nor a copy with a broken signature spend it.
        let spends = try enrollment.challenges.spending(evidence.challenge, now: now)
        let clientDataHash = Registration.AttestedKey.clientDataHash(
            challenge: evidence.challenge, vouchingFor: vouched?.derivedKeyID)
        let (appAttestKey, receipt) = try await enrollment.verifier.attestedKey(
            object, keyID: keyID, clientDataHash: clientDataHash)
        let summary = enrollment.verifier.summary(of: object)
        guard let vouched else {
            return ProvenKey(key: appAttestKey, attestation: summary, receipt: receipt, spends: spends)
        }
        // The device is recorded as App Attest-attested: its key gets no HMAC secret (which would sign
        // from anywhere) and rotates only by an assertion.
        return ProvenKey(
            key: vouched, attestation: summary ?? RegisteredKey.appAttest, receipt: receipt, spends: spends,
            assertionKey: appAttestKey)
    }
}

/// An Android Key Attestation chain (`androidKeyAttestation`): the challenge it carries is one this
/// server issued (checked before anything costly), then the chain, Google's root, the status list and
/// the policy; the submission's own `publicKey`, when it names one, must be the attested key.
struct AndroidKeyEvidence: EnrollmentEvidence {
    let enrollment: AndroidEnrollment?
    let submittedKey: SubmittedKey

    var name: String { "Android Key Attestation" }

    func isCarried(by submission: Registration.KeySubmission) -> Bool { submission.androidKeyAttestation != nil }

    func enrolled(_ key: RegisteredKey) -> Bool { key.deviceAttestation?.hasPrefix("android-key") == true }

    /// No secret and no rotation: either would leave the device signing with a key the attestation
    /// does not cover.
    var rights: DeviceRights { DeviceRights(getsSecrets: false, rotation: .never) }

    var admitsByItself: Bool { true }

    func provenKey(_ submission: Registration.KeySubmission, now: Int64) throws -> ProvenKey {
        guard let chain = submission.androidKeyAttestation else {
            throw SigilError(.invalidRegistration, "no androidKeyAttestation")
        }
        guard let enrollment else {
            throw SigilError(.enrollmentRefused, "this server does not enroll by Android Key Attestation")
        }
        guard submission.alg == SignatureAlgorithm.ecdsaP256SHA256.rawValue else {
            throw SigilError(.invalidRegistration, "an Android Key Attestation registers an ecdsa-p256-sha256 key")
        }
        guard (1...10).contains(chain.count), chain.allSatisfy({ $0.utf8.count <= 16_384 }) else {
            throw SigilError(.invalidRegistration, "androidKeyAttestation holds 1 to 10 certificates")
        }
        let ders = try chain.map { text in
            guard let der = Base64.decode(text) else {
                throw SigilError(.invalidRegistration, "androidKeyAttestation's certificates must be standard base64")
            }
            return der
        }
        let claimed = try enrollment.verifier.claimedChallenge(of: ders)
        guard let challenge = String(validating: claimed, as: UTF8.self) else {
            throw SigilError(.enrollmentRefused, "the attestation challenge is not one this server issued")
        }
        let spends = try enrollment.challenges.spending(challenge, now: now)
        let (key, summary) = try enrollment.verifier.attestedKey(chain: ders, challenge: claimed, at: now)
        if !submission.publicKey.isEmpty {
            guard let named = try? submittedKey.key(of: submission), named.derivedKeyID == key.derivedKeyID else {
                throw SigilError(.invalidRegistration, "publicKey is not the attested key")
            }
        }
        return ProvenKey(key: key, attestation: summary, spends: spends)
    }
}
