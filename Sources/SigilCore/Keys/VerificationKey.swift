import Crypto
import Foundation

/// A key that checks signatures of one algorithm: a public key, or an HMAC secret.
///
/// The key decides the algorithm (PROTOCOL.md section 1): a verifier looks the key up by key ID
/// and never lets the message choose. An HMAC secret is never tried as a public key or the reverse.
public struct VerificationKey: Sendable, CustomStringConvertible, CustomReflectable {
    enum Material: Sendable {
        case hmac(HMACSecret)
        case p256(P256.Signing.PublicKey)
        case p384(P384.Signing.PublicKey)
        case ed25519(Curve25519.Signing.PublicKey)
        case external(any ExternalPublicKey)
        case mlDSA(MLDSAPublicKey)
    }

    let material: Material
    /// The one algorithm this key verifies.
    public let algorithm: SignatureAlgorithm

    init(material: Material, algorithm: SignatureAlgorithm) throws {
        guard Self.algorithms(for: material).contains(algorithm) else {
            throw SigilError(.algorithmMismatch, "a \(Self.kindName(material)) key cannot verify \(algorithm)")
        }
        self.material = material
        self.algorithm = algorithm
    }

    /// Creates an HMAC-SHA256 verification key from a shared secret of at least 32 bytes.
    ///
    /// - Throws: ``SigilInputError`` when the secret is shorter than 32 bytes.
    public init(hmacSecret secret: some ContiguousBytes) throws {
        try self.init(material: .hmac(try HMACSecret(secret)), algorithm: .hmacSHA256)
    }

    /// The algorithms a key of this kind can be registered for, the default first.
    static func algorithms(for material: Material) -> [SignatureAlgorithm] {
        switch material {
        case .hmac: return [.hmacSHA256]
        case .p256: return [.ecdsaP256SHA256, .ecdsaP256SHA512, .appleAppAttest]
        case .p384: return [.ecdsaP384SHA384]
        case .ed25519: return [.ed25519]
        case .external(let key): return key.algorithms
        case .mlDSA(let key): return [key.algorithm]
        }
    }

    static func kindName(_ material: Material) -> String {
        switch material {
        case .hmac: return "HMAC secret"
        case .p256: return "P-256"
        case .p384: return "P-384"
        case .ed25519: return "Ed25519"
        case .external(let key): return key.kindName
        case .mlDSA(let key): return key.name
        }
    }

    /// Uses a P-256 public key.
    public init(_ key: P256.Signing.PublicKey, algorithm: SignatureAlgorithm = .ecdsaP256SHA256) throws {
        try self.init(material: .p256(key), algorithm: algorithm)
    }

    /// Uses a public key of a kind another module supplies (an RSA key from SigilRSA).
    public init(_ key: any ExternalPublicKey, algorithm: SignatureAlgorithm? = nil) throws {
        try self.init(material: .external(key), algorithm: algorithm ?? key.algorithms[0])
    }

    /// Returns this key registered for another algorithm its kind supports.
    ///
    /// - Throws: `algorithm-mismatch` when the key cannot verify `algorithm`.
    public func registered(for algorithm: SignatureAlgorithm) throws -> VerificationKey {
        try VerificationKey(material: material, algorithm: algorithm)
    }

    /// The public key's raw encoding (section 1), or `nil` for an HMAC secret.
    public var rawPublicKey: [UInt8]? {
        switch material {
        case .hmac: return nil
        case .p256(let key): return Array(key.rawRepresentation)
        case .p384(let key): return Array(key.rawRepresentation)
        case .ed25519(let key): return Array(key.rawRepresentation)
        case .external(let key): return key.rawRepresentation
        case .mlDSA(let key): return key.rawRepresentation
        }
    }

    /// The HMAC secret, for a key store that must keep it (encrypted); `nil` for a public key.
    ///
    /// - Warning: the secret authenticates as the device. Never log it, print it or store it in the clear.
    public var hmacSecret: SymmetricKey? {
        if case .hmac(let secret) = material { return secret.key }
        return nil
    }

    /// The derived key ID of section 1, or `nil` for an HMAC secret (whose ID is assigned).
    public var derivedKeyID: String? {
        if algorithm == .appleAppAttest, case .p256(let key) = material {
            // The first 8 bytes of the App Attest key ID (SHA-256 of the X9.63 key), which is all
            // the device knows of its key.
            return AppAttestAssertion.keyID(appAttestKeyID: Array(SHA256.hash(data: key.x963Representation)))
        }
        return rawPublicKey.map { KeyID.derive(fromRawPublicKey: $0) }
    }

    /// Names the kind and algorithm only; an HMAC secret is never printed.
    public var description: String { "VerificationKey(\(Self.kindName(material)), \(algorithm))" }

    public var customMirror: Mirror { Mirror(self, children: ["algorithm": algorithm]) }

