@_spi(Sigil) import SigilCore

/// Where a ``Directory`` keeps its devices, keys, audit trail, server keys and App Attest records:
/// memory, SQLite, PostgreSQL, or a store of your own. A backend holds statements and no rule; the
/// rules are ``Directory``'s, once for every backend. Run `DirectoryContract` (the
/// `SigilDirectoryContract` library) on a backend of your own: it checks every statement's promise.
///
/// Call it through a ``Directory`` only: a statement run on its own skips the rules.
///
/// Device, user and key IDs are one ID only when their UTF-8 bytes are (PROTOCOL.md section 13.2),
/// as SQLite and PostgreSQL compare them: a dictionary keyed by `String` takes canonically
/// equivalent IDs (a Kelvin sign for a `K`) for one, so key it by the bytes (`Array(id.utf8)`).
///
/// Every statement that fails for a reason of the store's (a lost connection, a full disk) throws
/// `store-unavailable` (``SigilError``), never a driver's error, and never says what it read.
public protocol DirectoryBackend: Sendable {
    /// Runs `body` in one transaction: serialized with every other transaction on the store (this
    /// process's and any other's), committed when `body` returns, rolled back when it throws, so a
    /// change lands whole or not at all. A commit bumps ``changeCounter()``. `body` may run more than
    /// once (an optimistic backend retries a transaction another one overtook): it has no effect but
    /// its statements.
    ///
    /// - Parameter what: names the change in the `store-unavailable` error (a ``SigilError`` thrown
    ///   by `body` is thrown as it is).
    func transaction<Result: Sendable>(
        _ what: String, _ body: @escaping @Sendable (any DirectoryStatements) async throws -> Result
    ) async throws -> Result

    /// The key `keyID` and whether its device is revoked, or `nil`.
    func key(_ keyID: String) async throws -> StoredKey?
    /// The key ID whose public key has the RFC 7638 thumbprint `thumbprint`, or `nil`.
    func keyID(forThumbprint thumbprint: String) async throws -> String?
    /// When `userID` was revoked, or `nil`.
    func revocationOfUser(_ userID: String) async throws -> Int64?
    /// Every key of a device, revoked ones included, by key ID.
    func keys(ofDevice deviceID: String) async throws -> [StoredKey]
    /// Every key ID, sorted.
    func keyIDs() async throws -> [String]
    /// The certificates recorded for a device, by serial.
    func certificates(ofDevice deviceID: String) async throws -> [IssuedCertificateRecord]

    /// The devices `query` selects, by device ID in byte order (SQL's `"C"` collation), at most
    /// ``DeviceQuery/limit``, after ``DeviceQuery/after``: the query limits, so a page costs a page.
    func devices(_ query: DeviceQuery) async throws -> [DeviceRecord]
    /// The newest ``AuditQuery/limit`` rows `query` selects (placed before ``AuditQuery/before``),
    /// oldest first.
    func auditRows(_ query: AuditQuery) async throws -> [AuditRow]
    /// Records keys' last use, never moving one back; unknown key IDs are skipped.
    func recordUses(_ uses: [String: Int64]) async throws
    /// Deletes audit rows dated before `time`, returning how many.
    func pruneAudit(before time: Int64) async throws -> Int

    /// Every server key, private keys opened.
    func serverKeys() async throws -> [StoredServerKey]

    /// Sets the App Attest counter of `keyID` to `counter` when that is above the stored one (none
    /// stored counts as 0), in one atomic statement: of two calls with one counter, one succeeds.
    ///
    /// - Returns: whether it did.
    func advanceAppAttestCounter(keyID: String, to counter: UInt32) async throws -> Bool
    /// Keeps `receipt` as the latest App Attest receipt of `keyID`.
    func keepReceipt(_ receipt: [UInt8], keyID: String) async throws
    /// The latest App Attest receipt of `keyID`.
    func receipt(keyID: String) async throws -> [UInt8]?

    /// A number every committed transaction changes, read (at most four times a second) before a
    /// ``Directory`` trusts its cache: how a change made through another ``Directory`` (another
    /// process, another replica) reaches this one's lookups.
    func changeCounter() async throws -> Int64
    /// Calls `changed` whenever a change may have landed that this process did not make (a database
    /// notification), until the backend closes: the cache clears then too. The default never calls it.
    func observeChanges(_ changed: @escaping @Sendable () -> Void)
    /// Closes the backend; closing again does nothing.
    func close() async throws
}

extension DirectoryBackend {
    public func observeChanges(_ changed: @escaping @Sendable () -> Void) {}
}
