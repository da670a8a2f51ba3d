/// The signature algorithms of PROTOCOL.md section 1, by their wire names.
public enum SignatureAlgorithm: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// HMAC-SHA256 with a per-device secret of 32 bytes or more.
    case hmacSHA256 = "hmac-sha256"
    /// ECDSA over P-256 with SHA-256.
    case ecdsaP256SHA256 = "ecdsa-p256-sha256"
    /// ECDSA over P-256 with SHA-512 (what iOS's `kSecKeyAlgorithmECDSASignatureMessageX962SHA512` makes).
    case ecdsaP256SHA512 = "ecdsa-p256-sha512"
    /// ECDSA over P-384 with SHA-384.
    case ecdsaP384SHA384 = "ecdsa-p384-sha384"
    /// Ed25519.
    case ed25519 = "ed25519"
    /// RSASSA-PSS with SHA-512 (salt length 64).
    case rsaPSSSHA512 = "rsa-pss-sha512"
    /// RSASSA-PKCS1-v1_5 with SHA-256.
    case rsaV15SHA256 = "rsa-v1_5-sha256"
    /// ML-DSA-65 (FIPS 204, empty context).
    case mlDSA65 = "ml-dsa-65"
    /// ML-DSA-87 (FIPS 204, empty context).
    case mlDSA87 = "ml-dsa-87"

    public var description: String { rawValue }

    /// Whether the algorithm uses a shared secret rather than a key pair.
    public var isSymmetric: Bool { self == .hmacSHA256 }

    /// Parses a wire name, throwing `unsupported-algorithm` for anything else.
    public static func named(_ name: String) throws -> SignatureAlgorithm {
        guard let algorithm = SignatureAlgorithm(rawValue: name) else {
            throw SigilError(.unsupportedAlgorithm, "algorithm '\(name.prefix(64))' is not supported")
        }
        return algorithm
    }
}

/// The two wire profiles, which differ in how ECDSA signatures are encoded.
public enum SignatureProfile: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// The header profile: `X-Timestamp`, `X-Nonce`, `X-Key-ID`, `X-Signature`; ECDSA in DER.
    case sigilV1 = "sigil-v1"
    /// HTTP Message Signatures (RFC 9421); ECDSA as raw r‖s.
    case rfc9421 = "rfc9421"

    public var description: String { rawValue }
}
