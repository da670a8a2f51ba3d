import Crypto
import Logging
import NIOCore
import PostgresNIO
@_spi(Sigil) import SigilCore
import SigilServer
import Synchronization

/// A ``DirectoryBackend`` in PostgreSQL, shared by every replica: the statements of the SQLite
/// backend (the same contract suite runs on both).
///
/// Public keys are stored as SubjectPublicKeyInfo PEM, HMAC secrets and server keys sealed with
/// AES-GCM under the master key with the key ID as associated data. Every transaction is serialized
/// with other replicas' by an advisory lock; triggers on the tables lookups read bump a change counter
/// (`sigil_changes`), which each replica's ``Directory`` reads at most four times a second before it
/// trusts its cache, and each transaction sends a notification (`NOTIFY sigil_keys`) on commit, which
/// every replica listening (``observeChanges(_:)``) clears its cache on, usually within milliseconds.
public final class PostgresDirectoryBackend: DirectoryBackend {
    let store: PostgresStore
    let secrets: SecretSeal
    private let keyFormats: KeyFormats
    let listensForChanges: Bool
    /// The listeners of the directories on this backend, and whether it is closed.
    private let listeners = Mutex<(tasks: [Task<Void, Never>], closed: Bool)>(([], false))

    /// The channel changes are announced on.
    static let channel = "sigil_keys"

    /// Creates the backend on an open store.
    ///
    /// - Parameters:
    ///   - masterKey: a 256-bit key that seals HMAC secrets and server keys at rest; every replica needs
    ///     the same one. `nil` opens the directory for reading and revoking alone (an operator's tool):
    ///     sealing or opening a secret then throws.
    ///   - listensForChanges: keep one pooled connection listening for other replicas' changes, so
    ///     they are usually seen within milliseconds rather than within the cache's check interval.
    ///   - keyFormats: the key kinds beyond the built-in ones (`.withRSA` from SigilRSA).
    public init(
        store: PostgresStore, masterKey: SymmetricKey?, listensForChanges: Bool = true,
        keyFormats: KeyFormats = .builtIn
    ) throws {
        self.store = store
        self.secrets = try SecretSeal(masterKey: masterKey)
        self.keyFormats = keyFormats
        self.listensForChanges = listensForChanges
    }

    deinit { for task in listeners.withLock({ $0.tasks }) { task.cancel() } }

    /// Keeps one pooled connection listening for each caller, until ``close()`` or the store closes.
    public func observeChanges(_ changed: @escaping @Sendable () -> Void) {
        guard listensForChanges else { return }
        let store = self.store
        let started = listeners.withLock { state -> Task<Void, Never>? in
            guard !state.closed else { return nil }
            let task = Task { await Self.listen(store: store, changed: changed) }
            state.tasks.append(task)
            return task
        }
        // Its connection goes back to the pool when the store closes, an application's pool included.
        if let started { store.onClose { started.cancel() } }
    }

    /// Stops listening; the store (``PostgresStore``) is its owner's to close.
    public func close() async throws {
        let tasks = listeners.withLock { state in
            state.closed = true
            defer { state.tasks = [] }
            return state.tasks
        }
        for task in tasks { task.cancel() }
    }

    public func changeCounter() async throws -> Int64 {
        try await store.run("the key directory could not be read") { client in
            var counter: Int64 = -1
            for try await value in try await client.query(
                "SELECT counter FROM sigil_changes WHERE id = 1", logger: self.store.logger
            ).decode(Int64.self) {
                counter = value
            }
            return counter
        }
    }

    /// Clears the cache on each change announced, and whenever listening (re)starts or stops, since
    /// announcements may have been missed; retries with backoff until the store is closed.
    static func listen(store: PostgresStore, changed: @escaping @Sendable () -> Void) async {
        var failures = 0
        while !Task.isCancelled && !store.isClosed {
            do {
                try await store.client.withConnection { connection in
                    try await connection.listen(on: channel) { notifications in
                        changed()
                        failures = 0
                        for try await _ in notifications { changed() }
                    }
                }
            } catch {
                failures += 1
            }
            changed()
            // 50 ms, doubling, at most 1 s (the change counter covers the gap).
            try? await Task.sleep(for: .milliseconds(min(50 << min(failures, 5), 1000)))
        }
    }

    // MARK: Lookups

