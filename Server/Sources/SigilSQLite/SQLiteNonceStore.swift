import Foundation
import Logging
import NIOPosix
import SQLiteNIO
@_spi(Sigil) import SigilCore
import SigilServer
import Synchronization

/// A ``NonceStore`` for one server process that a restart does not reopen to replays, future-dated
/// requests included.
///
/// Every nonce is recorded in memory (a ``MemoryNonceStore``); the SQLite file keeps what a restart
/// needs, written before the request is accepted:
/// - a *horizon*: a time at or after the timestamp of every request accepted so far whose nonce is
///   only in memory. It moves a couple of seconds ahead of the clock, so honest traffic writes it
///   about once every two seconds. After a restart, requests dated at or before it are refused
///   (`timestamp-out-of-window`, whose `serverTime` lets clients re-sync and retry).
/// - the nonces of requests dated more than ``durableLead`` seconds ahead of the server's clock,
///   which the horizon does not cover; they are loaded back into memory at the next start, and when
///   they are dropped past their retention the horizon rises to their timestamps (so a window
///   widened across a restart reopens nothing).
///
/// - Warning: one process per file: two processes sharing the file do not see each other's
///   in-memory nonces. Replicas need a shared store.
public final class SQLiteNonceStore: NonceStore {
    private let closed = Atomic<Bool>(false)
    private let memory: MemoryNonceStore
    private let connection: SQLiteConnection
    /// The file's lock in this process, shared with a key directory on the same file.
    private let writeLock: WriteLock
    private let horizon: Mutex<Int64>
    private let restartHorizon: Int64
    private let logger: Logger

    /// Requests dated more than this many seconds ahead of the server's clock have their nonce written.
    public static let durableLead: Int64 = 1
    /// How far ahead of the clock a written horizon reaches.
    public static let horizonLead: Int64 = durableLead + 1

    private init(
        memory: MemoryNonceStore, connection: SQLiteConnection, writeLock: WriteLock, horizon: Int64, logger: Logger
    ) {
        self.memory = memory
        self.connection = connection
        self.writeLock = writeLock
        self.horizon = Mutex(horizon)
        self.restartHorizon = horizon
        self.logger = logger
    }

    /// Opens (creating if needed) the nonce tables in the SQLite file at `path` (mode 0600), drops
    /// expired nonces and loads the live ones.
    ///
    /// - Parameters:
    ///   - clock: read once, for the entries still live.
    ///   - threadPool: where SQLite's calls run.
    public static func open(
        path: String,
        clock: any UnixClock = SystemUnixClock(),
        threadPool: NIOThreadPool = .singleton,
        logger: Logger = Logger(label: "sigil.sqlite")
    ) async throws -> SQLiteNonceStore {
        let descriptor = Foundation.open(path, O_RDWR | O_CREAT, 0o600)
        guard descriptor >= 0 else { throw SigilInputError("cannot open \(path)") }
        Foundation.close(descriptor)
        let writeLock = WriteLock.forFile(path)
        return try await writeLock.withLock {
            try await open(path: path, clock: clock, threadPool: threadPool, writeLock: writeLock, logger: logger)
        }
    }

    private static func open(
        path: String, clock: any UnixClock, threadPool: NIOThreadPool, writeLock: WriteLock, logger: Logger
    ) async throws -> SQLiteNonceStore {
        let connection = try await SQLiteConnection.open(
            storage: .file(path: path), threadPool: threadPool, logger: logger,
            on: MultiThreadedEventLoopGroup.singleton.any()
        ).get()
        do {
            for statement in schema { _ = try await connection.query(statement) }
            let memory = MemoryNonceStore(clock: clock)
            let now = clock.now()
            try await purge(connection, now: now)
            let horizon =
                try await connection.query("SELECT horizon FROM sigil_nonce_horizon WHERE id = 1").first?
                .column("horizon")?.integer ?? 0
            for row in try await connection.query("SELECT key_id, nonce, expires_at FROM sigil_nonces") {
                guard let keyID = row.column("key_id")?.string, let nonce = row.column("nonce")?.string,
                    let expiresAt = row.column("expires_at")?.integer
                else { throw SigilError(.storeUnavailable, "a nonce row is incomplete") }
                _ = memory.insertSync(keyID: keyID, nonce: nonce, expiresAt: Int64(expiresAt), now: now)
            }
            return SQLiteNonceStore(
                memory: memory, connection: connection, writeLock: writeLock, horizon: Int64(horizon), logger: logger)
        } catch {
            try? await connection.close()
            throw error
        }
    }

