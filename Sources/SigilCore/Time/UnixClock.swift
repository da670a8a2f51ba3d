import Foundation

/// A source of Unix time in seconds, injected so tests never sleep or read the wall clock.
public protocol UnixClock: Sendable {
    /// The current Unix time in seconds.
    func now() -> Int64
}

/// The system's wall clock.
public struct SystemUnixClock: UnixClock {
    /// Creates the clock.
    public init() {}
    public func now() -> Int64 { Int64(Date().timeIntervalSince1970.rounded(.down)) }
}

/// A clock that stands still until moved, for tests and replays.
public final class ManualUnixClock: UnixClock {
    private let current: Locked<Int64>

    /// Creates a clock reading `now`.
    public init(_ now: Int64) { current = Locked(now) }

    public func now() -> Int64 { current.withLock { $0 } }

    /// Sets the time.
    public func set(_ now: Int64) { current.withLock { $0 = now } }

    /// Moves the time forward by `seconds`.
    public func advance(by seconds: Int64) { current.withLock { $0 += seconds } }
}
