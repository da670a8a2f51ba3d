import Crypto
import Foundation
import Logging
import NIOCore
import NIOPosix
import SQLiteNIO
@_spi(Sigil) import SigilCore
import SigilServer
import Synchronization

/// A ``DirectoryBackend`` in one SQLite file: devices, their keys, states and dates, the audit
/// trail, the server's keys and App Attest records.
///
/// Public keys are stored as SubjectPublicKeyInfo PEM. HMAC secrets and server keys are stored sealed
/// with AES-GCM under the server's master key, with the key ID as associated data, so a copied
/// database file reveals no secret and a sealed secret cannot be moved to another key ID.
///
/// Every transaction is one `BEGIN IMMEDIATE`, so a failed write leaves nothing half-done, and bumps a
/// change counter (`sigil_changes`) another process's ``Directory`` reads before it trusts its cache.
/// Transactions from this process queue on an async lock; other processes writing the same file
/// queue on SQLite's lock (a 5 s busy timeout).
public final class SQLiteDirectoryBackend: DirectoryBackend {
    let secrets: SecretSeal
    /// Connections for the reads other than a key's (thumbprints, users' revocations, the change
    /// counter, the operators' lists), taken in turn so that reads in flight together overlap.
    let readers: [SQLiteConnection]
    let nextReader = Atomic<Int>(0)
    /// Key lookups, read on the caller's thread.
    let keyReader: SQLiteKeyReader
    let writer: SQLiteConnection
    /// The file's lock in this process, shared with a nonce store on the same file.
    let writeLock: WriteLock
    let logger: Logger
    private let keyFormats: KeyFormats
    private let closed = Atomic<Bool>(false)

    private init(
        secrets: SecretSeal, readers: [SQLiteConnection], keyReader: SQLiteKeyReader, writer: SQLiteConnection,
        writeLock: WriteLock, keyFormats: KeyFormats, logger: Logger
    ) {
        self.keyFormats = keyFormats
        self.keyReader = keyReader
        self.secrets = secrets
        self.readers = readers
        self.writer = writer
        self.writeLock = writeLock
        self.logger = logger
    }

    /// Opens (creating if needed) the directory in the file at `path`, created with mode 0600.
    ///
    /// - Parameters:
    ///   - masterKey: a 256-bit key that seals HMAC secrets at rest. `nil` opens the directory for
    ///     reading and revoking alone (an operator's tool): sealing or opening a secret (an HMAC
    ///     key's, a server key's) then throws.
    ///   - keyFormats: the key kinds beyond the built-in ones the registered keys may be of
    ///     (`.withRSA` from SigilRSA); a stored key of another kind reads as `store-unavailable`.
    ///   - threadPool: where SQLite's calls run (a call waiting for another process's write holds
    ///     its thread for up to five seconds).
    /// - Throws: when the file cannot be opened or its schema created.
    public static func open(
        path: String,
        masterKey: SymmetricKey?,
        keyFormats: KeyFormats = .builtIn,
        threadPool: NIOThreadPool = .singleton,
        logger: Logger = Logger(label: "sigil.sqlite")
    ) async throws -> SQLiteDirectoryBackend {
        let secrets = try SecretSeal(masterKey: masterKey)
        // Create the file owner-only before SQLite does; its -wal and -shm files take the same mode.
        let descriptor = Foundation.open(path, O_RDWR | O_CREAT, 0o600)
        guard descriptor >= 0 else { throw SigilInputError("cannot open \(path)") }
        Foundation.close(descriptor)
        let writeLock = WriteLock.forFile(path)
        let (writer, readers) = try await writeLock.withLock {
            let writer = try await connect(path, threadPool: threadPool, logger: logger)
            var readers: [SQLiteConnection] = []
            do {
                try await createSchema(writer)
                _ = try await writer.query("PRAGMA journal_mode = WAL")
                for _ in 0..<readerCount {
                    readers.append(try await connect(path, threadPool: threadPool, logger: logger))
                }
                return (writer, readers)
            } catch {
                for reader in readers { try? await reader.close() }
                try? await writer.close()
                throw error
            }
        }
        let directory = SQLiteDirectoryBackend(
            secrets: secrets, readers: readers,
            keyReader: SQLiteKeyReader(path: path), writer: writer,
            writeLock: writeLock, keyFormats: keyFormats, logger: logger)
        return directory
    }

