import Crypto

/// An App Attest assertion, the signature of `apple-appattest`: the CBOR map
/// `{"signature": DER ECDSA, "authenticatorData": rpIdHash ‖ flags ‖ counter}`, the signature by the
/// attested P-256 key (ECDSA with SHA-256) over `nonce = SHA-256(authenticatorData ‖ clientDataHash)`,
/// where `clientDataHash` is SHA-256 of the signed data (Sigil: the request's signature base).
public struct AppAttestAssertion: Sendable, Hashable {
    /// The DER ECDSA signature.
    public let signature: [UInt8]
    /// The authenticator data.
    public let authenticatorData: [UInt8]

    /// The largest assertion read (Apple's are about 200 bytes).
    public static let maximumSize = 4 << 10

    /// Reads an assertion, or `nil` when it is not one (oversized, not CBOR, fields missing or short).
    public init?(_ bytes: [UInt8]) {
        guard bytes.count <= Self.maximumSize, let map = try? CBOR.decode(bytes),
            let signature = map["signature"]?.bytesValue, let data = map["authenticatorData"]?.bytesValue,
            data.count >= 37
        else { return nil }
        self.signature = signature
        authenticatorData = data
    }

    /// An assertion of these parts (what App Attest's debug provider makes).
    public init(signature: [UInt8], authenticatorData: [UInt8]) {
        self.signature = signature
        self.authenticatorData = authenticatorData
    }

    /// Its CBOR form, `{"signature": …, "authenticatorData": …}`, as App Attest encodes it.
    public var encoded: [UInt8] {
        func bytes(_ value: [UInt8]) -> [UInt8] {
            value.count < 24
                ? [0x40 | UInt8(value.count)] + value
                : value.count < 256
                    ? [0x58, UInt8(value.count)] + value
                    : [0x59, UInt8(value.count >> 8), UInt8(value.count & 0xFF)] + value
        }
        func text(_ value: String) -> [UInt8] { [0x60 | UInt8(value.utf8.count)] + Array(value.utf8) }
        return [0xA2] + text("signature") + bytes(signature) + text("authenticatorData") + bytes(authenticatorData)
    }

    /// SHA-256 of the App ID the assertion was made for.
    public var rpIDHash: [UInt8] { Array(authenticatorData[0..<32]) }

    /// The key's counter at the assertion, which must grow from one assertion to the next.
    public var counter: UInt32 { authenticatorData[33..<37].reduce(0) { $0 << 8 | UInt32($1) } }

    /// Whether `key` signed this assertion over `data`.
    public func isValid(for data: [UInt8], key: P256.Signing.PublicKey) -> Bool {
        isValid(clientDataHash: Array(SHA256.hash(data: data)), key: key)
    }

    /// Whether `key` signed this assertion for `clientDataHash`.
    public func isValid(clientDataHash: [UInt8], key: P256.Signing.PublicKey) -> Bool {
        guard let parsed = try? P256.Signing.ECDSASignature(derRepresentation: signature) else { return false }
        let nonce = Array(SHA256.hash(data: authenticatorData + clientDataHash))
        return key.isValidSignature(parsed, for: nonce)
    }

    /// The Sigil key ID of an App Attest key: the first 8 bytes of its App Attest key ID (SHA-256 of
    /// the key's X9.63 form), lowercase hex.
    public static func keyID(appAttestKeyID: [UInt8]) -> String { Hex.encode(Array(appAttestKeyID.prefix(8))) }
}

/// App Attest's debug attestations (the client's `AppAttestDebugProvider`, for the simulator): a
/// software key's public key and a MAC with a debug token the server was started with, as JSON
/// `{"fmt":"sigil-debug-v1","publicKey":<base64 X9.63>,"mac":<base64>}`. One rule for both ends.
public enum AppAttestDebug {
    /// The attestation's `fmt`.
    public static let format = "sigil-debug-v1"
    /// The largest debug attestation read.
    public static let maximumSize = 4 << 10

    /// `HMAC-SHA256(token, "sigil app attest debug v1" || 0x00 || keyID || 0x00 || X9.63 key || 0x00 ||
    /// clientDataHash)`: bound to the key, its App Attest key ID and the server's challenge.
    public static func mac(token: [UInt8], keyID: [UInt8], publicKey: [UInt8], clientDataHash: [UInt8]) -> [UInt8] {
        let message = Array("sigil app attest debug v1".utf8) + [0] + keyID + [0] + publicKey + [0] + clientDataHash
        return Array(HMAC<SHA256>.authenticationCode(for: message, using: SymmetricKey(data: token)))
    }
}
