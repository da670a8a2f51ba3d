@_spi(Sigil) import SigilCore
import Synchronization

/// Records each key's last verified use without a write per request: a key's use is written at most
/// once per ``interval`` (a minute by default), in batches, off the request's path.
///
/// Set it as ``VerifierConfiguration/usage``; the verifier reports every request it accepts. A
/// failed write is dropped (the next use after the interval writes again): last use is for
/// operators' eyes, never a security decision.
public final class KeyUsageTracker: Sendable {
    let store: any AdministeredDirectory
    /// The least time between two writes of one key's last use, in seconds.
    public let interval: Int64

    /// Keys written in this minute and the one before (two maps swapped once a minute, so memory
    /// stays bounded by the keys active in two minutes, and no request scans them).
    struct State {
        var written: [String: Int64] = [:]
        var writtenBefore: [String: Int64] = [:]
        var minute: Int64 = 0
        var pending: [String: Int64] = [:]
        var flushing = false
    }
    let state = Mutex(State())

    /// Creates a tracker writing to `store`.
    public init(store: any AdministeredDirectory, interval: Int64 = 60) {
        self.store = store
        self.interval = interval
    }

    /// Notes that `keyID` verified a request at `now`; starts a write when the key's last one is
    /// older than ``interval`` and none is under way.
    public func used(_ keyID: String, at now: Int64) {
        let start = state.withLock { state -> Bool in
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
            state.pending[keyID] = now
            guard !state.flushing else { return false }
            state.flushing = true
            return true
        }
        if start { Task { await self.flush() } }
    }

    /// Writes what is pending, until nothing is.
    public func flush() async {
        while true {
            let batch = state.withLock { state -> [String: Int64] in
                let batch = state.pending
                state.pending = [:]
                if batch.isEmpty { state.flushing = false }
                return batch
            }
            guard !batch.isEmpty else { return }
            try? await store.recordUses(batch)
        }
    }
}
