/// A public key of a kind SigilCore does not build in, supplied by another module (RSA, from SigilRSA),
/// so that an app that never sees such a key never compiles its implementation.
public protocol ExternalPublicKey: Sendable {
    /// The kind's name in messages ("RSA").
    var kindName: String { get }
    /// The algorithms a key of this kind can be registered for, the default first.
    var algorithms: [SignatureAlgorithm] { get }
    /// The raw encoding of PROTOCOL.md section 1, which the key ID is derived from.
    var rawRepresentation: [UInt8] { get }
    /// The SubjectPublicKeyInfo DER.
    var subjectPublicKeyInfo: [UInt8] { get }
    /// Checks `signature` over `message` with `algorithm` (one of ``algorithms``); never throws.
    func isValidSignature(_ signature: [UInt8], for message: [UInt8], algorithm: SignatureAlgorithm) -> Bool
    /// Checks a JOSE signature of an algorithm no Sigil profile names (RSA's `PS256`, for DPoP
    /// proofs); never throws. `false` unless the kind implements it.
    func isValidSignature(_ signature: [UInt8], for message: [UInt8], jose: String) -> Bool
}

extension ExternalPublicKey {
    public func isValidSignature(_ signature: [UInt8], for message: [UInt8], jose: String) -> Bool { false }
}

/// A private key of a kind SigilCore does not build in; see ``ExternalPublicKey``.
///
/// - Warning: holds secret material; an implementation must not print it.
public protocol ExternalPrivateKey: Sendable {
    /// The public half.
    var publicKey: any ExternalPublicKey { get }
    /// The PKCS#8 `PRIVATE KEY` DER.
    var pkcs8: [UInt8] { get }
    /// Signs `message` with `algorithm` (one of the public key's ``ExternalPublicKey/algorithms``).
    func signature(for message: [UInt8], algorithm: SignatureAlgorithm) throws -> [UInt8]
}

/// Reads and makes keys of one kind SigilCore does not build in.
public protocol KeyFormat: Sendable {
    /// The algorithms this format's keys sign.
    var algorithms: [SignatureAlgorithm] { get }
    /// The dotted object identifiers of the PKCS#8 and SubjectPublicKeyInfo algorithms it reads.
    var algorithmIdentifiers: [String] { get }
    /// The PEM labels beyond `PRIVATE KEY` and `PUBLIC KEY` it reads (`RSA PRIVATE KEY`).
    var pemLabels: [String] { get }
    /// Reads a private key: PKCS#8 DER for `PRIVATE KEY`, else the DER of one of ``pemLabels``.
    func privateKey(der: [UInt8], label: String) throws -> any ExternalPrivateKey
    /// Reads a public key: SubjectPublicKeyInfo DER for `PUBLIC KEY`, else the DER of one of ``pemLabels``.
    func publicKey(der: [UInt8], label: String) throws -> any ExternalPublicKey
    /// Generates a new key for `algorithm`.
    func generate(_ algorithm: SignatureAlgorithm) throws -> any ExternalPrivateKey
}

/// The key kinds a reader accepts beyond the built-in ones (HMAC, P-256, P-384, Ed25519, ML-DSA).
///
/// ```swift
/// import SigilRSA
/// let key = try KeyFile.load(pem, formats: .withRSA)
/// ```
public struct KeyFormats: Sendable {
    /// The added formats.
    public let formats: [any KeyFormat]

    /// The built-in kinds only.
    public static let builtIn = KeyFormats([])

    /// The built-in kinds and `formats`.
    public init(_ formats: [any KeyFormat]) { self.formats = formats }

    func format(forOID oid: String) -> (any KeyFormat)? {
        formats.first { $0.algorithmIdentifiers.contains(oid) }
    }

    func format(forLabel label: String) -> (any KeyFormat)? {
        formats.first { $0.pemLabels.contains(label) }
    }

    func format(for algorithm: SignatureAlgorithm) -> (any KeyFormat)? {
        formats.first { $0.algorithms.contains(algorithm) }
    }
}
