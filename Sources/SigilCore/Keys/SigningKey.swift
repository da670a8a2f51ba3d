import Crypto
import Foundation
import _CryptoExtras

/// Something that signs signature bases for one algorithm: a private key in memory, an HMAC secret,
/// or a key held elsewhere (a Secure Enclave, an HSM).
public protocol SignatureProvider: Sendable {
    /// The algorithm the signatures are made with.
    var algorithm: SignatureAlgorithm { get }
    /// Signs `message`, encoding the signature as `profile` requires (ECDSA: DER for sigil-v1, r‖s for rfc9421).
    func signature(for message: [UInt8], profile: SignatureProfile) throws -> [UInt8]
}

/// A private key or HMAC secret that signs with one algorithm.
///
/// - Warning: holds secret material. It is never printed: `description` names only the algorithm.
public struct SigningKey: SignatureProvider, CustomStringConvertible, CustomReflectable {
    enum Material: Sendable {
        case hmac(HMACSecret)
        case p256(P256.Signing.PrivateKey)
        case p384(P384.Signing.PrivateKey)
        case ed25519(Curve25519.Signing.PrivateKey)
        case rsa(_RSA.Signing.PrivateKey)
        case mlDSA65(MLDSA65.PrivateKey)
        case mlDSA87(MLDSA87.PrivateKey)
    }

    let material: Material
    /// The algorithm this key signs with.
    public let algorithm: SignatureAlgorithm

    init(material: Material, algorithm: SignatureAlgorithm) throws {
        self.material = material
        self.algorithm = algorithm
        // Validates that the kind of key can sign with `algorithm`.
        _ = try verificationKey
    }

    /// Creates an HMAC-SHA256 key from a shared secret of at least 32 bytes.
    public init(hmacSecret secret: some ContiguousBytes) throws {
        try self.init(material: .hmac(try HMACSecret(secret)), algorithm: .hmacSHA256)
    }

    /// Generates a new key for `algorithm` from the system's secure random source.
    ///
    /// HMAC secrets are 32 random bytes; RSA keys are 3072 bits.
    public static func generate(_ algorithm: SignatureAlgorithm) throws -> SigningKey {
        let material: Material
        switch algorithm {
        case .hmacSHA256: material = .hmac(HMACSecret(key: SymmetricKey(size: .bits256)))
        case .ecdsaP256SHA256, .ecdsaP256SHA512: material = .p256(P256.Signing.PrivateKey())
        case .ecdsaP384SHA384: material = .p384(P384.Signing.PrivateKey())
        case .ed25519: material = .ed25519(Curve25519.Signing.PrivateKey())
        case .rsaPSSSHA512, .rsaV15SHA256: material = .rsa(try _RSA.Signing.PrivateKey(keySize: .bits3072))
        case .mlDSA65: material = .mlDSA65(try MLDSA65.PrivateKey())
        case .mlDSA87: material = .mlDSA87(try MLDSA87.PrivateKey())
        }
        return try SigningKey(material: material, algorithm: algorithm)
    }

    /// Returns this key registered for another algorithm its kind supports.
    public func registered(for algorithm: SignatureAlgorithm) throws -> SigningKey {
        try SigningKey(material: material, algorithm: algorithm)
    }

    /// The matching verification key: the public key, or the same HMAC secret.
    public var verificationKey: VerificationKey {
        get throws { try VerificationKey(material: KeyFile.publicMaterial(of: material), algorithm: algorithm) }
    }

    /// The derived key ID of the public key, or `nil` for an HMAC secret.
    public var derivedKeyID: String? { (try? verificationKey)?.derivedKeyID }

    public var description: String { "SigningKey(\(algorithm))" }

    public var customMirror: Mirror { Mirror(self, children: ["algorithm": algorithm]) }

    public func signature(for message: [UInt8], profile: SignatureProfile) throws -> [UInt8] {
        switch (material, algorithm) {
        case (.hmac(let secret), _):
            return Array(secret.authenticationCode(for: message))
        case (.p256(let key), .ecdsaP256SHA512):
            let signature = try key.signature(for: SHA512.hash(data: message))
            return Array(profile == .sigilV1 ? signature.derRepresentation : signature.rawRepresentation)
        case (.p256(let key), _):
            let signature = try key.signature(for: SHA256.hash(data: message))
            return Array(profile == .sigilV1 ? signature.derRepresentation : signature.rawRepresentation)
        case (.p384(let key), _):
            let signature = try key.signature(for: SHA384.hash(data: message))
            return Array(profile == .sigilV1 ? signature.derRepresentation : signature.rawRepresentation)
        case (.ed25519(let key), _):
            return Array(try key.signature(for: message))
        case (.rsa(let key), .rsaV15SHA256):
            return Array(
                try key.signature(for: SHA256.hash(data: message), padding: .insecurePKCS1v1_5).rawRepresentation)
        case (.rsa(let key), _):
            return Array(try key.signature(for: SHA512.hash(data: message), padding: .PSS).rawRepresentation)
        case (.mlDSA65(let key), _):
            return Array(try key.signature(for: message))
        case (.mlDSA87(let key), _):
            return Array(try key.signature(for: message))
        }
    }
}
