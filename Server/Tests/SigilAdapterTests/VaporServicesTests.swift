import Foundation
import HTTPTypes
import PostgresNIO
@_spi(Sigil) import SigilCore
import SigilPostgres
import SigilServer
import SigilVapor
import Testing
import Vapor
import VaporTesting

@testable import SigilTestSupport

/// ``PostgresStore`` in a Vapor application's lifecycle: the app's `PostgresClient` and the store
/// run from boot to shutdown (``SigilServices``).
@Suite("PostgreSQL store in Vapor's lifecycle", .enabled(if: ExternalServers.runPostgres), .externalServers)
struct VaporServicesTests {
    @Test(
        "the app's client and the store start as the app boots, the schema is made, and both stop at its shutdown")
    func lifecycle() async throws {
        try await PostgresTestServer.with { server in
            let postgres = PostgresClientSteps.client(of: server)
            let store = PostgresStore.service(client: postgres, timeout: .seconds(10))
            let clock = ManualUnixClock(SystemUnixClock().now())
            let directory = try Directory.postgres(
                store: store, masterKey: MasterKey.generate().symmetricKey, clock: clock)
            try await withApp { app in
                app.lifecycle.use(SigilServices([postgres, store], logger: app.logger))
                try await app.asyncBoot()
                let (_, keyID) = try await PostgresClientSteps.deviceOnceReady(
                    in: directory, deviceID: "dev-vapor")
                #expect(try await directory.key(for: keyID)?.deviceID == "dev-vapor")
            }
            #expect(store.isClosed)
        }
    }
}
