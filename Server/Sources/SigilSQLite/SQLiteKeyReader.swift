import NIOCore
import SQLiteNIO
@_spi(Sigil) import SigilCore
import SigilServer
import Synchronization
// The SQLite library SQLiteNIO links, called directly: one copy of SQLite in the process, so its
// file locks are the ones SQLiteNIO's connections take (two copies would not see each other's).
import VaporCSQLite

/// Reads one key by its ID on the caller's thread, with its statements prepared once per connection.
///
/// A request whose key misses the directory's cache waits for this read. Through SQLiteNIO it took a
/// trip to SQLite's thread pool and back to the event loop and the task, about 75 µs on a busy
/// 2-core machine; the read itself, a primary-key lookup and its device's row (a few pages, in
/// SQLite's or the system's cache), takes a few microseconds. So it runs where the lookup is, on
/// connections of its own: taken from a pool, one thread at a time each, opened as needed (at most
/// one per concurrent lookup, few on a server of few cores), closed with the directory.
///
/// The connections only read (`PRAGMA query_only`); in WAL mode a reader never waits for the writer.
/// A read that finds the file busy anyway (a checkpoint's rare exclusive moment) waits at most 1 s,
/// then fails as `store-unavailable`.
final class SQLiteKeyReader: Sendable {
    /// The two lookups, in one read transaction (one snapshot, as a join would read). A join of
    /// the two tables is re-prepared by SQLite at every step here, which costs more than the read.
    static let keyQuery = """
        SELECT key_id, device_id, alg, public_key, sealed_secret, state, created_at, valid_until
        FROM sigil_keys WHERE key_id = ?
        """
    static let deviceQuery = """
        SELECT user_id, sealing_key, attestation, revoked_at IS NOT NULL AS device_revoked
        FROM sigil_devices WHERE device_id = ?
        """

    /// A prepared statement and its columns' names.
    struct Statement {
        let handle: OpaquePointer
        let names: [String]

        init(_ sql: String, on connection: OpaquePointer) throws {
            var handle: OpaquePointer?
            guard
                sqlite_nio_sqlite3_prepare_v3(connection, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &handle, nil)
                    == SQLITE_OK, let handle
            else {
                if let handle { sqlite_nio_sqlite3_finalize(handle) }
                throw SQLiteKeyReader.failure("cannot prepare the key lookup")
            }
            self.handle = handle
            names = (0..<sqlite_nio_sqlite3_column_count(handle)).map {
                String(cString: sqlite_nio_sqlite3_column_name(handle, $0))
            }
        }

        /// Runs the statement with `text` bound to its parameter (if any): its one row's columns,
        /// added to `row`, or `false` when there is none.
        func step(binding text: String?, into row: inout [String: SQLiteData]) throws -> Bool {
            defer {
                sqlite_nio_sqlite3_reset(handle)
                sqlite_nio_sqlite3_clear_bindings(handle)
            }
            if let text {
                let bound = text.utf8CString.withUnsafeBufferPointer { text in
                    sqlite_nio_sqlite3_bind_text(handle, 1, text.baseAddress, Int32(text.count - 1), SQLITE_TRANSIENT)
                }
                guard bound == SQLITE_OK else { throw SQLiteKeyReader.failure("cannot bind the key lookup") }
            }
            switch sqlite_nio_sqlite3_step(handle) {
            case SQLITE_DONE: return false
            case SQLITE_ROW: break
            default: throw SQLiteKeyReader.failure("the key lookup failed")
            }
            for (index, name) in names.enumerated() { row[name] = value(Int32(index)) }
            // Each lookup is by a primary key: a second row would be a damaged file.
            guard sqlite_nio_sqlite3_step(handle) == SQLITE_DONE else {
                throw SQLiteKeyReader.failure("the key lookup found more than one row")
            }
            return true
        }

        func value(_ index: Int32) -> SQLiteData {
            switch sqlite_nio_sqlite3_column_type(handle, index) {
            case SQLITE_INTEGER: return .integer(Int(sqlite_nio_sqlite3_column_int64(handle, index)))
            case SQLITE_FLOAT: return .float(sqlite_nio_sqlite3_column_double(handle, index))
            case SQLITE_TEXT:
                guard let text = sqlite_nio_sqlite3_column_text(handle, index) else { return .text("") }
                let count = Int(sqlite_nio_sqlite3_column_bytes(handle, index))
                return .text(String(decoding: UnsafeBufferPointer(start: text, count: count), as: UTF8.self))
            case SQLITE_BLOB:
                let count = Int(sqlite_nio_sqlite3_column_bytes(handle, index))
                guard let blob = sqlite_nio_sqlite3_column_blob(handle, index), count > 0 else {
                    return .blob(ByteBuffer())
                }
                return .blob(ByteBuffer(bytes: UnsafeRawBufferPointer(start: blob, count: count)))
            default: return .null
            }
        }
    }

