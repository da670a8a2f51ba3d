import Crypto
import Foundation
import Logging
import NIOCore
@_spi(Sigil) import SigilCore
import SigilPostgres
import SigilServer
import Testing

@testable import SigilTestSupport

/// The operators' tests against PostgreSQL: one replica serving, another process administering.
@Suite("PostgreSQL operators", .enabled(if: ExternalServers.runPostgres), .externalServers)
struct PostgresOperatorTests {
    @Test(
        "revocation by user, key and device from another replica, audited in the same transaction; last use; server keys shared"
    )
    func operators() async throws {
        let clock = ManualUnixClock(SigningSetup.start)
        try await PostgresKeyDirectoryTests.withReplicas(clock: clock) { store, serving, administering in
            let start = SigningSetup.start
            let alice = try await OperatorScaffold.register(
                serving, device: "dev-alice", user: "alice", keys: 2, at: start)
            try await OperatorScaffold.register(serving, device: "dev-alice-2", user: "alice", at: start)
            let bob = try await OperatorScaffold.register(serving, device: "dev-bob", user: "bob", at: start)
            let ring = try await ServerKeyRing.open(
                directory: administering, overlap: 600, clock: clock,
                initialResponse: { try SigningKey.generate(.ed25519) },
                initialSealing: { try SealingPrivateKey.generate() })
            let admin = Administration(directory: administering, serverKeys: ring, clock: clock)
            #expect(try await serving.key(for: alice[0])?.state == .active)  // cached by the serving replica

            let key = try await admin.revoke(.key(alice[1]), by: "ops")
            #expect(key.first?.keys.first { $0.keyID == alice[1] }?.state == .revoked)
            let revoked = try await admin.revoke(.user("alice"), by: "ops", reason: "stolen")
            #expect(revoked.map(\.deviceID) == ["dev-alice", "dev-alice-2"])
            let deadline = ContinuousClock.now + .seconds(1)
            while try await serving.key(for: alice[0])?.state != .revoked && ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(20))
            }
            #expect(try await serving.key(for: alice[0])?.state == .revoked)
            #expect(try await serving.key(for: bob[0])?.state == .active)
            let bobThumbprint = try #require(try await serving.key(for: bob[0])?.key.jwkThumbprint)
            #expect(try await serving.key(forThumbprint: bobThumbprint)?.keyID == bob[0])
            for target in [Administration.Target.device("dev-none"), .key("none")] {
                await #expect(throws: SigilError(.unknownKey, "")) { try await admin.revoke(target, by: "ops") }
            }
            // A user with no device is recorded as revoked, and another replica reads it.
            #expect(try await admin.revoke(.user("nobody"), by: "ops").isEmpty)
            #expect(try await serving.revocationOfUser("nobody") != nil)
            let trail = try await admin.audit(AuditQuery(userID: "alice"))
            #expect(
                trail.filter { $0.action == .revoked }.map(\.deviceID) == ["dev-alice", "dev-alice", "dev-alice-2"])
            #expect(trail.filter { $0.action == .revoked }.allSatisfy { $0.actor == "operator:ops" })
            #expect(try await admin.audit(AuditQuery(since: start + 1)).isEmpty)

            let tracker = KeyUsageTracker(directory: serving)
            tracker.used(bob[0], at: start + 5)
            await tracker.flush()
            #expect(try await admin.device("dev-bob").keys.first?.lastUsed == start + 5)
            #expect(try await admin.devices(state: .revoked).map(\.deviceID) == ["dev-alice", "dev-alice-2"])

            // A rotation made by the administering process is read by the serving replica's ring.
            let next = try await admin.rotate(.response, by: "ops")
            let servingRing = try await ServerKeyRing.open(
                directory: serving, overlap: 600, clock: clock,
                initialResponse: { try SigningKey.generate(.ed25519) },
                initialSealing: { try SealingPrivateKey.generate() })
            #expect(servingRing.phase(.response)?.next.map(\.stored.keyID) == [next])
            await #expect(throws: SigilError(.forbidden, "")) { try await admin.rotate(.response, by: "ops") }
            #expect(try await admin.promote(.response, by: "ops") == next)
            try await servingRing.reload()
            #expect(servingRing.phase(.response)?.current.stored.keyID == next)
            // Keys are sealed at rest: no PEM in the table.
            let stored = try await store.client.query("SELECT sealed_key FROM sigil_server_keys").collect()
            for row in stored {
                let bytes = try row.decode(ByteBuffer.self)
                #expect(!String(buffer: bytes).contains("PRIVATE KEY"))
            }
        }
    }

    @Test(
        "a key used once while PostgreSQL is down shows its last use once the server is back, without a further use"
    )
    func lastUseAfterOutage() async throws {
        try await PostgresTestServer.with { server in
            let clock = ManualUnixClock(SigningSetup.start)
            // A short deadline: a write while the server is down fails within a second.
            let store = try await PostgresStore.open(
                try PostgresStore.Location(url: server.url), timeout: .seconds(1))
            defer { store.close() }
            let directory = try Directory.postgres(
                store: store, masterKey: SymmetricKey(size: .bits256), clock: clock, listensForChanges: false)
            let admin = Administration(directory: directory, serverKeys: nil, clock: clock)
            let start = SigningSetup.start
            let key = try await OperatorScaffold.register(directory, device: "dev-1", user: "u", at: start)[0]
            let pauses = OperatorScaffold.Pauses()
            let tracker = KeyUsageTracker(directory: directory, sleep: pauses.sleep)

            await server.stop()
            tracker.used(key, at: start + 5)
            #expect(try await OperatorScaffold.Pauses.until { pauses.count >= 1 }, "the write failed and waits")
            try await server.resume()
            #expect(
                try await OperatorScaffold.Pauses.until {
                    (try? await admin.device(key).keys.first?.lastUsed) == start + 5
                })
            #expect(pauses.asked.withLock { $0.first } == .seconds(1))
        }
    }

    @Test(
        "a last-use write held by a lock gives up in the database when Sigil gives up: no abandoned statement keeps a connection"
    )
    func lastUseGivesUpUnderALock() async throws {
        try await PostgresTestServer.with { server in
            let location = try PostgresStore.Location(url: server.url)
            let store = try await PostgresStore.open(location, timeout: .seconds(1))
            let locker = try await PostgresStore.open(location, timeout: .seconds(10), connections: 1)
            let watcher = try await PostgresStore.open(location, timeout: .seconds(10), connections: 1)
            defer {
                store.close()
                locker.close()
                watcher.close()
            }
            let clock = ManualUnixClock(SigningSetup.start)
            let directory = try Directory.postgres(
                store: store, masterKey: SymmetricKey(size: .bits256), clock: clock, listensForChanges: false)
            let key = try await OperatorScaffold.register(
                directory, device: "dev-1", user: "u", at: SigningSetup.start)[0]
            // Reads pass an EXCLUSIVE lock (requests still verify); the write waits on it.
            try await locker.whileLocked("LOCK TABLE sigil_keys IN EXCLUSIVE MODE") {
                for attempt in 0..<3 {
                    await #expect(throws: SigilError.self) {
                        try await directory.recordUses([key: SigningSetup.start + Int64(attempt)])
                    }
                }
                // Each write stopped in the database at its deadline, not only in Sigil.
                var waiting = -1
                for _ in 0..<50 {
                    waiting = try await watcher.client.query(
                        "SELECT 1 FROM pg_stat_activity WHERE state = 'active' AND query LIKE 'UPDATE sigil_keys SET last_used_at%'"
                    ).collect().count
                    if waiting == 0 { break }
                    try await Task.sleep(for: .milliseconds(100))
                }
                #expect(waiting == 0)
            }
            try await directory.recordUses([key: SigningSetup.start + 9])
            #expect(
                try await directory.devices(DeviceQuery(keyID: key)).first?.keys.first?.lastUsed == SigningSetup
                    .start + 9)
        }
    }
}
