import Crypto
import Foundation
import Logging
@_spi(Sigil) import SigilCore
import SigilPostgres
import SigilRedis
import SigilServer
import Synchronization
import Testing

@testable import SigilTestSupport

/// The nonce stores replicas share, against real PostgreSQL and Redis servers on loopback.
@Suite("Shared nonce stores", .externalServers)
struct SharedStoreTests {
    enum Kind: String, CaseIterable, CustomStringConvertible, Sendable {
        case postgres, redis
        var description: String { rawValue }
        /// The kinds whose server is here (all of them under CI, where a missing one fails).
        static var available: [Kind] {
            allCases.filter { $0 == .postgres ? ExternalServers.runPostgres : ExternalServers.runRedis }
        }
    }

    /// A server of `kind`, a way to make stores on it (as replicas do), and the server to stop and resume.
    struct Setup: Sendable {
        let makeStore: @Sendable () async throws -> any NonceStore
        let stop: @Sendable () async -> Void
        let resume: @Sendable () async throws -> Void
        /// Freezes the server (`SIGSTOP`) or thaws it: connections stay open, nothing answers.
        let freeze: @Sendable (Bool) -> Void
    }

    /// Stores get `timeout`: long by default, since the whole suite shares two cores with the servers.
    static func with(_ kind: Kind, timeout: Duration = .seconds(10), _ body: (Setup) async throws -> Void)
        async throws
    {
        switch kind {
        case .postgres:
            try await PostgresTestServer.with { server in
                let location = try PostgresStore.Location(url: server.url)
                let opened = Mutex<[PostgresStore]>([])
                let setup = Setup(
                    makeStore: {
                        let store = try await PostgresStore.open(location, timeout: timeout)
                        opened.withLock { $0.append(store) }
                        return PostgresNonceStore(store: store)
                    },
                    stop: { await server.stop() },
                    resume: { try await server.resume() },
                    freeze: { server.freeze($0) })
                defer { for store in opened.withLock({ $0 }) { store.close() } }
                try await body(setup)
            }
        case .redis:
            try await RedisTestServer.with { server in
                let location = try RedisClient.Location(url: server.url)
                let setup = Setup(
                    makeStore: {
                        // Started before the requests are dated, as a server is.
                        let store = try RedisNonceStore(
                            location, timeout: timeout, clock: ManualUnixClock(Self.now - 10))
                        try await store.connect()
                        return store
                    },
                    stop: { await server.stop() },
                    resume: { try await server.resume() },
                    freeze: { server.freeze($0) })
                try await body(setup)
            }
        }
    }

    /// Whether `store` records a fresh nonce again within 10 s (the server is back).
    static func recovers(_ store: any NonceStore, nonces prefix: String) async throws -> Bool {
        for attempt in 0..<100 {
            let recorded = try? await store.insert(
                keyID: "k", nonce: "\(prefix)-\(10_000 + attempt)", timestamp: now, expiresAt: now + 360, now: now)
            if recorded == true { return true }
            try await Task.sleep(for: .milliseconds(100))
        }
        return false
    }

    /// What `attempt` answers, asked again every 100 ms (at most 100 times) while it throws: a store
    /// that has come back on one connection may still refuse on another that waits out its backoff.
    static func answered<Answer>(_ attempt: () async throws -> Answer) async throws -> Answer? {
        for _ in 0..<100 {
            if let answer = try? await attempt() { return answer }
            try await Task.sleep(for: .milliseconds(100))
        }
        return nil
    }

    /// Redis expires keys by its own clock: the tests use the real time.
    static let now = Int64(Date().timeIntervalSince1970)

