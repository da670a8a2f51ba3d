@_spi(Sigil) import SigilCore
import Synchronization

/// Records each key's last verified use without a write per request: a key's use is written at most
/// once per ``interval`` (a minute by default), in batches, off the request's path.
///
/// Set it as ``VerifierConfiguration/usage``; the verifier reports every request it accepts. A
/// batch the store fails to write is kept, merged with later uses (the later time of a key wins),
/// and written again after a pause that doubles from ``retryDelays`` `first` to its `most` while
/// the store keeps failing (one write at a time, never a loop without a pause). A request never
/// waits for any of it. What is kept is one time per key used since the last write, so it stays
/// bounded by the keys in use. Last use is for operators' eyes, never a security decision; but a
/// key used once, while the store was down, does not read "never" once it is back.
public final class KeyUsageTracker: Sendable {
    let directory: Directory
    /// The least time between two writes of one key's last use, in seconds.
    public let interval: Int64
    /// The pause before writing again a batch the store refused (`first`), doubled after each
    /// failure in a row up to `most`.
    public let retryDelays: (first: Duration, most: Duration)
    let sleep: @Sendable (Duration) async throws -> Void

    /// Keys written in this minute and the one before (two maps swapped once a minute, so memory
    /// stays bounded by the keys active in two minutes, and no request scans them).
    struct State {
        var written: [String: Int64] = [:]
        var writtenBefore: [String: Int64] = [:]
        var minute: Int64 = 0
        var pending: [String: Int64] = [:]
        /// A flush runs, or waits to retry: `used` starts none.
        var flushing = false
        /// Failed writes in a row (the next pause doubles with each).
        var failures = 0
        /// A retry waits to run.
        var retryScheduled = false
        /// A batch is being written: one write at a time.
        var writing = false
        /// Callers of ``flush()`` waiting for the write under way to end.
        var waiters: [CheckedContinuation<Void, Never>] = []
        /// ``stop()`` was called: no write starts any more.
        var stopped = false
    }
    let state = Mutex(State())

    /// Creates a tracker writing to `store`.
    ///
    /// - Parameters:
    ///   - retryDelays: the pause before the first retry of a failed write, and the most it grows to
    ///     (each at least a millisecond, and `most` at least `first`: a retry never spins).
    ///   - sleep: waits a pause (tests pass a clock of their own).
    public init(
        directory: Directory, interval: Int64 = 60,
        retryDelays: (first: Duration, most: Duration) = (.seconds(1), .seconds(30)),
        sleep: @escaping @Sendable (Duration) async throws -> Void = { try await Task.sleep(for: $0) }
    ) {
        self.directory = directory
        self.interval = interval
        let first = max(retryDelays.first, .milliseconds(1))
        self.retryDelays = (first, max(retryDelays.most, first))
        self.sleep = sleep
    }

    /// Notes that `keyID` verified a request at `now`; starts a write when the key's last one is
    /// older than ``interval`` and none is under way (or waiting to retry).
    public func used(_ keyID: String, at now: Int64) {
        let start = state.withLock { state -> Bool in
            guard !state.stopped else { return false }
            let minute = now / interval
            if minute != state.minute {
                state.writtenBefore = minute == state.minute + 1 ? state.written : [:]
                state.written = [:]
                state.minute = minute
            }
            if let written = state.written[keyID] ?? state.writtenBefore[keyID], now >= written,
                now - written < interval
            {
                return false
            }
            state.written[keyID] = now
            state.pending[keyID] = max(state.pending[keyID] ?? now, now)
            guard !state.flushing else { return false }
            state.flushing = true
            return true
        }
        if start { Task { await self.flush() } }
    }

    /// Writes what is pending, until nothing is, one write at a time: a write under way (begun by a
    /// use, or by a retry) is waited for, so what was noted before the call is written, or has failed
    /// and waits for its retry, when this returns. A batch the store refuses goes back to pending, and
    /// a retry is scheduled after the pause (``retryDelays``); this call returns then. After ``stop()``
    /// it writes nothing.
    public func flush() async { await flush(final: false) }

    /// ``flush()``; after ``stop()`` only the stop's own (`final`) writes anything.
    private func flush(final: Bool) async {
        while true {
            let batch = await nextBatch(final: final)
            guard let batch else { continue }
            guard !batch.isEmpty else { return }
            let written: Bool
            do {
                try await directory.recordUses(batch)
                written = true
            } catch {
                written = false
            }
            let (delay, waiters) = state.withLock { state -> (Duration?, [CheckedContinuation<Void, Never>]) in
                state.writing = false
                let waiters = state.waiters
                state.waiters = []
                guard !written else {
                    state.failures = 0
                    return (nil, waiters)
                }
                // Back with what came since, the later time of each key kept.
                state.pending.merge(batch) { max($0, $1) }
                state.failures += 1
                guard !state.retryScheduled, !state.stopped else { return (nil, waiters) }
                state.retryScheduled = true
                return (retryDelay(after: state.failures), waiters)
            }
            for waiter in waiters { waiter.resume() }
            guard written else {
                if let delay { scheduleRetry(after: delay) }
                return
            }
        }
    }

    /// Writes what is pending once (``flush()``), and starts no write any more: no use is noted, no
    /// retry runs and no flush writes after this returns, so nothing reaches a store that closes next.
    /// A server calls it once its application has stopped, before its stores close. It is final for
    /// every verifier holding this tracker: give each server its own (`sigil serve` does).
    public func stop() async {
        // Stopped first: a retry that wakes from now on writes nothing; this flush waits for one
        // already writing, then tries what is pending once.
        state.withLock { $0.stopped = true }
        await flush(final: true)
    }

    /// What to write next: the pending uses, taken (empty when there are none); or nil once a write
    /// under way has ended, which this waited for (look again then).
    private func nextBatch(final: Bool) async -> [String: Int64]? {
        let taken = state.withLock { state -> [String: Int64]? in
            guard !state.writing else { return nil }
            // A flush on its way when the tracker stopped (begun by a use, or a retry) writes nothing.
            guard final || !state.stopped else { return [:] }
            let batch = state.pending
            state.pending = [:]
            if batch.isEmpty {
                if !state.retryScheduled { state.flushing = false }
            } else {
                state.writing = true
            }
            return batch
        }
        if let taken { return taken }
        await withCheckedContinuation { (waiter: CheckedContinuation<Void, Never>) in
            let wait = state.withLock { state -> Bool in
                guard state.writing else { return false }
                state.waiters.append(waiter)
                return true
            }
            if !wait { waiter.resume() }
        }
        return nil
    }

    /// The pause after `failures` failed writes in a row: ``retryDelays`` `first`, doubled for each
    /// failure after the first, at most `most`.
    func retryDelay(after failures: Int) -> Duration {
        var delay = retryDelays.first
        for _ in 1..<max(failures, 1) {
            guard delay < retryDelays.most else { break }
            delay *= 2
        }
        return min(delay, retryDelays.most)
    }

    /// Writes again after `delay`, off any request. Holds the tracker weakly while it waits: a
    /// tracker let go of stops retrying.
    func scheduleRetry(after delay: Duration) {
        let sleep = self.sleep
        Task { [weak self] in
            try? await sleep(delay)
            guard let self else { return }
            let stopped = self.state.withLock { state -> Bool in
                state.retryScheduled = false
                return state.stopped
            }
            guard !stopped else { return }
            await self.flush()
        }
    }
}
