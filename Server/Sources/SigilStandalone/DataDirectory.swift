import Crypto
import Foundation
@_spi(Sigil) import SigilCore
import SigilFiles
import SigilRSA
import SigilServer
import SigilTLS

/// The server's data directory (`~/.sigil` by default): everything `sigil serve` keeps between starts.
///
/// | file | holds | mode |
/// |---|---|---|
/// | `directory.sqlite` | devices and keys | 0600 |
/// | `master.key` | the ``MasterKey``: base64 of the 32-byte key that seals secrets at rest | 0600 |
/// | `enroll-token` | the bootstrap enrollment token | 0600 |
/// | `response-key.pem` | the P-256 key that signs responses | 0600 |
/// | `tls-cert.pem`, `tls-key.pem` | the self-signed TLS certificate of the first start | 0644, 0600 |
/// | `ca-cert.pem`, `ca-key.pem` | the client CA of `sigil ca init` | 0644, 0600 |
public struct DataDirectory: Sendable {
    /// The directory's path.
    public let path: String

    /// Opens the directory, creating it (mode 0700) if missing.
    public init(path: String) throws {
        self.path = path
        try SecureFile.createDirectory(path)
    }

    /// Names the directory, creating nothing: for a tool that works on a server's directory and
    /// must not make one (`sigil admin`).
    public init(existing path: String) {
        self.path = path
    }

    /// Whether the directory holds a key directory (`directory.sqlite`), as a server's does.
    public var holdsStore: Bool { FileManager.default.fileExists(atPath: databasePath) }

    /// `~/.sigil`.
    public static var defaultPath: String {
        (ProcessInfo.processInfo.environment["HOME"] ?? NSHomeDirectory()) + "/.sigil"
    }

    /// The path of a file in the directory.
    public func file(_ name: String) -> String { path + "/" + name }

    /// The key directory's database file.
    public var databasePath: String { file("directory.sqlite") }

    /// Reads a file, or `nil` when it does not exist.
    ///
    /// - Parameter secret: refuse the file when its group or others may read it, as ssh does.
    func read(_ name: String, secret: Bool = false) throws -> [UInt8]? {
        try SecureFile.read(file(name), secret: secret)
    }

    /// The master key (`master.key`, in ``MasterKey``'s file format), made on first use.
    public func masterKey() throws -> SymmetricKey { try master().symmetricKey }

    /// The master key with the keys derived from it, as `sigil serve` uses them: `master.key`, read or
    /// made by ``MasterKey/loadOrCreate(file:)``.
    public func master() throws -> MasterKey { try MasterKey.loadOrCreate(file: file("master.key")) }

    /// The master key if `master.key` exists, else `nil` (none is made).
    public func existingMasterKey() throws -> SymmetricKey? {
        guard FileManager.default.fileExists(atPath: file("master.key")) else { return nil }
        return try MasterKey(contentsOfFile: file("master.key")).symmetricKey
    }

    /// The bootstrap enrollment token: `given` if set (and stored), else the stored one, else a new one.
    ///
    /// - Returns: the token and whether it was made now.
    public func enrollToken(given: String?) throws -> (token: String, isNew: Bool) {
        if let given {
            guard given.utf8.count >= 16 else { throw SigilInputError("the enrollment token must be 16+ characters") }
            return (given, false)
        }
        if let stored = try read("enroll-token", secret: true) {
            return (String(decoding: stored, as: UTF8.self).trimmed, false)
        }
        var random = [UInt8](repeating: 0, count: 24)
        for index in random.indices { random[index] = UInt8.random(in: 0...255) }
        let token = Base64URL.encode(random)
        try SecureFile.write(token + "\n", to: file("enroll-token"))
        return (token, true)
    }

    /// The response-signing key, made on first use: Ed25519, whose signatures are deterministic (no
    /// random nonce to draw, or to get wrong, for each answer), short (64 bytes) and the cheapest to
    /// make of the algorithms every client verifies. A `response-key.pem` of another algorithm (an
    /// older data directory's ECDSA P-256 key, or one you place there) is used as it is.
    public func responseKey() throws -> SigningKey {
        if let pem = try read("response-key.pem", secret: true) {
            guard let key = try KeyFile.load(pem, formats: .withRSA).signingKey else {
                throw SigilInputError("\(file("response-key.pem")) is not a private key")
            }
            return key
        }
        let key = try SigningKey.generate(.ed25519)
        try SecureFile.write(try KeyFile.privateKeyFile(for: key), to: file("response-key.pem"))
        return key
    }

