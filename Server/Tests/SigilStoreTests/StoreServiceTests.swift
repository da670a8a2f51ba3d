import Foundation
import Logging
import ServiceLifecycle
@_spi(Sigil) import SigilCore
import SigilServer
import SigilStandalone
import Testing

@testable import SigilTestSupport

@Suite("Stores as services")
struct StoreServiceTests {
    /// A service that fails at once, as an application whose port is taken does.
    struct Failing: Service {
        struct Failure: Error {}
        func run() async throws { throw Failure() }
    }

    @Test("the stores close when the group stops on another service's error, and closing twice is harmless")
    func storesCloseWhenTheGroupFails() async throws {
        var options = SigilStandalone.Options()
        options.dataDirectory = TestServer.temporaryDirectory()
        options.host = "127.0.0.1"
        options.port = 0
        options.enrollToken = TestServer.token
        var logger = Logger(label: "sigil.test")
        logger.logLevel = .critical
        let prepared = try await SigilStandalone.prepare(options, logger: logger)
        #expect(try await prepared.directory.key(for: "nobody") == nil)
        let group = ServiceGroup(
            services: prepared.stores.services + [Failing()], gracefulShutdownSignals: [], logger: logger)
        await #expect(throws: Failing.Failure.self) { try await group.run() }
        // Closed: the directory no longer reads its file.
        await #expect(throws: (any Error).self) { _ = try await prepared.directory.key(for: "somebody-else") }
        try await prepared.close()
    }
}
