import Logging
import PostgresNIO
@_spi(Sigil) import SigilCore
import SigilServer

/// A ``NonceStore`` in PostgreSQL, shared by every replica: each (key ID, nonce) is accepted once
/// across all of them, and across restarts (the table is durable, so no restart reopens a window).
///
/// One statement records a nonce: `INSERT … ON CONFLICT DO UPDATE … WHERE expired RETURNING`, atomic
/// in the database. Expired rows are deleted in small batches in the background, skipping rows other
/// replicas are deleting; deletes take row locks only, so they never block inserts.
public final class PostgresNonceStore: NonceStore {
    private let store: PostgresStore
    private let purger: Task<Void, Never>

    /// Creates the store on an open ``PostgresStore``.
    ///
    /// - Parameters:
    ///   - clock: the time expired rows are judged at.
    ///   - purgeInterval: how often expired rows are deleted.
    public init(store: PostgresStore, clock: any UnixClock = SystemUnixClock(), purgeInterval: Duration = .seconds(10))
    {
        self.store = store
        purger = Task {
            while !Task.isCancelled {
                try? await Task.sleep(for: purgeInterval)
                // A margin for replicas whose clocks run behind this one's: they may still accept a
                // request until its expiry by their own time.
                try? await Self.purge(store, now: clock.now() - Self.clockMargin)
            }
        }
        store.onClose { [purger] in purger.cancel() }
    }

    deinit { purger.cancel() }

    /// How far behind this replica's clock another's may run before its nonces are purged early.
    static let clockMargin: Int64 = 300

    /// The table is durable: a restart forgets nothing.
    public var oldestAcceptableTimestamp: Int64? { nil }

    public func insert(keyID: String, nonce: String, timestamp: Int64, expiresAt: Int64, now: Int64) async throws
        -> Bool
    {
        let statement = InsertNonce(keyID: keyID, nonce: nonce, expiresAt: expiresAt, now: now)
        let logger = store.logger
        let rows = try await store.run("the nonce could not be recorded") { client in
            try await PostgresStore.execute(
                statement,
                unprepared: """
                    INSERT INTO sigil_nonces (key_id, nonce, expires_at) VALUES (\(keyID), \(nonce), \(expiresAt))
                    ON CONFLICT (key_id, nonce) DO UPDATE SET expires_at = EXCLUDED.expires_at
                    WHERE sigil_nonces.expires_at <= \(now)
                    RETURNING 1
                    """, on: client, logger: logger
            ).count
        }
        return rows == 1
    }

    /// The insert, prepared once per connection: a row comes back when the pair was new, or when
    /// its earlier use had expired (and not yet been purged).
    struct InsertNonce: PostgresPreparedStatement {
        static let name = "sigil_insert_nonce_v1"
        static let sql = """
            INSERT INTO sigil_nonces (key_id, nonce, expires_at) VALUES ($1, $2, $3)
            ON CONFLICT (key_id, nonce) DO UPDATE SET expires_at = EXCLUDED.expires_at
            WHERE sigil_nonces.expires_at <= $4
            RETURNING 1
            """
        static let bindingDataTypes: [PostgresDataType] = [.text, .text, .int8, .int8]
        typealias Row = Int32

        let keyID: String
        let nonce: String
        let expiresAt: Int64
        let now: Int64

        func makeBindings() throws -> PostgresBindings {
            var bindings = PostgresBindings(capacity: 4)
            bindings.append(keyID)
            bindings.append(nonce)
            bindings.append(expiresAt)
            bindings.append(now)
            return bindings
        }

        func decodeRow(_ row: PostgresRow) throws -> Int32 { try row.decode(Int32.self) }
    }

    /// Deletes the rows past their retention, 5,000 at a time.
    static func purge(_ store: PostgresStore, now: Int64) async throws {
        while true {
            let deleted = try await store.run("expired nonces could not be deleted") { client in
                try await client.query(
                    """
                    DELETE FROM sigil_nonces WHERE ctid = ANY(ARRAY(
                        SELECT ctid FROM sigil_nonces WHERE expires_at <= \(now) LIMIT 5000 FOR UPDATE SKIP LOCKED))
                    RETURNING 1
                    """
                ).collect().count
            }
            if deleted < 5000 { return }
        }
    }
}
