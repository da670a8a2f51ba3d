import Crypto
import Foundation
import NIOCore
@_spi(Sigil) import SigilCore
import SigilPostgres
import SigilServer
import Testing

@testable import SigilTestSupport

/// The SQLite key directory's own tests, against PostgreSQL: replicas writing at once, atomic
/// changes, sealed secrets, and a revocation on one replica seen by another within the cache bound.
@Suite("PostgreSQL key directory", .enabled(if: ExternalServers.runPostgres), .externalServers)
struct PostgresKeyDirectoryTests {
    static func deviceKey(_ device: String) throws -> RegisteredKey {
        let key = try SigningKey.generate(.ed25519).verificationKey
        return RegisteredKey(keyID: key.derivedKeyID ?? "", key: key, deviceID: device)
    }

    /// Two replicas' stores on one fresh server; `listens: false` leaves only the cache lifetime.
    static func withReplicas(
        master: SymmetricKey = SymmetricKey(size: .bits256),
        clock: ManualUnixClock = ManualUnixClock(SigningSetup.start),
        listens: Bool = true,
        _ body: (PostgresStore, Directory, Directory) async throws -> Void
    ) async throws {
        try await PostgresTestServer.with { server in
            let location = try PostgresStore.Location(url: server.url)
            let (first, second) = (
                try await PostgresStore.open(location, timeout: .seconds(10)),
                try await PostgresStore.open(location, timeout: .seconds(10))
            )
            defer {
                first.close()
                second.close()
            }
            try await body(
                first,
                try Directory.postgres(store: first, masterKey: master, clock: clock, listensForChanges: listens),
                try Directory.postgres(store: second, masterKey: master, clock: clock, listensForChanges: listens)
            )
        }
    }

    @Test("concurrent writers on two replicas all land; the schema is created once")
    func concurrentWriters() async throws {
        try await Self.withReplicas { store, first, second in
            let keys = try (0..<40).map { try Self.deviceKey("dev-\($0)") }
            try await withThrowingTaskGroup(of: Void.self) { group in
                for (index, key) in keys.enumerated() {
                    let directory = index.isMultiple(of: 2) ? first : second
                    group.addTask { try await directory.apply(DirectoryChange(added: [key])) }
                }
                try await group.waitForAll()
            }
            for key in keys { #expect(try await first.key(for: key.keyID)?.deviceID == key.deviceID) }
            let versions = try await store.client.query("SELECT version FROM sigil_schema").collect()
            #expect(try versions.map { try $0.decode(Int.self) } == [PostgresStore.schemaVersion])
        }
    }

    @Test(
        "a change that fails half-way leaves nothing; a revocation on one replica reaches the other within the cache bound"
    )
    func atomicityAndPropagation() async throws {
        let clock = ManualUnixClock(SigningSetup.start)
        try await Self.withReplicas(clock: clock, listens: false) { _, first, second in
            let existing = try Self.deviceKey("dev-a")
            try await first.apply(DirectoryChange(added: [existing]))
            #expect(try await second.key(for: existing.keyID)?.state == .active)

            let fresh = try Self.deviceKey("dev-b")
            await #expect(throws: SigilError(.invalidRegistration, "")) {
                try await first.apply(
                    DirectoryChange(added: [fresh, existing], retiring: [(existing.keyID, SigningSetup.start)]))
            }
            #expect(try await second.key(for: fresh.keyID) == nil)

            try await first.apply(DirectoryChange(revokedDevices: ["dev-a"]))
            #expect(try await first.key(for: existing.keyID)?.state == .revoked)  // its own change: at once
            // Another's, with no notification: the change counter, read at most every quarter second
            // before the cache is trusted, clears it (the clock, and so the entry's lifetime, stands still).
            try await Task.sleep(for: .milliseconds(300))
            #expect(try await second.key(for: existing.keyID)?.state == .revoked)
        }
    }

    @Test("a change on one replica clears the other's cache through NOTIFY, before the cache lifetime passes")
    func notifiedChanges() async throws {
        let clock = ManualUnixClock(SigningSetup.start)  // never advanced: only a notification clears
        try await Self.withReplicas(clock: clock) { _, first, second in
            let key = try Self.deviceKey("dev-n")
            try await first.apply(DirectoryChange(added: [key]))
            #expect(try await second.key(for: key.keyID)?.state == .active)  // cached now
            try await first.apply(DirectoryChange(revokedDevices: ["dev-n"]))
            let started = ContinuousClock.now
            var state = try await second.key(for: key.keyID)?.state
            while state != .revoked && ContinuousClock.now - started < .seconds(10) {
                try await Task.sleep(for: .milliseconds(10))
                state = try await second.key(for: key.keyID)?.state
            }
            #expect(state == .revoked)
        }
    }

    @Test("secrets are sealed: not in the table, and unreadable under another master key")
    func sealedSecrets() async throws {
        try await Self.withReplicas { store, directory, _ in
            let secret = SymmetricKey(size: .bits256)
            let key = RegisteredKey(
                keyID: "hmac-0011", key: try VerificationKey(hmacSecret: secret), deviceID: "dev-s")
            try await directory.apply(DirectoryChange(added: [key]))
            #expect(try await directory.key(for: "hmac-0011")?.key.algorithm == .hmacSHA256)
            let stored = try await store.client.query("SELECT sealed_secret FROM sigil_keys").collect()
            let sealed = try stored.map { Array(buffer: try $0.decode(ByteBuffer.self)) }
            let plain = secret.withUnsafeBytes { Array($0) }
            #expect(sealed.count == 1 && !sealed[0].isEmpty)
            #expect(!sealed.contains { Data($0).range(of: Data(plain)) != nil })
            let wrongMaster = try Directory.postgres(store: store, masterKey: SymmetricKey(size: .bits256))
            await #expect(throws: SigilError(.storeUnavailable, "")) {
                _ = try await wrongMaster.key(for: "hmac-0011")
            }
        }
    }
}
