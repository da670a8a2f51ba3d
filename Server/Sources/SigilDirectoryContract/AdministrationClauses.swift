import SigilCore
import SigilServer

extension DirectoryContract {
    /// Operators' lists, and the audit trail.
    static let administration: [Clause] = [
        Clause(
            name:
                "devices page by ID in byte order, each once, with the user and state filters, keys and certificates as unpaged"
        ) { directory, clock in
            let admin = Administration(directory: directory, serverKeys: nil, clock: clock)
            // Byte order is not a dictionary's: capitals before small letters, `-` and `.` before
            // digits, `_` between, `~` last.
            let ids =
                [
                    "dev-b", "dev-B", "dev-a", "dev-A0", "dev-_", "dev-~", "dev-0", "dev-9z", "dev-a-1", "dev-a.2",
                    "dev-Z",
                ]
                + (0..<12).map { "dev-n\($0)" }
            var users: [String: String] = [:]
            var keys: [RegisteredKey] = []
            for (index, id) in ids.enumerated() {
                let user = index.isMultiple(of: 3) ? "alice" : "bob"
                users[id] = user
                keys.append(try key(id, user: user))
            }
            let second = try key("dev-a", user: users["dev-a"])
            try await directory.apply(DirectoryChange(added: keys + [second]))
            try await directory.apply(
                DirectoryChange(certificates: [
                    IssuedCertificateRecord(
                        serial: "0a", keyID: second.keyID, deviceID: "dev-a", notAfter: clock.now() + 86_400)
                ]))
            let revoked: Set = ["dev-B", "dev-n3", "dev-~", "dev-n11"]
            try await directory.apply(DirectoryChange(revokedDevices: Array(revoked)))
            let sorted = ids.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
            for (user, state) in [(nil, nil), ("alice", nil), (nil, .revoked), ("bob", .active)]
                as [(String?, DeviceRecord.State?)]
            {
                let expected = sorted.filter { id in
                    (user == nil || users[id] == user) && (state == nil || (state == .revoked) == revoked.contains(id))
                }
                let whole = try await admin.devices(user: user, state: state)
                try expect(whole.map(\.deviceID) == expected, "\(user ?? "-") \(state?.rawValue ?? "-"): order")
                for limit in [1, 4, 5, expected.count, PageRule.maximumLimit] {
                    let pages = try await pages { cursor in
                        try await admin.devices(user: user, state: state, limit: limit, after: cursor)
                    }
                    try expect(pages.flatMap(\.items) == whole, "limit \(limit): the pages are not the list")
                    try expect(
                        pages.dropLast().allSatisfy { $0.items.count == limit && $0.next == $0.items.last?.deviceID },
                        "limit \(limit): a page short or its cursor wrong")
                    try expect(pages.last?.next == nil, "limit \(limit): the last page names a next")
                }
            }
            let withCertificate = try await admin.devices(limit: 1, after: "dev-_")
            try expect(withCertificate.items.map(\.deviceID) == ["dev-a"], "after dev-_")
            try expect(withCertificate.items.first?.keys.count == 2, "dev-a's keys")
            try expect(withCertificate.items.first?.certificates.map(\.serial) == ["0a"], "dev-a's certificates")
            try expect(
                try await admin.devices(limit: 2, after: "dev-m").items.map(\.deviceID) == ["dev-n0", "dev-n1"],
                "a cursor naming no device")
            try expect(try await admin.devices(limit: 2, after: "dev-~").items.isEmpty, "after the last")
        },
        Clause(
            name:
                "the audit trail pages from the newest back, oldest first within a page, rows sharing a second neither skipped nor repeated"
        ) { directory, clock in
            let admin = Administration(directory: directory, serverKeys: nil, clock: clock)
            let rows = (0..<30).map { index in
                AuditEntry(
                    time: start + Int64(index / 5), action: .adminCall,
                    deviceID: index.isMultiple(of: 5) ? "dev-x" : nil, userID: index.isMultiple(of: 3) ? "alice" : nil,
                    actor: "operator:ops", reason: "row-\(index)")
            }
            for first in stride(from: 0, to: rows.count, by: 7) {
                try await directory.appendAudit(Array(rows[first..<min(first + 7, rows.count)]))
            }
            for query in [
                AuditQuery(), AuditQuery(userID: "alice"), AuditQuery(deviceID: "dev-x"), AuditQuery(since: start + 2),
                AuditQuery(userID: "alice", since: start + 3),
            ] {
                let whole = rows.filter(query.matches)
                try expect(try await directory.auditTrail(query) == whole, "\(query): the trail")
                for limit in [1, 4, 5, whole.count, PageRule.maximumLimit] {
                    let pages = try await pages { cursor in try await admin.audit(query, limit: limit, before: cursor) }
                    try expect(pages.reversed().flatMap(\.items) == whole, "\(query) limit \(limit): the pages")
                    try expect(pages.first?.items == Array(whole.suffix(limit)), "\(query) limit \(limit): first")
                    try expect(pages.last?.next == nil, "\(query) limit \(limit): the last page names a next")
                }
            }
            let first = try await admin.audit(AuditQuery(), limit: 10)
            try await directory.appendAudit([AuditEntry(time: start + 9, action: .adminCall, actor: "operator:late")])
            let second = try await admin.audit(AuditQuery(), limit: 10, before: first.next)
            try expect(second.items == Array(rows[10..<20]), "a row written later reached an older page")
            // Pruning drops what is older than the retention, and says how many.
            try expect(try await directory.pruneAudit(before: start + 2) == 10, "pruned")
            try expect(try await directory.auditTrail(AuditQuery()).first == rows[10], "the oldest row left")
        },
    ]

