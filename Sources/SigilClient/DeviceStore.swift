import Foundation
@_spi(Sigil) import SigilCore
import SigilFiles

/// What a device keeps between launches: where it enrolled, its key ID, the server's pins and
/// response key, and its HMAC secret's key ID.
public struct DeviceIdentity: Codable, Sendable, Hashable {
    /// The server's base URL, `https://host:port`.
    public var server: String
    /// The device key's ID.
    public var keyID: String
    /// The device ID the server gave.
    public var deviceID: String
    /// The device key's algorithm.
    public var algorithm: String
    /// The server's SPKI pins.
    public var pins: [String]
    /// The server's response-signing key ID.
    public var responseKeyID: String
    /// The server's response-signing public key, PEM.
    public var responseKey: String
    /// The HMAC secret's key ID, when one was fetched.
    public var secretKeyID: String?
    /// The client certificate the server's CA issued for the device key, PEM, when one was requested.
    public var clientCertificate: String?
    /// The server's key for sealed bodies (PROTOCOL.md section 6), as discovery listed it at
    /// enrollment, under the pins: a key fetched later over a channel a proxy may hold would be the
    /// proxy's to choose.
    public var sealingKey: Registration.Discovery.SealingKey?
    /// The key ID of the device's own X-Wing key, when it registered one: its secrets come sealed to it.
    public var deviceSealingKeyID: String?
    /// When the HMAC secret was issued (server time), so an older pushed secret is refused.
    public var secretIssuedAt: Int64?
    /// The server clock's offset (server minus local, seconds) last learnt from a signed answer, kept
    /// across launches so the first request after one is signed with the server's time.
    public var clockOffset: Int64?
    /// `true` when ``pins`` were taken on first use: from discovery, which is unsigned, over a
    /// connection no pin had checked. They then stand on the trust of that first connection alone;
    /// pin the server out of band (`sigil enroll --pin`) where that matters.
    public var pinsTakenOnFirstUse: Bool?
    /// The user the device was enrolled for (the enrollment JWT's `sub`, as the server's answer named
    /// it), `nil` for a device of no user: the Keychain outlives a logout and a reinstall, so an app
    /// compares it with the user who logs in (``SigilDevice/enrollmentState``).
    public var userID: String?
    /// The App Attest key ID (standard base64, as `DCAppAttestService.generateKey` gave it) of the App
    /// Attest key that vouched for the device's key at enrollment, when one did: it signs the requests
    /// the server wants an assertion for (``assertionPaths``) and the device's rotation.
    public var appAttestKeyID: String?
    /// The path prefixes whose requests the server takes only with an App Attest assertion, as its
    /// discovery listed them (`assertionPaths`).
    public var assertionPaths: [String]?
    /// The server's `Sigil-Keys` tag when the keys and pins here were last learnt from its signed
    /// discovery: an answer with another tag has the device read discovery again.
    public var keysTag: String?
    /// The pins the app gave at enrollment (`DeviceEnrollment(pins:)`, `sigil enroll --pin`), which
    /// ``pins`` always keeps beside those learnt from the server's signed discovery; empty when the
    /// app gave none (the pins were discovery's from the start).
    public var appPins: [String]?

    /// Creates an identity.
    public init(
        server: String,
        keyID: String,
        deviceID: String,
        algorithm: String,
        pins: [String],
        responseKeyID: String,
        responseKey: String,
        secretKeyID: String? = nil,
        clientCertificate: String? = nil
    ) {
        self.server = server
        self.keyID = keyID
        self.deviceID = deviceID
        self.algorithm = algorithm
        self.pins = pins
        self.responseKeyID = responseKeyID
        self.responseKey = responseKey
        self.secretKeyID = secretKeyID
        self.clientCertificate = clientCertificate
    }
}

extension DeviceIdentity {
    /// The server the identity enrolled with, as a `URL`.
    public var serverURL: URL? { URL(string: server) }

    /// When the HMAC secret was issued (server time), as a `Date`.
    public var secretIssuedDate: Date? { secretIssuedAt.map { Date(timeIntervalSince1970: TimeInterval($0)) } }

    /// The server clock's offset from this device's last learnt from a signed answer, as a `Duration`
    /// (positive: the server is ahead).
    public var clockOffsetDuration: Duration? { clockOffset.map { .seconds($0) } }
}

