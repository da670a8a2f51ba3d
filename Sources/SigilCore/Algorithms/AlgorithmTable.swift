/// Every signature algorithm Sigil knows by a name, once: its wire name, its JOSE name, the kind of
/// key it takes, whether that key is built in, and whether a DPoP proof may use it. Every place that
/// needs one of these facts reads it here: JWKs' `alg` (``JWK/joseAlgorithm(_:)``), the JOSE `alg` a
/// JWS names (``JWK/algorithm(jose:)``), DPoP's accepted algorithms (``DPoPProof/algorithms``) and
/// the algorithms a server's discovery lists.
public struct AlgorithmEntry: Sendable, Hashable {
    /// The kinds of key, by family.
    public enum Family: String, Sendable, Hashable {
        case hmac, ecdsa, eddsa, rsa, mlDSA = "ml-dsa", appAttest = "app-attest"
    }

    /// The Sigil algorithm (PROTOCOL.md section 1), or `nil` for a JOSE algorithm Sigil does not sign
    /// with (`PS256`, which DPoP proofs may use).
    public let sigil: SignatureAlgorithm?
    /// The JOSE `alg`, where JOSE has one.
    public let jose: String?
    /// The family of its key.
    public let family: Family
    /// The Sigil algorithm whose key it reads (itself, or for `PS256` an RSA key's).
    public let key: SignatureAlgorithm
    /// Whether its keys are read without an added key format (RSA needs SigilRSA's `.withRSA`).
    public let isBuiltIn: Bool
    /// Whether a DPoP proof (RFC 9449) may use it.
    public let inDPoP: Bool

    init(
        _ sigil: SignatureAlgorithm?, jose: String?, _ family: Family, key: SignatureAlgorithm? = nil,
        builtIn: Bool = true, dpop: Bool = false
    ) {
        self.sigil = sigil
        self.jose = jose
        self.family = family
        self.key = key ?? sigil ?? .hmacSHA256
        self.isBuiltIn = builtIn
        self.inDPoP = dpop
    }

    /// The table.
    public static let all: [AlgorithmEntry] = [
        AlgorithmEntry(.hmacSHA256, jose: nil, .hmac),
        AlgorithmEntry(.ecdsaP256SHA256, jose: "ES256", .ecdsa, dpop: true),
        AlgorithmEntry(.ecdsaP256SHA512, jose: nil, .ecdsa),
        AlgorithmEntry(.ecdsaP384SHA384, jose: "ES384", .ecdsa, dpop: true),
        AlgorithmEntry(.ed25519, jose: "EdDSA", .eddsa, dpop: true),
        AlgorithmEntry(.rsaPSSSHA512, jose: "PS512", .rsa, builtIn: false),
        AlgorithmEntry(.rsaV15SHA256, jose: "RS256", .rsa, builtIn: false, dpop: true),
        AlgorithmEntry(nil, jose: "PS256", .rsa, key: .rsaV15SHA256, builtIn: false, dpop: true),
        AlgorithmEntry(.mlDSA65, jose: "ML-DSA-65", .mlDSA),
        AlgorithmEntry(.mlDSA87, jose: "ML-DSA-87", .mlDSA),
        AlgorithmEntry(.appleAppAttest, jose: nil, .appAttest),
    ]

    /// The entry of a Sigil algorithm.
    public static func of(_ algorithm: SignatureAlgorithm) -> AlgorithmEntry? {
        all.first { $0.sigil == algorithm }
    }

    /// The entry of a JOSE `alg` (`Ed25519`, RFC 9864's name, read as `EdDSA`).
    public static func jose(_ name: String) -> AlgorithmEntry? {
        let name = name == "Ed25519" ? "EdDSA" : name
        return all.first { $0.jose == name }
    }
}
