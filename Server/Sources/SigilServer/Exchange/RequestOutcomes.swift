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
    /// The monitored prefixes, as configured: the routes counted besides ``other``.
    public let monitored: [String]

    /// Creates the counts of a server monitoring `monitored` (``Exchange/monitor``); the counters go to
    /// `factory`.
    public init(
        clock: any UnixClock = SystemUnixClock(), metricsFactory: any MetricsFactory = MetricsSystem.factory,
        monitored: [String] = []
    ) {
        self.clock = clock
        self.factory = metricsFactory
        self.monitored = monitored
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

extension RequestOutcomes {
    /// The console's view of a window: each route (the monitored prefixes, then ``other``, enforced)
    /// with its totals by outcome and its counts in equal steps, oldest first, every step present.
    public struct Rollout: Sendable, Codable, Hashable {
        /// One route's counts.
        public struct Route: Sendable, Codable, Hashable {
            /// The monitored prefix, or `other`.
            public var route: String
            /// `monitor` for a monitored prefix, `enforce` for ``other``.
            public var mode: String
            /// Requests by outcome over the window.
            public var totals: [String: Int]
            /// Requests by outcome in each step (``Rollout/step`` seconds from ``Rollout/start``).
            public var steps: [[String: Int]]
        }

        /// The server's time (Unix seconds).
        public var serverTime: Int64
        /// The first step's start (Unix seconds).
        public var start: Int64
        /// Each step's length in seconds.
        public var step: Int64
        /// The routes.
        public var routes: [Route]
    }

    /// The last hour in one-minute steps (`day` false), or the last day in fifteen-minute steps.
    public func rollout(day: Bool) -> Rollout {
        let now = clock.now()
        let stepMinutes: Int64 = day ? 15 : 1
        let stepCount = Int64(day ? 96 : 60)
        // Steps aligned to the step length, the last one holding the current minute.
        let lastStep = (now / 60) / stepMinutes
        let firstMinute = (lastStep - stepCount + 1) * stepMinutes
        let names = monitored + [Self.other]
        var routes = names.map { name in
            Rollout.Route(
                route: name, mode: name == Self.other ? "enforce" : "monitor", totals: [:],
                steps: Array(repeating: [:], count: Int(stepCount)))
        }
        let index = Dictionary(names.enumerated().map { ($1, $0) }, uniquingKeysWith: { first, _ in first })
        for minute in recent(minutes: Int(now / 60 - firstMinute + 1)) where minute.minute >= firstMinute {
            let step = Int((minute.minute - firstMinute) / stepMinutes)
            for (route, outcomes) in minute.counts {
                guard let at = index[route], step < Int(stepCount) else { continue }
                for (outcome, count) in outcomes {
                    routes[at].totals[outcome, default: 0] += count
                    routes[at].steps[step][outcome, default: 0] += count
                }
            }
        }
        return Rollout(serverTime: now, start: firstMinute * 60, step: stepMinutes * 60, routes: routes)
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