    @Test(
        "a nonce is accepted once, across replicas and concurrent attempts; again once it has expired",
        arguments: Kind.available)
    func onceAcrossReplicas(_ kind: Kind) async throws {
        try await Self.with(kind) { setup in
            let replicas = [try await setup.makeStore(), try await setup.makeStore(), try await setup.makeStore()]
            let expires = Self.now + 360
            #expect(
                try await replicas[0].insert(
                    keyID: "k1", nonce: "nonce-0000000000001", timestamp: Self.now, expiresAt: expires,
                    now: Self.now))
            #expect(
                try await !replicas[1].insert(
                    keyID: "k1", nonce: "nonce-0000000000001", timestamp: Self.now, expiresAt: expires,
                    now: Self.now))
            #expect(
                try await replicas[2].insert(
                    keyID: "k2", nonce: "nonce-0000000000001", timestamp: Self.now, expiresAt: expires,
                    now: Self.now))

            // 200 nonces, each tried by all three replicas at once: each accepted exactly once.
            let accepted = try await withThrowingTaskGroup(of: Bool.self) { group in
                for index in 0..<200 {
                    for replica in replicas {
                        group.addTask {
                            try await replica.insert(
                                keyID: "k1", nonce: "race-nonce-\(1_000_000 + index)", timestamp: Self.now,
                                expiresAt: expires, now: Self.now)
                        }
                    }
                }
                return try await group.reduce(0) { $0 + ($1 ? 1 : 0) }
            }
            #expect(accepted == 200)
            if kind == .postgres {
                // An expired row no longer blocks its pair (Redis drops it by itself at EXAT).
                #expect(
                    try await replicas[0].insert(
                        keyID: "k3", nonce: "nonce-0000000000009", timestamp: Self.now, expiresAt: Self.now + 1,
                        now: Self.now))
                #expect(
                    try await replicas[1].insert(
                        keyID: "k3", nonce: "nonce-0000000000009", timestamp: Self.now, expiresAt: Self.now + 400,
                        now: Self.now + 2))
            }
        }
    }

    @Test(
        "a store that is down refuses (store-unavailable) within its deadline, then serves again by itself",
        arguments: Kind.available)
    func outageAndRecovery(_ kind: Kind) async throws {
        try await Self.with(kind, timeout: .seconds(3)) { setup in
            let store = try await setup.makeStore()
            #expect(
                try await store.insert(
                    keyID: "k", nonce: "before-outage-0001", timestamp: Self.now, expiresAt: Self.now + 360,
                    now: Self.now))
            await setup.stop()
            for index in 0..<5 {
                let started = ContinuousClock.now
                await #expect(throws: SigilError(.storeUnavailable, "")) {
                    _ = try await store.insert(
                        keyID: "k", nonce: "during-outage-000\(index)", timestamp: Self.now,
                        expiresAt: Self.now + 360,
                        now: Self.now)
                }
                #expect(ContinuousClock.now - started < .seconds(5))
            }
            try await setup.resume()
            #expect(try await Self.recovers(store, nonces: "after-outage"))
            // What was recorded before the outage is still there: no replay window reopened.
            let again = try await Self.answered {
                try await store.insert(
                    keyID: "k", nonce: "before-outage-0001", timestamp: Self.now, expiresAt: Self.now + 360,
                    now: Self.now)
            }
            #expect(again == false)
        }
    }

    @Test(
        "PostgreSQL: an insert whose preparation failed (a lock held past lock_timeout) serves again once the lock is gone",
        .enabled(if: ExternalServers.runPostgres))
    func failedPreparationRecovers() async throws {
        try await PostgresTestServer.with { server in
            let location = try PostgresStore.Location(url: server.url)
            // One connection, so the failed preparation and the later inserts share it.
            let store = try await PostgresStore.open(location, timeout: .seconds(10), connections: 1)
            let locker = try await PostgresStore.open(location, timeout: .seconds(10), connections: 1)
            defer {
                store.close()
                locker.close()
            }
            try await store.client.query("SET lock_timeout = '200ms'")
            let nonces = PostgresNonceStore(store: store)
            try await locker.whileLocked("LOCK TABLE sigil_nonces IN ACCESS EXCLUSIVE MODE") {
                await #expect(throws: SigilError(.storeUnavailable, "")) {
                    _ = try await nonces.insert(
                        keyID: "k", nonce: "while-locked-00001", timestamp: Self.now, expiresAt: Self.now + 360,
                        now: Self.now)
                }
            }
            #expect(
                try await nonces.insert(
                    keyID: "k", nonce: "after-lock-000001", timestamp: Self.now, expiresAt: Self.now + 360,
                    now: Self.now))
            #expect(
                try await !nonces.insert(
                    keyID: "k", nonce: "after-lock-000001", timestamp: Self.now, expiresAt: Self.now + 360,
                    now: Self.now))
        }
    }

    @Test(
        "a store that stops answering is refused within its deadline, not waited on; then serves again",
        arguments: Kind.available)
    func stalledStore(_ kind: Kind) async throws {
        try await Self.with(kind, timeout: .seconds(1)) { setup in
            // The 1 s deadline is what is tested; on a busy machine a call before the stall may pass it,
            // so those are tried again until one answers (an answer of "recorded already" means an
            // attempt that timed out did record it: either way it is in the store).
            let made = try await Self.answered { try await setup.makeStore() }
            let store = try #require(made, "the store never answered before the stall")
            let recorded = try await Self.answered {
                try await store.insert(
                    keyID: "k", nonce: "before-stall-0001", timestamp: Self.now, expiresAt: Self.now + 360,
                    now: Self.now)
            }
            #expect(recorded != nil, "the store never answered before the stall")
            setup.freeze(true)
            // Several at once, as requests would come: each is refused, none waits for the server.
            let outcomes = try await withThrowingTaskGroup(of: (SigilError.Code?, Duration).self) { group in
                for index in 0..<8 {
                    group.addTask {
                        let started = ContinuousClock.now
                        do {
                            _ = try await store.insert(
                                keyID: "k", nonce: "during-stall-\(1000 + index)", timestamp: Self.now,
                                expiresAt: Self.now + 360, now: Self.now)
                            return (nil, ContinuousClock.now - started)
                        } catch let error as SigilError {
                            return (error.code, ContinuousClock.now - started)
                        }
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            setup.freeze(false)
            #expect(outcomes.allSatisfy { $0.0 == .storeUnavailable })
            #expect(outcomes.allSatisfy { $0.1 < .seconds(4) })
            #expect(try await Self.recovers(store, nonces: "after-stall"))
            let again = try await Self.answered {
                try await store.insert(
                    keyID: "k", nonce: "before-stall-0001", timestamp: Self.now, expiresAt: Self.now + 360,
                    now: Self.now)
            }
            #expect(again == false, "the nonce recorded before the stall is remembered after it")
        }
    }

    @Test(
        "a Redis run as managed services do (CONFIG disabled) is read through INFO: an evicting one is refused",
        .enabled(if: ExternalServers.runRedis), arguments: ["allkeys-lru", "noeviction"])
    func redisEvictionWithoutConfig(_ policy: String) async throws {
        let managed = ["--rename-command", "CONFIG", "", "--maxmemory", "64mb", "--maxmemory-policy", policy]
        try await RedisTestServer.with(persistent: false, arguments: managed) { server in
            let store = try RedisNonceStore(
                try RedisClient.Location(url: server.url), timeout: .seconds(10),
                clock: ManualUnixClock(Self.now - 10))
            defer { store.client.close() }
            // CONFIG is refused here: the policy must come from INFO memory.
            let plain = try RedisClient(try RedisClient.Location(url: server.url), timeout: .seconds(10))
            defer { plain.close() }
            let config = try await plain.send(["CONFIG", "GET", "maxmemory-policy"])
            guard case .error = config else {
                Issue.record("CONFIG answered \(config)")
                return
            }
            if policy == "noeviction" {
                try await store.connect()
                #expect(
                    try await store.insert(
                        keyID: "k", nonce: "managed-nonce-0001", timestamp: Self.now, expiresAt: Self.now + 360,
                        now: Self.now))
            } else {
                await #expect(throws: SigilError(.storeUnavailable, "")) { try await store.connect() }
                await #expect(throws: SigilError(.storeUnavailable, "")) {
                    try await store.insert(
                        keyID: "k", nonce: "managed-nonce-0002", timestamp: Self.now, expiresAt: Self.now + 360,
                        now: Self.now)
                }
            }
        }
    }

    @Test("a cleartext redis:// off loopback is refused unless the link is said to be trusted")
    func redisCleartextOffLoopback() throws {
        for offLoopback in ["redis://10.1.2.3:6379", "redis://127.evil.example:6379", "redis://127.0.0.1.nip.io"] {
            #expect(throws: SigilInputError.self, "\(offLoopback)") {
                _ = try RedisClient(try RedisClient.Location(url: offLoopback))
            }
        }
        var trusted = try RedisClient.Location(url: "redis://10.1.2.3:6379")
        trusted.trustsCleartextLink = true
        try RedisClient(trusted).close()
        try RedisClient(try RedisClient.Location(url: "rediss://10.1.2.3:6379")).close()
        try RedisClient(try RedisClient.Location(url: "redis://localhost:6379")).close()
    }

    @Test(
        "a Redis that lost its data is noticed: requests dated before that moment are refused by time",
        .enabled(if: ExternalServers.runRedis))
    func redisDataLoss() async throws {
        try await RedisTestServer.with(persistent: false) { server in
            let clock = ManualUnixClock(Self.now - 10)
            let store = try RedisNonceStore(
                try RedisClient.Location(url: server.url), timeout: .seconds(10), clock: clock)
            // A store found without a marker remembers nothing from before this process started.
            try await store.connect()
            #expect(store.oldestAcceptableTimestamp == Self.now - 9)
            clock.advance(by: 10)
            #expect(
                try await store.insert(
                    keyID: "k", nonce: "lost-nonce-000001", timestamp: Self.now, expiresAt: Self.now + 360,
                    now: Self.now))
            await server.stop()
            try await server.resume(persistent: false)
            clock.advance(by: 5)
            // The request whose connection finds the data lost is refused with the rest of its time.
            var refusedByTime = false
            for attempt in 0..<100 where !refusedByTime {
                switch await store.record(
                    keyID: "k", nonce: "new-nonce-\(100_000 + attempt)", timestamp: Self.now + 5,
                    expiresAt: Self.now + 365, now: Self.now + 5)
                {
                case .beforeHorizon(let oldest):
                    // What a verifier answers: timestamp-out-of-window, not store-unavailable.
                    #expect(oldest == Self.now + 6)
                    #expect(
                        NonceOutcome.beforeHorizon(oldest: oldest).refusal(keyID: "k")?.code
                            == .timestampOutOfWindow)
                    refusedByTime = true
                case .recorded, .replayed:
                    Issue.record("a request dated before the loss was accepted")
                    return
                case .unavailable:
                    try await Task.sleep(for: .milliseconds(100))
                }
            }
            #expect(refusedByTime)
            #expect(store.oldestAcceptableTimestamp == Self.now + 6)
            #expect(
                try await store.insert(
                    keyID: "k", nonce: "after-loss-000001", timestamp: Self.now + 6, expiresAt: Self.now + 366,
                    now: Self.now + 6))
        }
    }
}

extension PostgresStore {
    /// Runs `body` while a transaction on this store holds `lock` (a `LOCK TABLE …` statement), then
    /// ends that transaction.
    func whileLocked(_ lock: String, _ body: () async throws -> Void) async throws {
        let (locked, lockedSignal) = AsyncStream.makeStream(of: Void.self)
        let (release, releaseSignal) = AsyncStream.makeStream(of: Void.self)
        let holder = Task {
            try await client.withTransaction(logger: Logger(label: "test.locker")) { connection in
                // Awaited to its result, so the lock is held before the body runs: `query(String)` returns a
                // future, and `try await` on the call alone sent the LOCK without waiting for it.
                _ = try await connection.query(lock).get()
                lockedSignal.yield()
                for await _ in release { break }
            }
        }
        for await _ in locked { break }
        var failure: (any Error)?
        do { try await body() } catch { failure = error }
        releaseSignal.yield()
        try await holder.value
        if let failure { throw failure }
    }
}
