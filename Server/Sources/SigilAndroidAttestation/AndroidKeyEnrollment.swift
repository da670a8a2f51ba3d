import Crypto
import Foundation
@_spi(Sigil) import SigilCore
import SigilServer
import X509

/// Enrollment by Android Key Attestation for a Sigil server: a chain is accepted when it verifies
/// (``AndroidKeyAttestation/verify(chain:challenge:at:statusList:roots:)``) and passes `policy`; its
/// leaf's P-256 key is then registered as `ecdsa-p256-sha256`.
///
/// ```swift
/// let android = AndroidEnrollment(
///     verifier: AndroidKeyEnrollmentVerifier(policy: AndroidAttestationPolicy(apps: [app]), statusList: list),
///     challenges: AttestationChallenges(key: challengeKey))
/// let service = RegistrationService(directory: directory, nonces: nonces, enrollment: tokens, android: android)
/// ```
public struct AndroidKeyEnrollmentVerifier: AndroidAttestationVerifier {
    /// The rules an attestation must meet.
    public var policy: AndroidAttestationPolicy
    /// Google's status list, if the operator gives one.
    public var statusList: AttestationStatusList?
    /// Or the file it is downloaded to, read again when it changes (taking the place of ``statusList``).
    public var statusFile: AttestationStatusFile?
    /// The trust anchors (Google's hardware roots unless a test says otherwise).
    public var roots: [GoogleAttestationRoots.Root]

    /// A verifier holding chains to `policy`, refusing certificates `statusList` lists.
    public init(
        policy: AndroidAttestationPolicy, statusList: AttestationStatusList? = nil,
        roots: [GoogleAttestationRoots.Root] = GoogleAttestationRoots.hardware
    ) {
        self.policy = policy
        self.statusList = statusList
        self.roots = roots
    }

    public func claimedChallenge(of chain: [[UInt8]]) throws -> [UInt8] {
        do {
            guard let leaf = chain.first, chain.count <= AndroidKeyAttestation.maximumChainLength else {
                throw AndroidAttestationError(.malformed, "a chain has 1 to 10 certificates")
            }
            let certificate: Certificate
            do { certificate = try Certificate(derEncoded: leaf) } catch {
                throw AndroidAttestationError(.malformed, "certificate 0 is not a DER X.509 certificate")
            }
            guard let value = certificate.extensions[oid: KeyDescription.oid]?.value else {
                throw AndroidAttestationError(.keyDescriptionMissing, "the leaf carries no Key Description")
            }
            return try KeyDescription(derEncoded: value).challenge
        } catch let error as AndroidAttestationError {
            throw Self.refusal(error)
        }
    }

    public func attestedKey(chain: [[UInt8]], challenge: [UInt8], at time: Int64) throws
        -> (key: VerificationKey, summary: String)
    {
        let attestation: AndroidKeyAttestation
        do {
            attestation = try AndroidKeyAttestation.verify(
                chain: chain, challenge: challenge, at: Date(timeIntervalSince1970: TimeInterval(time)),
                statusList: statusFile?.list(at: time) ?? statusList, roots: roots)
            try policy.check(attestation)
        } catch let error as AndroidAttestationError {
            throw Self.refusal(error)
        }
        guard let publicKey = P256.Signing.PublicKey(attestation.publicKey) else {
            throw Self.refusal(AndroidAttestationError(.keyProperties, "the attested key is not P-256"))
        }
        return (try VerificationKey(publicKey), Self.summary(attestation, apps: policy.apps))
    }

    /// The attestation in words, for the device's record: kind, security level, patch level, boot,
    /// the first package, joined by commas (no spaces: `sigil admin`'s lines keep one field each).
    public static func summary(_ attestation: AndroidKeyAttestation, apps: [AndroidAttestationPolicy.App] = [])
        -> String
    {
        let description = attestation.keyDescription
        var words = ["android-key", description.attestationSecurityLevel.description]
        if let level = description.hardwareEnforced.osPatchLevel { words.append("patch=\(level)") }
        if let root = description.hardwareEnforced.rootOfTrust {
            words.append("boot=\(root.verifiedBootState)\(root.deviceLocked ? "" : ",unlocked")")
        }
        // The package the policy matched (read where the policy reads it), else the first one.
        let application =
            description.softwareEnforced.attestationApplicationID
            ?? description.hardwareEnforced.attestationApplicationID
        let packages = application?.packages ?? []
        if let package = packages.first(where: { package in apps.contains { $0.package == package.name } })
            ?? packages.first
        {
            // A package name is the app's; only the characters of one are kept.
            words.append(
                "app="
                    + String(
                        package.name.unicodeScalars.filter { $0.isASCII && $0.value > 0x20 && $0 != "," }.prefix(128)))
        }
        return words.joined(separator: ",")
    }

    static func refusal(_ error: AndroidAttestationError) -> SigilError {
        SigilError(.enrollmentRefused, "Android Key Attestation: \(error.code): \(error.detail)")
    }
}
