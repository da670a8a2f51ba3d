import Crypto
import SigilCore
import SigilServer

extension DirectoryContract {
    /// A change's rules, checked inside its transaction.
    static let changes: [Clause] = [
        Clause(name: "a change is whole or nothing: a key with no device, a key ID taken, an unknown target") {
            directory, _ in
            let first = try key("dev-a")
            try await directory.apply(DirectoryChange(added: [first]))
            var orphan = try key("dev-b")
            orphan.deviceID = nil
            let fresh = try key("dev-c")
            try await expect(throws: .invalidRegistration) {
                try await directory.apply(DirectoryChange(added: [fresh, orphan]))
            }
            try await expect(throws: .invalidRegistration) {
                try await directory.apply(DirectoryChange(added: [fresh, first]))
            }
            try await expect(throws: .unknownKey) {
                try await directory.apply(DirectoryChange(added: [fresh], revokedDevices: ["dev-none"]))
            }
            try await expect(throws: .unknownKey) {
                try await directory.apply(DirectoryChange(added: [fresh], revokedKeys: ["no-such-key"]))
            }
            try expect(try await directory.key(for: fresh.keyID) == nil, "a key of a failed change was added")
            try expect(try await directory.key(for: orphan.keyID) == nil, "a key with no device was added")
            try expect(try await directory.key(for: first.keyID)?.state == .active, "the first key is not active")
            let keyIDs = try await directory.keyIDs()
            try expect(keyIDs == [first.keyID], "keyIDs: \(keyIDs)")
        },
        Clause(
            name:
                "many keys in one change (past a backend's statement of 1,000 rows): all or none; an ID taken or named twice refuses it"
        ) { directory, _ in
            let verification = try SigningKey.generate(.ed25519).verificationKey
            // 2,500 keys of 1,250 new devices, two a device: the device takes its first key's user.
            let keys = (0..<2_500).map { index in
                RegisteredKey(
                    keyID: "bulk-\(index)", key: verification, deviceID: "dev-bulk-\(index / 2)",
                    userID: "user-\(index)", createdAt: start)
            }
            let taken = try key("dev-taken")
            try await directory.apply(DirectoryChange(added: [taken]))
            var late = keys
            late[2_100] = RegisteredKey(keyID: taken.keyID, key: verification, deviceID: "dev-late", createdAt: start)
            try await expect(throws: .invalidRegistration) { try await directory.apply(DirectoryChange(added: late)) }
            var twice = keys
            twice[1_999] = RegisteredKey(
                keyID: keys[1_000].keyID, key: verification, deviceID: "dev-twice", createdAt: start)
            try await expect(throws: .invalidRegistration) { try await directory.apply(DirectoryChange(added: twice)) }
            try expect(try await directory.keyIDs() == [taken.keyID], "a refused change left keys behind")
            try await directory.apply(DirectoryChange(added: keys))
            try expect(try await directory.keyIDs().count == 2_501, "not every key was added")
            let device = try await directory.devices(DeviceQuery(deviceID: "dev-bulk-1100"))
            try expect(
                device.first?.userID == "user-2200" && device.first?.keys.map(\.keyID) == ["bulk-2200", "bulk-2201"],
                "dev-bulk-1100: \(String(describing: device.first))")
        },
        Clause(name: "nothing is added to a revoked device, and its keys read as revoked") { directory, _ in
            let first = try key("dev-a")
            try await directory.apply(DirectoryChange(added: [first]))
            try await directory.apply(DirectoryChange(revokedDevices: ["dev-a"], actingKeyID: first.keyID))
            try expect(try await directory.key(for: first.keyID)?.state == .revoked, "a revoked device's key")
            try await expect(throws: .revokedKey) {
                try await directory.apply(DirectoryChange(added: [try key("dev-a")]))
            }
            try await expect(throws: .revokedKey) {
                try await directory.apply(
                    DirectoryChange(certificates: [
                        IssuedCertificateRecord(serial: "01", keyID: first.keyID, deviceID: "dev-a", notAfter: 0)
                    ]))
            }
            try expect(
                try await directory.keys(ofDevice: "dev-a").map(\.state) == [.revoked], "the device's keys")
        },
        Clause(name: "a rotating key may not act for its device; an unknown one neither; the new key may") {
            directory, clock in
            let old = try key("dev-b")
            let new = try key("dev-b")
            try await directory.apply(DirectoryChange(added: [old]))
            try await directory.apply(
                DirectoryChange(added: [new], retiring: [(old.keyID, clock.now() + 3_600)], actingKeyID: old.keyID))
            let retired = try await directory.key(for: old.keyID)
            try expect(
                retired?.state == .rotating && retired?.validUntil == clock.now() + 3_600,
                "the old key: \(String(describing: retired?.state)) until \(String(describing: retired?.validUntil))")
            try await expect(throws: .forbidden) {
                try await directory.apply(DirectoryChange(added: [try key("dev-b")], actingKeyID: old.keyID))
            }
            try await expect(throws: .unknownKey) {
                try await directory.apply(DirectoryChange(added: [try key("dev-b")], actingKeyID: "no-such-key"))
            }
            // A later, longer grace never extends an end date already set.
            try await directory.apply(
                DirectoryChange(retiring: [(old.keyID, clock.now() + 86_400)], actingKeyID: new.keyID))
            try expect(
                try await directory.key(for: old.keyID)?.validUntil == clock.now() + 3_600, "the end date moved")
        },
        Clause(name: "a device whose last key that may sign is revoked is revoked, with a row of its own") {
            directory, _ in
            let only = try key("dev-only")
            let first = try key("dev-two")
            let second = try key("dev-two")
            try await directory.apply(DirectoryChange(added: [only, first, second]))
            try await directory.apply(
                DirectoryChange(
                    revokedKeys: [only.keyID, first.keyID],
                    audit: [AuditEntry(time: start, action: .revoked, keyID: only.keyID, actor: "operator:ops")]))
            let rows = try await directory.auditTrail(AuditQuery(deviceID: "dev-only"))
            try expect(
                rows.contains { $0.action == .revoked && $0.keyID == nil && $0.actor == "operator:ops" },
                "no row of the device's own: \(rows)")
            let records = try await directory.devices(DeviceQuery())
            try expect(records.first { $0.deviceID == "dev-only" }?.state == .revoked, "dev-only is not revoked")
            try expect(records.first { $0.deviceID == "dev-two" }?.state == .active, "dev-two is not active")
            try expect(
                try await directory.devices(DeviceQuery(state: .revoked)).map(\.deviceID) == ["dev-only"],
                "the revoked filter")
            try await directory.apply(DirectoryChange(revokedKeys: [second.keyID]))
            try expect(try await directory.devices(DeviceQuery(state: .active)).isEmpty, "the active filter")
        },
        Clause(name: "a single-use credential is spent once, with its change; a change that fails spends nothing") {
            directory, clock in
            let credential = SingleUseCredential(id: "jti-0123456789abcdef", expiresAt: clock.now() + 600)
            let taken = try key("dev-a")
            try await directory.apply(DirectoryChange(added: [taken]))
            try await expect(throws: .invalidRegistration) {
                try await directory.apply(DirectoryChange(added: [taken], spent: [credential]))
            }
            let first = try key("dev-b")
            try await directory.apply(DirectoryChange(added: [first], spent: [credential]))
            let second = try key("dev-c")
            try await expect(throws: .enrollmentRefused) {
                try await directory.apply(DirectoryChange(added: [second], spent: [credential]))
            }
            try expect(try await directory.key(for: second.keyID) == nil, "a second spend added its key")
            // Forgotten once expired.
            clock.advance(by: 601)
            try await directory.apply(DirectoryChange(added: [second], spent: [credential]))
        },
        Clause(name: "revoking a user revokes its devices and records when, never moving back") { directory, clock in
            let alice = try key("dev-alice", user: "alice")
            let bob = try key("dev-bob", user: "bob")
            try await directory.apply(DirectoryChange(added: [alice, bob]))
            let thumbprint = alice.key.jwkThumbprint ?? ""
            try expect(
                try await directory.key(forThumbprint: thumbprint)?.keyID == alice.keyID, "lookup by thumbprint")
            try expect(try await directory.revocationOfUser("alice") == nil, "alice revoked before")
            clock.advance(by: 10)
            try await directory.apply(
                DirectoryChange(
                    revokedUsers: ["alice", "carol"],
                    audit: ["alice", "carol"].map {
                        AuditEntry(time: clock.now(), action: .revoked, userID: $0, actor: "operator:ops")
                    }))
            try expect(try await directory.key(for: alice.keyID)?.state == .revoked, "alice's key")
            try expect(try await directory.key(forThumbprint: thumbprint)?.state == .revoked, "by thumbprint")
            try expect(try await directory.key(for: bob.keyID)?.state == .active, "bob's key")
            try expect(try await directory.revocationOfUser("alice") == clock.now(), "alice's time")
            try expect(try await directory.revocationOfUser("carol") == clock.now(), "a user with no device")
            let revokedAt = clock.now()
            clock.set(revokedAt - 1_200)
            try await directory.apply(DirectoryChange(revokedUsers: ["carol"]))
            try expect(try await directory.revocationOfUser("carol") == revokedAt, "the time moved back")
            clock.set(revokedAt)
            try expect(
                try await directory.auditTrail(AuditQuery(userID: "alice")).map(\.deviceID) == ["dev-alice"],
                "one row per device revoked")
            try expect(
                try await directory.auditTrail(AuditQuery(userID: "carol")).map(\.deviceID) == [nil],
                "one row naming the user alone")
        },
        Clause(name: "users are told apart by their bytes: revoking Kate leaves \u{212A}ate (a Kelvin sign) alone") {
            directory, clock in
            let kate = try key("dev-kate", user: "Kate")
            let kelvin = try key("dev-kelvin", user: "\u{212A}ate")
            try await directory.apply(DirectoryChange(added: [kate, kelvin]))
            clock.advance(by: 10)
            try await directory.apply(
                DirectoryChange(
                    revokedUsers: ["Kate"],
                    audit: [AuditEntry(time: clock.now(), action: .revoked, userID: "Kate", actor: "operator:ops")]))
            try expect(try await directory.key(for: kate.keyID)?.state == .revoked, "Kate's key")
            try expect(try await directory.key(for: kelvin.keyID)?.state == .active, "the other user's key")
            try expect(try await directory.revocationOfUser("\u{212A}ate") == nil, "the other user revoked")
            try expect(try await directory.auditTrail(AuditQuery(userID: "\u{212A}ate")).isEmpty, "the other's trail")
            try expect(
                try await directory.devices(DeviceQuery(userID: "\u{212A}ate")).map(\.deviceID) == ["dev-kelvin"],
                "the other user's devices")
            // Both in one change: each user's own devices, each audited under its own name.
            let kathy = try key("dev-kathy", user: "Kathy")
            let kelvinToo = try key("dev-kelvin-2", user: "\u{212A}athy")
            try await directory.apply(DirectoryChange(added: [kathy, kelvinToo]))
            try await directory.apply(
                DirectoryChange(
                    revokedUsers: ["Kathy", "\u{212A}athy"],
                    audit: ["Kathy", "\u{212A}athy"].map {
                        AuditEntry(time: clock.now(), action: .revoked, userID: $0, actor: "operator:ops")
                    }))
            try expect(try await directory.key(for: kathy.keyID)?.state == .revoked, "Kathy's key, beside the other")
            try expect(try await directory.key(for: kelvinToo.keyID)?.state == .revoked, "the other's key")
            try expect(
                try await directory.auditTrail(AuditQuery(userID: "Kathy")).map(\.deviceID) == ["dev-kathy"],
                "Kathy's row names her device")
        },
        Clause(name: "a sealing key is kept with the device, read with each key; one read before must still hold") {
            directory, _ in
            let key = try key("dev-s")
            let first = try SealingPrivateKey.generate().publicKey
            try await directory.apply(DirectoryChange(added: [key], sealingKeys: [("dev-s", first)]))
            try expect(try await directory.key(for: key.keyID)?.sealingKey == first, "the first sealing key")
            let second = try SealingPrivateKey.generate().publicKey
            try await expect(throws: .forbidden) {
                try await directory.apply(
                    DirectoryChange(sealingKeys: [("dev-s", second)], sealingKeyRead: ("dev-s", nil)))
            }
            try await directory.apply(
                DirectoryChange(sealingKeys: [("dev-s", second)], sealingKeyRead: ("dev-s", first)))
            try expect(try await directory.key(for: key.keyID)?.sealingKey == second, "the second sealing key")
            try await expect(throws: .invalidRegistration) {
                try await directory.apply(DirectoryChange(sealingKeys: [("dev-none", second)]))
            }
        },
        Clause(name: "an HMAC secret is kept whole; a device's secrets retire and are revoked together") {
            directory, clock in
            let secret = try VerificationKey(hmacSecret: SymmetricKey(size: .bits256))
            let hmac = RegisteredKey(keyID: "hmac-0123456789", key: secret, deviceID: "dev-h", createdAt: start)
            let pair = try key("dev-h")
            try await directory.apply(DirectoryChange(added: [pair, hmac]))
            try expect(
                try await directory.key(for: hmac.keyID)?.key.hmacSecret == secret.hmacSecret, "the secret changed")
            try await directory.apply(DirectoryChange(retiringSecrets: ("dev-h", clock.now() + 60)))
            try expect(try await directory.key(for: hmac.keyID)?.state == .rotating, "the secret is not rotating")
            try expect(try await directory.key(for: pair.keyID)?.state == .active, "the key pair retired too")
            // A key pair revoked takes its device's secrets with it.
            let other = try key("dev-h")
            try await directory.apply(DirectoryChange(added: [other]))
            try await directory.apply(DirectoryChange(revokedKeys: [pair.keyID]))
            try expect(try await directory.key(for: hmac.keyID)?.state == .revoked, "the secret outlived its pair")
            try expect(try await directory.key(for: other.keyID)?.state == .active, "another key pair was revoked")
        },
    ]

