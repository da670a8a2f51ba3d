import ServiceLifecycle

extension SQLiteDirectoryBackend: Service {
    /// Waits for the service group's graceful shutdown (or cancellation, when another service failed),
    /// then closes the file: put the stores before the application in a `ServiceGroup`, so they close
    /// after it has stopped.
    public func run() async throws {
        try? await gracefulShutdown()
        try await closeEvenIfCancelled { try await self.close() }
    }
}

extension SQLiteNonceStore: Service {
    /// Waits for the service group's graceful shutdown (or cancellation), then closes the file; see
    /// ``SQLiteDirectoryBackend/run()``.
    public func run() async throws {
        try? await gracefulShutdown()
        try await closeEvenIfCancelled { try await self.close() }
    }
}

/// Runs `close` to its end even when the calling task is cancelled (a group stopping on another
/// service's error cancels its tasks, and a cancelled close may give up before closing anything).
func closeEvenIfCancelled(_ close: @escaping @Sendable () async throws -> Void) async throws {
    try await Task { try await close() }.value
}
