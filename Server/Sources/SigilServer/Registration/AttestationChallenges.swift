import Crypto
@_spi(Sigil) import SigilCore

/// One-time challenges for App Attest enrollment (`POST /v1/attest/challenge`): issued without
/// storing anything (an expiry, 16 random bytes and an HMAC of both under the server's key, in
/// base64url), and spent once by recording them in the key directory with the registration that
/// used them, so every replica, and the server after a restart, accepts each challenge once.
public struct AttestationChallenges: Sendable {
    let key: SymmetricKey
    /// How long a challenge may be used, in seconds.
    public var lifetime: Int64 = 300

    /// Creates the issuer with `key`: replicas that accept each other's challenges share it.
    public init(key: SymmetricKey) { self.key = key }

    /// A new challenge, valid until `now + lifetime`.
    public func issue(now: Int64) -> Registration.AttestationChallenge {
        let expiry = now + lifetime
        var body = (0..<8).map { UInt8(truncatingIfNeeded: expiry >> (8 * (7 - $0))) }
        var generator = SystemRandomNumberGenerator()
        body += (0..<16).map { _ in UInt8.random(in: 0...255, using: &generator) }
        let tag = Array(HMAC<SHA256>.authenticationCode(for: body, using: key)).prefix(16)
        return Registration.AttestationChallenge(challenge: Base64URL.encode(body + tag), expiresAt: expiry)
    }

    /// Checks that `challenge` is one this server issued and has not expired at `now`, recording nothing.
    ///
    /// - Returns: its expiry.
    /// - Throws: `enrollment-refused` for any other.
    @discardableResult
    public func check(_ challenge: String, now: Int64) throws -> Int64 {
        guard let bytes = Base64URL.decode(challenge), bytes.count == 40 else {
            throw SigilError(.enrollmentRefused, "the attestation challenge is not one this server issued")
        }
        let expected = Array(HMAC<SHA256>.authenticationCode(for: bytes.prefix(24), using: key)).prefix(16)
        // Compared in constant time.
        guard zip(expected, bytes.suffix(16)).reduce(UInt8(0), { $0 | ($1.0 ^ $1.1) }) == 0 else {
            throw SigilError(.enrollmentRefused, "the attestation challenge is not one this server issued")
        }
        let expiry = bytes.prefix(8).reduce(Int64(0)) { $0 << 8 | Int64($1) }
        guard now <= expiry else { throw SigilError(.enrollmentRefused, "the attestation challenge expired") }
        return expiry
    }

    /// What spending `challenge` records: one this server issued, not expired at `now`; the
    /// registration's ``DirectoryChange/spent`` records it, so it is used once on every replica and
    /// across restarts.
    ///
    /// - Throws: `enrollment-refused` for any other.
    public func spending(_ challenge: String, now: Int64) throws -> SingleUseCredential {
        let expiry = try check(challenge, now: now)
        let digest = SHA256.hash(data: Array(("challenge\u{0}" + challenge).utf8))
        return SingleUseCredential(
            id: Hex.encode(Array(digest)), expiresAt: expiry + 60, what: "attestation challenge")
    }
}

/// Verifies an App Attest attestation for enrollment (SigilAppAttest's `AppAttestVerifier`).
public protocol DeviceAttestationVerifier: Sendable {
    /// Verifies `attestation` of the App Attest key `keyID`, made for `clientDataHash`.
    ///
    /// - Returns: the attested key, for `apple-appattest`, and the attestation's receipt when it is
    ///   Apple's and this attestation's (it lies outside the nonce: a proxy could swap it).
    /// - Throws: ``SigilError`` `enrollment-refused`, naming the failed step.
    func attestedKey(_ attestation: [UInt8], keyID: [UInt8], clientDataHash: [UInt8]) async throws
        -> (key: VerificationKey, receipt: [UInt8]?)
    /// What the device's record and audit say of an attestation this verifier accepted, when it is not
    /// Apple's own (``RegisteredKey/appAttestDebug``); `nil` for Apple's.
    func summary(of attestation: [UInt8]) -> String?
}

extension DeviceAttestationVerifier {
    public func summary(of attestation: [UInt8]) -> String? { nil }
}

/// Enrollment by App Attest: who checks attestations, the challenges they answer, and where the
/// keys' counters and receipts are kept.
public struct AttestationEnrollment: Sendable {
    /// Checks attestations.
    public let verifier: any DeviceAttestationVerifier
    /// Issues and consumes challenges.
    public let challenges: AttestationChallenges
    /// Keeps counters and receipts (the one the verifier's ``AssertionPolicy`` counts with).
    public let store: any AppAttestStore

    /// Creates the configuration.
    public init(verifier: any DeviceAttestationVerifier, challenges: AttestationChallenges, store: any AppAttestStore) {
        self.verifier = verifier
        self.challenges = challenges
        self.store = store
    }
}

/// Verifies an Android Key Attestation chain for enrollment (SigilAndroidAttestation's
/// `AndroidKeyEnrollmentVerifier`).
public protocol AndroidAttestationVerifier: Sendable {
    /// The challenge the chain's leaf carries, read before anything is verified: the server checks it
    /// issued it before it spends signature checks on the chain.
    ///
    /// - Throws: ``SigilError`` `enrollment-refused` when the chain or its Key Description does not read.
    func claimedChallenge(of chain: [[UInt8]]) throws -> [UInt8]

    /// The attested key, once the chain, Google's root, the status list, the challenge and the server's
    /// policy passed at `time`, and the attestation in words, for the device's record
    /// (`android-key,TrustedEnvironment,patch=202602,boot=Verified,app=com.example.app`).
    ///
    /// - Throws: ``SigilError`` `enrollment-refused`, naming the failed check.
    func attestedKey(chain: [[UInt8]], challenge: [UInt8], at time: Int64) throws
        -> (key: VerificationKey, summary: String)
}

/// Enrollment by Android Key Attestation: who checks the chains, and the challenges they answer (the
/// same issuer as App Attest's when a server does both).
public struct AndroidEnrollment: Sendable {
    /// Checks chains.
    public let verifier: any AndroidAttestationVerifier
    /// Issues and consumes challenges.
    public let challenges: AttestationChallenges

    /// Creates the configuration.
    public init(verifier: any AndroidAttestationVerifier, challenges: AttestationChallenges) {
        self.verifier = verifier
        self.challenges = challenges
    }
}