    /// A connection and its statements, used by one thread at a time (taken from the pool).
    final class Connection: @unchecked Sendable {
        let handle: OpaquePointer
        let statements: [Statement]

        init(path: String) throws {
            var handle: OpaquePointer?
            let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX
            guard sqlite_nio_sqlite3_open_v2(path, &handle, flags, nil) == SQLITE_OK, let handle else {
                if let handle { sqlite_nio_sqlite3_close_v2(handle) }
                throw SQLiteKeyReader.failure("cannot open the key directory for reading")
            }
            var statements: [Statement] = []
            do {
                // Reads only; 8 MB of pages, so a B-tree's upper levels stay in memory.
                guard sqlite_nio_sqlite3_busy_timeout(handle, 1_000) == SQLITE_OK,
                    sqlite_nio_sqlite3_exec(handle, "PRAGMA query_only = 1", nil, nil, nil) == SQLITE_OK,
                    sqlite_nio_sqlite3_exec(handle, "PRAGMA cache_size = -8192", nil, nil, nil) == SQLITE_OK
                else { throw SQLiteKeyReader.failure("cannot open the key directory for reading") }
                for sql in ["BEGIN", SQLiteKeyReader.keyQuery, SQLiteKeyReader.deviceQuery, "COMMIT"] {
                    statements.append(try Statement(sql, on: handle))
                }
            } catch {
                for statement in statements { sqlite_nio_sqlite3_finalize(statement.handle) }
                sqlite_nio_sqlite3_close_v2(handle)
                throw error
            }
            self.handle = handle
            self.statements = statements
        }

        /// The columns of the key `keyID` and of its device, or `nil` when there is no such key.
        func row(_ keyID: String) throws -> [String: SQLiteData]? {
            let (begin, key, device, commit) = (statements[0], statements[1], statements[2], statements[3])
            var row: [String: SQLiteData] = [:]
            _ = try begin.step(binding: nil, into: &row)
            defer {
                if sqlite_nio_sqlite3_get_autocommit(handle) == 0 { _ = try? commit.step(binding: nil, into: &row) }
            }
            guard try key.step(binding: keyID, into: &row), case .text(let deviceID)? = row["device_id"],
                try device.step(binding: deviceID, into: &row)
            else { return nil }
            return row
        }

        func close() {
            for statement in statements { sqlite_nio_sqlite3_finalize(statement.handle) }
            sqlite_nio_sqlite3_close_v2(handle)
        }
    }

    struct Pool {
        var idle: [Connection] = []
        var closed = false
    }

    let path: String
    let pool = Mutex(Pool())

    init(path: String) { self.path = path }

    /// The columns of the key `keyID` and its device, by the names of ``SQLiteDirectoryBackend/selectKeys``, or `nil`.
    ///
    /// - Throws: `store-unavailable` when the file cannot be read or the directory is closed.
    func key(_ keyID: String) throws -> [String: SQLiteData]? {
        let taken = try pool.withLock { pool -> Connection? in
            guard !pool.closed else { throw Self.failure("the key directory is closed") }
            return pool.idle.popLast()
        }
        let connection = try taken ?? Connection(path: path)
        var reusable = false
        defer {
            // Back to the pool only after a clean lookup with no transaction left open (a
            // connection holding an old snapshot would read it forever); else closed.
            let keep =
                reusable
                && pool.withLock { pool in
                    guard !pool.closed else { return false }
                    pool.idle.append(connection)
                    return true
                }
            if !keep { connection.close() }
        }
        let row = try connection.row(keyID)
        reusable = sqlite_nio_sqlite3_get_autocommit(connection.handle) != 0
        return row
    }

    /// Closes the idle connections; one in use closes when its lookup ends.
    func close() {
        let idle = pool.withLock { pool in
            pool.closed = true
            defer { pool.idle = [] }
            return pool.idle
        }
        for connection in idle { connection.close() }
    }

    static func failure(_ message: String) -> SigilError { SigilError(.storeUnavailable, message) }
}

/// SQLite copies bound text or blobs itself.
private let SQLITE_TRANSIENT = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
