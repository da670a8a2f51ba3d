import Crypto
import Foundation
import NIOCore
import SQLiteNIO
@_spi(Sigil) import SigilCore
import SigilServer

extension SQLiteDirectoryBackend {
    /// Inside a write transaction: appends `rows` to the audit trail.
    func insertAudit(_ rows: [AuditEntry]) async throws {
        for row in rows {
            _ = try await writer.query(
                """
                INSERT INTO sigil_audit (at, action, device_id, key_id, user_id, actor, client, reason)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                """,
                [
                    .integer(Int(row.time)), .text(row.action.rawValue), Self.optional(row.deviceID),
                    Self.optional(row.keyID), Self.optional(row.userID), .text(row.actor),
                    Self.optional(row.clientAddress), Self.optional(row.reason),
                ])
        }
    }

    static func optional(_ text: String?) -> SQLiteData { text.map(SQLiteData.text) ?? .null }

    public func devices(_ query: DeviceQuery) async throws -> [DeviceRecord] {
        var conditions: [String] = []
        var binds: [SQLiteData] = []
        if let deviceID = query.deviceID {
            conditions.append("d.device_id = ?")
            binds.append(.text(deviceID))
        }
        if let keyID = query.keyID {
            conditions.append("d.device_id IN (SELECT device_id FROM sigil_keys WHERE key_id = ?)")
            binds.append(.text(keyID))
        }
        if let userID = query.userID {
            conditions.append("d.user_id = ?")
            binds.append(.text(userID))
        }
        if let state = query.state {
            conditions.append(state == .revoked ? "d.revoked_at IS NOT NULL" : "d.revoked_at IS NULL")
        }
        if let after = query.after {
            // TEXT compares by bytes here (BINARY collation): the page order of every store.
            conditions.append("d.device_id > ?")
            binds.append(.text(after))
        }
        var filter = conditions.isEmpty ? "" : " WHERE " + conditions.joined(separator: " AND ")
        let limit = query.limit.map { " LIMIT \(max($0, 0))" } ?? ""
        let devices = try await read(
            "SELECT d.device_id, d.user_id, d.created_at, d.revoked_at, d.sealing_key, d.attestation FROM sigil_devices d\(filter) ORDER BY d.device_id\(limit)",
            binds)
        if query.limit != nil {
            // A page's keys and certificates are read for its devices alone (at most a page of IDs,
            // bound); every selected device's, by the same filter, when nothing limits the list.
            let ids = devices.compactMap { $0.column("device_id")?.string }
            guard !ids.isEmpty else { return [] }
            filter = " WHERE d.device_id IN (\(Array(repeating: "?", count: ids.count).joined(separator: ", ")))"
            binds = ids.map(SQLiteData.text)
        }
        let keys = try await read(
            """
            SELECT k.key_id, k.device_id, k.alg, k.state, k.created_at, k.valid_until, k.last_used_at, k.jwk_thumbprint
            FROM sigil_keys k JOIN sigil_devices d ON d.device_id = k.device_id\(filter)
            """, binds)
        let certificates = try await read(
            """
            SELECT c.serial, c.key_id, c.device_id, c.not_after
            FROM sigil_certificates c JOIN sigil_devices d ON d.device_id = c.device_id\(filter)
            """, binds)
        var keysOf: [String: [DeviceRecord.Key]] = [:]
        for row in keys {
            guard let keyID = row.column("key_id")?.string, let device = row.column("device_id")?.string,
                let alg = row.column("alg")?.string,
                let state = row.column("state")?.string.flatMap(RegisteredKey.State.init(rawValue:))
            else { continue }
            keysOf[device, default: []].append(
                DeviceRecord.Key(
                    keyID: keyID, alg: alg, state: state, created: Int64(row.column("created_at")?.integer ?? 0),
                    validUntil: row.column("valid_until")?.integer.map(Int64.init),
                    lastUsed: row.column("last_used_at")?.integer.map(Int64.init),
                    thumbprint: row.column("jwk_thumbprint")?.string))
        }
        var certificatesOf: [String: [IssuedCertificateRecord]] = [:]
        for row in certificates {
            guard let serial = row.column("serial")?.string, let keyID = row.column("key_id")?.string,
                let device = row.column("device_id")?.string, let notAfter = row.column("not_after")?.integer
            else { continue }
            certificatesOf[device, default: []].append(
                IssuedCertificateRecord(serial: serial, keyID: keyID, deviceID: device, notAfter: Int64(notAfter)))
        }
        return devices.compactMap { row -> DeviceRecord? in
            guard let device = row.column("device_id")?.string else { return nil }
            return DeviceRecord(
                deviceID: device,
                userID: row.column("user_id")?.string,
                created: Int64(row.column("created_at")?.integer ?? 0),
                revoked: row.column("revoked_at")?.integer.map(Int64.init),
                keys: keysOf[device] ?? [],
                sealingKeyID: try? SealingPublicKey(storedBase64: row.column("sealing_key")?.string, keyID: device)?
                    .keyID,
                certificates: certificatesOf[device] ?? [], attestation: row.column("attestation")?.string)
        }
    }

