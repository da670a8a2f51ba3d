/// The window of PROTOCOL.md section 2.6 step 2 (and 2.8): a timestamp is acceptable when it is at
/// most `maxSkew` seconds from the clock, in either direction. One check for requests and responses.
public struct TimeWindow: Sendable, Hashable {
    /// The largest accepted distance from the clock, in seconds.
    public var maxSkew: Int64

    /// Creates a window of `maxSkew` seconds each way.
    public init(maxSkew: Int64) { self.maxSkew = maxSkew }

    /// The refusal of `timestamp` at `now` (`timestamp-out-of-window`, naming the distance), or `nil`.
    ///
    /// - Parameter what: what carried the timestamp, for the detail ("the timestamp").
    public func refusal(of timestamp: Int64, at now: Int64, what: String = "the timestamp") -> SigilError? {
        let (difference, overflow) = timestamp.subtractingReportingOverflow(now)
        guard overflow || difference.magnitude > maxSkew.magnitude else { return nil }
        let distance = overflow ? "too far" : "\(difference.magnitude) s"
        return SigilError(.timestampOutOfWindow, "\(what) is \(distance) from the clock")
    }
}
