import Foundation
import SigilCore
import Synchronization

/// The client's idea of the server's time: its own clock plus an offset learnt from the server's
/// `Date` headers or a `serverTime` in an error (PROTOCOL.md section 2.8).
public final class ServerClock: UnixClock {
    private let local: any UnixClock
    private let offset = Mutex<Int64>(0)

    /// Creates a clock over the local clock, with no offset yet.
    public init(local: any UnixClock = SystemUnixClock()) { self.local = local }

    /// Server-corrected Unix seconds.
    public func now() -> Int64 { local.now() + offset.withLock { $0 } }

    /// The current offset (server minus local), in seconds.
    public var offsetSeconds: Int64 { offset.withLock { $0 } }

    /// Learns the offset from a server's Unix time.
    public func synchronize(serverTime: Int64) {
        let difference = serverTime - local.now()
        offset.withLock { $0 = difference }
    }

    /// Learns the offset from an HTTP `Date` header (IMF-fixdate); ignores values that do not parse.
    @discardableResult
    public func synchronize(dateHeader: String) -> Bool {
        guard let serverTime = Self.parseIMFFixdate(dateHeader) else { return false }
        synchronize(serverTime: serverTime)
        return true
    }

    /// Unix seconds of an IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`, RFC 9110 section 5.6.7), the
    /// form servers send; parsed by hand because a `DateFormatter` per response costs more than the
    /// signature check.
    static func parseIMFFixdate(_ text: String) -> Int64? {
        let parts = text.split(separator: " ")
        guard parts.count == 6, parts[0].count == 4, parts[0].hasSuffix(","), parts[5] == "GMT",
            parts[1].count == 2, let day = Int64(parts[1]), (1...31).contains(day),
            let monthIndex = months.firstIndex(of: String(parts[2])), parts[3].count == 4,
            let year = Int64(parts[3])
        else { return nil }
        let time = parts[4].split(separator: ":")
        guard parts[4].count == 8, time.count == 3, let hour = Int64(time[0]), let minute = Int64(time[1]),
            let second = Int64(time[2]), hour < 24, minute < 60, second < 61
        else { return nil }
        // Days from 1970-01-01 to the civil date (Howard Hinnant's days_from_civil).
        let month = Int64(monthIndex) + 1
        let shiftedYear = month <= 2 ? year - 1 : year
        let era = (shiftedYear >= 0 ? shiftedYear : shiftedYear - 399) / 400
        let yearOfEra = shiftedYear - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        let days = era * 146_097 + dayOfEra - 719_468
        return days * 86_400 + hour * 3_600 + minute * 60 + second
    }

    static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
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
