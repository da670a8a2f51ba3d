import SigilCore

/// One atomic change to a key directory: keys added, keys given an end date, devices revoked.
///
/// A ``KeyRegistry`` applies a change all at once or not at all, so a failed write never leaves a
/// device with its new key but without its old key's end date, or the reverse.
public struct DirectoryChange: Sendable {
    /// Keys to add; adding a key ID that exists fails the whole change.
    public var added: [RegisteredKey]
    /// Keys to move to ``RegisteredKey/State-swift.enum/rotating``, accepted until the given Unix time.
    public var retiring: [(keyID: String, until: Int64)]
    /// Devices whose every key is revoked.
    public var revokedDevices: [String]

    /// Creates a change.
    public init(
        added: [RegisteredKey] = [],
        retiring: [(keyID: String, until: Int64)] = [],
        revokedDevices: [String] = []
    ) {
        self.added = added
        self.retiring = retiring
        self.revokedDevices = revokedDevices
    }
}

/// A ``KeyDirectory`` that can also be written: what device registration, secret issuance, rotation
/// and revocation need.
public protocol KeyRegistry: KeyDirectory {
    /// Applies `change` atomically.
    ///
    /// - Throws: ``SigilError`` `invalid-registration` when an added key ID exists already, or
    ///   `store-unavailable` when the store cannot write; in both cases nothing changed.
    func apply(_ change: DirectoryChange) async throws

    /// Every key of a device, revoked ones included.
    func keys(ofDevice deviceID: String) async throws -> [RegisteredKey]
}

extension RegisteredKey {
    /// The key with its state moved to rotating and its end date set, unless it is revoked or ends sooner.
    func retiring(until end: Int64) -> RegisteredKey {
        var key = self
        guard key.state != .revoked else { return key }
        key.state = .rotating
        key.validUntil = min(key.validUntil ?? end, end)
        return key
    }
}

extension MemoryKeyDirectory: KeyRegistry {
    public func apply(_ change: DirectoryChange) throws {
        var updated = keys
        for key in change.added {
            guard updated[key.keyID] == nil else {
                throw SigilError(.invalidRegistration, "key \(key.keyID) is registered already")
            }
            updated[key.keyID] = key
        }
        for (keyID, end) in change.retiring {
            updated[keyID] = updated[keyID]?.retiring(until: end)
        }
        for device in change.revokedDevices {
            for (id, key) in updated where key.deviceID == device { updated[id]?.state = .revoked }
        }
        keys = updated
    }

    public func keys(ofDevice deviceID: String) -> [RegisteredKey] {
        keys.values.filter { $0.deviceID == deviceID }.sorted { $0.keyID < $1.keyID }
    }
}