    /// Checks a signature over `message` as encoded by `profile`.
    ///
    /// Returns `false` for a signature of the wrong length or encoding; never throws. HMAC tags are
    /// compared in constant time.
    public func isValidSignature(_ signature: [UInt8], for message: [UInt8], profile: SignatureProfile) -> Bool {
        switch (material, algorithm) {
        case (.hmac(let secret), _):
            return secret.isValidAuthenticationCode(signature, for: message)
        case (.p256(let key), .appleAppAttest):
            return AppAttestAssertion(signature)?.isValid(for: message, key: key) ?? false
        case (.p256(let key), .ecdsaP256SHA512):
            guard let parsed = Self.p256Signature(signature, profile: profile) else { return false }
            return key.isValidSignature(parsed, for: SHA512.hash(data: message))
        case (.p256(let key), _):
            guard let parsed = Self.p256Signature(signature, profile: profile) else { return false }
            return key.isValidSignature(parsed, for: SHA256.hash(data: message))
        case (.p384(let key), _):
            let parsed: P384.Signing.ECDSASignature?
            switch profile {
            case .sigilV1: parsed = try? P384.Signing.ECDSASignature(derRepresentation: signature)
            case .rfc9421: parsed = try? P384.Signing.ECDSASignature(rawRepresentation: signature)
            }
            guard let parsed else { return false }
            return key.isValidSignature(parsed, for: SHA384.hash(data: message))
        case (.ed25519(let key), _):
            return key.isValidSignature(signature, for: message)
        case (.external(let key), let algorithm):
            return key.isValidSignature(signature, for: message, algorithm: algorithm)
        case (.mlDSA(let key), _):
            return key.isValidSignature(signature, for: message)
        }
    }

    private static func p256Signature(
        _ signature: [UInt8],
        profile: SignatureProfile
    ) -> P256.Signing.ECDSASignature? {
        switch profile {
        case .sigilV1: return try? P256.Signing.ECDSASignature(derRepresentation: signature)
        case .rfc9421: return try? P256.Signing.ECDSASignature(rawRepresentation: signature)
        }
    }
}

/// An HMAC-SHA256 secret (RFC 2104) with its key schedule computed once, so each signature costs only
/// the hashing of the message.
///
/// Built from swift-crypto's SHA-256 states, whose `update(bufferPointer:)` is concrete: swift-crypto's
/// `HMAC.update(data:)` is generic and not inlinable, so outside its module it runs unspecialized on
/// every request. The tests hold this to swift-crypto's `HMAC<SHA256>` on generated keys and messages.
@_spi(Sigil) public struct HMACSecret: Sendable, CustomStringConvertible, CustomReflectable {
    @_spi(Sigil) public var description: String { "HMACSecret(redacted)" }
    @_spi(Sigil) public var customMirror: Mirror { Mirror(self, children: []) }

    let key: SymmetricKey
    /// SHA-256 after the key ⊕ ipad block, and after the key ⊕ opad block.
    private let inner: SHA256
    private let outer: SHA256

    init(_ secret: some ContiguousBytes) throws {
        let key = SymmetricKey(data: secret)
        guard key.bitCount >= 256 else { throw SigilInputError("an HMAC secret must be at least 32 bytes") }
        self.init(key: key)
    }

    init(key: SymmetricKey) {
        self.key = key
        var block = [UInt8](repeating: 0, count: 64)
        key.withUnsafeBytes { raw in
            if raw.count > 64 {
                var hasher = SHA256()
                hasher.update(bufferPointer: raw)
                hasher.finalize().withUnsafeBytes { digest in
                    for index in 0..<digest.count { block[index] = digest[index] }
                }
            } else {
                for index in 0..<raw.count { block[index] = raw[index] }
            }
        }
        var inner = SHA256()
        var outer = SHA256()
        block.map { $0 ^ 0x36 }.withUnsafeBytes { inner.update(bufferPointer: $0) }
        block.map { $0 ^ 0x5C }.withUnsafeBytes { outer.update(bufferPointer: $0) }
        self.inner = inner
        self.outer = outer
    }

    /// HMAC-SHA256 of `message`.
    func authenticationCode(for message: [UInt8]) -> SHA256Digest {
        var inner = self.inner
        message.withUnsafeBytes { inner.update(bufferPointer: $0) }
        let innerDigest = inner.finalize()
        var outer = self.outer
        innerDigest.withUnsafeBytes { outer.update(bufferPointer: $0) }
        return outer.finalize()
    }

    /// Whether `tag` is the HMAC of `message`, compared in constant time.
    func isValidAuthenticationCode(_ tag: [UInt8], for message: [UInt8]) -> Bool {
        guard tag.count == SHA256.byteCount else { return false }
        return authenticationCode(for: message).withUnsafeBytes { expected in
            var difference: UInt8 = 0
            for index in 0..<SHA256.byteCount { difference |= expected[index] ^ tag[index] }
            return difference == 0
        }
    }
}

/// Key IDs (PROTOCOL.md section 1).
public enum KeyID {
    /// Lowercase hex of the first 8 bytes of SHA-256 over the raw public key.
    public static func derive(fromRawPublicKey raw: some DataProtocol) -> String {
        Hex.encode(Array(SHA256.hash(data: raw).prefix(8)))
    }

    /// Whether `id` matches `[A-Za-z0-9._~-]{1,128}`.
    public static func isValid(_ id: String) -> Bool {
        let utf8 = id.utf8
        guard (1...128).contains(utf8.count) else { return false }
        return utf8.allSatisfy(PercentEncoding.isUnreserved)
    }
}
