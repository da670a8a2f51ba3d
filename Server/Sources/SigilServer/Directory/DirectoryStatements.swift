@_spi(Sigil) import SigilCore

/// A key as a backend stores it: its own row, and whether its device is revoked. ``Directory`` reads
/// a revoked device's keys as revoked, whatever their own rows say (``asRead``), so a backend never
/// has to.
public struct StoredKey: Sendable {
    /// The key's row (its state as written for the key itself).
    public var key: RegisteredKey
    /// Whether its device is revoked.
    public var deviceRevoked: Bool

    /// Creates a stored key.
    public init(key: RegisteredKey, deviceRevoked: Bool) {
        self.key = key
        self.deviceRevoked = deviceRevoked
    }

    /// The key as every lookup reads it: revoked when its device is.
    public var asRead: RegisteredKey {
        var key = key
        if deviceRevoked { key.state = .revoked }
        return key
    }
}

/// The statements a backend runs inside one transaction of ``DirectoryBackend/transaction(_:_:)``,
/// each a statement or two and no rule: ``Directory`` decides (``DirectoryChange/apply(in:now:)``,
/// the server keys' rotation), the statements store.
public protocol DirectoryStatements: Sendable {
    /// The key `keyID` and whether its device is revoked, or `nil`.
    func key(_ keyID: String) async throws -> StoredKey?
    /// Whether the device `device` is revoked (`false` for one not in the directory).
    func isRevoked(device: String) async throws -> Bool
    /// The device's sealing key, or `nil` for none.
    func sealingKey(ofDevice device: String) async throws -> SealingPublicKey?
    /// Records `credential` until it expires, first dropping those expired at `now`.
    ///
    /// - Returns: `false` when it was recorded already.
    func spend(_ credential: SingleUseCredential, now: Int64) async throws -> Bool
    /// Adds `keys` in their order (HMAC secrets sealed at rest), and each one's device when the
    /// device is new (with the first such key's user and attestation, created at `now`). There are
    /// at most ``DirectoryChange/keysPerStatement``, their IDs are distinct and each has a device
    /// (``DirectoryChange/apply(in:now:)`` sees to all three), so a backend may write them in one
    /// statement, or one by one.
    ///
    /// - Returns: the IDs of the keys added; a key whose ID is taken is not.
    func add(_ keys: [RegisteredKey], now: Int64) async throws -> Set<String>
    /// Moves a key, unless revoked, to rotating, its end date `until` or sooner if it had one sooner.
    func retire(keyID: String, until: Int64) async throws
    /// Moves every HMAC secret of a device, unless revoked, to rotating, as ``retire(keyID:until:)``.
    func retireSecrets(ofDevice device: String, until: Int64) async throws
    /// Sets a device's sealing key.
    ///
    /// - Returns: `false` when there is no such device.
    func setSealingKey(_ key: SealingPublicKey, ofDevice device: String) async throws -> Bool
    /// The devices of `user`, sorted.
    func devices(ofUser user: String) async throws -> [String]
    /// Records that `user` was revoked at `time`, keeping a later time recorded before.
    func recordRevocation(ofUser user: String, at time: Int64) async throws
    /// Marks a device revoked at `time` (keeping an earlier time) and every key of it revoked.
    ///
    /// - Returns: `false` when there is no such device.
    func revoke(device: String, at time: Int64) async throws -> Bool
    /// Marks one key revoked.
    ///
    /// - Returns: its device and algorithm, or `nil` when there is no such key.
    func revoke(keyID: String) async throws -> (deviceID: String, algorithm: String)?
    /// Marks every HMAC secret of a device revoked.
    func revokeSecrets(ofDevice device: String) async throws
    /// Whether the device has a key whose own row is not revoked.
    func hasUnrevokedKey(device: String) async throws -> Bool
    /// Records a client certificate issued.
    func record(_ certificate: IssuedCertificateRecord, now: Int64) async throws
    /// Appends audit rows, each given the next place in the trail.
    func append(_ audit: [AuditEntry]) async throws
    /// The server keys of `kind`: their IDs and activation times.
    func serverKeys(of kind: ServerKeyKind) async throws -> [(keyID: String, activatesAt: Int64)]
    /// Inserts a server key (its private key sealed at rest).
    func insert(_ key: StoredServerKey) async throws
    /// Sets the activation time of the server key `keyID`.
    func activate(serverKey keyID: String, at time: Int64) async throws
}

