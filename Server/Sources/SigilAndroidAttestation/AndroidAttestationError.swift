/// Why an Android Key Attestation was refused: one code per check, so a refusal says which failed.
/// Enrollment answers them as `enrollment-refused` (docs/PROTOCOL.md §4) with this code and detail.
public struct AndroidAttestationError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A check's code, for `sigil attest verify-android-key` (`invalid CODE: detail`) and logs.
    public struct Code: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        /// Not a chain of DER certificates (empty, more than ten, a certificate that does not parse).
        public static let malformed = Code(rawValue: "malformed")
        /// A certificate is not signed by the next one, or their names do not chain, or an issuer is
        /// no CA (a changed byte, a chain cut short or re-ordered).
        public static let certificateChain = Code(rawValue: "certificate-chain")
        /// A certificate is outside its validity at the verification time.
        public static let certificateExpired = Code(rawValue: "certificate-expired")
        /// The chain does not end at a Google hardware attestation root (another root, a software root).
        public static let untrustedRoot = Code(rawValue: "untrusted-root")
        /// A certificate is listed in the attestation status list (revoked or suspended).
        public static let certificateRevoked = Code(rawValue: "certificate-revoked")
        /// A certificate carries a critical extension this verifier does not process.
        public static let criticalExtension = Code(rawValue: "critical-extension")
        /// The leaf has no Key Description, or another certificate has one too.
        public static let keyDescriptionMissing = Code(rawValue: "key-description-missing")
        /// The Key Description is malformed.
        public static let keyDescriptionInvalid = Code(rawValue: "key-description-invalid")
        /// The attestation challenge is not the one the server issued.
        public static let challengeMismatch = Code(rawValue: "challenge-mismatch")
        /// The attestation or the key is in a lower security level than required (Software, or TEE
        /// where StrongBox is required).
        public static let securityLevel = Code(rawValue: "security-level")
        /// The key is not what Sigil registers: an EC P-256 signing key generated in the hardware.
        public static let keyProperties = Code(rawValue: "key-properties")
        /// The verified boot state is not accepted (an unverified or failed boot, or a self-signed one
        /// the policy does not accept).
        public static let bootState = Code(rawValue: "boot-state")
        /// The bootloader is unlocked.
        public static let deviceUnlocked = Code(rawValue: "device-unlocked")
        /// The OS patch level is older than required, or absent.
        public static let patchLevel = Code(rawValue: "patch-level")
        /// No package and signing certificate digest of the attestation is an allowed app.
        public static let appNotAllowed = Code(rawValue: "app-not-allowed")
    }

    /// The failed check.
    public let code: Code
    /// What was wrong.
    public let detail: String

    /// Creates an error.
    public init(_ code: Code, _ detail: String) {
        self.code = code
        self.detail = detail
    }

    public var description: String { "\(code): \(detail)" }
}
