// DeviceCheck's error, as Swift imports its `NS_ERROR_ENUM`: a `DCError` struct whose `code` is a
// `DCError.Code`, each code also a static property of the struct.
import Foundation

/// Mimics `DCError`, `struct DCError` (an imported error struct: `CustomNSError`, `Hashable`, `Error`):
/// https://developer.apple.com/documentation/devicecheck/dcerror-swift.struct
@available(iOS 11.0, macOS 10.15, tvOS 11.0, watchOS 9.0, visionOS 1.0, macCatalyst 13.1, *)
public struct DCError: CustomNSError, Hashable, Error {
    /// Mimics `DCError.Code`, `enum Code` (raw values as the Objective-C `DCError` enumeration's):
    /// https://developer.apple.com/documentation/devicecheck/dcerror-swift.struct/code
    @available(iOS 11.0, macOS 10.15, tvOS 11.0, watchOS 9.0, visionOS 1.0, macCatalyst 13.1, *)
    public enum Code: Int, @unchecked Sendable, Equatable, Hashable {
        /// Mimics `case unknownSystemFailure`:
        /// https://developer.apple.com/documentation/devicecheck/dcerror-swift.struct/code/unknownsystemfailure
        case unknownSystemFailure = 0
        /// Mimics `case featureUnsupported`:
        /// https://developer.apple.com/documentation/devicecheck/dcerror-swift.struct/code/featureunsupported
        case featureUnsupported = 1
        /// Mimics `case invalidInput`:
        /// https://developer.apple.com/documentation/devicecheck/dcerror-swift.struct/code/invalidinput
        case invalidInput = 2
        /// Mimics `case invalidKey`:
        /// https://developer.apple.com/documentation/devicecheck/dcerror-swift.struct/code/invalidkey
        case invalidKey = 3
        /// Mimics `case serverUnavailable`:
        /// https://developer.apple.com/documentation/devicecheck/dcerror-swift.struct/code/serverunavailable
        case serverUnavailable = 4
    }

    /// Mimics `static var errorDomain: String { get }`:
    /// https://developer.apple.com/documentation/devicecheck/dcerror-swift.struct/errordomain
    @available(iOS 11.0, macOS 10.15, tvOS 11.0, watchOS 9.0, visionOS 1.0, macCatalyst 13.1, *)
    public static var errorDomain: String { stub() }

    /// Mimics `var code: DCError.Code { get }` (of the imported error struct):
    /// https://developer.apple.com/documentation/devicecheck/dcerror-swift.struct
    @available(iOS 11.0, macOS 10.15, tvOS 11.0, watchOS 9.0, visionOS 1.0, macCatalyst 13.1, *)
    public var code: DCError.Code { stub() }

    /// Mimics `static var unknownSystemFailure: DCError.Code { get }`:
    /// https://developer.apple.com/documentation/devicecheck/dcerror-swift.struct/unknownsystemfailure
    @available(iOS 11.0, macOS 10.15, tvOS 11.0, watchOS 9.0, visionOS 1.0, macCatalyst 13.1, *)
    public static var unknownSystemFailure: DCError.Code { stub() }

    /// Mimics `static var featureUnsupported: DCError.Code { get }`:
    /// https://developer.apple.com/documentation/devicecheck/dcerror-swift.struct/featureunsupported
    @available(iOS 11.0, macOS 10.15, tvOS 11.0, watchOS 9.0, visionOS 1.0, macCatalyst 13.1, *)
    public static var featureUnsupported: DCError.Code { stub() }

    /// Mimics `static var invalidInput: DCError.Code { get }`:
    /// https://developer.apple.com/documentation/devicecheck/dcerror-swift.struct/invalidinput
    @available(iOS 11.0, macOS 10.15, tvOS 11.0, watchOS 9.0, visionOS 1.0, macCatalyst 13.1, *)
    public static var invalidInput: DCError.Code { stub() }

    /// Mimics `static var invalidKey: DCError.Code { get }`:
    /// https://developer.apple.com/documentation/devicecheck/dcerror-swift.struct/invalidkey
    @available(iOS 11.0, macOS 10.15, tvOS 11.0, watchOS 9.0, visionOS 1.0, macCatalyst 13.1, *)
    public static var invalidKey: DCError.Code { stub() }

    /// Mimics `static var serverUnavailable: DCError.Code { get }`:
    /// https://developer.apple.com/documentation/devicecheck/dcerror-swift.struct/serverunavailable
    @available(iOS 11.0, macOS 10.15, tvOS 11.0, watchOS 9.0, visionOS 1.0, macCatalyst 13.1, *)
    public static var serverUnavailable: DCError.Code { stub() }
}
