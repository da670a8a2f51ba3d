import Crypto
import Logging
import NIOCore
import PostgresNIO
@_spi(Sigil) import SigilCore
import SigilServer

extension PostgresDirectoryBackend {
    /// Inside a transaction: appends `rows` to the audit trail.
    static func insertAudit(_ rows: [AuditEntry], on connection: PostgresConnection, logger: Logger) async throws {
        for row in rows {
            try await connection.query(
                """
                INSERT INTO sigil_audit (at, action, device_id, key_id, user_id, actor, client, reason)
                VALUES (\(row.time), \(row.action.rawValue), \(row.deviceID), \(row.keyID), \(row.userID), \(row.actor),
                        \(row.clientAddress), \(row.reason))
                """,
                logger: logger)
        }
    }

    /// Runs `body` in one transaction under the change lock; nothing changes on a throw.
    func write<Result: Sendable>(
        _ what: String, _ body: @escaping @Sendable (PostgresConnection) async throws -> Result
    ) async throws -> Result {
        let logger = store.logger
        return try await store.run(what) { client in
            try await client.withTransaction(logger: logger) { connection in
                try await connection.query("SELECT pg_advisory_xact_lock(\(Self.changeLock))", logger: logger)
                return try await body(connection)
            }
        }
    }

    public func devices(_ query: DeviceQuery) async throws -> [DeviceRecord] {
        let logger = store.logger
        // Devices by ID in byte order (`COLLATE "C"`, whatever the database's collation: the order of
        // every store, read from the index made for it), the filter bound, never spliced.
        var conditions: [String] = []
        var bindings = PostgresBindings()
        func bind(_ value: String) -> String {
            bindings.append(value)
            return "$\(bindings.count)"
        }
        if let deviceID = query.deviceID { conditions.append("d.device_id = \(bind(deviceID))") }
        if let keyID = query.keyID {
            conditions.append("d.device_id IN (SELECT device_id FROM sigil_keys WHERE key_id = \(bind(keyID)))")
        }
        if let userID = query.userID { conditions.append("d.user_id = \(bind(userID))") }
        if let state = query.state {
            conditions.append(state == .revoked ? "d.revoked_at IS NOT NULL" : "d.revoked_at IS NULL")
        }
        if let after = query.after { conditions.append("d.device_id COLLATE \"C\" > \(bind(after))") }
        let filter = conditions.isEmpty ? "" : " WHERE " + conditions.joined(separator: " AND ")
        let limit = query.limit.map { " LIMIT \(max($0, 0))" } ?? ""
        let selectDevices = PostgresQuery(
            unsafeSQL: """
                SELECT d.device_id, d.user_id, d.created_at, d.revoked_at, d.sealing_key, d.attestation
                FROM sigil_devices d\(filter) ORDER BY d.device_id COLLATE "C"\(limit)
                """, binds: bindings)
        let filterBindings = bindings
        let paged = query.limit != nil
        let (devices, keys, certificates) = try await store.run("the key directory could not be read") {
            client -> ([PostgresRow], [PostgresRow], [PostgresRow]) in
            let devices = try await client.query(selectDevices, logger: logger).collect()
            // A page's keys and certificates are read for its devices alone; every selected device's,
            // by the same filter, when nothing limits the list.
            let (of, binds): (String, PostgresBindings)
            if paged {
                var ids = PostgresBindings()
                ids.append(try devices.map { try $0.decode(String.self) })
                (of, binds) = (" WHERE d.device_id = ANY($1)", ids)
            } else {
                (of, binds) = (filter, filterBindings)
            }
            if paged && devices.isEmpty { return (devices, [], []) }
            let keys = try await client.query(
                PostgresQuery(
                    unsafeSQL: """
                        SELECT k.key_id, k.device_id, k.alg, k.state, k.created_at, k.valid_until, k.last_used_at, k.jwk_thumbprint
                        FROM sigil_keys k JOIN sigil_devices d ON d.device_id = k.device_id\(of)
                        """, binds: binds), logger: logger
            ).collect()
            let certificates = try await client.query(
                PostgresQuery(
                    unsafeSQL: """
                        SELECT c.serial, c.key_id, c.device_id, c.not_after
                        FROM sigil_certificates c JOIN sigil_devices d ON d.device_id = c.device_id\(of)
                        """, binds: binds), logger: logger
            ).collect()
            return (devices, keys, certificates)
        }
        var keysOf: [String: [DeviceRecord.Key]] = [:]
        for row in keys {
            let (keyID, device, alg, state, created, validUntil, lastUsed, thumbprint) = try row.decode(
                (String, String, String, String, Int64, Int64?, Int64?, String?).self)
            guard let state = RegisteredKey.State(rawValue: state) else { continue }
            keysOf[device, default: []].append(
                DeviceRecord.Key(
                    keyID: keyID, alg: alg, state: state, created: created, validUntil: validUntil, lastUsed: lastUsed,
                    thumbprint: thumbprint))
        }
        var certificatesOf: [String: [IssuedCertificateRecord]] = [:]
        for row in certificates {
            let (serial, keyID, device, notAfter) = try row.decode((String, String, String, Int64).self)
            certificatesOf[device, default: []].append(
                IssuedCertificateRecord(serial: serial, keyID: keyID, deviceID: device, notAfter: notAfter))
        }
        return try devices.map { row in
            let (device, user, created, revoked, sealingKey, attestation) = try row.decode(
                (String, String?, Int64, Int64?, String?, String?).self)
            return DeviceRecord(
                deviceID: device, userID: user, created: created, revoked: revoked, keys: keysOf[device] ?? [],
                sealingKeyID: try? SealingPublicKey(storedBase64: sealingKey, keyID: device)?.keyID,
                certificates: certificatesOf[device] ?? [], attestation: attestation)
        }
    }

