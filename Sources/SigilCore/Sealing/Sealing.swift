import Crypto
import Foundation
import HTTPTypes

/// Sealed bodies and secrets (PROTOCOL.md section 6): HPKE (RFC 9180) base mode with the X-Wing KEM
/// (X25519 and ML-KEM-768), HKDF-SHA256 and AES-256-GCM, empty AAD, what a message is bound to in
/// `info`. What a recorded TLS session or a TLS-intercepting proxy sees of a sealed body is
/// ciphertext, against today's and a quantum computer's attacks.
///
/// X-Wing is in CryptoKit from iOS 26 and macOS 26 (``PostQuantum``): on an older Apple system,
/// sealing, opening and making a sealing key throw `unsupported-algorithm` saying why, while a sealing
/// key read from discovery is still held (it is only bytes), so such a device sends plain bodies and a
/// server that requires sealed ones refuses them with `sealed-body-invalid`.
public enum Sealing {
    /// The `Content-Encoding` of a sealed body.
    public static let contentEncoding = "sigil-hpke"
    /// The `kem` of a sealing key in discovery.
    public static let kemName = "x-wing"
    /// HPKE's suite.
    @available(iOS 26, macOS 26, tvOS 26, watchOS 26, visionOS 26, *)
    static var suite: HPKE.Ciphersuite { .XWingMLKEM768X25519_SHA256_AES_GCM_256 }

    static var unavailable: SigilError { PostQuantum.unavailable("Sealing (HPKE with X-Wing)") }
    /// The bytes of an X-Wing encapsulated key.
    public static let encapsulatedKeyCount = 1120
    /// The bytes of an X-Wing public key.
    public static let publicKeyCount = 1216
    /// The bytes of a key ID at the head of a sealed request.
    public static let keyIDCount = 16
    /// The bytes of a sealed response's nonce.
    static let responseNonceCount = 32

    static let requestLabel = Array("sigil sealed request v1".utf8)
    static let responseLabel = Array("sigil sealed response v1".utf8)
    static let secretLabel = Array("sigil sealed secret v1".utf8)

    /// The content codings of a message, read as its signature covers them (section 2.5: all
    /// `Content-Encoding` values joined, ASCII lowercased, spaces and tabs removed), one per entry:
    /// `sigil-h pke` is `sigil-hpke` here too, so no spelling the signature accepts reads otherwise.
    public static func codings(_ fields: HTTPFields) -> [String] {
        let values = fields[values: .contentEncoding]
        guard !values.isEmpty else { return [] }
        let label = BodyHash.codingLabel(values.joined(separator: ","))
        return label.split(separator: UInt8(ascii: ","), omittingEmptySubsequences: false).map {
            String(decoding: $0, as: UTF8.self)
        }
    }

    /// `label || 0x00 || value || 0x00 || …`: an `info` of section 6.
    static func info(_ label: [UInt8], _ values: String...) -> [UInt8] {
        var info = label
        for value in values { info += [0] + Array(value.utf8) }
        return info
    }

    static func invalid(_ detail: String) -> SigilError { SigilError(.sealedBodyInvalid, detail) }

    // MARK: Requests (section 6.2)

    /// Seals a request body to `key` for the request that `keyID` signs with nonce `nonce` (sign the
    /// request after, over the sealed bytes). The key ID binds the body to its signer: copied into
    /// another key's request, it does not open.
    ///
    /// - Returns: the body to send, and what opens the sealed response to it.
    public static func sealRequest(
        _ plaintext: [UInt8], to key: SealingPublicKey, keyID signerKeyID: String, nonce: String
    ) throws -> (body: [UInt8], response: SealedResponseOpener) {
        guard #available(iOS 26, macOS 26, tvOS 26, watchOS 26, visionOS 26, *) else { throw unavailable }
        var sender = try HPKE.Sender(
            recipientKey: try key.xWing(), ciphersuite: suite, info: Data(info(requestLabel, signerKeyID, nonce)))
        let ciphertext = try sender.seal(plaintext)
        let encapsulated = Array(sender.encapsulatedKey)
        let secret = try sender.exportSecret(context: Data(responseLabel), outputByteCount: 32)
        return (
            Array(key.keyID.utf8) + encapsulated + ciphertext,
            SealedResponseOpener(encapsulatedKey: encapsulated, secret: secret)
        )
    }

