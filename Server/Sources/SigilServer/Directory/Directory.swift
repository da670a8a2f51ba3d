import Logging
@_spi(Sigil) import SigilCore

/// The key directory: devices, their keys and states, users' revocations, the audit trail, the
/// server's own keys and App Attest records, with every rule that governs them, over one
/// ``DirectoryBackend`` that stores them (memory, SQLite, PostgreSQL, or one of your own).
///
/// The rules live here once, whatever the backend:
/// - a change applies whole or not at all, its rules checked inside its transaction
///   (``DirectoryChange``);
/// - a revoked device's keys read as revoked (``StoredKey/asRead``), in lookups and in changes;
/// - one next server key of a kind at a time, and a promotion makes the earliest next one current;
/// - lookups are cached (``DirectoryCache``), cleared by this directory's own changes at once and by
///   anyone else's through the backend's change counter and notifications.
///
/// What a server needs, a backend provides: there is no optional capability and no fallback to memory.
public final class Directory: KeyDirectory, AppAttestStore {
    /// Where the directory is stored: reached through the directory alone, whose rules every write
    /// must pass (a statement run directly would skip them).
    package let backend: any DirectoryBackend
    /// The lookups remembered.
    public let cache: DirectoryCache
    /// The time changes are judged at.
    public let clock: any UnixClock

    /// Creates the directory over `backend`.
    ///
    /// - Parameters:
    ///   - cacheLifetime: the most a lookup is cached, in seconds; 0 reads every time.
    ///   - cacheCapacity: the most lookups cached (about 1 KiB each).
    ///   - changeCheckInterval: the least time between two reads of the backend's change counter.
    public init(
        backend: any DirectoryBackend, clock: any UnixClock = SystemUnixClock(), cacheLifetime: Int64 = 300,
        cacheCapacity: Int = 100_000, changeCheckInterval: Duration = .milliseconds(250)
    ) {
        self.backend = backend
        self.clock = clock
        self.cache = DirectoryCache(
            lifetime: cacheLifetime, capacity: cacheCapacity, checkInterval: changeCheckInterval,
            changeCounter: { try await backend.changeCounter() })
        // Weakly: the backend's listener must not keep the cache (and through it the backend) alive.
        backend.observeChanges { [weak cache = self.cache] in cache?.clear() }
    }

    /// A directory in memory holding `keys` (each with its device, when it names one): for tests and
    /// one process; forgotten on restart.
    public static func inMemory(_ keys: [RegisteredKey] = [], clock: any UnixClock = SystemUnixClock()) -> Directory {
        Directory(backend: MemoryDirectoryBackend(keys, clock: clock), clock: clock, cacheLifetime: 0)
    }

    /// Closes the backend.
    public func close() async throws { try await backend.close() }

    // MARK: Lookups

    public func key(for keyID: String) async throws -> RegisteredKey? {
        try await cache.key(keyID, now: clock.now()) { try await backend.key(keyID)?.asRead }
    }

    public func key(forThumbprint thumbprint: String) async throws -> RegisteredKey? {
        let keyID = try await cache.keyID(thumbprint: thumbprint, now: clock.now()) {
            try await backend.keyID(forThumbprint: thumbprint)
        }
        guard let keyID else { return nil }
        return try await key(for: keyID)
    }

    public func revocationOfUser(_ userID: String) async throws -> Int64? {
        try await cache.userRevokedAt(userID, now: clock.now()) { try await backend.revocationOfUser(userID) }
    }

    /// Every key of a device, revoked ones included, by key ID.
    public func keys(ofDevice deviceID: String) async throws -> [RegisteredKey] {
        try await backend.keys(ofDevice: deviceID).map(\.asRead)
    }

    /// Every key ID, sorted.
    public func keyIDs() async throws -> [String] { try await backend.keyIDs() }

    /// The certificates recorded for a device.
    public func certificates(ofDevice deviceID: String) async throws -> [IssuedCertificateRecord] {
        try await backend.certificates(ofDevice: deviceID)
    }

    // MARK: Changes

