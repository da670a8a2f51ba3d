@_spi(Sigil) import SigilCore
import SigilServer
import Testing

// With the suites that start PostgreSQL, one test at a time (ExternalServers.swift): it starts one of its own.
extension ExternalStoreSuites {
    /// The rules of ``DirectoryChange`` every key registry keeps, run on each: memory, SQLite and a real
    /// PostgreSQL. The three are written separately, and copies that drift are how holes get in (issue
    /// 29: the memory directory accepted a key with no device, the SQL ones refused it).
    @Suite("The key directory's contract, on every store")
    struct DirectoryContractTests {
        typealias Store = RevocationTests.Store

        static func audit(_ directory: Directory, user: String) async throws -> [AuditEntry] {
            try await directory.auditTrail(AuditQuery(userID: user))
        }

        @Test(
            "a change is whole or nothing: a key with no device, a key ID taken, an unknown target",
            arguments: Store.available)
        func wholeOrNothing(_ store: Store) async throws {
            try await RevocationTests.withRegistry(store) { registry, _, _ in
                let first = try RevocationTests.key("dev-a")
                try await registry.apply(DirectoryChange(added: [first]))
                var orphan = try RevocationTests.key("dev-b")
                orphan.deviceID = nil
                let fresh = try RevocationTests.key("dev-c")
                await #expect(throws: SigilError(.invalidRegistration, "")) {
                    try await registry.apply(DirectoryChange(added: [fresh, orphan]))
                }
                await #expect(throws: SigilError(.invalidRegistration, "")) {
                    try await registry.apply(DirectoryChange(added: [fresh, first]))
                }
                await #expect(throws: SigilError(.unknownKey, "")) {
                    try await registry.apply(DirectoryChange(added: [fresh], revokedDevices: ["dev-none"]))
                }
                await #expect(throws: SigilError(.unknownKey, "")) {
                    try await registry.apply(DirectoryChange(added: [fresh], revokedKeys: ["no-such-key"]))
                }
                #expect(try await registry.key(for: fresh.keyID) == nil)
                #expect(try await registry.key(for: orphan.keyID) == nil)
                #expect(try await registry.key(for: first.keyID)?.state == .active)
            }
        }

        @Test(
            "a device whose last key that may sign is revoked is revoked itself: its state and the state filter say so; one with another key stays active",
            arguments: Store.available)
        func lastKeyRevoked(_ store: Store) async throws {
            try await RevocationTests.withRegistry(store) { registry, _, _ in
                let administered = try #require(registry as? Directory)
                let only = try RevocationTests.key("dev-only")
                let first = try RevocationTests.key("dev-two")
                let second = try RevocationTests.key("dev-two")
                try await registry.apply(DirectoryChange(added: [only, first, second]))
                try await registry.apply(
                    DirectoryChange(
                        revokedKeys: [only.keyID, first.keyID],
                        audit: [AuditEntry(time: 0, action: .revoked, keyID: only.keyID, actor: "operator:ops")]))
                let rows = try await administered.auditTrail(AuditQuery(deviceID: "dev-only"))
                #expect(
                    rows.contains { $0.action == .revoked && $0.keyID == nil && $0.actor == "operator:ops" },
                    "the device's own revocation row: \(rows)")
                let records = try await administered.devices(DeviceQuery())
                #expect(records.first { $0.deviceID == "dev-only" }?.state == .revoked)
                #expect(records.first { $0.deviceID == "dev-two" }?.state == .active)
                #expect(
                    try await administered.devices(DeviceQuery(state: .active)).map(\.deviceID) == ["dev-two"])
                #expect(
                    try await administered.devices(DeviceQuery(state: .revoked)).map(\.deviceID) == ["dev-only"])
                try await registry.apply(DirectoryChange(revokedKeys: [second.keyID]))
                #expect(try await administered.devices(DeviceQuery(state: .active)).isEmpty)
            }
        }

        @Test(
            "a single-use credential is spent once, with the change that spends it; a change that fails spends nothing",
            arguments: Store.available)
        func singleUse(_ store: Store) async throws {
            try await RevocationTests.withRegistry(store) { registry, clock, _ in
                let credential = SingleUseCredential(id: "jti-0123456789abcdef", expiresAt: clock.now() + 600)
                let taken = try RevocationTests.key("dev-a")
                try await registry.apply(DirectoryChange(added: [taken]))
                // Fails on the key ID taken: the credential is not spent.
                await #expect(throws: SigilError(.invalidRegistration, "")) {
                    try await registry.apply(DirectoryChange(added: [taken], spent: [credential]))
                }
                let first = try RevocationTests.key("dev-b")
                try await registry.apply(DirectoryChange(added: [first], spent: [credential]))
                let second = try RevocationTests.key("dev-c")
                await #expect(throws: SigilError(.enrollmentRefused, "")) {
                    try await registry.apply(DirectoryChange(added: [second], spent: [credential]))
                }
                #expect(try await registry.key(for: second.keyID) == nil)
                #expect(try await registry.key(for: first.keyID)?.state == .active)
            }
        }

        @Test(
            "revoking a user revokes its devices, looked up by key and by thumbprint, and records when; a user with no device is recorded too",
            arguments: Store.available)
        func userRevocation(_ store: Store) async throws {
            try await RevocationTests.withRegistry(store) { registry, clock, _ in
                var alice = try RevocationTests.key("dev-alice")
                alice.userID = "alice"
                var bob = try RevocationTests.key("dev-bob")
                bob.userID = "bob"
                try await registry.apply(DirectoryChange(added: [alice, bob]))
                let thumbprint = try #require(alice.key.jwkThumbprint)
                #expect(try await registry.key(forThumbprint: thumbprint)?.keyID == alice.keyID)
                #expect(try await registry.revocationOfUser("alice") == nil)

                clock.advance(by: 10)
                try await registry.apply(
                    DirectoryChange(
                        revokedUsers: ["alice", "carol"],
                        audit: ["alice", "carol"].map {
                            AuditEntry(time: clock.now(), action: .revoked, userID: $0, actor: "operator:ops")
                        }))
                #expect(try await registry.key(for: alice.keyID)?.state == .revoked)
                #expect(try await registry.key(forThumbprint: thumbprint)?.state == .revoked)
                #expect(try await registry.key(for: bob.keyID)?.state == .active)
                #expect(try await registry.revocationOfUser("alice") == clock.now())
                #expect(try await registry.revocationOfUser("carol") == clock.now())
                #expect(try await registry.revocationOfUser("bob") == nil)
                // Revoked again from a clock behind: the later time stays (tokens it refused stay refused).
                let revokedAt = clock.now()
                clock.set(revokedAt - 1200)
                try await registry.apply(DirectoryChange(revokedUsers: ["carol"]))
                #expect(try await registry.revocationOfUser("carol") == revokedAt)
                clock.set(revokedAt)
                // One row per device revoked; one naming the user alone for a user with no device.
                #expect(try await Self.audit(registry, user: "alice").map(\.deviceID) == ["dev-alice"])
                #expect(try await Self.audit(registry, user: "carol").map(\.deviceID) == [nil])
                // Nothing is added to a revoked device.
                let more = RegisteredKey(
                    keyID: "more-0123456789", key: try SigningKey.generate(.ed25519).verificationKey,
                    deviceID: "dev-alice", userID: "alice")
                await #expect(throws: SigilError(.revokedKey, "")) {
                    try await registry.apply(DirectoryChange(added: [more]))
                }
            }
        }

        @Test(
            "a sealing key read before the change must still be the device's when it applies",
            arguments: Store.available)
        func sealingKeyRead(_ store: Store) async throws {
            try await RevocationTests.withRegistry(store) { registry, _, _ in
                let key = try RevocationTests.key("dev-s")
                let first = try SealingPrivateKey.generate().publicKey
                try await registry.apply(DirectoryChange(added: [key], sealingKeys: [("dev-s", first)]))
                let second = try SealingPrivateKey.generate().publicKey
                await #expect(throws: SigilError(.forbidden, "")) {
                    try await registry.apply(
                        DirectoryChange(sealingKeys: [("dev-s", second)], sealingKeyRead: ("dev-s", nil)))
                }
                try await registry.apply(
                    DirectoryChange(sealingKeys: [("dev-s", second)], sealingKeyRead: ("dev-s", first)))
                #expect(try await registry.key(for: key.keyID)?.sealingKey == second)
            }
        }

        /// Every page of `list`, from the first: each page's items, and the cursor each page gave.
        static func pages<Item>(
            limit: Int, _ list: (_ cursor: String?) async throws -> Page<Item>
        ) async throws -> [Page<Item>] {
            var pages: [Page<Item>] = []
            var cursor: String?
            repeat {
                let page = try await list(cursor)
                pages.append(page)
                cursor = page.next
            } while cursor != nil && pages.count < 1_000
            return pages
        }

        @Test(
            "devices page by ID in byte order, each exactly once, with the user and state filters, keys and certificates as unpaged; the last page names no next",
            arguments: Store.available)
        func devicePaging(_ store: Store) async throws {
            try await RevocationTests.withRegistry(store) { registry, clock, _ in
                let directory = try #require(registry as? Directory)
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
                    var key = try RevocationTests.key(id)
                    key.userID = index.isMultiple(of: 3) ? "alice" : "bob"
                    users[id] = key.userID
                    keys.append(key)
                }
                var second = try RevocationTests.key("dev-a")
                second.userID = users["dev-a"]
                try await registry.apply(DirectoryChange(added: keys + [second]))
                try await registry.apply(
                    DirectoryChange(
                        certificates: [
                            IssuedCertificateRecord(
                                serial: "0a", keyID: second.keyID, deviceID: "dev-a", notAfter: clock.now() + 86_400)
                        ]))
                let revoked: Set = ["dev-B", "dev-n3", "dev-~", "dev-n11"]
                try await registry.apply(DirectoryChange(revokedDevices: Array(revoked)))

                let sorted = ids.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
                for (user, state) in [(nil, nil), ("alice", nil), (nil, .revoked), ("bob", .active)]
                    as [(String?, DeviceRecord.State?)]
                {
                    let expected = sorted.filter { id in
                        (user == nil || users[id] == user)
                            && (state == nil || (state == .revoked) == revoked.contains(id))
                    }
                    let whole = try await admin.devices(user: user, state: state)
                    #expect(whole.map(\.deviceID) == expected, "\(store) \(user ?? "-") \(state?.rawValue ?? "-")")
                    for limit in [1, 4, 5, expected.count, PageRule.maximumLimit] {
                        let pages = try await Self.pages(limit: limit) { cursor in
                            try await admin.devices(user: user, state: state, limit: limit, after: cursor)
                        }
                        // The same records as unpaged (keys, certificates), each once, in order.
                        #expect(pages.flatMap(\.items) == whole, "\(store) limit \(limit)")
                        #expect(
                            pages.dropLast().allSatisfy {
                                $0.items.count == limit && $0.next == $0.items.last?.deviceID
                            })
                        #expect(pages.last?.next == nil)
                        #expect(pages.count == max(1, (expected.count + limit - 1) / limit))
                    }
                }
                let withCertificate = try await admin.devices(limit: 1, after: "dev-_")
                #expect(withCertificate.items.map(\.deviceID) == ["dev-a"])
                #expect(withCertificate.items.first?.keys.count == 2)
                #expect(withCertificate.items.first?.certificates.map(\.serial) == ["0a"])
                // A cursor that names no device still pages from where it would sort.
                #expect(
                    try await admin.devices(limit: 2, after: "dev-m").items.map(\.deviceID) == ["dev-n0", "dev-n1"])
                #expect(try await admin.devices(limit: 2, after: "dev-~").items.isEmpty)
            }
        }

        @Test(
            "the audit trail pages from the newest back, oldest first within a page, rows sharing a second neither skipped nor repeated, with the filters",
            arguments: Store.available)
        func auditPaging(_ store: Store) async throws {
            try await RevocationTests.withRegistry(store) { registry, clock, _ in
                let directory = try #require(registry as? Directory)
                let admin = Administration(directory: directory, serverKeys: nil, clock: clock)
                let start = clock.now()
                // 30 rows, five to a second, told apart by their reasons only.
                let rows = (0..<30).map { index in
                    AuditEntry(
                        time: start + Int64(index / 5), action: .adminCall,
                        deviceID: index.isMultiple(of: 5) ? "dev-x" : nil,
                        userID: index.isMultiple(of: 3) ? "alice" : nil,
                        actor: "operator:ops", reason: "row-\(index)")
                }
                for first in stride(from: 0, to: rows.count, by: 7) {
                    try await directory.appendAudit(Array(rows[first..<min(first + 7, rows.count)]))
                }
                for query in [
                    AuditQuery(), AuditQuery(userID: "alice"), AuditQuery(deviceID: "dev-x"),
                    AuditQuery(since: start + 2),
                    AuditQuery(userID: "alice", since: start + 3),
                ] {
                    let whole = rows.filter(query.matches)
                    #expect(try await directory.auditTrail(query) == whole)
                    for limit in [1, 4, 5, whole.count, PageRule.maximumLimit] {
                        let pages = try await Self.pages(limit: limit) { cursor in
                            try await admin.audit(query, limit: limit, before: cursor)
                        }
                        #expect(pages.reversed().flatMap(\.items) == whole, "\(store) \(query) limit \(limit)")
                        #expect(pages.first?.items == Array(whole.suffix(limit)))
                        #expect(pages.dropLast().allSatisfy { $0.items.count == limit && $0.next != nil })
                        #expect(pages.last?.next == nil)
                    }
                }
                // Rows written after a first page are not in the pages before it.
                let first = try await admin.audit(AuditQuery(), limit: 10)
                try await directory.appendAudit([
                    AuditEntry(time: start + 9, action: .adminCall, actor: "operator:late")
                ])
                let second = try await admin.audit(AuditQuery(), limit: 10, before: first.next)
                #expect(second.items == Array(rows[10..<20]))
            }
        }
    }
}