    /// The key ID a sealed request body names, for choosing the key to open it with.
    ///
    /// - Throws: `sealed-body-invalid` for a body too short to be sealed.
    public static func keyID(ofSealedRequest body: [UInt8]) throws -> String {
        guard body.count >= keyIDCount + encapsulatedKeyCount + 16 else {
            throw invalid("the sealed body is too short")
        }
        return String(decoding: body.prefix(keyIDCount), as: UTF8.self)
    }

    /// Opens a sealed request body with the first of `keys` its key ID names, for the request that
    /// `keyID` signed with nonce `nonce` (check the request's signature first).
    ///
    /// - Returns: the plaintext, and what seals the response to it.
    /// - Throws: `sealed-body-invalid` when no key is named or the body does not open (among others,
    ///   a body sealed for another signer or nonce).
    public static func openRequest(
        _ body: [UInt8], with keys: [SealingPrivateKey], keyID signerKeyID: String, nonce: String
    ) throws -> (plaintext: [UInt8], response: SealedResponseSealer) {
        guard #available(iOS 26, macOS 26, tvOS 26, watchOS 26, visionOS 26, *) else { throw unavailable }
        let keyID = try keyID(ofSealedRequest: body)
        guard let key = keys.first(where: { $0.keyID == keyID }) else {
            throw invalid("the body is sealed to a key this server does not hold")
        }
        let encapsulated = Array(body[keyIDCount..<(keyIDCount + encapsulatedKeyCount)])
        do {
            var recipient = try HPKE.Recipient(
                privateKey: try key.xWing(), ciphersuite: suite, info: Data(info(requestLabel, signerKeyID, nonce)),
                encapsulatedKey: Data(encapsulated))
            let plaintext = try recipient.open(body[(keyIDCount + encapsulatedKeyCount)...])
            let secret = try recipient.exportSecret(context: Data(responseLabel), outputByteCount: 32)
            return (Array(plaintext), SealedResponseSealer(encapsulatedKey: encapsulated, secret: secret))
        } catch {
            throw invalid("the sealed body does not open")
        }
    }

    // MARK: Secrets (section 6.4)

    /// Seals an HMAC secret to a device's sealing key, bound to the secret's key ID.
    ///
    /// - Returns: `enc || ciphertext`, to send in standard base64 as `sealedSecret`.
    public static func sealSecret(_ secret: [UInt8], keyID: String, to key: SealingPublicKey) throws -> [UInt8] {
        guard #available(iOS 26, macOS 26, tvOS 26, watchOS 26, visionOS 26, *) else { throw unavailable }
        var sender = try HPKE.Sender(
            recipientKey: try key.xWing(), ciphersuite: suite, info: Data(info(secretLabel, keyID)))
        return Array(sender.encapsulatedKey) + (try sender.seal(secret))
    }

    /// Opens a sealed secret with the device's sealing key.
    ///
    /// - Throws: `sealed-body-invalid` when it does not open with this key for this key ID.
    public static func openSecret(_ sealed: [UInt8], keyID: String, with key: SealingPrivateKey) throws -> [UInt8] {
        guard #available(iOS 26, macOS 26, tvOS 26, watchOS 26, visionOS 26, *) else { throw unavailable }
        guard sealed.count >= encapsulatedKeyCount + 16 else { throw invalid("the sealed secret is too short") }
        do {
            var recipient = try HPKE.Recipient(
                privateKey: try key.xWing(), ciphersuite: suite, info: Data(info(secretLabel, keyID)),
                encapsulatedKey: Data(sealed.prefix(encapsulatedKeyCount)))
            return Array(try recipient.open(sealed.dropFirst(encapsulatedKeyCount)))
        } catch {
            throw invalid("the sealed secret does not open with this key")
        }
    }

    // MARK: Responses (section 6.3)

    /// The response key and nonce of section 6.3 for `responseNonce`.
    static func responseKey(encapsulatedKey: [UInt8], secret: SymmetricKey, responseNonce: some DataProtocol) -> (
        SymmetricKey, AES.GCM.Nonce?
    ) {
        let prk = HKDF<SHA256>.extract(
            inputKeyMaterial: secret, salt: encapsulatedKey + Array(responseNonce))
        let key = HKDF<SHA256>.expand(pseudoRandomKey: prk, info: Array("key".utf8), outputByteCount: 32)
        let nonce = HKDF<SHA256>.expand(pseudoRandomKey: prk, info: Array("nonce".utf8), outputByteCount: 12)
        return (key, nonce.withUnsafeBytes { try? AES.GCM.Nonce(data: Array($0)) })
    }
}