    static let schema = [
        "PRAGMA busy_timeout = 5000",
        "PRAGMA journal_mode = WAL",
        "PRAGMA synchronous = FULL",
        """
        CREATE TABLE IF NOT EXISTS sigil_nonces (
            key_id TEXT NOT NULL,
            nonce TEXT NOT NULL,
            timestamp INTEGER NOT NULL,
            expires_at INTEGER NOT NULL,
            PRIMARY KEY (key_id, nonce)
        ) WITHOUT ROWID
        """,
        """
        CREATE TABLE IF NOT EXISTS sigil_nonce_horizon (
            id INTEGER PRIMARY KEY CHECK (id = 1),
            horizon INTEGER NOT NULL
        )
        """,
    ]

    /// Drops the nonces past their retention, first raising the horizon to their timestamps: a
    /// request the store forgets stays refused by time even if the window is widened later.
    static func purge(_ connection: SQLiteConnection, now: Int64) async throws {
        _ = try await connection.query(
            """
            INSERT INTO sigil_nonce_horizon (id, horizon)
            SELECT 1, MAX(timestamp) FROM sigil_nonces WHERE expires_at <= ?1 HAVING COUNT(*) > 0
            ON CONFLICT (id) DO UPDATE SET horizon = MAX(horizon, excluded.horizon)
            """,
            [.integer(Int(now))]
        )
        _ = try await connection.query("DELETE FROM sigil_nonces WHERE expires_at <= ?", [.integer(Int(now))])
    }

    /// Closes the file, after any write in progress; closing again does nothing.
    public func close() async throws {
        guard closed.compareExchange(expected: false, desired: true, ordering: .relaxed).exchanged else { return }
        try await writeLock.withLock { try await self.connection.close() }
    }

    /// A store dropped without ``close()`` still closes its file (see ``SQLiteDirectoryBackend``).
    deinit {
        if !closed.load(ordering: .relaxed) { _ = connection.close() }
    }

    /// The second after the previous process's horizon: what it may have accepted is refused by time.
    public var oldestAcceptableTimestamp: Int64? { restartHorizon + 1 }

    public func insert(keyID: String, nonce: String, timestamp: Int64, expiresAt: Int64, now: Int64) async throws
        -> Bool
    {
        guard memory.insertSync(keyID: keyID, nonce: nonce, expiresAt: expiresAt, now: now) else { return false }
        if timestamp > now + Self.durableLead {
            try await write("the nonce could not be recorded durably") {
                try await Self.purge(self.connection, now: now)
                _ = try await self.connection.query(
                    "INSERT OR IGNORE INTO sigil_nonces (key_id, nonce, timestamp, expires_at) VALUES (?, ?, ?, ?)",
                    [.text(keyID), .text(nonce), .integer(Int(timestamp)), .integer(Int(expiresAt))]
                )
            }
        } else if timestamp > horizon.withLock({ $0 }) {
            try await write("the restart horizon could not be recorded") {
                guard timestamp > self.horizon.withLock({ $0 }) else { return }  // moved while waiting
                let next = now + Self.horizonLead
                _ = try await self.connection.query(
                    """
                    INSERT INTO sigil_nonce_horizon (id, horizon) VALUES (1, ?1)
                    ON CONFLICT (id) DO UPDATE SET horizon = MAX(horizon, ?1)
                    """,
                    [.integer(Int(next))]
                )
                self.horizon.withLock { $0 = max($0, next) }
            }
        }
        return true
    }

    /// One write under the lock; a failure is `store-unavailable` and the request is refused.
    private func write(_ failure: String, _ body: @escaping @Sendable () async throws -> Void) async throws {
        do {
            try await writeLock.withLock { try await body() }
        } catch {
            logger.error("nonce store write failed", metadata: ["error": "\(type(of: error))"])
            throw SigilError(.storeUnavailable, failure)
        }
    }
}
