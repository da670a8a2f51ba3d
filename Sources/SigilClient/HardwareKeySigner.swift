import Crypto
import Foundation
@_spi(Sigil) import SigilCore

/// What a P-256 key that never leaves its hardware exposes: CryptoKit's
/// `SecureEnclave.P256.Signing.PrivateKey` has exactly this, and conforms on Apple platforms.
public protocol HardwareP256Key {
    /// The public key.
    var publicKey: P256.Signing.PublicKey { get }
    /// An opaque, device-bound blob that reopens the key (not the key itself).
    var dataRepresentation: Data { get }
    /// Signs `data` with SHA-256 inside the hardware.
    func signature<D: DataProtocol>(for data: D) throws -> P256.Signing.ECDSASignature
}

/// Where hardware keys sign when asked asynchronously: not on the cooperative pool.
private let hardwareSigning = DispatchQueue(
    label: "dev.sigil.hardware-key", qos: .userInitiated, attributes: .concurrent)

/// A ``SignatureProvider`` over a hardware P-256 key (``SecureEnclaveSigningKey`` on Apple platforms):
/// it signs `ecdsa-p256-sha256`, enrolls, rotates and signs its own CSR without the key ever leaving
/// the hardware. (Unchecked `Sendable`: the key is an immutable handle.)
public struct HardwareKeySigner<Key: HardwareP256Key>: SignatureProvider, @unchecked Sendable,
    CustomStringConvertible
{
    /// The hardware key.
    public let key: Key

    /// Signs with `key`.
    public init(_ key: Key) { self.key = key }

    public var algorithm: SignatureAlgorithm { .ecdsaP256SHA256 }

    public var publicKey: VerificationKey? { try? VerificationKey(key.publicKey) }

    /// The key ID (PROTOCOL.md section 1).
    public var keyID: String { KeyID.derive(fromRawPublicKey: key.publicKey.rawRepresentation) }

    /// The blob that reopens the key on this device; store it to use the key again.
    public var dataRepresentation: Data { key.dataRepresentation }

    /// Signs `message` in the hardware; the signature is the raw `r‖s`.
    public func signature(for message: [UInt8]) throws -> [UInt8] {
        Array(try key.signature(for: message).rawRepresentation)
    }

    /// ``signature(for:)`` on a queue of its own, off Swift concurrency's cooperative pool: a key whose
    /// access control asks for Face ID or the passcode waits there while the prompt is up, and a pool
    /// thread held that long stalls every task of the app. Sessions and devices sign through this.
    public func asyncSignature(for message: [UInt8]) async throws -> [UInt8] {
        try await withCheckedThrowingContinuation { continuation in
            hardwareSigning.async { continuation.resume(with: Result { try signature(for: message) }) }
        }
    }

    public var description: String { "HardwareKeySigner(\(keyID))" }
}