/// Seals the response to a sealed request (the server's side of section 6.3).
public struct SealedResponseSealer: Sendable {
    let encapsulatedKey: [UInt8]
    let secret: SymmetricKey

    /// `response_nonce || AES-256-GCM(plaintext)`, to send with `Content-Encoding: sigil-hpke`.
    public func seal(_ plaintext: [UInt8]) throws -> [UInt8] {
        // Random bytes as the crypto library makes a key's (swift-crypto on Linux draws them eight at a
        // time: four system calls, where `SystemRandomNumberGenerator.next()` as `UInt8` took one a byte).
        let responseNonce = SymmetricKey(size: SymmetricKeySize(bitCount: Sealing.responseNonceCount * 8))
            .withUnsafeBytes { Array($0) }
        let (key, nonce) = Sealing.responseKey(
            encapsulatedKey: encapsulatedKey, secret: secret, responseNonce: responseNonce)
        guard let nonce else { throw Sealing.invalid("no response nonce") }
        let box = try AES.GCM.seal(plaintext, using: key, nonce: nonce)
        return responseNonce + Array(box.ciphertext) + Array(box.tag)
    }
}

/// Opens the response to a sealed request (the client's side of section 6.3).
public struct SealedResponseOpener: Sendable {
    let encapsulatedKey: [UInt8]
    let secret: SymmetricKey

    /// The plaintext of a sealed response body.
    ///
    /// - Throws: `sealed-body-invalid` when it does not open (another request's, altered, truncated).
    public func open(_ body: [UInt8]) throws -> [UInt8] {
        guard body.count >= Sealing.responseNonceCount + 16 else {
            throw Sealing.invalid("the sealed answer is too short")
        }
        let (key, nonce) = Sealing.responseKey(
            encapsulatedKey: encapsulatedKey, secret: secret, responseNonce: body.prefix(Sealing.responseNonceCount))
        do {
            guard let nonce else { throw Sealing.invalid("no response nonce") }
            let sealed = body.dropFirst(Sealing.responseNonceCount)
            let box = try AES.GCM.SealedBox(nonce: nonce, ciphertext: sealed.dropLast(16), tag: sealed.suffix(16))
            return Array(try AES.GCM.open(box, using: key))
        } catch {
            throw Sealing.invalid("the sealed answer does not open")
        }
    }
}

/// An X-Wing public key that bodies and secrets are sealed to, with its section 1 key ID.
///
/// It is its 1216 bytes on every system; where X-Wing is available (``PostQuantum/isAvailable``) they
/// are also checked to be a key, and sealing to it works.
public struct SealingPublicKey: Sendable, Hashable {
    /// The 1216-byte encoding (ML-KEM-768's 1184 bytes, then X25519's 32).
    public let rawRepresentation: [UInt8]
    /// `XWingMLKEM768X25519.PublicKey`, a type that cannot be named below iOS 26; `nil` there.
    private let key: (any Sendable)?
    /// The key ID: lowercase hex of the first 8 bytes of SHA-256 over the 1216-byte key.
    public let keyID: String

    /// The key from its 1216-byte encoding.
    public init(rawRepresentation: some DataProtocol) throws {
        let bytes = Array(rawRepresentation)
        guard bytes.count == Sealing.publicKeyCount else {
            throw SigilInputError("not a \(Sealing.publicKeyCount)-byte X-Wing public key")
        }
        if #available(iOS 26, macOS 26, tvOS 26, watchOS 26, visionOS 26, *) {
            guard let key = try? XWingMLKEM768X25519.PublicKey(rawRepresentation: bytes) else {
                throw SigilInputError("not a \(Sealing.publicKeyCount)-byte X-Wing public key")
            }
            self.key = key
        } else {
            key = nil
        }
        self.rawRepresentation = bytes
        keyID = Hex.encode(Array(SHA256.hash(data: bytes).prefix(8)))
    }

    @available(iOS 26, macOS 26, tvOS 26, watchOS 26, visionOS 26, *)
    func xWing() throws -> XWingMLKEM768X25519.PublicKey {
        guard let key = key as? XWingMLKEM768X25519.PublicKey else { throw Sealing.unavailable }
        return key
    }

    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.rawRepresentation == rhs.rawRepresentation }
    public func hash(into hasher: inout Hasher) { hasher.combine(keyID) }
}