    /// A key by its ID, the lookup prepared once per connection (a request's key that misses the
    /// cache is read with it).
    public func key(_ keyID: String) async throws -> StoredKey? {
        let logger = store.logger
        let rows = try await select("the key directory could not be read") { client in
            try await PostgresStore.execute(
                KeyByID(keyID: keyID), unprepared: "\(unescaped: Self.selectKeys) WHERE k.key_id = \(keyID)",
                on: client, logger: logger)
        }
        return try rows.first.map(storedKey(from:))
    }

    struct KeyByID: PostgresPreparedStatement {
        static let name = "sigil_key_by_id_v1"
        static let sql = PostgresDirectoryBackend.selectKeys + " WHERE k.key_id = $1"
        static let bindingDataTypes: [PostgresDataType] = [.text]
        typealias Row = PostgresRow

        let keyID: String

        func makeBindings() throws -> PostgresBindings {
            var bindings = PostgresBindings(capacity: 1)
            bindings.append(keyID)
            return bindings
        }

        func decodeRow(_ row: PostgresRow) throws -> PostgresRow { row }
    }

    public func keyID(forThumbprint thumbprint: String) async throws -> String? {
        let rows = try await select("the key directory could not be read") { client in
            try await client.query(
                "SELECT key_id FROM sigil_keys WHERE jwk_thumbprint = \(thumbprint)", logger: self.store.logger
            ).collect()
        }
        return try rows.first?.decode(String.self)
    }

    public func revocationOfUser(_ userID: String) async throws -> Int64? {
        let rows = try await select("the key directory could not be read") { client in
            try await client.query(
                "SELECT revoked_at FROM sigil_users WHERE user_id = \(userID)", logger: self.store.logger
            )
            .collect()
        }
        return try rows.first?.decode(Int64.self)
    }

    public func keys(ofDevice deviceID: String) async throws -> [StoredKey] {
        try await select("the key directory could not be read") { client in
            try await client.query(
                "\(unescaped: Self.selectKeys) WHERE k.device_id = \(deviceID) ORDER BY k.key_id",
                logger: self.store.logger
            ).collect()
        }.map(storedKey(from:))
    }

    /// The certificates recorded for a device.
    public func certificates(ofDevice deviceID: String) async throws -> [IssuedCertificateRecord] {
        try await select("the key directory could not be read") { client in
            try await client.query(
                """
                SELECT serial, key_id, not_after FROM sigil_certificates WHERE device_id = \(deviceID) ORDER BY serial
                """,
                logger: self.store.logger
            ).collect()
        }.map { row in
            let (serial, keyID, notAfter) = try row.decode((String, String, Int64).self)
            return IssuedCertificateRecord(serial: serial, keyID: keyID, deviceID: deviceID, notAfter: notAfter)
        }
    }

    private func select(
        _ what: String,
        _ body: @escaping @Sendable (PostgresClient) async throws -> [PostgresRow]
    ) async throws -> [PostgresRow] {
        try await store.run(what, body)
    }

    /// Keys with their device, and whether it is revoked.
    static let selectKeys = """
        SELECT k.key_id, k.device_id, d.user_id, k.alg, k.public_key, k.sealed_secret, k.state, k.created_at,
               k.valid_until, d.sealing_key, d.attestation, d.revoked_at IS NOT NULL
        FROM sigil_keys k JOIN sigil_devices d ON d.device_id = k.device_id
        """

    func storedKey(from row: PostgresRow) throws -> StoredKey {
        let decoded:
            (String, String, String?, String, String?, ByteBuffer?, String, Int64, Int64?, String?, String?, Bool)
        do {
            decoded = try row.decode(
                (String, String, String?, String, String?, ByteBuffer?, String, Int64, Int64?, String?, String?, Bool)
                    .self)
        } catch {
            throw SigilError(.storeUnavailable, "a key row is incomplete")
        }
        let (
            keyID, deviceID, userID, algorithmName, pem, sealed, stateName, createdAt, validUntil, sealingKey,
            attestation, deviceRevoked
        ) = decoded
        guard let state = RegisteredKey.State(rawValue: stateName) else {
            throw SigilError(.storeUnavailable, "key \(keyID) has an unknown state")
        }
        let algorithm = try SignatureAlgorithm.named(algorithmName)
        let key: VerificationKey
        if let pem {
            key = try KeyFile.load(Array(pem.utf8), algorithm: algorithm, formats: keyFormats).verificationKey
        } else if let sealed {
            key = try VerificationKey(hmacSecret: try secrets.open(Array(buffer: sealed), keyID: keyID))
        } else {
            throw SigilError(.storeUnavailable, "key \(keyID) has no material")
        }
        let registered = RegisteredKey(
            keyID: keyID, key: key, state: state, deviceID: deviceID, userID: userID, validUntil: validUntil,
            createdAt: createdAt, sealingKey: try SealingPublicKey(storedBase64: sealingKey, keyID: keyID),
            deviceAttestation: attestation)
        return StoredKey(key: registered, deviceRevoked: deviceRevoked)
    }

