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