    /// Closes the file, after any change in progress; closing again does nothing.
    public func close() async throws {
        guard closed.compareExchange(expected: false, desired: true, ordering: .relaxed).exchanged else { return }
        keyReader.close()
        for reader in readers { try await reader.close() }
        try await writeLock.withLock { try await self.writer.close() }
    }

    /// A directory dropped without ``close()`` (a thrown error between open and close) still closes
    /// its file: SQLite's connections are closed on their thread pool, which keeps them until then.
    deinit {
        if !closed.load(ordering: .relaxed) {
            keyReader.close()
            for reader in readers { _ = reader.close() }
            _ = writer.close()
        }
    }

    /// How many connections read (WAL lets them read while the writer writes).
    static let readerCount = 4

    /// The schema's version (`PRAGMA user_version`). Sigil 0.9.0 is the first release: a file made by
    /// a development build of 0.9 (version 0 with tables in it) is refused, to be made again.
    static let schemaVersion = 1

    /// Creates the schema in a new file; refuses a file of another version. The check and the creation
    /// are one `BEGIN IMMEDIATE` transaction, so no other process writes the file in between.
    private static func createSchema(_ writer: SQLiteConnection) async throws {
        _ = try await writer.query("BEGIN IMMEDIATE")
        do {
            let version = try await writer.query("PRAGMA user_version").first?.column("user_version")?.integer ?? 0
            // The nonce store's tables may share the file: the directory's own tell a file made before.
            let tables =
                try await writer.query(
                    "SELECT count(*) AS n FROM sqlite_master WHERE type = 'table' AND name = 'sigil_keys'"
                ).first?.column("n")?.integer ?? 0
            guard version == schemaVersion || (version == 0 && tables == 0) else {
                throw SigilError(
                    .storeUnavailable,
                    version == 0
                        ? "the key directory's file was made by a development build of 0.9: make a new data directory for 0.9.0"
                        : "the key directory's file is of schema \(version), newer than this build's \(schemaVersion)")
            }
            for statement in schema { _ = try await writer.query(statement) }
            _ = try await writer.query("PRAGMA user_version = \(schemaVersion)")
            _ = try await writer.query("COMMIT")
        } catch {
            _ = try? await writer.query("ROLLBACK")
            throw error
        }
    }

