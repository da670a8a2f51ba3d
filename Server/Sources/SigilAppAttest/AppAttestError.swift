/// Why App Attest evidence was refused: one code per check of Apple's validation steps, so a
/// refusal says which step failed.
public struct AppAttestError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A check's code, for `sigil attest` (`invalid CODE: detail`) and logs.
    public struct Code: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        /// Not the CBOR, certificate or structure Apple sends (format, sizes, fields).
        public static let malformed = Code(rawValue: "malformed")
        /// A certificate of `x5c` is outside its validity at the verification time.
        public static let certificateExpired = Code(rawValue: "certificate-expired")
        /// `x5c` does not chain to the trusted root (a changed byte, another CA).
        public static let certificateChain = Code(rawValue: "certificate-chain")
        /// The credential certificate has no readable nonce extension (1.2.840.113635.100.8.2).
        public static let nonceExtensionInvalid = Code(rawValue: "nonce-extension-invalid")
        /// SHA-256(authenticatorData ‖ clientDataHash) differs from the nonce extension (another challenge).
        public static let nonceMismatch = Code(rawValue: "nonce-mismatch")
        /// The key ID is not SHA-256 of the credential's public key.
        public static let keyIDMismatch = Code(rawValue: "key-id-mismatch")
        /// `rpIdHash` is not SHA-256 of an accepted App ID.
        public static let appIDMismatch = Code(rawValue: "app-id-mismatch")
        /// An attestation's counter is not 0.
        public static let counterInvalid = Code(rawValue: "counter-invalid")
        /// An assertion's counter is not greater than the stored one (a replay, or a clone).
        public static let counterReplayed = Code(rawValue: "counter-replayed")
        /// The AAGUID names an environment the verifier does not accept.
        public static let environmentMismatch = Code(rawValue: "environment-mismatch")
        /// The AAGUID is neither `appattestdevelop` nor `appattest` followed by seven zero bytes.
        public static let aaguidInvalid = Code(rawValue: "aaguid-invalid")
        /// The credential ID is not the key ID.
        public static let credentialIDMismatch = Code(rawValue: "credential-id-mismatch")
        /// The assertion's signature does not verify with the attested key.
        public static let invalidSignature = Code(rawValue: "invalid-signature")
        /// A receipt that is not a valid Apple-signed receipt.
        public static let receiptInvalid = Code(rawValue: "receipt-invalid")
        /// The key is not known (no attestation stored for it).
        public static let unknownKey = Code(rawValue: "unknown-key")
    }

    /// The failed check.
    public let code: Code
    /// What was wrong, without key material.
    public let detail: String

    /// Creates an error.
    public init(_ code: Code, _ detail: String) {
        self.code = code
        self.detail = detail
    }

    public var description: String { "\(code): \(detail)" }

    /// Equal when the codes are.
    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.code == rhs.code }
    public func hash(into hasher: inout Hasher) { hasher.combine(code) }
}