    public func auditRows(_ query: AuditQuery) async throws -> [AuditRow] {
        var conditions: [String] = []
        var binds: [SQLiteData] = []
        if let deviceID = query.deviceID {
            conditions.append("device_id = ?")
            binds.append(.text(deviceID))
        }
        if let userID = query.userID {
            conditions.append("user_id = ?")
            binds.append(.text(userID))
        }
        if let since = query.since {
            conditions.append("at >= ?")
            binds.append(.integer(Int(since)))
        }
        if let before = query.before {
            conditions.append("id < ?")
            binds.append(.integer(Int(before)))
        }
        let filter = conditions.isEmpty ? "" : " WHERE " + conditions.joined(separator: " AND ")
        let rows = try await read(
            """
            SELECT * FROM (SELECT id, at, action, device_id, key_id, user_id, actor, client, reason FROM sigil_audit\(filter)
            ORDER BY id DESC LIMIT ?) ORDER BY id
            """, binds + [.integer(query.limit)])
        return rows.compactMap { row in
            guard let sequence = row.column("id")?.integer, let time = row.column("at")?.integer,
                let action = row.column("action")?.string.flatMap(AuditEntry.Action.init(rawValue:)),
                let actor = row.column("actor")?.string
            else { return nil }
            return AuditRow(
                sequence: Int64(sequence),
                entry: AuditEntry(
                    time: Int64(time), action: action, deviceID: row.column("device_id")?.string,
                    keyID: row.column("key_id")?.string, userID: row.column("user_id")?.string, actor: actor,
                    clientAddress: row.column("client")?.string, reason: row.column("reason")?.string))
        }
    }

    public func recordUses(_ uses: [String: Int64]) async throws {
        try await write("recording keys' last use") {
            for (keyID, time) in uses.sorted(by: { $0.key < $1.key }) {
                _ = try await self.writer.query(
                    "UPDATE sigil_keys SET last_used_at = MAX(COALESCE(last_used_at, 0), ?) WHERE key_id = ?",
                    [.integer(Int(time)), .text(keyID)])
            }
        }
    }

    public func pruneAudit(before time: Int64) async throws -> Int {
        try await write("pruning the audit trail") {
            try await self.writer.query("DELETE FROM sigil_audit WHERE at < ? RETURNING 1", [.integer(Int(time))]).count
        }
    }
}

extension SQLiteDirectoryBackend {
    /// Server keys are sealed at rest like HMAC secrets, under a name of their own.
    static func sealName(_ keyID: String) -> String { "server-key:" + keyID }

    public func serverKeys() async throws -> [StoredServerKey] {
        try await read("SELECT key_id, kind, sealed_key, activates_at, created_at FROM sigil_server_keys").map { row in
            guard let keyID = row.column("key_id")?.string,
                let kind = row.column("kind")?.string.flatMap(ServerKeyKind.init(rawValue:)),
                case .blob(let sealed) = row.column("sealed_key"), let activatesAt = row.column("activates_at")?.integer
            else { throw SigilError(.storeUnavailable, "a server key row is incomplete") }
            let pem = try secrets.open(Array(buffer: sealed), keyID: Self.sealName(keyID))
            return StoredServerKey(
                kind: kind, keyID: keyID, privatePEM: String(decoding: pem, as: UTF8.self),
                activatesAt: Int64(activatesAt),
                createdAt: Int64(row.column("created_at")?.integer ?? 0))
        }
    }
}