    static let schema = [
        """
        CREATE TABLE IF NOT EXISTS sigil_devices (
            device_id TEXT PRIMARY KEY,
            user_id TEXT,
            created_at INTEGER NOT NULL,
            revoked_at INTEGER,
            sealing_key TEXT,
            attestation TEXT
        )
        """,
        """
        CREATE TABLE IF NOT EXISTS sigil_spent (
            id TEXT PRIMARY KEY,
            expires_at INTEGER NOT NULL
        )
        """,
        """
        CREATE TABLE IF NOT EXISTS sigil_users (
            user_id TEXT PRIMARY KEY,
            revoked_at INTEGER NOT NULL
        )
        """,
        """
        CREATE TABLE IF NOT EXISTS sigil_keys (
            key_id TEXT PRIMARY KEY,
            device_id TEXT NOT NULL REFERENCES sigil_devices(device_id),
            alg TEXT NOT NULL,
            public_key TEXT,
            sealed_secret BLOB,
            state TEXT NOT NULL CHECK (state IN ('active', 'rotating', 'revoked')),
            created_at INTEGER NOT NULL,
            valid_until INTEGER,
            last_used_at INTEGER,
            jwk_thumbprint TEXT,
            CHECK ((public_key IS NULL) <> (sealed_secret IS NULL))
        )
        """,
        "CREATE INDEX IF NOT EXISTS sigil_keys_device ON sigil_keys(device_id)",
        "CREATE INDEX IF NOT EXISTS sigil_keys_thumbprint ON sigil_keys(jwk_thumbprint)",
        """
        CREATE TABLE IF NOT EXISTS sigil_appattest (
            key_id TEXT PRIMARY KEY,
            counter INTEGER NOT NULL,
            receipt BLOB
        )
        """,
        """
        CREATE TABLE IF NOT EXISTS sigil_audit (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            at INTEGER NOT NULL,
            action TEXT NOT NULL,
            device_id TEXT,
            key_id TEXT,
            user_id TEXT,
            actor TEXT NOT NULL,
            client TEXT,
            reason TEXT
        )
        """,
        "CREATE INDEX IF NOT EXISTS sigil_audit_at ON sigil_audit(at)",
        "CREATE INDEX IF NOT EXISTS sigil_audit_device ON sigil_audit(device_id)",
        "CREATE INDEX IF NOT EXISTS sigil_audit_user ON sigil_audit(user_id)",
        """
        CREATE TRIGGER IF NOT EXISTS sigil_audit_append_only BEFORE UPDATE ON sigil_audit
        BEGIN SELECT RAISE(ABORT, 'the audit trail is append-only'); END
        """,
        """
        CREATE TABLE IF NOT EXISTS sigil_changes (
            id INTEGER PRIMARY KEY CHECK (id = 1),
            version INTEGER NOT NULL
        )
        """,
        "INSERT OR IGNORE INTO sigil_changes (id, version) VALUES (1, 0)",
        """
        CREATE TABLE IF NOT EXISTS sigil_server_keys (
            key_id TEXT PRIMARY KEY,
            kind TEXT NOT NULL CHECK (kind IN ('response', 'sealing', 'tls')),
            sealed_key BLOB NOT NULL,
            activates_at INTEGER NOT NULL,
            created_at INTEGER NOT NULL
        )
        """,
        """
        CREATE TABLE IF NOT EXISTS sigil_certificates (
            serial TEXT PRIMARY KEY,
            key_id TEXT NOT NULL,
            device_id TEXT NOT NULL REFERENCES sigil_devices(device_id),
            not_after INTEGER NOT NULL,
            created_at INTEGER NOT NULL
        )
        """,
        // Operators' lists page through devices by ID (PageRule): a user's page reads its rows from an
        // index, and a page's certificates are found by device.
        "CREATE INDEX IF NOT EXISTS sigil_devices_user ON sigil_devices(user_id, device_id)",
        "CREATE INDEX IF NOT EXISTS sigil_certificates_device ON sigil_certificates(device_id)",
    ]

    private static func connect(_ path: String, threadPool: NIOThreadPool, logger: Logger) async throws
        -> SQLiteConnection
    {
        let connection = try await SQLiteConnection.open(
            storage: .file(path: path), threadPool: threadPool, logger: logger,
            on: MultiThreadedEventLoopGroup.singleton.any()
        ).get()
        do {
            _ = try await connection.query("PRAGMA busy_timeout = 5000")
            _ = try await connection.query("PRAGMA foreign_keys = ON")
        } catch {
            try? await connection.close()
            throw error
        }
        return connection
    }

    // MARK: Lookups

    /// A key by its ID: read on the caller's thread with a statement prepared once (a request's
    /// lookup that misses the cache costs a few microseconds, not a trip through SQLite's thread
    /// pool and back).
    public func key(_ keyID: String) async throws -> StoredKey? {
        do {
            return try keyReader.key(keyID).map { columns in try storedKey { columns[$0] } }
        } catch let error as SigilError {
            throw error
        } catch {
            logger.error("key directory read failed", metadata: ["error": "\(type(of: error))"])
            throw SigilError(.storeUnavailable, "the key directory could not be read")
        }
    }

    public func keyID(forThumbprint thumbprint: String) async throws -> String? {
        try await read("SELECT key_id FROM sigil_keys WHERE jwk_thumbprint = ?", [.text(thumbprint)])
            .first?.column("key_id")?.string
    }

    public func revocationOfUser(_ userID: String) async throws -> Int64? {
        try await read("SELECT revoked_at FROM sigil_users WHERE user_id = ?", [.text(userID)])
            .first?.column("revoked_at")?.integer.map(Int64.init)
    }

    public func changeCounter() async throws -> Int64 {
        Int64(try await read("SELECT version FROM sigil_changes").first?.column("version")?.integer ?? -1)
    }

