import Crypto

/// An attested key as the server keeps it: the key, its counter, where it was made, its receipt.
public struct AttestedKey: Sendable {
    /// The key ID (SHA-256 of the key's X9.63 form).
    public let keyID: [UInt8]
    /// The attested key.
    public let publicKey: P256.Signing.PublicKey
    /// The highest counter accepted so far.
    public var counter: UInt32
    /// The App ID.
    public let appID: String
    /// The environment.
    public let environment: AppAttestVerifier.Environment
    /// The latest receipt.
    public var receipt: [UInt8]

    /// The key of a verified attestation, counter 0.
    public init(_ attestation: AppAttestVerifier.Attestation) {
        keyID = attestation.keyID
        publicKey = attestation.publicKey
        counter = attestation.counter
        appID = attestation.appID
        environment = attestation.environment
        receipt = attestation.receipt
    }
}

/// Where attested keys and their counters live. ``advance(keyID:to:)`` is the one atomic step
/// assertions need: of two assertions carrying one counter, exactly one advances it.
public protocol AppAttestKeyStore: Sendable {
    /// The key stored under `keyID`, if any.
    func key(for keyID: [UInt8]) async throws -> AttestedKey?
    /// Stores a newly attested key; a key ID already stored is refused (`false`).
    func add(_ key: AttestedKey) async throws -> Bool
    /// Sets the key's counter to `counter` if that is greater than the stored one, atomically.
    ///
    /// - Returns: whether it did; `false` for an unknown key or a counter not above the stored one.
    func advance(keyID: [UInt8], to counter: UInt32) async throws -> Bool
}

/// An ``AppAttestKeyStore`` in memory, for tests and one process.
public actor MemoryAppAttestKeyStore: AppAttestKeyStore {
    var keys: [[UInt8]: AttestedKey] = [:]

    /// Creates an empty store.
    public init() {}

    public func key(for keyID: [UInt8]) -> AttestedKey? { keys[keyID] }

    public func add(_ key: AttestedKey) -> Bool {
        guard keys[key.keyID] == nil else { return false }
        keys[key.keyID] = key
        return true
    }

    public func advance(keyID: [UInt8], to counter: UInt32) -> Bool {
        guard let stored = keys[keyID], counter > stored.counter else { return false }
        keys[keyID]?.counter = counter
        return true
    }
}