    public func auditRows(_ query: AuditQuery) async throws -> [AuditRow] {
        let logger = store.logger
        let rows = try await store.run("the audit trail could not be read") { client in
            try await client.query(
                """
                SELECT id, at, action, device_id, key_id, user_id, actor, client, reason FROM (
                    SELECT * FROM sigil_audit
                    WHERE (\(query.deviceID)::TEXT IS NULL OR device_id = \(query.deviceID))
                      AND (\(query.userID)::TEXT IS NULL OR user_id = \(query.userID))
                      AND at >= \(query.since ?? Int64.min)
                      AND id < \(query.before ?? Int64.max)
                    ORDER BY id DESC LIMIT \(query.limit)
                ) newest ORDER BY id
                """,
                logger: logger
            ).collect()
        }
        return try rows.compactMap { row in
            let (sequence, time, action, device, key, user, actor, client, reason) = try row.decode(
                (Int64, Int64, String, String?, String?, String?, String, String?, String?).self)
            guard let action = AuditEntry.Action(rawValue: action) else { return nil }
            return AuditRow(
                sequence: sequence,
                entry: AuditEntry(
                    time: time, action: action, deviceID: device, keyID: key, userID: user, actor: actor,
                    clientAddress: client, reason: reason))
        }
    }

    public func recordUses(_ uses: [String: Int64]) async throws {
        let logger = store.logger
        let sorted = uses.sorted { $0.key < $1.key }
        // The database gives up when Sigil does: a write waiting on a lock past the deadline would
        // otherwise keep its connection (the deadline abandons the call, not the statement), and the
        // retries of an outage would take the pool the requests need.
        let limit = "\(max(Int((store.timeout / .milliseconds(1)).rounded(.up)), 1))ms"
        try await store.run("keys' last use could not be recorded") { client in
            try await client.withTransaction(logger: logger) { connection in
                try await connection.query(
                    "SELECT set_config('lock_timeout', \(limit), true), set_config('statement_timeout', \(limit), true)",
                    logger: logger)
                for (keyID, time) in sorted {
                    try await connection.query(
                        """
                        UPDATE sigil_keys SET last_used_at = GREATEST(COALESCE(last_used_at, 0), \(time))
                        WHERE key_id = \(keyID)
                        """,
                        logger: logger)
                }
            }
        }
    }

    public func pruneAudit(before time: Int64) async throws -> Int {
        let logger = store.logger
        return try await store.run("the audit trail could not be pruned") { client in
            try await client.query("DELETE FROM sigil_audit WHERE at < \(time) RETURNING 1", logger: logger).collect()
                .count
        }
    }
}

extension PostgresDirectoryBackend {
    static func sealName(_ keyID: String) -> String { "server-key:" + keyID }

    public func serverKeys() async throws -> [StoredServerKey] {
        let logger = store.logger
        let rows = try await store.run("the server keys could not be read") { client in
            try await client.query(
                "SELECT key_id, kind, sealed_key, activates_at, created_at FROM sigil_server_keys", logger: logger
            ).collect()
        }
        return try rows.map { row in
            let (keyID, kindName, sealed, activatesAt, createdAt) = try row.decode(
                (String, String, ByteBuffer, Int64, Int64).self)
            guard let kind = ServerKeyKind(rawValue: kindName) else {
                throw SigilError(.storeUnavailable, "server key \(keyID) is of an unknown kind")
            }
            let pem = try secrets.open(Array(buffer: sealed), keyID: Self.sealName(keyID))
            return StoredServerKey(
                kind: kind, keyID: keyID, privatePEM: String(decoding: pem, as: UTF8.self), activatesAt: activatesAt,
                createdAt: createdAt)
        }
    }
}