    public func keys(ofDevice deviceID: String) async throws -> [StoredKey] {
        try await read(Self.selectKeys + " WHERE k.device_id = ? ORDER BY k.key_id", [.text(deviceID)])
            .map(storedKey(from:))
    }

    /// Every key ID in the directory, sorted.
    public func keyIDs() async throws -> [String] {
        try await read("SELECT key_id FROM sigil_keys ORDER BY key_id").compactMap {
            $0.column("key_id")?.string
        }
    }

    /// A query on the reading connection; a failure is `store-unavailable`.
    func read(_ query: String, _ binds: [SQLiteData] = []) async throws -> [SQLiteRow] {
        do {
            let reader = readers[nextReader.wrappingAdd(1, ordering: .relaxed).oldValue % readers.count]
            return try await reader.query(query, binds)
        } catch {
            logger.error("key directory read failed", metadata: ["error": "\(type(of: error))"])
            throw SigilError(.storeUnavailable, "the key directory could not be read")
        }
    }

    /// Keys with their device, and whether it is revoked.
    static let selectKeys = """
        SELECT k.key_id, k.device_id, d.user_id, k.alg, k.public_key, k.sealed_secret, k.state, k.created_at,
               k.valid_until, d.sealing_key, d.attestation, d.revoked_at IS NOT NULL AS device_revoked
        FROM sigil_keys k JOIN sigil_devices d ON d.device_id = k.device_id
        """

    func storedKey(from row: SQLiteRow) throws -> StoredKey { try storedKey { row.column($0) } }

    /// A key from the columns of ``selectKeys``, by name.
    func storedKey(_ column: (String) -> SQLiteData?) throws -> StoredKey {
        guard let keyID = column("key_id")?.string, let deviceID = column("device_id")?.string,
            let algorithmName = column("alg")?.string,
            let state = column("state")?.string.flatMap(RegisteredKey.State.init(rawValue:))
        else { throw SigilError(.storeUnavailable, "a key row is incomplete") }
        let algorithm = try SignatureAlgorithm.named(algorithmName)
        let key: VerificationKey
        if let pem = column("public_key")?.string {
            key = try KeyFile.load(Array(pem.utf8), algorithm: algorithm, formats: keyFormats).verificationKey
        } else if case .blob(let sealed) = column("sealed_secret") {
            key = try VerificationKey(hmacSecret: try secrets.open(Array(buffer: sealed), keyID: keyID))
        } else {
            throw SigilError(.storeUnavailable, "key \(keyID) has no material")
        }
        let registered = RegisteredKey(
            keyID: keyID,
            key: key,
            state: state,
            deviceID: deviceID,
            userID: column("user_id")?.string,
            validUntil: column("valid_until")?.integer.map(Int64.init),
            createdAt: column("created_at")?.integer.map(Int64.init),
            sealingKey: try SealingPublicKey(storedBase64: column("sealing_key")?.string, keyID: keyID),
            deviceAttestation: column("attestation")?.string
        )
        return StoredKey(key: registered, deviceRevoked: column("device_revoked")?.integer != 0)
    }

    /// The certificates recorded for a device.
    public func certificates(ofDevice deviceID: String) async throws -> [IssuedCertificateRecord] {
        try await read(
            "SELECT serial, key_id, not_after FROM sigil_certificates WHERE device_id = ? ORDER BY serial",
            [.text(deviceID)]
        ).compactMap { row in
            guard let serial = row.column("serial")?.string, let keyID = row.column("key_id")?.string,
                let notAfter = row.column("not_after")?.integer
            else { return nil }
            return IssuedCertificateRecord(serial: serial, keyID: keyID, deviceID: deviceID, notAfter: Int64(notAfter))
        }
    }

    // MARK: Transactions

    public func transaction<Result: Sendable>(
        _ what: String, _ body: @escaping @Sendable (any DirectoryStatements) async throws -> Result
    ) async throws -> Result {
        try await write(what) {
            let result = try await body(SQLiteStatements(backend: self))
            _ = try await self.writer.query("UPDATE sigil_changes SET version = version + 1")
            return result
        }
    }

