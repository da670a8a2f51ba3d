@_spi(Sigil) import SigilCore

/// The statements one store runs inside a change's transaction. The rules of a change live once, in
/// ``DirectoryChange/apply(in:now:)``; a store (memory, SQLite, PostgreSQL) implements these, each a
/// statement or two, and runs `apply` inside its own transaction, rolled back when it throws.
package protocol DirectoryTransaction {
    /// The key `keyID` as lookups read it (a revoked device's keys read as revoked), or `nil`.
    func key(_ keyID: String) async throws -> RegisteredKey?
    /// Whether the device `device` is revoked (`false` for one not in the directory).
    func isRevoked(device: String) async throws -> Bool
    /// The device's sealing key, or `nil` for none.
    func sealingKey(ofDevice device: String) async throws -> SealingPublicKey?
    /// Records `credential` until it expires, first dropping those expired at `now`.
    ///
    /// - Returns: `false` when it was recorded already.
    func spend(_ credential: SingleUseCredential, now: Int64) async throws -> Bool
    /// Adds `key`, and its device when the device is new (with the key's user and attestation).
    ///
    /// - Returns: `false` when the key ID is taken.
    func add(_ key: RegisteredKey, now: Int64) async throws -> Bool
    /// Moves a key, unless revoked, to rotating, accepted until `until` at the latest.
    func retire(keyID: String, until: Int64) async throws
    /// Moves every HMAC secret of a device, unless revoked, to rotating, accepted until `until` at the latest.
    func retireSecrets(ofDevice device: String, until: Int64) async throws
    /// Sets a device's sealing key.
    ///
    /// - Returns: `false` when there is no such device.
    func setSealingKey(_ key: SealingPublicKey, ofDevice device: String) async throws -> Bool
    /// The devices of `user`, sorted.
    func devices(ofUser user: String) async throws -> [String]
    /// Records that `user` was revoked at `time`, keeping a later time recorded before (a revocation
    /// made on a clock behind must not re-admit tokens an earlier one refused).
    func recordRevocation(ofUser user: String, at time: Int64) async throws
    /// Revokes a device and every key of it.
    ///
    /// - Returns: `false` when there is no such device.
    func revoke(device: String, at time: Int64) async throws -> Bool
    /// Revokes one key.
    ///
    /// - Returns: its device and algorithm, or `nil` when there is no such key.
    func revoke(keyID: String) async throws -> (deviceID: String, algorithm: String)?
    /// Revokes every HMAC secret of a device.
    func revokeSecrets(ofDevice device: String) async throws
    /// Whether the device has a key that is not revoked.
    func hasUnrevokedKey(device: String) async throws -> Bool
    /// Records a client certificate issued.
    func record(_ certificate: IssuedCertificateRecord, now: Int64) async throws
    /// Appends audit rows.
    func append(_ audit: [AuditEntry]) async throws
}

extension DirectoryChange {
    /// The change, its rules checked, through `store`'s statements: the acting key, revoked devices,
    /// the sealing key read, single-use credentials, then the new keys, retirements, sealing keys,
    /// revocations (users, devices, keys), certificates and audit rows. Every store applies a change
    /// through this one function, inside its own transaction.
    ///
    /// - Throws: ``SigilError``; the store rolls back.
    package func apply(in store: some DirectoryTransaction, now: Int64) async throws {
        if let acting = actingKeyID,
            let refusal = Self.refusal(actingKey: try await store.key(acting), keyID: acting, now: now)
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
        for key in added {
            guard key.deviceID != nil else {
                throw SigilError(.invalidRegistration, "key \(key.keyID) belongs to no device")
            }
            guard try await store.add(key, now: now) else {
                throw SigilError(.invalidRegistration, "key \(key.keyID) is registered already")
            }
        }
        for (keyID, end) in retiring { try await store.retire(keyID: keyID, until: end) }
        if let (device, end) = retiringSecrets { try await store.retireSecrets(ofDevice: device, until: end) }
        for (device, key) in sealingKeys {
            guard try await store.setSealingKey(key, ofDevice: device) else {
                throw SigilError(.invalidRegistration, "no device \(device)")
            }
        }
        var devicesOfUsers: [String: [String]] = [:]
        for user in revokedUsers {
            devicesOfUsers[user] = try await store.devices(ofUser: user)
            try await store.recordRevocation(ofUser: user, at: now)
        }
        for device in revokedDevices + revokedUsers.flatMap({ devicesOfUsers[$0] ?? [] }) {
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
