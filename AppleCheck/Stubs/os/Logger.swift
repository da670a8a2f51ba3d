// os, only as far as SigilClient's event log names it (SigilEvent.systemLog).

/// Mimics `struct Logger`:
/// https://developer.apple.com/documentation/os/logger
@available(iOS 14.0, macOS 11.0, tvOS 14.0, watchOS 7.0, visionOS 1.0, macCatalyst 14.0, *)
public struct Logger: @unchecked Sendable {
    /// https://developer.apple.com/documentation/os/logger/init(subsystem:category:)
    public init(subsystem: String, category: String) { stub() }
    /// https://developer.apple.com/documentation/os/logger/info(_:)
    public func info(_ message: OSLogMessage) { stub() }
    /// https://developer.apple.com/documentation/os/logger/error(_:)
    public func error(_ message: OSLogMessage) { stub() }
}

/// Mimics `struct OSLogMessage` (string interpolation with privacy):
/// https://developer.apple.com/documentation/os/oslogmessage
@available(iOS 14.0, macOS 11.0, tvOS 14.0, watchOS 7.0, visionOS 1.0, macCatalyst 14.0, *)
public struct OSLogMessage: ExpressibleByStringInterpolation {
    public init(stringLiteral value: String) { stub() }
    public init(stringInterpolation: OSLogInterpolation) { stub() }
}

/// Mimics `struct OSLogInterpolation`:
/// https://developer.apple.com/documentation/os/osloginterpolation
@available(iOS 14.0, macOS 11.0, tvOS 14.0, watchOS 7.0, visionOS 1.0, macCatalyst 14.0, *)
public struct OSLogInterpolation: StringInterpolationProtocol {
    public init(literalCapacity: Int, interpolationCount: Int) { stub() }
    public mutating func appendLiteral(_ literal: String) { stub() }
    /// https://developer.apple.com/documentation/os/osloginterpolation/appendinterpolation(_:align:privacy:)-1na1u
    public mutating func appendInterpolation(
        _ argumentString: @autoclosure @escaping () -> String, privacy: OSLogPrivacy
    ) { stub() }
}

/// Mimics `struct OSLogPrivacy`:
/// https://developer.apple.com/documentation/os/oslogprivacy
@available(iOS 14.0, macOS 11.0, tvOS 14.0, watchOS 7.0, visionOS 1.0, macCatalyst 14.0, *)
public struct OSLogPrivacy {
    /// https://developer.apple.com/documentation/os/oslogprivacy/public
    public static var `public`: OSLogPrivacy { stub() }
}
