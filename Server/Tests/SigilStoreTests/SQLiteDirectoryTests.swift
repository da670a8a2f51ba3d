import Crypto
import Foundation
import NIOPosix
@_spi(Sigil) import SigilCore
import SigilSQLite
import SigilServer
import Testing

@testable import SigilTestSupport

@Suite("SQLite key directory")
struct SQLiteKeyDirectoryTests {
    static func open(_ path: String, master: SymmetricKey, clock: ManualUnixClock = ManualUnixClock(SigningSetup.start))
        async throws -> Directory
    {
        try await Directory.sqlite(path: path, masterKey: master, clock: clock)
    }

    static func deviceKey(_ device: String) throws -> RegisteredKey {
        let key = try SigningKey.generate(.ed25519).verificationKey
        return RegisteredKey(keyID: key.derivedKeyID ?? "", key: key, deviceID: device)
    }

    @Test("concurrent writers, from one instance and from two on the same file, all land")
    func concurrentWriters() async throws {
        let path = TestServer.temporaryDirectory() + ".sqlite"
        let master = SymmetricKey(size: .bits256)
        let first = try await Self.open(path, master: master)
        let second = try await Self.open(path, master: master)
        let keys = try (0..<40).map { try Self.deviceKey("dev-\($0)") }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (index, key) in keys.enumerated() {
                let directory = index.isMultiple(of: 2) ? first : second
                group.addTask { try await directory.apply(DirectoryChange(added: [key])) }
            }
            try await group.waitForAll()
        }
        #expect(try await first.keyIDs() == keys.map(\.keyID).sorted())
        try await first.close()
        try await second.close()
    }

    /// The nonce store and the key directory of `sigil serve` share one file. A nonce write waiting
    /// for SQLite's lock on the only pool thread, while a directory transaction holding that lock waits
    /// for the thread to commit, stalled both for `busy_timeout` and ended in `store-unavailable`.
    @Test("a nonce store and a key directory on one file, on a one-thread pool, write concurrently without a stall")
    func nonceStoreBesideDirectory() async throws {
        let pool = NIOThreadPool(numberOfThreads: 1)
        pool.start()
        let path = TestServer.temporaryDirectory() + ".sqlite"
        let clock = ManualUnixClock(SigningSetup.start)
        let directory = try await Directory.sqlite(
            path: path, masterKey: SymmetricKey(size: .bits256), clock: clock, threadPool: pool)
        let nonces = try await SQLiteNonceStore.open(path: path, clock: clock, threadPool: pool)
        let key = try Self.deviceKey("dev-1")
        try await directory.apply(DirectoryChange(added: [key]))
        try await withThrowingTaskGroup(of: Void.self) { group in
            for round in 0..<40 {
                // Each timestamp passes the last horizon, so each insert writes the file.
                let time = SigningSetup.start + Int64(round) * (SQLiteNonceStore.horizonLead + 1)
                group.addTask { try await directory.recordUses([key.keyID: time]) }
                group.addTask {
                    let recorded = try await nonces.insert(
                        keyID: key.keyID, nonce: "nonce-\(round)", timestamp: time, expiresAt: time + 600, now: time)
                    #expect(recorded)
                }
            }
            try await group.waitForAll()
        }
        try await nonces.close()
        try await directory.close()
        try await pool.shutdownGracefully()
    }

    @Test("a change that fails half-way leaves nothing; a revocation is seen by the next lookup")
    func atomicity() async throws {
        let path = TestServer.temporaryDirectory() + ".sqlite"
        let directory = try await Self.open(path, master: SymmetricKey(size: .bits256))
        let existing = try Self.deviceKey("dev-a")
        try await directory.apply(DirectoryChange(added: [existing]))
        #expect(try await directory.key(for: existing.keyID)?.state == .active)

        let fresh = try Self.deviceKey("dev-b")
        await #expect(throws: SigilError(.invalidRegistration, "")) {
            try await directory.apply(
                DirectoryChange(added: [fresh, existing], retiring: [(existing.keyID, SigningSetup.start)]))
        }
        #expect(try await directory.key(for: fresh.keyID) == nil)
        #expect(try await directory.key(for: existing.keyID)?.state == .active)

        try await directory.apply(DirectoryChange(revokedDevices: ["dev-a"]))
        #expect(try await directory.key(for: existing.keyID)?.state == .revoked)
        try await directory.close()
    }

    @Test("secrets are sealed: not in the file, and unreadable under another master key")
    func sealedSecrets() async throws {
        let path = TestServer.temporaryDirectory() + ".sqlite"
        let secret = SymmetricKey(size: .bits256)
        let directory = try await Self.open(path, master: SymmetricKey(size: .bits256))
        let key = RegisteredKey(keyID: "hmac-0011", key: try VerificationKey(hmacSecret: secret), deviceID: "dev-s")
        try await directory.apply(DirectoryChange(added: [key]))
        #expect(try await directory.key(for: "hmac-0011")?.key.algorithm == .hmacSHA256)
        try await directory.close()

        let file = try Data(contentsOf: URL(fileURLWithPath: path))
        #expect(file.range(of: secret.withUnsafeBytes { Data($0) }) == nil)
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        #expect(attributes[.posixPermissions] as? Int == 0o600)

        let wrongMaster = try await Self.open(path, master: SymmetricKey(size: .bits256))
        await #expect(throws: SigilError(.storeUnavailable, "")) { _ = try await wrongMaster.key(for: "hmac-0011") }
        try await wrongMaster.close()
    }
}
