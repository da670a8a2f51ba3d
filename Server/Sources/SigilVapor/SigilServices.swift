import Logging
import ServiceLifecycle
import Synchronization
import Vapor

/// Runs services for the life of a Vapor application, as a Hummingbird application runs its own: an
/// app's `PostgresClient` and Sigil's `PostgresStore.service(client:)`, say. They start as the
/// application boots (the store then makes or migrates its schema), and stop gracefully, in one
/// service group, when it shuts down.
///
/// ```swift
/// let postgres = PostgresClient(configuration: configuration)
/// let store = PostgresStore.service(client: postgres)
/// app.lifecycle.use(SigilServices([postgres, store], logger: app.logger))
/// let directory = try Directory.postgres(store: store, masterKey: masterKey.symmetricKey)
/// ```
public final class SigilServices: LifecycleHandler {
    let group: ServiceGroup
    let running = Mutex<Task<Void, any Error>?>(nil)

    /// The services, run in one group in the order given (a store after the client it uses).
    public init(_ services: [any Service], logger: Logger) {
        group = ServiceGroup(services: services, gracefulShutdownSignals: [], logger: logger)
    }

    public func willBoot(_ application: Application) throws { start() }

    public func willBootAsync(_ application: Application) async throws { start() }

    public func shutdown(_ application: Application) {
        let group = self.group
        Task { await group.triggerGracefulShutdown() }
    }

    public func shutdownAsync(_ application: Application) async {
        await group.triggerGracefulShutdown()
        _ = try? await running.withLock { $0 }?.value
    }

    func start() {
        running.withLock { running in
            guard running == nil else { return }
            let group = self.group
            running = Task { try await group.run() }
        }
    }
}