/// An X-Wing private key, kept as its 32-byte seed. Made or read only where X-Wing is available
/// (``PostQuantum/isAvailable``); elsewhere both throw `unsupported-algorithm`.
public struct SealingPrivateKey: Sendable {
    /// `XWingMLKEM768X25519.PrivateKey`, a type that cannot be named below iOS 26.
    private let key: any Sendable
    /// The public key.
    public let publicKey: SealingPublicKey

    /// A new key from the system's randomness.
    public static func generate() throws -> SealingPrivateKey {
        guard #available(iOS 26, macOS 26, tvOS 26, watchOS 26, visionOS 26, *) else { throw Sealing.unavailable }
        let key = try XWingMLKEM768X25519.PrivateKey.generate()
        return try SealingPrivateKey(key: key, publicKey: key.publicKey.rawRepresentation)
    }

    /// The key of a 32-byte seed.
    public init(seed: some DataProtocol) throws {
        guard #available(iOS 26, macOS 26, tvOS 26, watchOS 26, visionOS 26, *) else { throw Sealing.unavailable }
        guard seed.count == 32, let key = try? XWingMLKEM768X25519.PrivateKey(seedRepresentation: seed, publicKey: nil)
        else { throw SigilInputError("not a 32-byte X-Wing seed") }
        try self.init(key: key, publicKey: key.publicKey.rawRepresentation)
    }

    private init(key: any Sendable, publicKey: some DataProtocol) throws {
        self.key = key
        self.publicKey = try SealingPublicKey(rawRepresentation: publicKey)
    }

    @available(iOS 26, macOS 26, tvOS 26, watchOS 26, visionOS 26, *)
    func xWing() throws -> XWingMLKEM768X25519.PrivateKey {
        guard let key = key as? XWingMLKEM768X25519.PrivateKey else { throw Sealing.unavailable }
        return key
    }

    /// The 32-byte seed.
    ///
    /// - Warning: the seed is the private key; keep it owner-only (a 0600 file, the Keychain).
    public var seed: [UInt8] {
        get throws {
            guard #available(iOS 26, macOS 26, tvOS 26, watchOS 26, visionOS 26, *) else { throw Sealing.unavailable }
            return Array(try xWing().seedRepresentation)
        }
    }
    /// The public key's ID.
    public var keyID: String { publicKey.keyID }
}

extension Sealing {
    /// The PEM label of an X-Wing private key file: the 32-byte seed.
    public static let privateKeyLabel = "SIGIL X-WING SEED"
    /// The PEM label of an X-Wing public key file: the 1216-byte key.
    public static let publicKeyLabel = "SIGIL X-WING PUBLIC KEY"

    /// The PEM file of `key`'s seed (keep it 0600).
    public static func privateKeyFile(for key: SealingPrivateKey) throws -> String {
        PEM.encode(try key.seed, label: privateKeyLabel)
    }

    /// The PEM file of a public key.
    public static func publicKeyFile(for key: SealingPublicKey) -> String {
        PEM.encode(key.rawRepresentation, label: publicKeyLabel)
    }

    /// A private key from its PEM file.
    public static func privateKey(pem: String) throws -> SealingPrivateKey {
        let (label, bytes) = try PEM.decode(pem)
        guard label == privateKeyLabel else { throw SigilInputError("not a \(privateKeyLabel) file") }
        return try SealingPrivateKey(seed: bytes)
    }

    /// A public key from its PEM file, or from the private key's file.
    public static func publicKey(pem: String) throws -> SealingPublicKey {
        let (label, bytes) = try PEM.decode(pem)
        if label == privateKeyLabel { return try SealingPrivateKey(seed: bytes).publicKey }
        guard label == publicKeyLabel else { throw SigilInputError("not a \(publicKeyLabel) file") }
        return try SealingPublicKey(rawRepresentation: bytes)
    }
}
