import Crypto
import Foundation
import Logging
import SQLiteNIO
@_spi(Sigil) import SigilCore
import SigilSQLite
import SigilServer
import Synchronization
import Testing

@testable import SigilTestSupport

/// Operators' tools on the SQLite directory: revocation by device, key and user with its audit rows,
/// audit rows in the change's own transaction, last use, another process's writes noticed.
@Suite("Operators")
struct OperatorTests {
    typealias Pauses = OperatorScaffold.Pauses

    /// A directory in a fresh file and its administration, the server's keys in the same file.
    static func administration(
        clock: ManualUnixClock = ManualUnixClock(SigningSetup.start), checkEvery: Duration = .milliseconds(250)
    ) async throws -> (Directory, Administration, path: String, master: SymmetricKey) {
        let path = TestServer.temporaryDirectory() + ".sqlite"
        let master = SymmetricKey(size: .bits256)
        let directory = try await Directory.sqlite(
            path: path, masterKey: master, clock: clock, changeCheckInterval: checkEvery)
        let ring = try await ServerKeyRing.open(
            directory: directory, overlap: 600, clock: clock, initialResponse: { try SigningKey.generate(.ed25519) },
            initialSealing: { try SealingPrivateKey.generate() })
        return (directory, Administration(directory: directory, serverKeys: ring, clock: clock), path, master)
    }

    @Test(
        "revoking a user revokes their devices in one write, audited per device; others untouched; unknown IDs change nothing"
    )
    func revokeUser() async throws {
        let (directory, admin, _, _) = try await Self.administration()
        let start = SigningSetup.start
        let alicePhone = try await OperatorScaffold.register(directory, device: "dev-alice-1", user: "alice", at: start)
        try await OperatorScaffold.register(directory, device: "dev-alice-2", user: "alice", at: start)
        let bob = try await OperatorScaffold.register(directory, device: "dev-bob", user: "bob", at: start)

        let revoked = try await admin.revoke(.user("alice"), by: "ops", reason: "stolen phone")
        #expect(revoked.map(\.deviceID) == ["dev-alice-1", "dev-alice-2"])
        #expect(revoked.allSatisfy { $0.state == .revoked && $0.keys.allSatisfy { $0.state == .revoked } })
        #expect(try await directory.key(for: alicePhone[0])?.state == .revoked)
        #expect(try await directory.key(for: bob[0])?.state == .active)

        let trail = try await admin.audit(AuditQuery(userID: "alice"))
        let revocations = trail.filter { $0.action == .revoked }
        #expect(revocations.map(\.deviceID) == ["dev-alice-1", "dev-alice-2"])
        #expect(revocations.allSatisfy { $0.actor == "operator:ops" && $0.reason == "stolen phone" })
        #expect(trail.filter { $0.action == .registered }.count == 2)

        // Unknown devices and keys: refused, nothing written.
        let before = try await admin.audit(AuditQuery()).count
        for target in [Administration.Target.device("dev-none"), .key("no-such-key")] {
            await #expect(throws: SigilError(.unknownKey, "")) { try await admin.revoke(target, by: "ops") }
        }
        #expect(try await admin.audit(AuditQuery()).count == before)
        // A user with no device (known by access tokens alone) is revoked all the same, in one audit row.
        #expect(try await admin.revoke(.user("carol"), by: "ops").isEmpty)
        let carol = try await admin.audit(AuditQuery(userID: "carol"))
        #expect(carol.count == 1 && carol.first?.action == .revoked && carol.first?.deviceID == nil)
        #expect(try await directory.revocationOfUser("carol") != nil)
        await #expect(throws: SigilError(.unknownKey, "")) { try await admin.device("nobody") }
        try await directory.close()
    }