    /// Runs `body` in one `BEGIN IMMEDIATE` transaction on the writing connection, rolled back on any
    /// failure; a failure that is not a ``SigilError`` is `store-unavailable` saying `what`.
    func write<Result: Sendable>(_ what: String, _ body: @escaping @Sendable () async throws -> Result)
        async throws -> Result
    {
        try await writeLock.withLock {
            do {
                _ = try await self.writer.query("BEGIN IMMEDIATE")
                let result = try await body()
                _ = try await self.writer.query("COMMIT")
                return result
            } catch {
                _ = try? await self.writer.query("ROLLBACK")
                // A refusal of a rule, or a secret that cannot be sealed (no master key): said as such.
                if error is SigilError || error is SigilInputError { throw error }
                self.logger.error("\(what) failed", metadata: ["error": "\(type(of: error))"])
                throw SigilError(.storeUnavailable, "\(what) failed; nothing changed")
            }
        }
    }

    /// A change's statements on the writer, inside its transaction.
    struct SQLiteStatements: DirectoryStatements {
        let backend: SQLiteDirectoryBackend
        var writer: SQLiteConnection { backend.writer }

        func key(_ keyID: String) async throws -> StoredKey? {
            let rows = try await writer.query(SQLiteDirectoryBackend.selectKeys + " WHERE k.key_id = ?", [.text(keyID)])
            return try rows.first.map(backend.storedKey(from:))
        }

        func isRevoked(device: String) async throws -> Bool {
            !(try await writer.query(
                "SELECT 1 FROM sigil_devices WHERE device_id = ? AND revoked_at IS NOT NULL", [.text(device)]
            )
            .isEmpty)
        }

        func sealingKey(ofDevice device: String) async throws -> SealingPublicKey? {
            let rows = try await writer.query(
                "SELECT sealing_key FROM sigil_devices WHERE device_id = ?", [.text(device)])
            return try SealingPublicKey(storedBase64: rows.first?.column("sealing_key")?.string, keyID: device)
        }

        func spend(_ credential: SingleUseCredential, now: Int64) async throws -> Bool {
            _ = try await writer.query("DELETE FROM sigil_spent WHERE expires_at <= ?", [.integer(Int(now))])
            let inserted = try await writer.query(
                "INSERT OR IGNORE INTO sigil_spent (id, expires_at) VALUES (?, ?) RETURNING 1",
                [.text(credential.id), .integer(Int(credential.expiresAt))])
            return !inserted.isEmpty
        }

        func add(_ keys: [RegisteredKey], now: Int64) async throws -> Set<String> {
            var devices: [SQLiteData] = []
            var rows: [SQLiteData] = []
            for key in keys {
                let stored = try StoredMaterial(key, secrets: backend.secrets)
                devices += [
                    .text(key.deviceID ?? ""), key.userID.map(SQLiteData.text) ?? .null, .integer(Int(now)),
                    key.deviceAttestation.map(SQLiteData.text) ?? .null,
                ]
                rows += [
                    .text(key.keyID), .text(key.deviceID ?? ""), .text(key.key.algorithm.rawValue),
                    stored.publicKey.map(SQLiteData.text) ?? .null,
                    stored.sealedSecret.map { .blob(ByteBuffer(bytes: $0)) } ?? .null,
                    .text(key.state.rawValue), .integer(Int(key.createdAt ?? now)),
                    key.validUntil.map { .integer(Int($0)) } ?? .null,
                    key.key.jwkThumbprint.map(SQLiteData.text) ?? .null,
                ]
            }
            _ = try await writer.query(
                "INSERT OR IGNORE INTO sigil_devices (device_id, user_id, created_at, attestation) VALUES "
                    + Self.placeholders(rows: keys.count, columns: 4),
                devices)
            let inserted = try await writer.query(
                """
                INSERT OR IGNORE INTO sigil_keys (key_id, device_id, alg, public_key, sealed_secret, state, created_at,
                                                  valid_until, jwk_thumbprint)
                VALUES \(Self.placeholders(rows: keys.count, columns: 9)) RETURNING key_id
                """,
                rows)
            return Set(inserted.compactMap { $0.column("key_id")?.string })
        }

        /// `(?, ?, …), (?, ?, …), …`: `rows` groups of `columns` variables.
        static func placeholders(rows: Int, columns: Int) -> String {
            let row = "(" + Array(repeating: "?", count: columns).joined(separator: ", ") + ")"
            return Array(repeating: row, count: rows).joined(separator: ", ")
        }