    // MARK: Transactions

    public func transaction<Result: Sendable>(
        _ what: String, _ body: @escaping @Sendable (any DirectoryStatements) async throws -> Result
    ) async throws -> Result {
        // A deadline that passes leaves the transaction's fate unknown (it may still commit).
        try await write(what) { connection in
            let result = try await body(PostgresStatements(backend: self, connection: connection))
            // Sent when, and only if, the transaction commits; triggers bump the change counter.
            try await connection.query("SELECT pg_notify(\(Self.channel), '')", logger: self.store.logger)
            return result
        }
    }

    /// A change's statements on one connection, inside its transaction.
    struct PostgresStatements: DirectoryStatements {
        let backend: PostgresDirectoryBackend
        let connection: PostgresConnection
        var logger: Logger { backend.store.logger }

        func key(_ keyID: String) async throws -> StoredKey? {
            let found = try await connection.query(
                "\(unescaped: PostgresDirectoryBackend.selectKeys) WHERE k.key_id = \(keyID)", logger: logger
            ).collect()
            return try found.first.map(backend.storedKey(from:))
        }

        func isRevoked(device: String) async throws -> Bool {
            !(try await connection.query(
                "SELECT 1 FROM sigil_devices WHERE device_id = \(device) AND revoked_at IS NOT NULL", logger: logger
            ).collect().isEmpty)
        }

        func sealingKey(ofDevice device: String) async throws -> SealingPublicKey? {
            let rows = try await connection.query(
                "SELECT sealing_key FROM sigil_devices WHERE device_id = \(device)", logger: logger
            ).collect()
            return try SealingPublicKey(storedBase64: try rows.first?.decode(String?.self) ?? nil, keyID: device)
        }

        func spend(_ credential: SingleUseCredential, now: Int64) async throws -> Bool {
            try await connection.query("DELETE FROM sigil_spent WHERE expires_at <= \(now)", logger: logger)
            return
                !(try await connection.query(
                    """
                    INSERT INTO sigil_spent (id, expires_at) VALUES (\(credential.id), \(credential.expiresAt))
                    ON CONFLICT (id) DO NOTHING RETURNING 1
                    """,
                    logger: logger
                ).collect().isEmpty)
        }

        func add(_ keys: [RegisteredKey], now: Int64) async throws -> Set<String> {
            var devices = PostgresBindings(capacity: keys.count * 4)
            var rows = PostgresBindings(capacity: keys.count * 9)
            for key in keys {
                let stored = try StoredMaterial(key, secrets: backend.secrets)
                devices.append(key.deviceID ?? "")
                devices.append(key.userID)
                devices.append(now)
                devices.append(key.deviceAttestation)
                rows.append(key.keyID)
                rows.append(key.deviceID ?? "")
                rows.append(key.key.algorithm.rawValue)
                rows.append(stored.publicKey)
                rows.append(stored.sealedSecret.map { ByteBuffer(bytes: $0) })
                rows.append(key.state.rawValue)
                rows.append(key.createdAt ?? now)
                rows.append(key.validUntil)
                rows.append(key.key.jwkThumbprint)
            }
            try await connection.query(
                PostgresQuery(
                    unsafeSQL: "INSERT INTO sigil_devices (device_id, user_id, created_at, attestation) VALUES "
                        + Self.placeholders(rows: keys.count, columns: 4) + " ON CONFLICT (device_id) DO NOTHING",
                    binds: devices),
                logger: logger)
            var added: Set<String> = []
            for try await keyID in try await connection.query(
                PostgresQuery(
                    unsafeSQL: """
                        INSERT INTO sigil_keys (key_id, device_id, alg, public_key, sealed_secret, state, created_at,
                                                valid_until, jwk_thumbprint)
                        VALUES \(Self.placeholders(rows: keys.count, columns: 9))
                        ON CONFLICT (key_id) DO NOTHING RETURNING key_id
                        """,
                    binds: rows),
                logger: logger
            ).decode(String.self) {
                added.insert(keyID)
            }
            return added
        }