    @Test("a key revoked alone leaves its device's other keys; a device is found by any of its key IDs")
    func revokeKey() async throws {
        let (directory, admin, _, _) = try await Self.administration()
        let keys = try await OperatorScaffold.register(
            directory, device: "dev-1", user: "u", keys: 2, at: SigningSetup.start)
        let after = try await admin.revoke(.key(keys[1]), by: "ops")
        #expect(after.first?.state == .active)
        #expect(after.first?.keys.first { $0.keyID == keys[1] }?.state == .revoked)
        #expect(after.first?.keys.first { $0.keyID == keys[0] }?.state == .active)
        #expect(try await admin.device(keys[0]).deviceID == "dev-1")
        #expect(try await admin.devices(state: .revoked).isEmpty)
        #expect(try await admin.devices(user: "u").count == 1)
        // A reason that would print as a second row, or a huge one, is refused before anything changes.
        for reason in ["lost\n2026-01-01T00:00:00Z revoked actor=operator:bob", String(repeating: "x", count: 513)] {
            await #expect(throws: SigilError(.invalidRegistration, "")) {
                try await admin.revoke(.device("dev-1"), by: "ops", reason: reason)
            }
        }
        #expect(try await admin.device("dev-1").state == .active)
        try await directory.close()
    }

    @Test("a change whose audit row cannot be written does not happen")
    func auditOrNothing() async throws {
        let (directory, admin, path, _) = try await Self.administration()
        try await OperatorScaffold.register(directory, device: "dev-1", user: "u", at: SigningSetup.start)
        // Another connection makes every audit insert fail, as a full disk or a broken table would.
        let saboteur = try await SQLiteConnection.open(storage: .file(path: path), logger: Logger(label: "test"))
        _ = try await saboteur.query(
            "CREATE TRIGGER no_audit BEFORE INSERT ON sigil_audit BEGIN SELECT RAISE(ABORT, 'no'); END")
        await #expect(throws: SigilError(.storeUnavailable, "")) {
            try await OperatorScaffold.register(directory, device: "dev-2", user: "u", at: SigningSetup.start)
        }
        await #expect(throws: SigilError(.storeUnavailable, "")) {
            try await admin.revoke(.device("dev-1"), by: "ops")
        }
        #expect(try await admin.devices().map(\.deviceID) == ["dev-1"])
        #expect(try await admin.device("dev-1").state == .active)
        // The trail is append-only: an edit is refused.
        _ = try await saboteur.query("DROP TRIGGER no_audit")
        await #expect(throws: (any Error).self) {
            _ = try await saboteur.query("UPDATE sigil_audit SET actor = 'someone-else'")
        }
        try await saboteur.close()
        try await directory.close()
    }

    @Test("a revocation racing a rotation: whichever lands first, no key of the device stays usable")
    func revokeRacesRotation() async throws {
        for _ in 0..<5 {
            let (directory, admin, _, _) = try await Self.administration()
            let current = try await OperatorScaffold.register(
                directory, device: "dev-1", user: "u", at: SigningSetup.start)[0]
            let next = try SigningKey.generate(.ed25519).verificationKey
            async let rotation: Void = directory.apply(
                DirectoryChange(
                    added: [RegisteredKey(keyID: next.derivedKeyID ?? "", key: next, deviceID: "dev-1", userID: "u")],
                    retiring: [(current, SigningSetup.start + 60)], actingKeyID: current))
            async let revocation = admin.revoke(.device("dev-1"), by: "ops")
            _ = try? await rotation
            _ = try await revocation
            let keys = try await directory.keys(ofDevice: "dev-1")
            #expect(!keys.isEmpty)
            #expect(keys.allSatisfy { !$0.isUsable(at: SigningSetup.start) })
            try await directory.close()
        }
    }

    @Test("another process's revocation is noticed by the next lookup, not after the cache lifetime")
    func otherWriterNoticed() async throws {
        let clock = ManualUnixClock(SigningSetup.start)
        let (server, _, path, master) = try await Self.administration(clock: clock, checkEvery: .zero)
        let key = try await OperatorScaffold.register(server, device: "dev-1", user: "u", at: SigningSetup.start)[0]
        #expect(try await server.key(for: key)?.state == .active)  // cached now, for 5 s
        let other = try await Directory.sqlite(path: path, masterKey: master, clock: clock)
        let admin = Administration(directory: other, serverKeys: nil, clock: clock)
        _ = try await admin.revoke(.device("dev-1"), by: "ops")
        #expect(try await server.key(for: key)?.state == .revoked)
        try await other.close()
        try await server.close()
    }

    @Test("last use is written at most once a minute per key, and shown with the device")
    func lastUse() async throws {
        let (directory, admin, _, _) = try await Self.administration()
        let start = SigningSetup.start
        let key = try await OperatorScaffold.register(directory, device: "dev-1", user: "u", at: start)[0]
        let tracker = KeyUsageTracker(directory: directory)
        tracker.used(key, at: start + 10)
        await tracker.flush()
        #expect(try await admin.device(key).keys.first?.lastUsed == start + 10)
        tracker.used(key, at: start + 40)  // within the minute: not written
        await tracker.flush()
        #expect(try await admin.device(key).keys.first?.lastUsed == start + 10)
        tracker.used(key, at: start + 75)
        await tracker.flush()
        #expect(try await admin.device(key).keys.first?.lastUsed == start + 75)
        try await directory.close()
    }

    @Test("a flush waits for the write a use began: what was used before it is written when it returns")
    func flushWaitsForTheWriteUnderWay() async throws {
        let (directory, admin, path, _) = try await Self.administration()
        let start = SigningSetup.start
        let key = try await OperatorScaffold.register(directory, device: "dev-1", user: "u", at: start)[0]
        // Another connection holds SQLite's write lock: the write the use begins waits for it.
        let holder = try await SQLiteConnection.open(storage: .file(path: path), logger: Logger(label: "test"))
        _ = try await holder.query("BEGIN IMMEDIATE")
        let tracker = KeyUsageTracker(directory: directory)
        tracker.used(key, at: start + 10)
        let flushed = Task { () async throws -> Int64? in
            await tracker.flush()
            return try await admin.device(key).keys.first?.lastUsed
        }
        try await Task.sleep(for: .milliseconds(200))  // the window only: the lock is let go either way
        _ = try await holder.query("COMMIT")
        #expect(try await flushed.value == start + 10)
        try await holder.close()
        try await directory.close()
    }

    @Test(
        "a last use the store refused to write is kept and written again after pauses doubling from 1 s to 30 s, the later use of a key winning, with no further use"
    )
    func lastUseRetried() async throws {
        let (directory, admin, path, _) = try await Self.administration()
        let start = SigningSetup.start
        let first = try await OperatorScaffold.register(directory, device: "dev-1", user: "u", at: start)[0]
        let second = try await OperatorScaffold.register(directory, device: "dev-2", user: "u", at: start)[0]
        let saboteur = try await OperatorScaffold.refusingLastUses(path: path)
        let pauses = Pauses()
        let tracker = KeyUsageTracker(directory: directory, sleep: pauses.sleep)
        tracker.used(first, at: start + 10)
        #expect(try await Pauses.until { pauses.count >= 2 })
        // Uses while the store refuses wait with the rest; a key's later use wins.
        tracker.used(second, at: start + 20)
        tracker.used(first, at: start + 90)
        #expect(try await Pauses.until { pauses.count >= 8 })
        #expect(try await admin.device(first).keys.first?.lastUsed == nil)
        _ = try await saboteur.query("DROP TRIGGER no_use")
        #expect(try await Pauses.until { (try? await admin.device(second).keys.first?.lastUsed) == start + 20 })
        #expect(try await admin.device(first).keys.first?.lastUsed == start + 90)
        // Written: no more retries, and no write was attempted without a pause before it.
        let asked = pauses.asked.withLock { $0 }
        #expect(Array(asked.prefix(8)) == [1, 2, 4, 8, 16, 30, 30, 30].map { Duration.seconds($0) })
        try await Task.sleep(for: .milliseconds(100))
        #expect(pauses.count == asked.count)
        try await saboteur.close()
        try await directory.close()
    }

    @Test("a stopped tracker writes nothing more: a refused batch's retry does not run, a later use is not noted")
    func stoppedTrackerWritesNothing() async throws {
        let (directory, admin, path, _) = try await Self.administration()
        let start = SigningSetup.start
        let key = try await OperatorScaffold.register(directory, device: "dev-1", user: "u", at: start)[0]
        let saboteur = try await OperatorScaffold.refusingLastUses(path: path)
        let pauses = Pauses()
        let tracker = KeyUsageTracker(directory: directory, sleep: pauses.sleep)
        tracker.used(key, at: start + 10)
        #expect(try await Pauses.until { pauses.count >= 2 }, "refused, and retried")
        await tracker.stop()
        let asked = pauses.count
        _ = try await saboteur.query("DROP TRIGGER no_use")
        tracker.used(key, at: start + 200)
        try await Task.sleep(for: .milliseconds(200))  // retries came every 5 ms before the stop
        #expect(pauses.count <= asked + 1, "at most the retry already waiting, which then writes nothing")
        await tracker.flush()  // as a flush on its way when the tracker stopped
        #expect(try await admin.device(key).keys.first?.lastUsed == nil)
        try await saboteur.close()
        try await directory.close()
    }

    @Test(
        "server keys: rotate publishes a next key, promote makes it current, the previous one stays for the overlap; one rotation at a time"
    )
    func serverKeys() async throws {
        let clock = ManualUnixClock(SigningSetup.start)
        let (directory, admin, _, _) = try await Self.administration(clock: clock)
        let ring = try #require(admin.serverKeys)
        let first = try #require(ring.phase(.response)?.current.stored.keyID)
        let next = try await admin.rotate(.response, by: "ops")
        #expect(ring.phase(.response)?.current.stored.keyID == first)
        #expect(ring.phase(.response)?.next.map(\.stored.keyID) == [next])
        await #expect(throws: SigilError(.forbidden, "")) { try await admin.rotate(.response, by: "ops") }
        #expect(try await admin.promote(.response, by: "ops") == next)
        #expect(ring.phase(.response)?.current.stored.keyID == next)
        #expect(ring.phase(.response)?.previous?.stored.keyID == first)
        await #expect(throws: SigilError(.forbidden, "")) { try await admin.promote(.response, by: "ops") }
        clock.advance(by: 601)
        #expect(ring.phase(.response)?.previous == nil)
        #expect(try admin.keys().first { $0.keyID == first }?.state == .retired)
        // Sealing keys follow the same steps; a next key promotes itself when the overlap has passed.
        let sealing = try await admin.rotate(.sealing, by: "ops")
        clock.advance(by: 600)
        #expect(ring.phase(.sealing)?.current.stored.keyID == sealing)
        let trail = try await admin.audit(AuditQuery())
        let rotations = trail.filter { $0.action == .serverKeyRotated }
        #expect(rotations.count == 2)
        // Dated as operators read every time (it said `current at 1796417355`).
        #expect(
            rotations.allSatisfy {
                ($0.reason ?? "").wholeMatch(of: /\w+ key, current from \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ/) != nil
            },
            "\(rotations.map(\.reason))")
        #expect(trail.first { $0.action == .serverKeyPromoted }?.keyID == next)
        try await directory.close()
    }

    @Test("keys are found by JWK thumbprint, and the operators' list shows it")
    func thumbprints() async throws {
        let (directory, _, _, _) = try await Self.administration()
        let key = try await OperatorScaffold.register(directory, device: "dev-1", user: "u", at: SigningSetup.start)[0]
        let thumbprint = try #require(try await directory.key(for: key)?.key.jwkThumbprint)
        #expect(try await directory.key(forThumbprint: thumbprint)?.keyID == key)
        #expect(try await directory.key(forThumbprint: "no-such-thumbprint") == nil)
        let admin = Administration(directory: directory, serverKeys: nil, clock: SystemUnixClock())
        #expect(try await admin.device(key).keys.first?.thumbprint == thumbprint)
        try await directory.close()
    }
}
