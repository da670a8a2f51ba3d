#if canImport(Security) && canImport(CryptoKit)
    import CryptoKit
    import Foundation
    import SigilCore

    /// A P-256 key held in the Secure Enclave: it signs `ecdsa-p256-sha256` and never leaves the chip.
    /// (Unchecked `Sendable`: the key is an immutable handle to the enclave.)
    ///
    /// Store ``dataRepresentation`` (an opaque, device-bound blob, not the key) to use the key again.
    @available(iOS 17, macOS 14, *)
    public struct SecureEnclaveSigningKey: SignatureProvider, @unchecked Sendable {
        let key: SecureEnclave.P256.Signing.PrivateKey

        /// Makes a new key in the Secure Enclave.
        public init() throws {
            key = try SecureEnclave.P256.Signing.PrivateKey()
        }

        /// Uses a key made earlier, from its ``dataRepresentation``.
        public init(dataRepresentation: Data) throws {
            key = try SecureEnclave.P256.Signing.PrivateKey(dataRepresentation: dataRepresentation)
        }

        /// Whether this device has a Secure Enclave.
        public static var isAvailable: Bool { SecureEnclave.isAvailable }

        /// The blob that reopens the key on this device.
        public var dataRepresentation: Data { key.dataRepresentation }

        public var algorithm: SignatureAlgorithm { .ecdsaP256SHA256 }

        /// The key ID (PROTOCOL.md section 1).
        public var keyID: String { KeyID.derive(fromRawPublicKey: key.publicKey.rawRepresentation) }

        /// The public key as SubjectPublicKeyInfo PEM, for registration.
        public var publicKeyPEM: String { key.publicKey.pemRepresentation + "\n" }

        /// The public key, which enrollment registers.
        public var publicKey: VerificationKey? { try? VerificationKey(key.publicKey) }

        /// Signs `message` with SHA-256 in the enclave; the signature is the raw `r‖s`.
        public func signature(for message: [UInt8]) throws -> [UInt8] {
            Array(try key.signature(for: Data(message)).rawRepresentation)
        }
    }
#endif
