import Crypto
import Foundation

/// Something that signs for one algorithm: a private key in memory, an HMAC secret, or a key held
/// elsewhere (the Secure Enclave, App Attest, an HSM).
///
/// A provider returns one encoding of its signatures whatever the profile; the profile turns it
/// into what goes on the wire (``SignatureProfile/wireSignature(_:algorithm:)``).
public protocol SignatureProvider: Sendable {
    /// The algorithm the signatures are made with.
    var algorithm: SignatureAlgorithm { get }
    /// The public key, which enrollment registers; `nil` for an HMAC secret.
    var publicKey: VerificationKey? { get }
    /// Signs `message`.
    ///
    /// - Returns: ECDSA as the raw `r‖s` of fixed size (what CryptoKit's `rawRepresentation` holds),
    ///   every other algorithm as it defines its signature.
    func signature(for message: [UInt8]) throws -> [UInt8]
    /// Signs `message` without holding a thread while a key held elsewhere answers (App Attest's
    /// assertions come from a system service). The default calls ``signature(for:)``.
    func asyncSignature(for message: [UInt8]) async throws -> [UInt8]
    /// Whether the server must receive this key's signatures in the order they were made: App Attest
    /// assertions carry a counter the server refuses to see go backwards, so two requests signed at
    /// once and delivered out of order would refuse the later-signed one as a replay. A session
    /// sends such a key's requests one at a time. `false` by default.
    var requiresOrderedRequests: Bool { get }
}

extension SignatureProvider {
    public func asyncSignature(for message: [UInt8]) async throws -> [UInt8] { try signature(for: message) }

    public var requiresOrderedRequests: Bool { false }

    /// Signs `message` and encodes the signature as `profile` puts it on the wire.
    public func signature(for message: [UInt8], profile: SignatureProfile) throws -> [UInt8] {
        try profile.wireSignature(try signature(for: message), algorithm: algorithm)
    }
}

/// A private key or HMAC secret that signs with one algorithm.
///
/// - Warning: holds secret material. It is never printed: `description` names only the algorithm.
public struct SigningKey: SignatureProvider, CustomStringConvertible, CustomReflectable {
    @_spi(Sigil) public enum Material: Sendable {
        case hmac(HMACSecret)
        case p256(P256.Signing.PrivateKey)
        case p384(P384.Signing.PrivateKey)
        case ed25519(Curve25519.Signing.PrivateKey)
        case external(any ExternalPrivateKey)
        case mlDSA(MLDSAPrivateKey)
    }

    @_spi(Sigil) public let material: Material
    /// The algorithm this key signs with.
    public let algorithm: SignatureAlgorithm

    @_spi(Sigil) public init(material: Material, algorithm: SignatureAlgorithm) throws {
        guard algorithm != .appleAppAttest else {
            throw SigilError(
                .unsupportedAlgorithm, "App Attest keys sign only inside the device's App Attest service")
        }
        self.material = material
        self.algorithm = algorithm
        // Validates that the kind of key can sign with `algorithm`.
        _ = try verificationKey
    }

    /// Creates an HMAC-SHA256 key from a shared secret of at least 32 bytes.
    public init(hmacSecret secret: some ContiguousBytes) throws {
        try self.init(material: .hmac(try HMACSecret(secret)), algorithm: .hmacSHA256)
    }

    /// Uses a P-256 private key.
    public init(_ key: P256.Signing.PrivateKey, algorithm: SignatureAlgorithm = .ecdsaP256SHA256) throws {
        try self.init(material: .p256(key), algorithm: algorithm)
    }

    /// Uses a key of a kind another module supplies (an RSA key from SigilRSA).
    public init(_ key: any ExternalPrivateKey, algorithm: SignatureAlgorithm? = nil) throws {
        try self.init(material: .external(key), algorithm: algorithm ?? key.publicKey.algorithms[0])
    }

    /// Generates a new key for `algorithm` from the system's secure random source.
    ///
    /// HMAC secrets are 32 random bytes; other kinds (RSA) come from `formats`.
    /// - Throws: `unsupported-algorithm` when no format makes keys for `algorithm`.
    public static func generate(_ algorithm: SignatureAlgorithm, formats: KeyFormats = .builtIn) throws
        -> SigningKey
    {
        let material: Material
        switch algorithm {
        case .hmacSHA256: material = .hmac(HMACSecret(key: SymmetricKey(size: .bits256)))
        case .ecdsaP256SHA256, .ecdsaP256SHA512: material = .p256(P256.Signing.PrivateKey())
        case .ecdsaP384SHA384: material = .p384(P384.Signing.PrivateKey())
        case .ed25519: material = .ed25519(Curve25519.Signing.PrivateKey())
        case .rsaPSSSHA512, .rsaV15SHA256:
            guard let format = formats.format(for: algorithm) else {
                throw SigilError(.unsupportedAlgorithm, "\(algorithm) keys need SigilRSA (KeyFormats.withRSA)")
            }
            material = .external(try format.generate(algorithm))
        case .mlDSA65, .mlDSA87: material = .mlDSA(try MLDSAPrivateKey.generate(algorithm))
        case .appleAppAttest:
            throw SigilError(.unsupportedAlgorithm, "App Attest keys are made by the device's App Attest service")
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

    /// The public key, or `nil` for an HMAC secret.
    public var publicKey: VerificationKey? {
        if case .hmac = material { return nil }
        return try? verificationKey
    }

    /// The derived key ID of the public key, or `nil` for an HMAC secret.
    public var derivedKeyID: String? { (try? verificationKey)?.derivedKeyID }

    public var description: String { "SigningKey(\(algorithm))" }

    public var customMirror: Mirror { Mirror(self, children: ["algorithm": algorithm]) }

    public func signature(for message: [UInt8]) throws -> [UInt8] {
        switch (material, algorithm) {
        case (.hmac(let secret), _):
            return secret.authenticationCode(for: message).withUnsafeBytes { Array($0) }
        case (.p256(let key), .ecdsaP256SHA512):
            return Array(try key.signature(for: SHA512.hash(data: message)).rawRepresentation)
        case (.p256(let key), _):
            return Array(try key.signature(for: SHA256.hash(data: message)).rawRepresentation)
        case (.p384(let key), _):
            return Array(try key.signature(for: SHA384.hash(data: message)).rawRepresentation)
        case (.ed25519(let key), _):
            return Array(try key.signature(for: message))
        case (.external(let key), _):
            return try key.signature(for: message, algorithm: algorithm)
        case (.mlDSA(let key), _):
            return try key.signature(for: message)
        }
    }
}
