@_spi(Sigil) import SigilCore

/// A registered key: the verification key (which fixes the algorithm) and its state.
public struct RegisteredKey: Sendable {
    /// Whether the key may be used.
    public enum State: String, Sendable, Hashable {
        /// In use.
        case active
        /// Being replaced; still accepted until its grace period ends.
        case rotating
        /// Refused (`revoked-key`).
        case revoked
    }

    /// The key's fields, held once and shared by every copy: a key passes through the cache, the
    /// verifier and the identity on every request, and a copy is then one reference, not one for each
    /// string and key it holds. A change makes a new box.
    private struct Fields: Sendable {
        var keyID: String
        var key: VerificationKey
        var state: State
        var deviceID: String?
        var userID: String?
        var validUntil: Int64?
        var createdAt: Int64?
        var sealingKey: SealingPublicKey?
        var deviceAttestation: String?
    }
    private var box: Shared<Fields>

    private mutating func change(_ update: (inout Fields) -> Void) { box = box.changed(update) }

    /// The key ID.
    public var keyID: String { box.value.keyID }
    /// The key; it decides the algorithm.
    public var key: VerificationKey { box.value.key }
    /// The state.
    public var state: State {
        get { box.value.state }
        set { change { $0.state = newValue } }
    }
    /// The device the key belongs to, if known.
    public var deviceID: String? {
        get { box.value.deviceID }
        set { change { $0.deviceID = newValue } }
    }
    /// The user the device belongs to, if known.
    public var userID: String? {
        get { box.value.userID }
        set { change { $0.userID = newValue } }
    }
    /// When a rotating key stops being accepted (Unix seconds), if it does.
    public var validUntil: Int64? {
        get { box.value.validUntil }
        set { change { $0.validUntil = newValue } }
    }
    /// When the key was registered (Unix seconds), if known.
    public var createdAt: Int64? {
        get { box.value.createdAt }
        set { change { $0.createdAt = newValue } }
    }
    /// The X-Wing key of the key's device, which its HMAC secrets are sealed to, as the directory read
    /// it (a property of the device: set it with ``DirectoryChange/sealingKeys``).
    public var sealingKey: SealingPublicKey? {
        get { box.value.sealingKey }
        set { change { $0.sealingKey = newValue } }
    }
    /// The device attestation recorded for a key enrolled with an App Attest debug token (the
    /// simulator's debug provider): such a key signs only where debug keys are accepted.
    public static let appAttestDebug = "app-attest-debug"
    /// The ``deviceAttestation`` of a device whose key an App Attest attestation vouched for (its App
    /// Attest key, registered beside it, signs its assertions).
    public static let appAttest = "app-attest"
    /// The attestation its device enrolled with, in words (`android-key,TrustedEnvironment,patch=202602,
    /// boot=Verified,app=com.example.app`, `app-attest`), as the directory read it; `nil` for a device
    /// enrolled otherwise. Written with the device's first key: a property of the device, which no
    /// later key changes.
    public var deviceAttestation: String? {
        get { box.value.deviceAttestation }
        set { change { $0.deviceAttestation = newValue } }
    }

    /// Creates a registered key.
    public init(
        keyID: String,
        key: VerificationKey,
        state: State = .active,
        deviceID: String? = nil,
        userID: String? = nil,
        validUntil: Int64? = nil,
        createdAt: Int64? = nil,
        sealingKey: SealingPublicKey? = nil,
        deviceAttestation: String? = nil
    ) {
        box = Shared(
            Fields(
                keyID: keyID, key: key, state: state, deviceID: deviceID, userID: userID, validUntil: validUntil,
                createdAt: createdAt, sealingKey: sealingKey, deviceAttestation: deviceAttestation))
    }

    /// Whether the key proves a request at `now` on a server that takes, or not, the keys of devices an
    /// App Attest debug token let in (``appAttestDebug``): every way of proving a request (a signature,
    /// a DPoP proof, a client certificate) asks this one question.
    public func isUsable(at now: Int64, acceptingDebugKeys: Bool) -> Bool {
        isUsable(at: now) && (acceptingDebugKeys || deviceAttestation != Self.appAttestDebug)
    }

    /// Whether the key is accepted at `now`.
    public func isUsable(at now: Int64) -> Bool {
        if state == .revoked { return false }
        if let validUntil, now >= validUntil { return false }
        return true
    }

