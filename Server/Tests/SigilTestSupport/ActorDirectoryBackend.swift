import SigilCore
import SigilServer

/// A ``DirectoryBackend`` as another package would write one, on SigilServer's public API alone:
/// dictionaries behind an actor. Every write waits its turn on the actor's queue; a transaction works
/// on a copy of the tables, kept when it returns and dropped when it throws. The directory contract
/// (`SigilDirectoryContract`) runs on it as on the backends Sigil ships.
actor ActorDirectoryBackend: DirectoryBackend {
    struct Device {
        var userID: String?
        var createdAt: Int64
        var revokedAt: Int64?
        var sealingKey: SealingPublicKey?
        var attestation: String?
    }

    struct Tables {
        var keys: [String: RegisteredKey] = [:]
        var devices: [String: Device] = [:]
        /// By the user ID's UTF-8 bytes: a `String` key takes canonically equivalent IDs for one.
        var usersRevokedAt: [[UInt8]: Int64] = [:]
        var spent: [String: Int64] = [:]
        var certificates: [IssuedCertificateRecord] = []
        var audit: [AuditRow] = []
        /// The last audit row's place (never reused, pruned rows' included).
        var auditSequence: Int64 = 0
        var lastUsed: [String: Int64] = [:]
        var serverKeys: [StoredServerKey] = []
        var counters: [String: UInt32] = [:]
        var receipts: [String: [UInt8]] = [:]
    }

    var tables = Tables()
    /// Counts the writes committed.
    var version: Int64 = 0
    var writing = false
    var waiting: [CheckedContinuation<Void, Never>] = []

    /// Waits for the writer's turn.
    func acquire() async {
        guard writing else {
            writing = true
            return
        }
        await withCheckedContinuation { waiting.append($0) }
    }

    func release() {
        if waiting.isEmpty { writing = false } else { waiting.removeFirst().resume() }
    }

    func commit(_ new: Tables) {
        tables = new
        version += 1
    }

    /// Runs `body` with the writer's turn, on a copy of the tables kept when it returns.
    func write<Result: Sendable>(_ body: @Sendable (Work) async throws -> Result) async throws -> Result {
        await acquire()
        let work = Work(tables)
        do {
            let result = try await body(work)
            commit(work.tables)
            release()
            return result
        } catch {
            release()
            throw error
        }
    }

    func transaction<Result: Sendable>(
        _ what: String, _ body: @escaping @Sendable (any DirectoryStatements) async throws -> Result
    ) async throws -> Result {
        try await write { try await body($0) }
    }

    func key(_ keyID: String) -> StoredKey? { Work.key(keyID, in: tables) }

    func keyID(forThumbprint thumbprint: String) -> String? {
        tables.keys.values.first { $0.key.jwkThumbprint == thumbprint }?.keyID
    }

    func revocationOfUser(_ userID: String) -> Int64? { tables.usersRevokedAt[Array(userID.utf8)] }

    func keys(ofDevice deviceID: String) -> [StoredKey] {
        tables.keys.values.filter { $0.deviceID == deviceID }.map(\.keyID).sorted().compactMap { key($0) }
    }

    func keyIDs() -> [String] { tables.keys.keys.sorted() }

    func certificates(ofDevice deviceID: String) -> [IssuedCertificateRecord] {
        tables.certificates.filter { $0.deviceID == deviceID }.sorted { $0.serial < $1.serial }
    }

    func devices(_ query: DeviceQuery) -> [DeviceRecord] {
        let records = tables.devices.keys.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }.compactMap {
            deviceID -> DeviceRecord? in
            if let after = query.after, !after.utf8.lexicographicallyPrecedes(deviceID.utf8) { return nil }
            guard let device = tables.devices[deviceID] else { return nil }
            let keys = tables.keys.values.filter { $0.deviceID == deviceID }.sorted { $0.keyID < $1.keyID }
            let record = DeviceRecord(
                deviceID: deviceID, userID: device.userID, created: device.createdAt, revoked: device.revokedAt,
                keys: keys.map {
                    DeviceRecord.Key(
                        keyID: $0.keyID, alg: $0.key.algorithm.rawValue, state: $0.state, created: $0.createdAt ?? 0,
                        validUntil: $0.validUntil, lastUsed: tables.lastUsed[$0.keyID],
                        thumbprint: $0.key.jwkThumbprint)
                },
                sealingKeyID: device.sealingKey?.keyID, certificates: certificates(ofDevice: deviceID),
                attestation: device.attestation)
            return query.selects(record) ? record : nil
        }
        return Array(records.prefix(query.limit ?? records.count))
    }

    func auditRows(_ query: AuditQuery) -> [AuditRow] {
        Array(
            tables.audit.filter { row in query.matches(row.entry) && query.before.map { row.sequence < $0 } ?? true }
                .suffix(query.limit))
    }

    func recordUses(_ uses: [String: Int64]) async throws {
        try await write { work in
            for (keyID, time) in uses where work.tables.keys[keyID] != nil {
                work.tables.lastUsed[keyID] = max(work.tables.lastUsed[keyID] ?? 0, time)
            }
        }
    }

    func pruneAudit(before time: Int64) async throws -> Int {
        try await write { work in
            let count = work.tables.audit.count
            work.tables.audit.removeAll { $0.entry.time < time }
            return count - work.tables.audit.count
        }
    }

    func serverKeys() -> [StoredServerKey] { tables.serverKeys }

    func advanceAppAttestCounter(keyID: String, to counter: UInt32) async throws -> Bool {
        try await write { work in
            guard counter > work.tables.counters[keyID, default: 0] else { return false }
            work.tables.counters[keyID] = counter
            return true
        }
    }

    func keepReceipt(_ receipt: [UInt8], keyID: String) async throws {
        try await write { $0.tables.receipts[keyID] = receipt }
    }

    func receipt(keyID: String) -> [UInt8]? { tables.receipts[keyID] }

    func changeCounter() -> Int64 { version }

    func close() {}

    /// One transaction's statements, on its copy of the tables.
    final class Work: DirectoryStatements, @unchecked Sendable {
        var tables: Tables

        init(_ tables: Tables) { self.tables = tables }

        static func key(_ keyID: String, in tables: Tables) -> StoredKey? {
            guard var key = tables.keys[keyID] else { return nil }
            let device = key.deviceID.flatMap { tables.devices[$0] }
            key.sealingKey = device?.sealingKey
            key.deviceAttestation = device?.attestation
            return StoredKey(key: key, deviceRevoked: device?.revokedAt != nil)
        }

        func key(_ keyID: String) -> StoredKey? { Self.key(keyID, in: tables) }

        func isRevoked(device: String) -> Bool { tables.devices[device]?.revokedAt != nil }

        func sealingKey(ofDevice device: String) -> SealingPublicKey? { tables.devices[device]?.sealingKey }

        func spend(_ credential: SingleUseCredential, now: Int64) -> Bool {
            tables.spent = tables.spent.filter { $0.value > now }
            guard tables.spent[credential.id] == nil else { return false }
            tables.spent[credential.id] = credential.expiresAt
            return true
        }

        func add(_ keys: [RegisteredKey], now: Int64) -> Set<String> {
            Set(keys.filter { add($0, now: now) }.map(\.keyID))
        }

        func add(_ key: RegisteredKey, now: Int64) -> Bool {
            guard tables.keys[key.keyID] == nil, let device = key.deviceID else { return false }
            if tables.devices[device] == nil {
                tables.devices[device] = Device(userID: key.userID, createdAt: now, attestation: key.deviceAttestation)
            }
            tables.keys[key.keyID] = key
            return true
        }

        func retire(_ id: String, until end: Int64) {
            guard let key = tables.keys[id], key.state != .revoked else { return }
            tables.keys[id]?.state = .rotating
            tables.keys[id]?.validUntil = min(key.validUntil ?? end, end)
        }

        func retire(keyID: String, until: Int64) { retire(keyID, until: until) }

        func retireSecrets(ofDevice device: String, until: Int64) {
            for (id, key) in tables.keys where key.deviceID == device && key.key.algorithm == .hmacSHA256 {
                retire(id, until: until)
            }
        }

        func setSealingKey(_ key: SealingPublicKey, ofDevice device: String) -> Bool {
            guard tables.devices[device] != nil else { return false }
            tables.devices[device]?.sealingKey = key
            return true
        }

        func devices(ofUser user: String) -> [String] {
            tables.devices.filter { $0.value.userID?.utf8.elementsEqual(user.utf8) == true }.map(\.key).sorted()
        }

        func recordRevocation(ofUser user: String, at time: Int64) {
            tables.usersRevokedAt[Array(user.utf8)] = max(tables.usersRevokedAt[Array(user.utf8)] ?? time, time)
        }

        func revoke(device: String, at time: Int64) -> Bool {
            guard tables.devices[device] != nil else { return false }
            for (id, key) in tables.keys where key.deviceID == device { tables.keys[id]?.state = .revoked }
            if tables.devices[device]?.revokedAt == nil { tables.devices[device]?.revokedAt = time }
            return true
        }

        func revoke(keyID: String) -> (deviceID: String, algorithm: String)? {
            guard let key = tables.keys[keyID], let device = key.deviceID else { return nil }
            tables.keys[keyID]?.state = .revoked
            return (device, key.key.algorithm.rawValue)
        }

        func revokeSecrets(ofDevice device: String) {
            for (id, key) in tables.keys where key.deviceID == device && key.key.algorithm == .hmacSHA256 {
                tables.keys[id]?.state = .revoked
            }
        }

        func hasUnrevokedKey(device: String) -> Bool {
            tables.keys.values.contains { $0.deviceID == device && $0.state != .revoked }
        }

        func record(_ certificate: IssuedCertificateRecord, now: Int64) { tables.certificates.append(certificate) }

        func append(_ audit: [AuditEntry]) {
            for entry in audit {
                tables.auditSequence += 1
                tables.audit.append(AuditRow(sequence: tables.auditSequence, entry: entry))
            }
        }

        func serverKeys(of kind: ServerKeyKind) -> [(keyID: String, activatesAt: Int64)] {
            tables.serverKeys.filter { $0.kind == kind }.map { ($0.keyID, $0.activatesAt) }
        }

        func insert(_ key: StoredServerKey) { tables.serverKeys.append(key) }

        func activate(serverKey keyID: String, at time: Int64) {
            if let index = tables.serverKeys.firstIndex(where: { $0.keyID == keyID }) {
                tables.serverKeys[index].activatesAt = time
            }
        }
    }
}
