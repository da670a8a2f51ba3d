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
struct AppAttestEvidence: EnrollmentEvidence {
    let enrollment: AttestationEnrollment?

    func isCarried(by submission: Registration.KeySubmission) -> Bool { submission.attestation != nil }

    var admitsByItself: Bool { true }

    func provenKey(_ submission: Registration.KeySubmission, now: Int64) async throws -> ProvenKey {
        guard let evidence = submission.attestation else {
            throw SigilError(.invalidRegistration, "no attestation")
        }
        guard let enrollment else {
            throw SigilError(.enrollmentRefused, "this server does not enroll by App Attest")
        }
        guard submission.alg == SignatureAlgorithm.appleAppAttest.rawValue else {
            throw SigilError(.invalidRegistration, "an attestation registers an apple-appattest key only")
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
        let (key, receipt) = try await enrollment.verifier.attestedKey(
            object, keyID: keyID, clientDataHash: Array(SHA256.hash(data: Array(evidence.challenge.utf8))))
        return ProvenKey(
            key: key, attestation: enrollment.verifier.summary(of: object), receipt: receipt, spends: spends)
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
