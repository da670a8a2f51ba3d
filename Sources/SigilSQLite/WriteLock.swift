/// One writer at a time, without blocking a thread: SQLite calls run on a small shared thread pool,
/// and a writer waiting for SQLite's lock on a pool thread could starve the writer that holds it.
actor WriteLock {
    private var held = false
    private var waiting: [CheckedContinuation<Void, Never>] = []

    func withLock<Result: Sendable>(_ body: @Sendable () async throws -> Result) async throws -> Result {
        await acquire()
        do {
            let result = try await body()
            release()
            return result
        } catch {
            release()
            throw error
        }
    }

    private func acquire() async {
        guard held else {
            held = true
            return
        }
        await withCheckedContinuation { waiting.append($0) }
    }

    private func release() {
        if waiting.isEmpty {
            held = false
        } else {
            waiting.removeFirst().resume()
        }
    }
}