extension DirectoryChange {
    /// The change, its rules checked, through `store`'s statements: the acting key, revoked devices,
    /// the sealing key read, single-use credentials, then the new keys, retirements, sealing keys,
    /// revocations (users, devices, keys), certificates and audit rows. Every store applies a change
    /// through this one function, inside its own transaction.
    ///
    /// - Throws: ``SigilError``; the store rolls back.
    package func apply(in store: some DirectoryStatements, now: Int64) async throws {
        if let acting = actingKeyID,
            let refusal = Self.refusal(actingKey: try await store.key(acting)?.asRead, keyID: acting, now: now)
        {
            throw refusal
        }
        for device in receivingDevices.sorted() {
            guard try await !store.isRevoked(device: device) else { throw Self.revokedDevice(device) }
        }
        if let read = sealingKeyRead,
            let refusal = sealingKeyRefusal(current: try await store.sealingKey(ofDevice: read.deviceID))
        {
            throw refusal
        }
        for credential in spent {
            guard try await store.spend(credential, now: now) else { throw Self.spentAlready(credential) }
        }
        var named: Set<String> = []
        for key in added {
            guard key.deviceID != nil else {
                throw SigilError(.invalidRegistration, "key \(key.keyID) belongs to no device")
            }
            guard named.insert(key.keyID).inserted else { throw Self.registeredAlready(key.keyID) }
        }
        for start in stride(from: 0, to: added.count, by: Self.keysPerStatement) {
            let batch = added[start..<min(start + Self.keysPerStatement, added.count)]
            let stored = try await store.add(Array(batch), now: now)
            if let taken = batch.first(where: { !stored.contains($0.keyID) }) {
                throw Self.registeredAlready(taken.keyID)
            }
        }
        for (keyID, end) in retiring { try await store.retire(keyID: keyID, until: end) }
        if let (device, end) = retiringSecrets { try await store.retireSecrets(ofDevice: device, until: end) }
        for (device, key) in sealingKeys {
            guard try await store.setSealingKey(key, ofDevice: device) else {
                throw SigilError(.invalidRegistration, "no device \(device)")
            }
        }
        // By the user's bytes: two users whose IDs are equivalent strings are two users (``Identifiers``).
        var devicesOfUsers: [Identifiers.Key: [String]] = [:]
        for user in revokedUsers {
            devicesOfUsers[Identifiers.Key(user)] = try await store.devices(ofUser: user)
            try await store.recordRevocation(ofUser: user, at: now)
        }
        for device in revokedDevices + revokedUsers.flatMap({ devicesOfUsers[Identifiers.Key($0)] ?? [] }) {
            guard try await store.revoke(device: device, at: now) else { throw Self.unknownTarget("device \(device)") }
        }
        var keysRevokedOf: Set<String> = []
        for keyID in revokedKeys {
            // A key pair revoked takes its device's HMAC secrets with it (one may have been fetched with it).
            guard let revoked = try await store.revoke(keyID: keyID) else { throw Self.unknownTarget("key \(keyID)") }
            if revoked.algorithm != SignatureAlgorithm.hmacSHA256.rawValue {
                try await store.revokeSecrets(ofDevice: revoked.deviceID)
            }
            keysRevokedOf.insert(revoked.deviceID)
        }
        // A device left with no key that may sign is revoked: it can do nothing more, and reads as such
        // everywhere (its state, the `state=` filter, the console).
        var lastKeyRows: [AuditEntry] = []
        for device in keysRevokedOf.sorted() where try await !store.hasUnrevokedKey(device: device) {
            guard try await !store.isRevoked(device: device) else { continue }
            _ = try await store.revoke(device: device, at: now)
            // A row of its own, by the change's actor: the device's revocation is in the trail too.
            lastKeyRows.append(
                AuditEntry(
                    time: now, action: .revoked, deviceID: device, actor: audit.first?.actor ?? "server",
                    clientAddress: audit.first?.clientAddress, reason: "its last key that may sign was revoked"))
        }
        for certificate in certificates { try await store.record(certificate, now: now) }
        try await store.append(auditRows(devicesOfUsers: devicesOfUsers) + lastKeyRows)
    }
}