        func retire(keyID: String, until: Int64) async throws {
            _ = try await writer.query(
                """
                UPDATE sigil_keys SET state = 'rotating', valid_until = MIN(COALESCE(valid_until, ?1), ?1)
                WHERE key_id = ?2 AND state <> 'revoked'
                """,
                [.integer(Int(until)), .text(keyID)]
            )
        }

        func retireSecrets(ofDevice device: String, until: Int64) async throws {
            _ = try await writer.query(
                """
                UPDATE sigil_keys SET state = 'rotating', valid_until = MIN(COALESCE(valid_until, ?1), ?1)
                WHERE device_id = ?2 AND alg = ?3 AND state <> 'revoked'
                """,
                [.integer(Int(until)), .text(device), .text(SignatureAlgorithm.hmacSHA256.rawValue)]
            )
        }

        func setSealingKey(_ key: SealingPublicKey, ofDevice device: String) async throws -> Bool {
            !(try await writer.query(
                "UPDATE sigil_devices SET sealing_key = ? WHERE device_id = ? RETURNING 1",
                [.text(Base64.encode(key.rawRepresentation)), .text(device)]
            ).isEmpty)
        }

        func devices(ofUser user: String) async throws -> [String] {
            try await writer.query(
                "SELECT device_id FROM sigil_devices WHERE user_id = ? ORDER BY device_id", [.text(user)]
            ).compactMap { $0.column("device_id")?.string }
        }

        func recordRevocation(ofUser user: String, at time: Int64) async throws {
            _ = try await writer.query(
                """
                INSERT INTO sigil_users (user_id, revoked_at) VALUES (?, ?)
                ON CONFLICT (user_id) DO UPDATE SET revoked_at = MAX(revoked_at, excluded.revoked_at)
                """,
                [.text(user), .integer(Int(time))])
        }

        func revoke(device: String, at time: Int64) async throws -> Bool {
            guard !(try await writer.query("SELECT 1 FROM sigil_devices WHERE device_id = ?", [.text(device)]).isEmpty)
            else { return false }
            _ = try await writer.query(
                "UPDATE sigil_devices SET revoked_at = ? WHERE device_id = ? AND revoked_at IS NULL",
                [.integer(Int(time)), .text(device)])
            _ = try await writer.query("UPDATE sigil_keys SET state = 'revoked' WHERE device_id = ?", [.text(device)])
            return true
        }

        func revoke(keyID: String) async throws -> (deviceID: String, algorithm: String)? {
            let updated = try await writer.query(
                "UPDATE sigil_keys SET state = 'revoked' WHERE key_id = ? RETURNING device_id, alg", [.text(keyID)])
            guard let row = updated.first, let device = row.column("device_id")?.string,
                let algorithm = row.column("alg")?.string
            else { return nil }
            return (device, algorithm)
        }

        func revokeSecrets(ofDevice device: String) async throws {
            _ = try await writer.query(
                "UPDATE sigil_keys SET state = 'revoked' WHERE device_id = ? AND alg = ?",
                [.text(device), .text(SignatureAlgorithm.hmacSHA256.rawValue)])
        }

        func hasUnrevokedKey(device: String) async throws -> Bool {
            try await !writer.query(
                "SELECT 1 FROM sigil_keys WHERE device_id = ? AND state <> 'revoked' LIMIT 1", [.text(device)]
            ).isEmpty
        }

        func record(_ certificate: IssuedCertificateRecord, now: Int64) async throws {
            _ = try await writer.query(
                """
                INSERT INTO sigil_certificates (serial, key_id, device_id, not_after, created_at)
                VALUES (?, ?, ?, ?, ?)
                """,
                [
                    .text(certificate.serial), .text(certificate.keyID), .text(certificate.deviceID),
                    .integer(Int(certificate.notAfter)), .integer(Int(now)),
                ]
            )
        }

        func append(_ audit: [AuditEntry]) async throws { try await backend.insertAudit(audit) }