/// Where a device's identity, key and secret are kept: files on Linux, the Keychain (and the Secure
/// Enclave) on Apple platforms.
public protocol DeviceStore: Sendable {
    /// The stored identity, if any.
    func identity() throws -> DeviceIdentity?
    /// The stored device key, if any.
    func deviceKey() throws -> (any SignatureProvider)?
    /// The stored HMAC secret, if any.
    func secret() throws -> SigningKey?
    /// Stores everything at once: identity, key, and the secret if given.
    ///
    /// - Throws: ``SigilInputError`` for a key this store cannot keep.
    func save(_ identity: DeviceIdentity, key: any SignatureProvider, secret: [UInt8]?) throws
    /// The device's own X-Wing key, which its secrets are sealed to, if any.
    func sealingKey() throws -> SealingPrivateKey?
    /// Stores the device's X-Wing key, replacing the one it had.
    ///
    /// - Throws: ``SigilInputError`` when this store cannot keep one.
    func saveSealingKey(_ key: SealingPrivateKey) throws
    /// Replaces the identity alone (a server key it follows, the clock's offset), keeping key and
    /// secret.
    func saveIdentity(_ identity: DeviceIdentity) throws
    /// Deletes everything the store keeps for Sigil: identity, device key (a Secure Enclave key's
    /// reference, an App Attest key's ID), secret, sealing key. Nothing is left to sign with.
    func reset() throws
}

extension DeviceStore {
    /// None: this store keeps no sealing key.
    public func sealingKey() throws -> SealingPrivateKey? { nil }

    /// Refuses: this store keeps no sealing key.
    public func saveSealingKey(_ key: SealingPrivateKey) throws {
        throw SigilInputError("\(type(of: self)) keeps no sealing key")
    }
}

/// A ``DeviceStore`` in a directory: `identity.json`, `device-key.pem`, `secret` and
/// `sealing-key.pem`, all mode 0600,
/// for software keys (the command line, Linux clients).
public struct FileDeviceStore: DeviceStore {
    /// The directory.
    public let directory: String
    /// The key kinds beyond the built-in ones the device key may be of.
    public var keyFormats: KeyFormats

    /// Creates a store in `directory` (made mode 0700 when saving).
    public init(directory: String, keyFormats: KeyFormats = .builtIn) {
        self.directory = directory
        self.keyFormats = keyFormats
    }

    func path(_ name: String) -> String { directory + "/" + name }

    /// Reads a file of the store; key and secret files (`secret`) are refused when others may read them.
    func read(_ name: String, secret: Bool = false) throws -> [UInt8]? {
        try SecureFile.read(path(name), secret: secret)
    }

    public func identity() throws -> DeviceIdentity? {
        guard let bytes = try read("identity.json") else { return nil }
        do {
            return try JSONDecoder().decode(DeviceIdentity.self, from: Data(bytes))
        } catch {
            throw SigilInputError("\(path("identity.json")) does not decode")
        }
    }

    public func deviceKey() throws -> (any SignatureProvider)? { try privateKey() }

    /// The stored private key, if any.
    public func privateKey() throws -> SigningKey? {
        guard let bytes = try read("device-key.pem", secret: true) else { return nil }
        return try KeyFile.load(bytes, formats: keyFormats).signingKey
    }

    public func secret() throws -> SigningKey? {
        guard let bytes = try read("secret", secret: true) else { return nil }
        guard
            let secret = Base64.decode(
                String(decoding: bytes, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
        else {
            throw SigilInputError("\(path("secret")) is not base64")
        }
        return try SigningKey(hmacSecret: secret)
    }

    public func sealingKey() throws -> SealingPrivateKey? {
        guard let bytes = try read("sealing-key.pem", secret: true) else { return nil }
        return try Sealing.privateKey(pem: String(decoding: bytes, as: UTF8.self))
    }

    public func saveSealingKey(_ key: SealingPrivateKey) throws {
        try SecureFile.createDirectory(directory)
        try SecureFile.write(try Sealing.privateKeyFile(for: key), to: path("sealing-key.pem"))
    }

    /// Deletes `identity.json`, `device-key.pem`, `secret` and `sealing-key.pem`, then the directory
    /// when nothing else is in it.
    public func reset() throws {
        for name in ["identity.json", "device-key.pem", "secret", "sealing-key.pem"] {
            do {
                try FileManager.default.removeItem(atPath: path(name))
            } catch CocoaError.fileNoSuchFile {
                continue
            } catch let error as NSError where error.domain == NSPOSIXErrorDomain && error.code == Int(ENOENT) {
                continue
            } catch {
                throw SigilInputError("\(path(name)) could not be deleted")
            }
        }
        if (try? FileManager.default.contentsOfDirectory(atPath: directory))?.isEmpty == true {
            try? FileManager.default.removeItem(atPath: directory)
        }
    }

    /// Replaces `identity.json` alone (the server keys an identity follows), keeping key and secret.
    public func saveIdentity(_ identity: DeviceIdentity) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        try SecureFile.write(Array(try encoder.encode(identity)), to: path("identity.json"))
    }

    public func save(_ identity: DeviceIdentity, key: any SignatureProvider, secret: [UInt8]?) throws {
        guard let key = key as? SigningKey else {
            throw SigilInputError("a file store keeps software keys only; keep a hardware key in its own store")
        }
        try SecureFile.createDirectory(directory)
        try SecureFile.write(try KeyFile.privateKeyFile(for: key), to: path("device-key.pem"))
        if let secret { try SecureFile.write(Base64.encode(secret) + "\n", to: path("secret")) }
        try saveIdentity(identity)
    }
}