    /// The X-Wing keys request bodies are sealed to (PROTOCOL.md section 6): `sealing-key.pem` (made on
    /// the first start), `sealing-key-next.pem` (published before clients move to it) and
    /// `sealing-key-previous.pem` (still opened during an overlap, no longer published).
    ///
    /// To rotate: write the new key as `sealing-key-next.pem` and restart; once clients have seen it,
    /// move `sealing-key.pem` to `sealing-key-previous.pem` and the next key to `sealing-key.pem`.
    public func sealingKeys(sealedPaths: [String] = []) throws -> SealedBodies {
        func load(_ name: String) throws -> SealingPrivateKey? {
            guard let pem = try read(name, secret: true) else { return nil }
            do {
                return try Sealing.privateKey(pem: String(decoding: pem, as: UTF8.self))
            } catch {
                throw SigilInputError("\(file(name)) is not an X-Wing key (\(Sealing.privateKeyLabel))")
            }
        }
        let current: SealingPrivateKey
        if let existing = try load("sealing-key.pem") {
            current = existing
        } else {
            current = try SealingPrivateKey.generate()
            try SecureFile.write(try Sealing.privateKeyFile(for: current), to: file("sealing-key.pem"))
        }
        return SealedBodies(
            keys: [current] + (try load("sealing-key-next.pem").map { [$0] } ?? []),
            retired: try load("sealing-key-previous.pem").map { [$0] } ?? [],
            sealedPaths: sealedPaths)
    }

    /// The TLS certificate and key files: `certificate`/`key` if given, else the self-signed pair of
    /// the first start, made now for `names` if missing.
    ///
    /// - Returns: the two paths and whether a certificate was made now.
    public func tlsFiles(
        certificate: String?,
        key: String?,
        names: [String]
    ) throws -> (certificate: String, key: String, isNew: Bool) {
        if let certificate, let key { return (certificate, key, false) }
        if certificate != nil || key != nil { throw SigilInputError("--cert and --key go together") }
        let certificatePath = file("tls-cert.pem")
        let keyPath = file("tls-key.pem")
        if FileManager.default.fileExists(atPath: certificatePath) { return (certificatePath, keyPath, false) }
        let made = try Certificates.selfSignedServer(names: names)
        try SecureFile.write(made.keyPEM, to: keyPath)
        try SecureFile.write(made.certificatePEM, to: certificatePath, mode: 0o644)
        return (certificatePath, keyPath, true)
    }

    /// The pin of the backup TLS key (`tls-backup-key.pem`, made on first use): a key not in use yet,
    /// so clients that pin it too survive a move of the server to it.
    public func backupPin() throws -> String {
        let key: P256.Signing.PrivateKey
        if let pem = try read("tls-backup-key.pem", secret: true) {
            do {
                key = try P256.Signing.PrivateKey(pemRepresentation: String(decoding: pem, as: UTF8.self))
            } catch {
                throw SigilInputError("\(file("tls-backup-key.pem")) is not a P-256 private key")
            }
        } else {
            key = P256.Signing.PrivateKey()
            try SecureFile.write(key.pemRepresentation + "\n", to: file("tls-backup-key.pem"))
        }
        return SPKIPin.pin(spkiDER: key.publicKey.derRepresentation)
    }

    /// The backup TLS key as a TLS rotation takes it: the key of ``backupPin()``, then a new one in
    /// its place.
    public var backupTLSKey: BackupTLSKey {
        BackupTLSKey(
            current: {
                _ = try backupPin()
                let pem = try read("tls-backup-key.pem", secret: true) ?? []
                return try SigningKey(P256.Signing.PrivateKey(pemRepresentation: String(decoding: pem, as: UTF8.self)))
            },
            renew: {
                try SecureFile.write(
                    P256.Signing.PrivateKey().pemRepresentation + "\n", to: file("tls-backup-key.pem"))
            })
    }

    /// The client CA of `sigil ca init`, if there is one.
    public func certificateAuthority() throws -> CertificateAuthority? {
        guard let certificate = try read("ca-cert.pem"), let key = try read("ca-key.pem", secret: true) else {
            return nil
        }
        return try CertificateAuthority(
            certificatePEM: String(decoding: certificate, as: UTF8.self),
            keyPEM: String(decoding: key, as: UTF8.self)
        )
    }

    /// Creates the client CA.
    ///
    /// - Throws: ``SigilInputError`` when one exists already (it is never overwritten).
    public func createCertificateAuthority() throws -> String {
        try SecureFile.refuseExisting(file("ca-cert.pem"))
        let made = try CertificateAuthority.create()
        try SecureFile.write(made.keyPEM, to: file("ca-key.pem"))
        try SecureFile.write(made.certificatePEM, to: file("ca-cert.pem"), mode: 0o644)
        return file("ca-cert.pem")
    }
}

extension String {
    var trimmed: String { trimmingCharacters(in: .whitespacesAndNewlines) }
}
