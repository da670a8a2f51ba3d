@_spi(Sigil) import SigilCore
import Synchronization

/// A ``DirectoryBackend`` in memory, for tests and one process (``Directory/inMemory(_:clock:)``):
/// forgotten on restart, not shared by replicas.
///
/// A transaction runs on a copy of the state, written back whole when nothing was written meanwhile,
/// and run again on the new state when something was (every write outside a transaction counts too).
public final class MemoryDirectoryBackend: DirectoryBackend {
    struct State {
        var generation: UInt64 = 0
        var keys: [String: RegisteredKey] = [:]
        var devices: [String: Device] = [:]
        /// By user ID's bytes, as the stores compare them (``Identifiers``).
        var usersRevokedAt: [Identifiers.Key: Int64] = [:]
        var thumbprints: [String: String] = [:]
        var spentCredentials: [String: Int64] = [:]
        var certificates: [IssuedCertificateRecord] = []
        var audit: [AuditRow] = []
        var auditSequence: Int64 = 0
        var lastUsed: [String: Int64] = [:]
        var serverKeys: [StoredServerKey] = []
        var counters: [String: UInt32] = [:]
        var receipts: [String: [UInt8]] = [:]
    }

    struct Device {
        var userID: String?
        var createdAt: Int64
        var revokedAt: Int64?
        var sealingKey: SealingPublicKey?
        var attestation: String?
    }

    let state = Mutex(State())
    let clock: any UnixClock

    /// Creates a backend holding `keys`, each with its device when it names one.
    public init(_ keys: [RegisteredKey] = [], clock: any UnixClock = SystemUnixClock()) {
        self.clock = clock
        state.withLock { state in
            let statements = Statements(state)
            for key in keys { _ = statements.add(key, now: key.createdAt ?? 0) }
            state = statements.state
        }
    }

    public func transaction<Result: Sendable>(
        _ what: String, _ body: @escaping @Sendable (any DirectoryStatements) async throws -> Result
    ) async throws -> Result {
        while true {
            let statements = Statements(state.withLock { $0 })
            let result = try await body(statements)
            let committed = state.withLock { state in
                guard state.generation == statements.state.generation else { return false }
                state = statements.state
                state.generation &+= 1
                return true
            }
            if committed { return result }
        }
    }

    public func key(_ keyID: String) -> StoredKey? { state.withLock { Statements.key(keyID, in: $0) } }

    public func keyID(forThumbprint thumbprint: String) -> String? { state.withLock { $0.thumbprints[thumbprint] } }

    public func revocationOfUser(_ userID: String) -> Int64? {
        state.withLock { $0.usersRevokedAt[Identifiers.Key(userID)] }
    }

    public func keys(ofDevice deviceID: String) -> [StoredKey] {
        state.withLock { state in
            state.keys.values.filter { $0.deviceID == deviceID }.map(\.keyID).sorted()
                .compactMap { Statements.key($0, in: state) }
        }
    }

    public func keyIDs() -> [String] { state.withLock { $0.keys.keys.sorted() } }

    public func certificates(ofDevice deviceID: String) -> [IssuedCertificateRecord] {
        state.withLock { $0.certificates.filter { $0.deviceID == deviceID }.sorted { $0.serial < $1.serial } }
    }

    public func devices(_ query: DeviceQuery) -> [DeviceRecord] {
        state.withLock { state in
            var keysOf: [String: [RegisteredKey]] = [:]
            for key in state.keys.values { if let device = key.deviceID { keysOf[device, default: []].append(key) } }
            var selected: [DeviceRecord] = []
            for (deviceID, device) in state.devices.sorted(by: { $0.key.precedesInBytes($1.key) }) {
                if let limit = query.limit, selected.count >= limit { break }
                if let after = query.after, !after.precedesInBytes(deviceID) { continue }
                let record = DeviceRecord(
                    deviceID: deviceID, userID: device.userID, created: device.createdAt, revoked: device.revokedAt,
                    keys: (keysOf[deviceID] ?? []).sorted { $0.keyID < $1.keyID }.map {
                        DeviceRecord.Key(
                            keyID: $0.keyID, alg: $0.key.algorithm.rawValue, state: $0.state,
                            created: $0.createdAt ?? 0, validUntil: $0.validUntil, lastUsed: state.lastUsed[$0.keyID],
                            thumbprint: $0.key.jwkThumbprint)
                    },
                    sealingKeyID: device.sealingKey?.keyID,
                    certificates: state.certificates.filter { $0.deviceID == deviceID },
                    attestation: device.attestation)
                if query.selects(record) { selected.append(record) }
            }
            return selected
        }
    }

    public func auditRows(_ query: AuditQuery) -> [AuditRow] {
        state.withLock { state in
            Array(
                state.audit.filter { row in
                    query.matches(row.entry) && query.before.map { row.sequence < $0 } ?? true
                }.suffix(query.limit))
        }
    }

    public func recordUses(_ uses: [String: Int64]) {
        state.withLock { state in
            state.generation &+= 1
            for (keyID, time) in uses where state.keys[keyID] != nil {
                state.lastUsed[keyID] = max(state.lastUsed[keyID] ?? 0, time)
            }
        }
    }

    public func pruneAudit(before time: Int64) -> Int {
        state.withLock { state in
            state.generation &+= 1
            let count = state.audit.count
            state.audit.removeAll { $0.entry.time < time }
            return count - state.audit.count
        }
    }

