import Foundation
@_spi(Sigil) import SigilCore

/// The client's idea of the server's time: its own clock plus an offset learnt from the signed time
/// of responses whose signature verified (PROTOCOL.md section 2.8).
///
/// - Warning: give it only times the server signed: an unsigned `Date` or `serverTime` can come
///   from anyone on the path.
public final class ServerClock: UnixClock {
    private let local: any UnixClock
    private let offset = Locked<Int64>(0)

    /// Creates a clock over the local clock, with no offset yet.
    public init(local: any UnixClock = SystemUnixClock()) { self.local = local }

    /// Creates a clock over the local clock with an offset learnt before (``DeviceIdentity/clockOffset``).
    public init(local: any UnixClock = SystemUnixClock(), offset: Int64) {
        self.local = local
        self.offset.withLock { $0 = offset }
    }

    /// Server-corrected Unix seconds.
    public func now() -> Int64 { local.now() + offset.withLock { $0 } }

    /// The current offset (server minus local), in seconds.
    public var offsetSeconds: Int64 { offset.withLock { $0 } }

    /// The local clock's Unix seconds, uncorrected.
    public var localTime: Int64 { local.now() }

    /// The longest round trip whose signed answer may set the offset, in seconds: the server signed
    /// somewhere between the send and the receipt, so the offset learnt is off by half the round trip
    /// at most, and an answer held back longer teaches nothing.
    public static let maximumRoundTrip: Int64 = 120

    /// Learns the offset from a server's Unix time, read from a verified response signature.
    public func synchronize(serverTime: Int64) {
        let difference = serverTime - local.now()
        offset.withLock { $0 = difference }
    }

    /// Learns the offset from the signed time of an answer to a request sent at local time `sentAt`
    /// and received at `receivedAt`: the server time is taken as the middle of the round trip.
    ///
    /// - Returns: whether the offset was learnt (not when the round trip was over ``maximumRoundTrip``).
    @discardableResult
    public func synchronize(serverTime: Int64, sentAt: Int64, receivedAt: Int64) -> Bool {
        guard receivedAt >= sentAt, receivedAt - sentAt <= Self.maximumRoundTrip else { return false }
        let difference = serverTime - (sentAt + (receivedAt - sentAt) / 2)
        offset.withLock { $0 = difference }
        return true
    }
}

/// Where nonces come from: the system CSPRNG by default, something fixed in tests.
public protocol NonceSource: Sendable {
    /// A fresh nonce matching `[A-Za-z0-9._~-]{16,128}`.
    func next() -> String
}

/// 128-bit nonces from the system's cryptographically secure generator, as lowercase UUID-shaped text.
public struct RandomNonceSource: NonceSource {
    /// Creates the source.
    public init() {}

    public func next() -> String {
        var generator = SystemRandomNumberGenerator()
        let high = generator.next()
        let low = generator.next()
        let hex = Hex.encode((0..<16).map { UInt8(truncatingIfNeeded: ($0 < 8 ? high : low) >> (UInt64($0 % 8) * 8)) })
        let parts = [
            hex.prefix(8), hex.dropFirst(8).prefix(4), hex.dropFirst(12).prefix(4),
            hex.dropFirst(16).prefix(4), hex.dropFirst(20),
        ]
        return parts.joined(separator: "-")
    }
}