        func serverKeys(of kind: ServerKeyKind) async throws -> [(keyID: String, activatesAt: Int64)] {
            try await writer.query(
                "SELECT key_id, activates_at FROM sigil_server_keys WHERE kind = ?", [.text(kind.rawValue)]
            )
            .compactMap { row in
                guard let keyID = row.column("key_id")?.string, let time = row.column("activates_at")?.integer
                else { return nil }
                return (keyID, Int64(time))
            }
        }

        func insert(_ key: StoredServerKey) async throws {
            let sealed = try backend.secrets.seal(
                SymmetricKey(data: Array(key.privatePEM.utf8)), keyID: SQLiteDirectoryBackend.sealName(key.keyID))
            _ = try await writer.query(
                """
                INSERT INTO sigil_server_keys (key_id, kind, sealed_key, activates_at, created_at) VALUES (?, ?, ?, ?, ?)
                """,
                [
                    .text(key.keyID), .text(key.kind.rawValue), .blob(ByteBuffer(bytes: sealed)),
                    .integer(Int(key.activatesAt)), .integer(Int(key.createdAt)),
                ])
        }

        func activate(serverKey keyID: String, at time: Int64) async throws {
            _ = try await writer.query(
                "UPDATE sigil_server_keys SET activates_at = ? WHERE key_id = ?", [.integer(Int(time)), .text(keyID)])
        }
    }
}

extension SQLiteDirectoryBackend {
    /// App Attest counters kept in the file, so a restart forgets none.
    public func advanceAppAttestCounter(keyID: String, to counter: UInt32) async throws -> Bool {
        !(try await appAttestWrite(
            """
            INSERT INTO sigil_appattest (key_id, counter) VALUES (?1, ?2)
            ON CONFLICT (key_id) DO UPDATE SET counter = excluded.counter WHERE counter < excluded.counter
            RETURNING 1
            """,
            [.text(keyID), .integer(Int(counter))])).isEmpty
    }

    public func keepReceipt(_ receipt: [UInt8], keyID: String) async throws {
        _ = try await appAttestWrite(
            """
            INSERT INTO sigil_appattest (key_id, counter, receipt) VALUES (?1, 0, ?2)
            ON CONFLICT (key_id) DO UPDATE SET receipt = excluded.receipt
            """,
            [.text(keyID), .blob(ByteBuffer(bytes: receipt))])
    }

    public func receipt(keyID: String) async throws -> [UInt8]? {
        let rows = try await read("SELECT receipt FROM sigil_appattest WHERE key_id = ?", [.text(keyID)])
        guard case .blob(let receipt) = rows.first?.column("receipt") else { return nil }
        return Array(buffer: receipt)
    }

    private func appAttestWrite(_ query: String, _ binds: [SQLiteData]) async throws -> [SQLiteRow] {
        do {
            return try await writeLock.withLock { try await self.writer.query(query, binds) }
        } catch {
            logger.error("App Attest write failed", metadata: ["error": "\(type(of: error))"])
            throw SigilError(.storeUnavailable, "the App Attest store could not be written")
        }
    }
}

extension Directory {
    /// The directory in the SQLite file at `path` (``SQLiteDirectoryBackend/open(path:masterKey:keyFormats:threadPool:logger:)``),
    /// its lookups cached (``Directory/init(backend:clock:cacheLifetime:cacheCapacity:changeCheckInterval:)``):
    /// another process's changes to the file are seen within `changeCheckInterval` of the next lookup.
    public static func sqlite(
        path: String,
        masterKey: SymmetricKey?,
        clock: any UnixClock = SystemUnixClock(),
        cacheLifetime: Int64 = 300,
        cacheCapacity: Int = 100_000,
        changeCheckInterval: Duration = .milliseconds(250),
        keyFormats: KeyFormats = .builtIn,
        threadPool: NIOThreadPool = .singleton,
        logger: Logger = Logger(label: "sigil.sqlite")
    ) async throws -> Directory {
        let backend = try await SQLiteDirectoryBackend.open(
            path: path, masterKey: masterKey, keyFormats: keyFormats, threadPool: threadPool, logger: logger)
        return Directory(
            backend: backend, clock: clock, cacheLifetime: cacheLifetime, cacheCapacity: cacheCapacity,
            changeCheckInterval: changeCheckInterval)
    }
}