    public func serverKeys() -> [StoredServerKey] { state.withLock { $0.serverKeys } }

    public func advanceAppAttestCounter(keyID: String, to counter: UInt32) -> Bool {
        state.withLock { state in
            guard counter > state.counters[keyID, default: 0] else { return false }
            state.generation &+= 1
            state.counters[keyID] = counter
            return true
        }
    }

    public func keepReceipt(_ receipt: [UInt8], keyID: String) {
        state.withLock { state in
            state.generation &+= 1
            state.receipts[keyID] = receipt
        }
    }

    public func receipt(keyID: String) -> [UInt8]? { state.withLock { $0.receipts[keyID] } }

    /// The count of writes: every transaction, and every write outside one, changes it.
    public func changeCounter() -> Int64 { state.withLock { Int64(truncatingIfNeeded: $0.generation) } }

    public func close() {}

    /// One transaction's statements on its copy of the state.
    final class Statements: DirectoryStatements, @unchecked Sendable {
        var state: State

        init(_ state: State) { self.state = state }

        static func key(_ keyID: String, in state: State) -> StoredKey? {
            guard var key = state.keys[keyID] else { return nil }
            let device = key.deviceID.flatMap { state.devices[$0] }
            key.sealingKey = device?.sealingKey
            key.deviceAttestation = device?.attestation
            return StoredKey(key: key, deviceRevoked: device?.revokedAt != nil)
        }

        func key(_ keyID: String) -> StoredKey? { Self.key(keyID, in: state) }

        func isRevoked(device: String) -> Bool { state.devices[device]?.revokedAt != nil }

        func sealingKey(ofDevice device: String) -> SealingPublicKey? { state.devices[device]?.sealingKey }

        func spend(_ credential: SingleUseCredential, now: Int64) -> Bool {
            state.spentCredentials = state.spentCredentials.filter { $0.value > now }
            guard state.spentCredentials[credential.id] == nil else { return false }
            state.spentCredentials[credential.id] = credential.expiresAt
            return true
        }

        func add(_ keys: [RegisteredKey], now: Int64) -> Set<String> {
            Set(keys.filter { add($0, now: now) }.map(\.keyID))
        }

        func add(_ key: RegisteredKey, now: Int64) -> Bool {
            guard state.keys[key.keyID] == nil else { return false }
            if let device = key.deviceID, state.devices[device] == nil {
                state.devices[device] = Device(userID: key.userID, createdAt: now, attestation: key.deviceAttestation)
            }
            var stored = key
            stored.sealingKey = nil
            stored.deviceAttestation = nil
            state.keys[key.keyID] = stored
            if let thumbprint = key.key.jwkThumbprint { state.thumbprints[thumbprint] = key.keyID }
            return true
        }

        func retire(keyID: String, until: Int64) { state.keys[keyID] = state.keys[keyID]?.retiring(until: until) }

        func retireSecrets(ofDevice device: String, until: Int64) {
            for (id, key) in state.keys where key.deviceID == device && key.key.algorithm == .hmacSHA256 {
                state.keys[id] = key.retiring(until: until)
            }
        }

        func setSealingKey(_ key: SealingPublicKey, ofDevice device: String) -> Bool {
            guard state.devices[device] != nil else { return false }
            state.devices[device]?.sealingKey = key
            return true
        }

        func devices(ofUser user: String) -> [String] {
            state.devices.filter { Identifiers.same($0.value.userID, user) }.map(\.key).sorted()
        }

        func recordRevocation(ofUser user: String, at time: Int64) {
            let user = Identifiers.Key(user)
            state.usersRevokedAt[user] = max(state.usersRevokedAt[user] ?? time, time)
        }

        func revoke(device: String, at time: Int64) -> Bool {
            guard state.devices[device] != nil else { return false }
            for (id, key) in state.keys where key.deviceID == device { state.keys[id]?.state = .revoked }
            if state.devices[device]?.revokedAt == nil { state.devices[device]?.revokedAt = time }
            return true
        }

        func revoke(keyID: String) -> (deviceID: String, algorithm: String)? {
            guard let key = state.keys[keyID], let device = key.deviceID else { return nil }
            state.keys[keyID]?.state = .revoked
            return (device, key.key.algorithm.rawValue)
        }

        func revokeSecrets(ofDevice device: String) {
            for (id, key) in state.keys where key.deviceID == device && key.key.algorithm == .hmacSHA256 {
                state.keys[id]?.state = .revoked
            }
        }

        func hasUnrevokedKey(device: String) -> Bool {
            state.keys.values.contains { $0.deviceID == device && $0.state != .revoked }
        }

        func record(_ certificate: IssuedCertificateRecord, now: Int64) { state.certificates.append(certificate) }

        func append(_ audit: [AuditEntry]) {
            for entry in audit {
                state.auditSequence += 1
                state.audit.append(AuditRow(sequence: state.auditSequence, entry: entry))
            }
        }

        func serverKeys(of kind: ServerKeyKind) -> [(keyID: String, activatesAt: Int64)] {
            state.serverKeys.filter { $0.kind == kind }.map { ($0.keyID, $0.activatesAt) }
        }

        func insert(_ key: StoredServerKey) { state.serverKeys.append(key) }

        func activate(serverKey keyID: String, at time: Int64) {
            if let index = state.serverKeys.firstIndex(where: { $0.keyID == keyID }) {
                state.serverKeys[index].activatesAt = time
            }
        }
    }
}
