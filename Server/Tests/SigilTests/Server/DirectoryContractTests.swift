@_spi(Sigil) import SigilCore
import SigilServer
import Testing

/// The rules of ``DirectoryChange`` every key registry keeps, run on each: memory, SQLite and a real
/// PostgreSQL. The three are written separately, and copies that drift are how holes get in (issue
/// 29: the memory directory accepted a key with no device, the SQL ones refused it).
@Suite("The key directory's contract, on every store")
struct DirectoryContractTests {
    typealias Store = RevocationTests.Store

    static func audit(_ registry: any KeyRegistry, user: String) async throws -> [AuditEntry] {
        let administered = try #require(registry as? any AdministeredDirectory)
        return try await administered.auditTrail(AuditQuery(userID: user))
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

    @Test("a sealing key read before the change must still be the device's when it applies", arguments: Store.available)
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
}
