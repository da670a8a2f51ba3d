import Crypto
@_spi(Sigil) import SigilCore

/// One kind of evidence a registration proves its key with (PROTOCOL.md section 8): a public key the
/// request's own signature proves, an App Attest attestation, or an Android Key Attestation chain.
/// ``RegistrationService`` picks the kind a submission carries and asks it for the key; it branches on
/// nothing else.
protocol EnrollmentEvidence: Sendable {
    /// Whether `submission` carries this kind of evidence.
    func isCarried(by submission: Registration.KeySubmission) -> Bool
    /// Whether the evidence admits the device by itself (an attestation), so that a credential is
    /// optional and, when sent, names the user; else the enrollment policy admits the request first.
    var admitsByItself: Bool { get }
    /// The key the evidence proves, checked before the registration's signature is; spends nothing.
    ///
    /// - Throws: ``SigilError`` `enrollment-refused` or `invalid-registration`, naming the failed step.
    func provenKey(_ submission: Registration.KeySubmission, now: Int64) async throws -> ProvenKey
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

    func isCarried(by submission: Registration.KeySubmission) -> Bool {
        submission.attestation == nil && submission.androidKeyAttestation == nil
    }

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

    func isCarried(by submission: Registration.KeySubmission) -> Bool { submission.attestation != nil }

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

    func isCarried(by submission: Registration.KeySubmission) -> Bool { submission.androidKeyAttestation != nil }

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