        /// `($1, $2, …), (…), …`: `rows` groups of `columns` numbered parameters.
        static func placeholders(rows: Int, columns: Int) -> String {
            (0..<rows).map { row in
                "(" + (1...columns).map { "$\(row * columns + $0)" }.joined(separator: ", ") + ")"
            }.joined(separator: ", ")
        }

        func retire(keyID: String, until: Int64) async throws {
            try await connection.query(
                """
                UPDATE sigil_keys SET state = 'rotating', valid_until = LEAST(COALESCE(valid_until, \(until)), \(until))
                WHERE key_id = \(keyID) AND state <> 'revoked'
                """,
                logger: logger)
        }

        func retireSecrets(ofDevice device: String, until: Int64) async throws {
            try await connection.query(
                """
                UPDATE sigil_keys SET state = 'rotating', valid_until = LEAST(COALESCE(valid_until, \(until)), \(until))
                WHERE device_id = \(device) AND alg = \(SignatureAlgorithm.hmacSHA256.rawValue) AND state <> 'revoked'
                """,
                logger: logger)
        }

        func setSealingKey(_ key: SealingPublicKey, ofDevice device: String) async throws -> Bool {
            !(try await connection.query(
                """
                UPDATE sigil_devices SET sealing_key = \(Base64.encode(key.rawRepresentation))
                WHERE device_id = \(device) RETURNING 1
                """,
                logger: logger
            ).collect().isEmpty)
        }

        func devices(ofUser user: String) async throws -> [String] {
            try await connection.query(
                "SELECT device_id FROM sigil_devices WHERE user_id = \(user) ORDER BY device_id", logger: logger
            ).collect().map { try $0.decode(String.self) }
        }

        func recordRevocation(ofUser user: String, at time: Int64) async throws {
            try await connection.query(
                """
                INSERT INTO sigil_users (user_id, revoked_at) VALUES (\(user), \(time))
                ON CONFLICT (user_id) DO UPDATE SET revoked_at = GREATEST(sigil_users.revoked_at, EXCLUDED.revoked_at)
                """,
                logger: logger)
        }

        func revoke(device: String, at time: Int64) async throws -> Bool {
            guard
                !(try await connection.query(
                    "SELECT 1 FROM sigil_devices WHERE device_id = \(device)", logger: logger
                ).collect().isEmpty)
            else { return false }
            try await connection.query(
                "UPDATE sigil_devices SET revoked_at = \(time) WHERE device_id = \(device) AND revoked_at IS NULL",
                logger: logger)
            try await connection.query(
                "UPDATE sigil_keys SET state = 'revoked' WHERE device_id = \(device)", logger: logger)
            return true
        }

        func revoke(keyID: String) async throws -> (deviceID: String, algorithm: String)? {
            let updated = try await connection.query(
                "UPDATE sigil_keys SET state = 'revoked' WHERE key_id = \(keyID) RETURNING device_id, alg",
                logger: logger
            ).collect()
            guard let (device, algorithm) = try updated.first?.decode((String, String).self) else { return nil }
            return (device, algorithm)
        }

        func revokeSecrets(ofDevice device: String) async throws {
            try await connection.query(
                """
                UPDATE sigil_keys SET state = 'revoked'
                WHERE device_id = \(device) AND alg = \(SignatureAlgorithm.hmacSHA256.rawValue)
                """,
                logger: logger)
        }

        func hasUnrevokedKey(device: String) async throws -> Bool {
            try await !connection.query(
                "SELECT 1 FROM sigil_keys WHERE device_id = \(device) AND state <> 'revoked' LIMIT 1", logger: logger
            ).collect().isEmpty
        }

        func record(_ certificate: IssuedCertificateRecord, now: Int64) async throws {
            try await connection.query(
                """
                INSERT INTO sigil_certificates (serial, key_id, device_id, not_after, created_at)
                VALUES (\(certificate.serial), \(certificate.keyID), \(certificate.deviceID), \(certificate.notAfter), \(now))
                """,
                logger: logger)
        }