    /// Applies `change` atomically, its rules checked inside the transaction
    /// (``DirectoryChange/apply(in:now:)``).
    ///
    /// - Throws: ``SigilError``: the rule refused (`invalid-registration` for a key ID taken,
    ///   `revoked-key`, `forbidden`…), or `store-unavailable`; in every case nothing changed.
    public func apply(_ change: DirectoryChange) async throws {
        let now = clock.now()
        cache.clear()
        defer { cache.clear() }
        try await backend.transaction("the key directory's change") { statements in
            try await change.apply(in: statements, now: now)
        }
    }

    // MARK: Administration

    /// The devices `query` selects, by device ID in byte order, at most ``DeviceQuery/limit`` of
    /// them, after ``DeviceQuery/after``.
    public func devices(_ query: DeviceQuery) async throws -> [DeviceRecord] { try await backend.devices(query) }

    /// The newest ``AuditQuery/limit`` audit rows `query` selects, oldest first, each with its place.
    public func auditRows(_ query: AuditQuery) async throws -> [AuditRow] { try await backend.auditRows(query) }

    /// The audit rows `query` selects, oldest first (``auditRows(_:)`` without their places).
    public func auditTrail(_ query: AuditQuery) async throws -> [AuditEntry] {
        try await auditRows(query).map(\.entry)
    }

    /// Appends rows that go with no directory change.
    public func appendAudit(_ entries: [AuditEntry]) async throws {
        try await backend.transaction("the audit trail's write") { try await $0.append(entries) }
    }

    /// Records keys' last verified use (Unix seconds), never moving one back.
    public func recordUses(_ uses: [String: Int64]) async throws { try await backend.recordUses(uses) }

    /// Drops audit rows older than `time` (the retention), returning how many.
    public func pruneAudit(before time: Int64) async throws -> Int { try await backend.pruneAudit(before: time) }

    // MARK: Server keys

    /// Every server key, of every kind.
    public func serverKeys() async throws -> [StoredServerKey] { try await backend.serverKeys() }

    /// Adds `key` with its audit rows, in one transaction.
    ///
    /// - Parameter onlyIfFirst: add it only when its kind has no key yet (the first start's import);
    ///   then no error when it has one.
    /// - Throws: `forbidden` when its kind has a next key already (one rotation at a time);
    ///   `store-unavailable`. Nothing changes on a throw.
    public func addServerKey(_ key: StoredServerKey, onlyIfFirst: Bool, audit: [AuditEntry]) async throws {
        let now = clock.now()
        try await backend.transaction("adding a server key") { statements in
            let existing = try await statements.serverKeys(of: key.kind)
            if onlyIfFirst {
                guard existing.isEmpty else { return }
            } else if existing.contains(where: { $0.activatesAt > now }) {
                throw SigilError(.forbidden, "a next \(key.kind.rawValue) key is published already; promote it first")
            }
            try await statements.insert(key)
            try await statements.append(audit)
        }
    }

    /// Makes the next key of `kind` (the earliest to activate) current at `now`, with its audit rows
    /// (each given the key's ID), in one transaction.
    ///
    /// - Returns: the key ID promoted.
    /// - Throws: `forbidden` when there is no next key; nothing changes.
    public func promoteServerKey(_ kind: ServerKeyKind, at now: Int64, audit: [AuditEntry]) async throws -> String {
        try await backend.transaction("promoting a server key") { statements in
            let next = try await statements.serverKeys(of: kind).filter { $0.activatesAt > now }
                .min { ($0.activatesAt, $0.keyID) < ($1.activatesAt, $1.keyID) }
            guard let next else {
                throw SigilError(.forbidden, "there is no next \(kind.rawValue) key to promote; rotate first")
            }
            try await statements.activate(serverKey: next.keyID, at: now)
            try await statements.append(
                audit.map { entry in
                    var entry = entry
                    entry.keyID = next.keyID
                    return entry
                })
            return next.keyID
        }
    }

    // MARK: App Attest

    public func advance(keyID: String, to counter: UInt32) async throws -> Bool {
        // A key with no counter stored counts as 0: 0 never advances it.
        guard counter > 0 else { return false }
        return try await backend.advanceAppAttestCounter(keyID: keyID, to: counter)
    }

    public func keepReceipt(_ receipt: [UInt8], keyID: String) async throws {
        try await backend.keepReceipt(receipt, keyID: keyID)
    }

    public func receipt(keyID: String) async throws -> [UInt8]? { try await backend.receipt(keyID: keyID) }
}
