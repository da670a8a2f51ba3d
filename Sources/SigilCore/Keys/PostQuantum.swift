import Crypto
import Foundation

/// Sigil's post-quantum algorithms (ML-DSA signatures, X-Wing sealing), which on Apple platforms come
/// from CryptoKit (what swift-crypto is there) from iOS 26, macOS 26 and the same year's tvOS,
/// watchOS and visionOS only.
///
/// This file and Sealing.swift are the only places that name CryptoKit's post-quantum types, each
/// behind one availability check. The rest of Sigil holds an ``MLDSAPrivateKey`` or ``MLDSAPublicKey``,
/// which exist on every system Sigil supports; on an older one, making or reading such a key, and
/// sealing, throw `unsupported-algorithm` saying why, and never crash. Off Apple platforms they are
/// always available.
public enum PostQuantum {
    /// Whether this system has ML-DSA and X-Wing.
    public static var isAvailable: Bool {
        if #available(iOS 26, macOS 26, tvOS 26, watchOS 26, visionOS 26, *) { return true }
        return false
    }

    /// The error for `what` on a system older than iOS 26 or macOS 26.
    static func unavailable(_ what: String) -> SigilError {
        SigilError(
            .unsupportedAlgorithm,
            "\(what) needs iOS 26, macOS 26 or later (CryptoKit's post-quantum algorithms); this system is older")
    }
}

/// An ML-DSA-65 or ML-DSA-87 private key (FIPS 204), kept as CryptoKit's key.
@_spi(Sigil) public struct MLDSAPrivateKey: Sendable {
    /// `.mlDSA65` or `.mlDSA87`.
    @_spi(Sigil) public let algorithm: SignatureAlgorithm
    /// `MLDSA65.PrivateKey` or `MLDSA87.PrivateKey`: a type that cannot be named below iOS 26.
    private let key: any Sendable
    /// The public key.
    @_spi(Sigil) public let publicKey: MLDSAPublicKey

    /// A new key from the system's secure random source.
    @_spi(Sigil) public static func generate(_ algorithm: SignatureAlgorithm) throws -> MLDSAPrivateKey {
        guard #available(iOS 26, macOS 26, tvOS 26, watchOS 26, visionOS 26, *) else {
            throw PostQuantum.unavailable("ML-DSA")
        }
        switch algorithm {
        case .mlDSA65:
            let key = try MLDSA65.PrivateKey()
            return MLDSAPrivateKey(algorithm, key, raw: Array(key.publicKey.rawRepresentation))
        case .mlDSA87:
            let key = try MLDSA87.PrivateKey()
            return MLDSAPrivateKey(algorithm, key, raw: Array(key.publicKey.rawRepresentation))
        default:
            throw SigilError(.unsupportedAlgorithm, "\(algorithm) is not ML-DSA")
        }
    }

    /// The key of a 32-byte seed (FIPS 204's ξ).
    @_spi(Sigil) public init(seed: some DataProtocol, algorithm: SignatureAlgorithm) throws {
        guard #available(iOS 26, macOS 26, tvOS 26, watchOS 26, visionOS 26, *) else {
            throw PostQuantum.unavailable("ML-DSA")
        }
        switch algorithm {
        case .mlDSA65:
            let key = try MLDSA65.PrivateKey(seedRepresentation: seed, publicKey: nil)
            self.init(algorithm, key, raw: Array(key.publicKey.rawRepresentation))
        case .mlDSA87:
            let key = try MLDSA87.PrivateKey(seedRepresentation: seed, publicKey: nil)
            self.init(algorithm, key, raw: Array(key.publicKey.rawRepresentation))
        default:
            throw SigilError(.unsupportedAlgorithm, "\(algorithm) is not ML-DSA")
        }
    }

    private init(_ algorithm: SignatureAlgorithm, _ key: any Sendable, raw: [UInt8]) {
        self.algorithm = algorithm
        self.key = key
        publicKey = MLDSAPublicKey(algorithm, raw: raw)
    }

    /// The 32-byte seed.
    ///
    /// - Warning: the seed is the private key. Write it only to an owner-only file or the Keychain.
    @_spi(Sigil) public func seed() throws -> [UInt8] {
        guard #available(iOS 26, macOS 26, tvOS 26, watchOS 26, visionOS 26, *) else {
            throw PostQuantum.unavailable("ML-DSA")
        }
        switch key {
        case let key as MLDSA65.PrivateKey: return Array(key.seedRepresentation)
        case let key as MLDSA87.PrivateKey: return Array(key.seedRepresentation)
        default: throw PostQuantum.unavailable("ML-DSA")
        }
    }

    /// A signature over `message` (hedged, with an empty context).
    @_spi(Sigil) public func signature(for message: [UInt8]) throws -> [UInt8] {
        guard #available(iOS 26, macOS 26, tvOS 26, watchOS 26, visionOS 26, *) else {
            throw PostQuantum.unavailable("ML-DSA")
        }
        switch key {
        case let key as MLDSA65.PrivateKey: return Array(try key.signature(for: message))
        case let key as MLDSA87.PrivateKey: return Array(try key.signature(for: message))
        default: throw PostQuantum.unavailable("ML-DSA")
        }
    }
}