    /// Reads: certificates, keys of a device, last use, what another directory on the backend sees.
    static let reads: [Clause] = [
        Clause(name: "a key whose own row says active reads revoked when its device is revoked") { directory, _ in
            let first = try key("dev-a")
            try await directory.apply(DirectoryChange(added: [first]))
            try await directory.apply(DirectoryChange(revokedDevices: ["dev-a"]))
            // Behind the rules' back, as a bug or a hand edit would: a row that says active.
            let stray = try key("dev-a")
            try await directory.backend.transaction("a stray row") { _ = try await $0.add([stray], now: start) }
            try expect(try await directory.key(for: stray.keyID)?.state == .revoked, "the stray key reads usable")
            try expect(
                try await directory.keys(ofDevice: "dev-a").allSatisfy { $0.state == .revoked },
                "a key of the revoked device reads usable")
        },
        Clause(name: "a change made through one directory reaches another on the same backend, cache and all") {
            directory, clock in
            let other = Directory(
                backend: directory.backend, clock: clock, cacheLifetime: 300, changeCheckInterval: .milliseconds(50))
            let key = try key("dev-c")
            try await directory.apply(DirectoryChange(added: [key]))
            try expect(try await other.key(for: key.keyID)?.state == .active, "the other directory's first read")
            try await directory.apply(DirectoryChange(revokedKeys: [key.keyID]))
            // Seen within the change check (50 ms here), whatever the cache's lifetime.
            let deadline = ContinuousClock.now + .seconds(10)
            while try await other.key(for: key.keyID)?.state != .revoked {
                try expect(ContinuousClock.now < deadline, "the other directory still reads the key usable")
                try await Task.sleep(for: .milliseconds(20))
            }
        },
        Clause(name: "certificates are recorded by device; a key's last use never moves back") { directory, clock in
            let key = try key("dev-c")
            try await directory.apply(
                DirectoryChange(
                    added: [key],
                    certificates: [
                        IssuedCertificateRecord(serial: "0b", keyID: key.keyID, deviceID: "dev-c", notAfter: start + 9),
                        IssuedCertificateRecord(serial: "0a", keyID: key.keyID, deviceID: "dev-c", notAfter: start + 8),
                    ]))
            try expect(
                try await directory.certificates(ofDevice: "dev-c").map(\.serial) == ["0a", "0b"], "by serial")
            try await directory.recordUses([key.keyID: clock.now() + 100, "no-such-key": clock.now()])
            try await directory.recordUses([key.keyID: clock.now() + 50])
            let used = try await directory.devices(DeviceQuery(deviceID: "dev-c")).first?.keys.first?.lastUsed
            try expect(used == clock.now() + 100, "last use \(String(describing: used))")
        },
    ]
}