        func append(_ audit: [AuditEntry]) async throws {
            try await PostgresDirectoryBackend.insertAudit(audit, on: connection, logger: logger)
        }

        func serverKeys(of kind: ServerKeyKind) async throws -> [(keyID: String, activatesAt: Int64)] {
            try await connection.query(
                "SELECT key_id, activates_at FROM sigil_server_keys WHERE kind = \(kind.rawValue)", logger: logger
            ).collect().map { row in
                let (keyID, time) = try row.decode((String, Int64).self)
                return (keyID, time)
            }
        }

        func insert(_ key: StoredServerKey) async throws {
            let sealed = ByteBuffer(
                bytes: try backend.secrets.seal(
                    SymmetricKey(data: Array(key.privatePEM.utf8)), keyID: PostgresDirectoryBackend.sealName(key.keyID))
            )
            try await connection.query(
                """
                INSERT INTO sigil_server_keys (key_id, kind, sealed_key, activates_at, created_at)
                VALUES (\(key.keyID), \(key.kind.rawValue), \(sealed), \(key.activatesAt), \(key.createdAt))
                """,
                logger: logger)
        }

        func activate(serverKey keyID: String, at time: Int64) async throws {
            try await connection.query(
                "UPDATE sigil_server_keys SET activates_at = \(time) WHERE key_id = \(keyID)", logger: logger)
        }
    }

    /// An arbitrary constant naming the lock that serializes registry changes across replicas.
    static let changeLock: Int64 = 0x5167_696C_0002
}

extension PostgresDirectoryBackend {
    /// Every key ID in the directory, sorted.
    public func keyIDs() async throws -> [String] {
        try await store.run("the key directory could not be read") { client in
            try await client.query("SELECT key_id FROM sigil_keys ORDER BY key_id", logger: self.store.logger).collect()
        }.map { try $0.decode(String.self) }
    }
}

extension PostgresDirectoryBackend {
    /// App Attest counters in the database, shared by every replica.
    public func advanceAppAttestCounter(keyID: String, to counter: UInt32) async throws -> Bool {
        let value = Int64(counter)
        let rows = try await store.run("the App Attest counters could not be written") { client in
            try await client.query(
                """
                INSERT INTO sigil_appattest (key_id, counter) VALUES (\(keyID), \(value))
                ON CONFLICT (key_id) DO UPDATE SET counter = EXCLUDED.counter
                WHERE sigil_appattest.counter < EXCLUDED.counter
                RETURNING 1
                """,
                logger: self.store.logger
            ).collect()
        }
        return !rows.isEmpty
    }

    public func keepReceipt(_ receipt: [UInt8], keyID: String) async throws {
        let bytes = ByteBuffer(bytes: receipt)
        _ = try await store.run("the App Attest receipt could not be written") { client in
            try await client.query(
                """
                INSERT INTO sigil_appattest (key_id, counter, receipt) VALUES (\(keyID), 0, \(bytes))
                ON CONFLICT (key_id) DO UPDATE SET receipt = EXCLUDED.receipt
                """,
                logger: self.store.logger
            ).collect()
        }
    }

    public func receipt(keyID: String) async throws -> [UInt8]? {
        let rows = try await store.run("the App Attest receipt could not be read") { client in
            try await client.query(
                "SELECT receipt FROM sigil_appattest WHERE key_id = \(keyID)", logger: self.store.logger
            ).collect()
        }
        guard let row = rows.first, let receipt = try row.decode(ByteBuffer?.self) else { return nil }
        return Array(buffer: receipt)
    }
}

extension Directory {
    /// The directory in PostgreSQL on an open store (``PostgresDirectoryBackend``), its lookups cached
    /// and cleared on every replica's change (the change counter, and notifications when
    /// `listensForChanges`).
    public static func postgres(
        store: PostgresStore, masterKey: SymmetricKey?, clock: any UnixClock = SystemUnixClock(),
        cacheLifetime: Int64 = 300, cacheCapacity: Int = 100_000, listensForChanges: Bool = true,
        keyFormats: KeyFormats = .builtIn
    ) throws -> Directory {
        let backend = try PostgresDirectoryBackend(
            store: store, masterKey: masterKey, listensForChanges: listensForChanges, keyFormats: keyFormats)
        return Directory(backend: backend, clock: clock, cacheLifetime: cacheLifetime, cacheCapacity: cacheCapacity)
    }
}
