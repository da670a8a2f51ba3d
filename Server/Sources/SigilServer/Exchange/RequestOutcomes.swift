import Metrics
@_spi(Sigil) import SigilCore
import Synchronization

/// What became of each request the exchange was asked to admit, by route and outcome: the counter
/// `sigil_requests_total{route, outcome}` and, for the operators' console, the same counts per minute
/// over the last 24 hours, in memory (per replica).
///
/// `route` is the monitored prefix (``Exchange/monitor``) the request fell under, or `other`;
/// `outcome` is `verified` or the PROTOCOL.md code the request was (or, monitored, would have been)
/// refused with. Both sets are bounded, so the labels are.
public final class RequestOutcomes: Sendable {
    /// One minute's counts.
    public struct Minute: Sendable, Hashable {
        /// Unix minutes (seconds / 60).
        public let minute: Int64
        /// Requests by route, then outcome.
        public let counts: [String: [String: Int]]
    }

    /// The outcome of a request that was admitted verified.
    public static let verified = "verified"
    /// The route of a request under no monitored prefix.
    public static let other = "other"
    static let label = "sigil_requests_total"
    /// Minutes kept: 24 hours.
    static let kept = 24 * 60

    struct State {
        var counters: [Key: Counter] = [:]
        /// The counts of each minute of the last day, by Unix minute.
        var minutes: [Int64: [Key: Int]] = [:]
    }

    struct Key: Hashable {
        let route: String
        let outcome: String
    }

    let clock: any UnixClock
    let factory: any MetricsFactory
    let state = Mutex(State())

    /// Creates the counts; the counters go to `factory`.
    public init(clock: any UnixClock = SystemUnixClock(), metricsFactory: any MetricsFactory = MetricsSystem.factory) {
        self.clock = clock
        self.factory = metricsFactory
    }

    /// Counts one request under `route` (a monitored prefix, or `nil` for ``other``) with `outcome`
    /// (`nil` for ``verified``).
    public func record(route: String?, outcome: SigilError.Code?) {
        let key = Key(route: route ?? Self.other, outcome: outcome?.rawValue ?? Self.verified)
        let minute = clock.now() / 60
        let counter = state.withLock { state -> Counter in
            state.record(key, minute: minute)
            if let counter = state.counters[key] { return counter }
            let counter = Counter(
                label: Self.label, dimensions: [("route", key.route), ("outcome", key.outcome)], factory: factory)
            state.counters[key] = counter
            return counter
        }
        counter.increment()
    }

    /// The counts of the last `minutes` minutes (at most 24 hours), oldest first; minutes with no
    /// request are left out.
    public func recent(minutes: Int) -> [Minute] {
        let now = clock.now() / 60
        let first = now - Int64(min(max(minutes, 1), Self.kept)) + 1
        return state.withLock { state in
            state.minutes.keys.filter { $0 >= first && $0 <= now }.sorted().map { minute in
                var counts: [String: [String: Int]] = [:]
                for (key, count) in state.minutes[minute] ?? [:] {
                    counts[key.route, default: [:]][key.outcome] = count
                }
                return Minute(minute: minute, counts: counts)
            }
        }
    }
}

extension RequestOutcomes.State {
    /// Adds one to `key` in `minute`, forgetting minutes older than a day.
    mutating func record(_ key: RequestOutcomes.Key, minute: Int64) {
        if minutes[minute] == nil {
            minutes = minutes.filter { $0.key > minute - Int64(RequestOutcomes.kept) }
        }
        minutes[minute, default: [:]][key, default: 0] += 1
    }
}