    /// Whether the key may manage its device at `now`: active, with no end date passed.
    ///
    /// A rotating key still signs ordinary requests during its grace period, but it may not issue
    /// secrets, rotate, get certificates or revoke.
    public func isActive(at now: Int64) -> Bool { state == .active && isUsable(at: now) }
}

/// Looks keys up by key ID, in the style of jwt-kit's `JWTKeyCollection`, except that an unknown key
/// ID is a hard failure and never falls back to a default key.
public protocol KeyDirectory: Sendable {
    /// The key registered under `keyID`, or `nil` when there is none.
    ///
    /// - Throws: when the directory cannot answer; the verifier refuses the request.
    func key(for keyID: String) async throws -> RegisteredKey?

    /// The public key whose RFC 7638 JWK thumbprint is `thumbprint`, or `nil` when there is none. A
    /// DPoP proof key is looked up here (PROTOCOL.md section 13.2): a directory that answered `nil` for
    /// a registered key would let a revoked device's key prove DPoP requests, so there is no default.
    func key(forThumbprint thumbprint: String) async throws -> RegisteredKey?

    /// When the user `userID` was revoked (Unix seconds), or `nil` when never: an access token of the
    /// user issued at or before that time is refused (PROTOCOL.md section 13.2), while the user's devices
    /// were revoked with it.
    ///
    /// - Throws: when the directory cannot answer; the request is refused (`store-unavailable`).
    func revocationOfUser(_ userID: String) async throws -> Int64?
}

extension JWK {
    /// Whether `keyID` has the shape of an RFC 7638 SHA-256 thumbprint: 43 base64url characters.
    public static func isThumbprintShaped(_ keyID: String) -> Bool {
        keyID.utf8.count == 43 && Base64URL.decode(keyID)?.count == 32
    }
}

/// A ``KeyDirectory`` in memory holding keys you give it, as jwt-kit's `JWTKeyCollection` does: for a
/// verifier alone, a test, a tool. It knows no devices, users or changes; a server that registers,
/// rotates or revokes runs on a ``Directory`` (``Directory/inMemory(_:clock:)`` for one in memory).
public actor MemoryKeyDirectory: KeyDirectory {
    var keys: [String: RegisteredKey] = [:]
    var thumbprints: [String: String] = [:]

    /// Creates a directory holding `keys`.
    public init(_ keys: [RegisteredKey] = []) {
        for key in keys {
            self.keys[key.keyID] = key
            if let thumbprint = key.key.jwkThumbprint { thumbprints[thumbprint] = key.keyID }
        }
    }

    /// Registers or replaces a key.
    public func add(_ key: RegisteredKey) {
        keys[key.keyID] = key
        if let thumbprint = key.key.jwkThumbprint { thumbprints[thumbprint] = key.keyID }
    }

    /// Registers a verification key under `keyID` (for HMAC secrets, whose IDs are assigned) or under
    /// its derived key ID.
    ///
    /// - Returns: the key ID used.
    @discardableResult
    public func add(_ key: VerificationKey, keyID: String? = nil) throws -> String {
        guard let id = keyID ?? key.derivedKeyID, KeyID.isValid(id) else {
            throw SigilInputError("a key ID matching [A-Za-z0-9._~-]{1,128} is required")
        }
        add(RegisteredKey(keyID: id, key: key))
        return id
    }

    /// Marks a key revoked, effective for the next lookup.
    public func revoke(_ keyID: String) { keys[keyID]?.state = .revoked }

    public func key(for keyID: String) -> RegisteredKey? { keys[keyID] }

    public func key(forThumbprint thumbprint: String) -> RegisteredKey? { thumbprints[thumbprint].flatMap { keys[$0] } }

    /// `nil`: this directory knows no users.
    public func revocationOfUser(_ userID: String) -> Int64? { nil }
}

/// A value held once and shared by every copy of the struct that holds it, so a copy is one reference
/// (``RegisteredKey``, ``VerifiedRequest``); a change makes a new one.
final class Shared<Value: Sendable>: Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }

    /// A new box holding this one's value with `update` made to it (this box, shared, stays as it is).
    func changed(_ update: (inout Value) -> Void) -> Shared {
        var value = self.value
        update(&value)
        return Shared(value)
    }
}
