import Foundation
import HTTPTypes
import Logging
import PostgresNIO
import ServiceLifecycle
import SigilClient
@_spi(Sigil) import SigilCore
import SigilPostgres
import SigilServer
import Testing

@testable import SigilTestSupport

/// ``PostgresStore`` over an application's own `PostgresClient`, which the application runs.
@Suite("PostgreSQL store over the app's client", .enabled(if: ExternalServers.runPostgres), .externalServers)
struct PostgresAppClientTests {
    static let logger = Logger(label: "app")

    @Test(
        "Sigil's tables beside the app's, a registration and a verification through the app's pool; closing the store gives back its connection and leaves the pool running"
    )
    func appClient() async throws {
        try await PostgresTestServer.with { server in
            let postgres = PostgresClientSteps.client(of: server)
            try await withThrowingDiscardingTaskGroup { group in
                group.addTask { await postgres.run() }
                try await postgres.query("CREATE TABLE app_notes (id INT PRIMARY KEY)", logger: Self.logger)
                try await postgres.query("INSERT INTO app_notes (id) VALUES (1)", logger: Self.logger)

                let store = try await PostgresStore.open(client: postgres, timeout: .seconds(10))
                #expect(!store.ownsClient)
                let clock = ManualUnixClock(SystemUnixClock().now())
                let directory = try Directory.postgres(
                    store: store, masterKey: MasterKey.generate().symmetricKey, clock: clock)
                let nonces = PostgresNonceStore(store: store, clock: clock)

                // A registration, then a verification and its replay, through the app's pool.
                let key = try SigningKey.generate(.ed25519)
                let keyID = try #require(try key.verificationKey.derivedKeyID)
                try await directory.apply(
                    DirectoryChange(
                        added: [RegisteredKey(keyID: keyID, key: try key.verificationKey, deviceID: "dev-app")]))
                var request = HTTPRequest(method: .get, scheme: "https", authority: "api.example", path: "/me")
                try RequestSigner(key: key, keyID: keyID, clock: clock).sign(&request, body: [])
                let verifier = RequestVerifier(keys: directory, nonces: nonces, clock: clock)
                #expect(try await verifier.verify(request, body: []).deviceID == "dev-app")
                #expect(await verifier.failure(request, body: []) == .replayedNonce)

                // The directory listens on one of the pool's connections until the store closes.
                #expect(try await Self.listening(postgres, until: 1) == 1)
                store.close()
                #expect(store.isClosed)
                await #expect(throws: SigilError(.storeUnavailable, "")) {
                    _ = try await directory.key(for: "a-key-not-cached")
                }
                await #expect(throws: SigilError(.storeUnavailable, "")) {
                    _ = try await nonces.insert(
                        keyID: keyID, nonce: "after-close", timestamp: clock.now(), expiresAt: clock.now() + 300,
                        now: clock.now())
                }
                #expect(try await Self.listening(postgres, until: 0) == 0)

                // The app's pool runs on, with the app's rows and Sigil's beside them.
                let notes = try await postgres.query("SELECT count(*) FROM app_notes", logger: Self.logger)
                    .collect().map { try $0.decode(Int.self) }
                #expect(notes == [1])
                let keys = try await postgres.query("SELECT key_id FROM sigil_keys", logger: Self.logger)
                    .collect().map { try $0.decode(String.self) }
                #expect(keys == [keyID])
                group.cancelAll()
            }
        }
    }

    @Test(
        "PostgresStore.service(client:) in a service group with the app's client: built before anything runs, the schema made when the group starts, a registration and a verification after"
    )
    func serviceGroup() async throws {
        try await PostgresTestServer.with { server in
            let postgres = PostgresClientSteps.client(of: server)
            // Everything built first, as an application is, with nothing running yet.
            let store = PostgresStore.service(client: postgres, timeout: .seconds(10))
            let clock = ManualUnixClock(SystemUnixClock().now())
            let directory = try Directory.postgres(
                store: store, masterKey: MasterKey.generate().symmetricKey, clock: clock)
            let group = ServiceGroup(
                services: [postgres, store], gracefulShutdownSignals: [], logger: Self.logger)
            try await withThrowingDiscardingTaskGroup { tasks in
                tasks.addTask { try await group.run() }
                let (key, keyID) = try await PostgresClientSteps.deviceOnceReady(in: directory, deviceID: "dev-group")
                var request = HTTPRequest(method: .get, scheme: "https", authority: "api.example", path: "/me")
                try RequestSigner(key: key, keyID: keyID, clock: clock).sign(&request, body: [])
                let verifier = RequestVerifier(
                    keys: directory, nonces: PostgresNonceStore(store: store, clock: clock), clock: clock)
                #expect(try await verifier.verify(request, body: []).deviceID == "dev-group")
                await group.triggerGracefulShutdown()
            }
            #expect(store.isClosed)
        }
    }

    /// How many backends are listening (their last statement a `LISTEN`, with no `UNLISTEN` since),
    /// read again until it is `expected` or 10 s have passed.
    static func listening(_ client: PostgresClient, until expected: Int) async throws -> Int {
        let started = ContinuousClock.now
        while true {
            let count =
                try await client.query(
                    "SELECT count(*) FROM pg_stat_activity WHERE query ILIKE 'LISTEN%' AND pid <> pg_backend_pid()",
                    logger: logger
                ).collect().map { try $0.decode(Int.self) }.first ?? 0
            if count == expected || ContinuousClock.now - started > .seconds(10) { return count }
            try await Task.sleep(for: .milliseconds(20))
        }
    }
}
