import Crypto
import Foundation
@_spi(Sigil) import SigilCore
import SigilFiles

/// The server's master key: 32 random bytes that seal devices' HMAC secrets and the server's own keys
/// at rest (``SymmetricKey``, as the key directories take it), and from which the keys replicas must
/// agree on are derived. Every replica of one service holds the same master key.
///
/// ## The file
///
/// `sigil serve` keeps it as `master.key` in its data directory; a backend keeps it where it likes,
/// in the same format, and the two can share one:
///
/// - the standard base64 (RFC 4648 section 4, with padding) of the 32 bytes, then a newline: 45 bytes;
/// - read with any whitespace around it ignored and padding optional; anything that is not the base64
///   of exactly 32 bytes is refused;
/// - mode 0600: a file its group or others may read or write is refused, as ssh refuses a key.
///
/// ## Derived keys
///
/// Each is HKDF-SHA256 (RFC 5869) of the 32 bytes, with no salt, an `info` string naming its use,
/// and 32 bytes of output:
///
/// | key | `info` | used by |
/// |---|---|---|
/// | ``attestationChallengeKey`` | `sigil attest challenges` | ``AttestationChallenges`` (App Attest, Android) |
/// | ``dpopNonceKey`` | `sigil dpop nonces` | ``DPoPNonces`` |
///
/// ```swift
/// let master = try MasterKey(contentsOfFile: "/etc/myapp/master.key")
/// let directory = try Directory.postgres(store: store, masterKey: master.symmetricKey)
/// let challenges = AttestationChallenges(masterKey: master)  // accepts sigil serve's, given its master.key
/// ```
///
/// - Warning: whoever reads it opens every stored HMAC secret and issues challenges this server
///   accepts; whoever loses it loses those secrets (devices must fetch new ones). Make it with
///   ``generate()`` or ``loadOrCreate(file:)``, never from a password.
public struct MasterKey: Sendable {
    /// The 32 bytes, as the key directories and ``SymmetricKey``'s users take them.
    public let symmetricKey: SymmetricKey

    /// The master key of `symmetricKey`.
    ///
    /// - Throws: ``SigilInputError`` when it is not 256 bits.
    public init(_ symmetricKey: SymmetricKey) throws {
        guard symmetricKey.bitCount == 256 else { throw SigilInputError("the master key must be 32 bytes") }
        self.symmetricKey = symmetricKey
    }

    /// A new random master key.
    public static func generate() -> MasterKey {
        MasterKey(checked: SymmetricKey(size: .bits256))
    }

    private init(checked symmetricKey: SymmetricKey) { self.symmetricKey = symmetricKey }

    // MARK: The file

    /// Reads a master key file's contents (see the format above).
    ///
    /// - Throws: ``SigilInputError`` when they are not the base64 of 32 bytes (never echoing them).
    public init(fileRepresentation: some Collection<UInt8>) throws {
        let text = String(decoding: fileRepresentation, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard let bytes = Base64.decode(text), bytes.count == 32 else {
            throw SigilInputError("the master key is not the base64 of 32 bytes")
        }
        self.init(checked: SymmetricKey(data: bytes))
    }

    /// The file's contents: the base64 of the 32 bytes and a newline.
    public var fileRepresentation: String {
        symmetricKey.withUnsafeBytes { Base64.encode(Array($0)) } + "\n"
    }

    /// Reads the master key file at `path`.
    ///
    /// - Throws: ``SigilInputError`` naming the path (never the contents) when the file is missing,
    ///   readable or writable by its group or others, or not the base64 of 32 bytes.
    public init(contentsOfFile path: String) throws {
        guard let contents = try SecureFile.read(path, secret: true) else {
            throw SigilInputError("there is no master key at \(path)")
        }
        do {
            try self.init(fileRepresentation: contents)
        } catch {
            throw SigilInputError("\(path) is not the base64 of 32 bytes")
        }
    }

    /// Reads the master key file at `path`, or, when there is none, makes a new key and writes it
    /// there (mode 0600, whole or not at all): what `sigil serve` does on its first start.
    ///
    /// - Throws: ``SigilInputError`` as ``init(contentsOfFile:)``, or when the file cannot be written.
    public static func loadOrCreate(file path: String) throws -> MasterKey {
        if FileManager.default.fileExists(atPath: path) { return try MasterKey(contentsOfFile: path) }
        let key = generate()
        try SecureFile.write(key.fileRepresentation, to: path)
        return key
    }

    // MARK: Derived keys

    /// The key of ``AttestationChallenges``: HKDF-SHA256 with `info` `sigil attest challenges`, so
    /// replicas sharing the master key accept each other's App Attest and Android challenges.
    public var attestationChallengeKey: SymmetricKey { derived("sigil attest challenges") }

    /// The key of ``DPoPNonces``: HKDF-SHA256 with `info` `sigil dpop nonces` (PROTOCOL.md's DPoP
    /// server nonces), so replicas sharing the master key accept each other's nonces.
    public var dpopNonceKey: SymmetricKey { derived("sigil dpop nonces") }

    func derived(_ info: String) -> SymmetricKey {
        HKDF<SHA256>.deriveKey(inputKeyMaterial: symmetricKey, info: Array(info.utf8), outputByteCount: 32)
    }
}

extension AttestationChallenges {
    /// The issuer `sigil serve` makes: keyed with ``MasterKey/attestationChallengeKey``, so it accepts
    /// the challenges of every server sharing `masterKey`.
    public init(masterKey: MasterKey) { self.init(key: masterKey.attestationChallengeKey) }
}

extension DPoPNonces {
    /// The nonces `sigil serve --dpop-nonce` issues: keyed with ``MasterKey/dpopNonceKey``, so every
    /// server sharing `masterKey` accepts them.
    public init(masterKey: MasterKey, lifetime: Int64 = 300) {
        self.init(key: masterKey.dpopNonceKey, lifetime: lifetime)
    }
}