/// An ML-DSA-65 or ML-DSA-87 public key (FIPS 204).
@_spi(Sigil) public struct MLDSAPublicKey: Sendable {
    /// `.mlDSA65` or `.mlDSA87`.
    @_spi(Sigil) public let algorithm: SignatureAlgorithm
    /// The raw public key (1952 or 2592 bytes).
    @_spi(Sigil) public let rawRepresentation: [UInt8]
    /// `MLDSA65.PublicKey` or `MLDSA87.PublicKey`, parsed once.
    private let key: (any Sendable)?

    /// The key of its raw encoding.
    ///
    /// - Throws: `unsupported-algorithm` below iOS 26 / macOS 26; CryptoKit's error for bytes that are
    ///   not such a key.
    @_spi(Sigil) public init(rawRepresentation raw: some DataProtocol, algorithm: SignatureAlgorithm) throws {
        guard #available(iOS 26, macOS 26, tvOS 26, watchOS 26, visionOS 26, *) else {
            throw PostQuantum.unavailable("ML-DSA")
        }
        let bytes = Array(raw)
        switch algorithm {
        case .mlDSA65: key = try MLDSA65.PublicKey(rawRepresentation: bytes)
        case .mlDSA87: key = try MLDSA87.PublicKey(rawRepresentation: bytes)
        default: throw SigilError(.unsupportedAlgorithm, "\(algorithm) is not ML-DSA")
        }
        self.algorithm = algorithm
        rawRepresentation = bytes
    }

    fileprivate init(_ algorithm: SignatureAlgorithm, raw: [UInt8]) {
        self.algorithm = algorithm
        rawRepresentation = raw
        if #available(iOS 26, macOS 26, tvOS 26, watchOS 26, visionOS 26, *) {
            switch algorithm {
            case .mlDSA65: key = try? MLDSA65.PublicKey(rawRepresentation: raw)
            default: key = try? MLDSA87.PublicKey(rawRepresentation: raw)
            }
        } else {
            key = nil
        }
    }

    /// Whether `signature` is this key's over `message`; `false` for anything else, never a throw.
    @_spi(Sigil) public func isValidSignature(_ signature: [UInt8], for message: [UInt8]) -> Bool {
        guard #available(iOS 26, macOS 26, tvOS 26, watchOS 26, visionOS 26, *) else { return false }
        switch key {
        case let key as MLDSA65.PublicKey: return key.isValidSignature(signature, for: message)
        case let key as MLDSA87.PublicKey: return key.isValidSignature(signature, for: message)
        default: return false
        }
    }

    /// `ML-DSA-65` or `ML-DSA-87`.
    @_spi(Sigil) public var name: String { algorithm == .mlDSA65 ? "ML-DSA-65" : "ML-DSA-87" }
}