    /// The server's own keys.
    static let serverKeys: [Clause] = [
        Clause(name: "server keys: the first import once, one next key at a time, the earliest next one promoted") {
            directory, clock in
            func stored(_ id: String, activatesAt: Int64, kind: ServerKeyKind = .response) throws -> StoredServerKey {
                StoredServerKey(
                    kind: kind, keyID: id,
                    privatePEM: try KeyFile.privateKeyFile(for: try SigningKey.generate(.ed25519)),
                    activatesAt: activatesAt, createdAt: clock.now())
            }
            let current = try stored("current", activatesAt: 0)
            try await directory.addServerKey(current, onlyIfFirst: true, audit: [])
            try await directory.addServerKey(try stored("again", activatesAt: 0), onlyIfFirst: true, audit: [])
            try expect(try await directory.serverKeys().map(\.keyID) == ["current"], "the first import twice")
            try expect(
                try await directory.serverKeys().first?.privatePEM == current.privatePEM, "the private key changed")
            let audit = [AuditEntry(time: clock.now(), action: .serverKeyRotated, actor: "operator:ops")]
            try await directory.addServerKey(
                try stored("next", activatesAt: clock.now() + 60), onlyIfFirst: false, audit: audit)
            try await expect(throws: .forbidden) {
                try await directory.addServerKey(
                    try stored("second-next", activatesAt: clock.now() + 30), onlyIfFirst: false, audit: [])
            }
            // Another kind rotates on its own.
            try await directory.addServerKey(
                try stored("sealing-next", activatesAt: clock.now() + 60, kind: .sealing), onlyIfFirst: false, audit: []
            )
            let promoted = try await directory.promoteServerKey(
                .response, at: clock.now(),
                audit: [AuditEntry(time: clock.now(), action: .serverKeyPromoted, actor: "operator:ops")])
            try expect(promoted == "next", "promoted \(promoted)")
            try expect(
                try await directory.serverKeys().first { $0.keyID == "next" }?.activatesAt == clock.now(),
                "the promoted key's activation")
            try await expect(throws: .forbidden) {
                _ = try await directory.promoteServerKey(.response, at: clock.now(), audit: [])
            }
            let rows = try await directory.auditTrail(AuditQuery())
            try expect(
                rows.map(\.action) == [.serverKeyRotated, .serverKeyPromoted] && rows.last?.keyID == "next",
                "the audit rows: \(rows)")
        },
        Clause(name: "of two rotations racing, one publishes its next key and the other is refused") {
            directory, clock in
            let keys = try (0..<2).map { index in
                StoredServerKey(
                    kind: .sealing, keyID: "racing-\(index)",
                    privatePEM: try KeyFile.privateKeyFile(for: try SigningKey.generate(.ed25519)),
                    activatesAt: clock.now() + 60, createdAt: clock.now())
            }
            let published = try await withThrowingTaskGroup(of: Bool.self) { group in
                for key in keys {
                    group.addTask {
                        do {
                            try await directory.addServerKey(key, onlyIfFirst: false, audit: [])
                            return true
                        } catch let error as SigilError where error.code == .forbidden {
                            return false
                        }
                    }
                }
                return try await group.reduce(0) { $0 + ($1 ? 1 : 0) }
            }
            try expect(published == 1, "\(published) of two racing rotations published a next key")
            let held = try await directory.serverKeys().count
            try expect(held == 1, "the store holds \(held) keys")
        },
    ]

    /// App Attest counters and receipts.
    static let appAttest: [Clause] = [
        Clause(name: "an App Attest counter only grows, and of calls racing with one counter exactly one advances it") {
            directory, _ in
            try expect(try await !directory.advance(keyID: "aa-0", to: 0), "0 advanced a key with none stored")
            try expect(try await directory.advance(keyID: "aa-1", to: 1), "the first counter")
            try expect(try await !directory.advance(keyID: "aa-1", to: 1), "the same counter twice")
            try expect(try await !directory.advance(keyID: "aa-1", to: 0), "a lower counter")
            let advanced = try await withThrowingTaskGroup(of: Bool.self) { group in
                for _ in 0..<8 { group.addTask { try await directory.advance(keyID: "aa-1", to: 5) } }
                return try await group.reduce(0) { $0 + ($1 ? 1 : 0) }
            }
            try expect(advanced == 1, "\(advanced) of 8 racing calls advanced the counter")
            try expect(try await directory.receipt(keyID: "aa-1") == nil, "a receipt never kept")
            try await directory.keepReceipt([1, 2, 3], keyID: "aa-1")
            try await directory.keepReceipt([4, 5], keyID: "aa-1")
            try expect(try await directory.receipt(keyID: "aa-1") == [4, 5], "the latest receipt")
            try expect(try await !directory.advance(keyID: "aa-1", to: 5), "a receipt reset the counter")
            try await directory.keepReceipt([6], keyID: "aa-2")
            try expect(try await directory.advance(keyID: "aa-2", to: 1), "a receipt alone counts as 0")
        }
    ]
}
