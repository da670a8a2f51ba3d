import Foundation
import Synchronization

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

extension WriteLock {
    /// The lock of the SQLite file at `path` in this process, shared by every store open on it.
    ///
    /// A key directory and a nonce store on one file each write through their own connection. Were
    /// their locks apart, one store's write would wait for SQLite's lock inside `busy_timeout` on a
    /// pool thread while the other's transaction, holding that lock, waits for a pool thread to commit:
    /// with a pool of two threads, two such waits stall every store of the process until the timeout
    /// ends them in `store-unavailable`. One lock per file turns that wait into a suspension.
    static func forFile(_ path: String) -> WriteLock {
        let name = canonicalPath(path)
        return fileLocks.withLock { locks in
            if let lock = locks[name]?.lock { return lock }
            locks = locks.filter { $0.value.lock != nil }
            let lock = WriteLock()
            locks[name] = WeakWriteLock(lock: lock)
            return lock
        }
    }

    /// `path` with its links resolved, so two names of one file share a lock; `path` itself when it
    /// cannot be resolved.
    private static func canonicalPath(_ path: String) -> String {
        guard let resolved = realpath(path, nil) else { return path }
        defer { free(resolved) }
        return String(cString: resolved)
    }
}

private struct WeakWriteLock: Sendable {
    weak var lock: WriteLock?
}

private let fileLocks = Mutex<[String: WeakWriteLock]>([:])
