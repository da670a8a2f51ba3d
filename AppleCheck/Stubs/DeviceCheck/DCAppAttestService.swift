// DeviceCheck's App Attest service, as Swift imports it: each completion-handler method also comes as
// an `async throws` method.
//
// Availability: the class's, from its page; its members' own pages were not looked up, and are given
// the class's (they came with it).
import Foundation

/// Mimics `DCAppAttestService` (an Objective-C class, not `Sendable`):
/// https://developer.apple.com/documentation/devicecheck/dcappattestservice
@available(iOS 14.0, macOS 11.0, tvOS 15.0, watchOS 9.0, visionOS 1.0, macCatalyst 14.0, *)
open class DCAppAttestService: NSObject {
    /// Mimics `class var shared: DCAppAttestService { get }`:
    /// https://developer.apple.com/documentation/devicecheck/dcappattestservice/shared
    @available(iOS 14.0, macOS 11.0, tvOS 15.0, watchOS 9.0, visionOS 1.0, macCatalyst 14.0, *)
    open class var shared: DCAppAttestService { stub() }

    /// Mimics `var isSupported: Bool { get }`:
    /// https://developer.apple.com/documentation/devicecheck/dcappattestservice/issupported
    @available(iOS 14.0, macOS 11.0, tvOS 15.0, watchOS 9.0, visionOS 1.0, macCatalyst 14.0, *)
    open var isSupported: Bool { stub() }

    /// Mimics `func generateKey(completionHandler: @escaping @Sendable (String?, (any Error)?) -> Void)`:
    /// https://developer.apple.com/documentation/devicecheck/dcappattestservice/generatekey(completionhandler:)
    @available(iOS 14.0, macOS 11.0, tvOS 15.0, watchOS 9.0, visionOS 1.0, macCatalyst 14.0, *)
    open func generateKey(completionHandler: @escaping @Sendable (String?, (any Error)?) -> Void) { stub() }

    /// Mimics the asynchronous form, `func generateKey() async throws -> String`:
    /// https://developer.apple.com/documentation/devicecheck/dcappattestservice/generatekey(completionhandler:)
    @available(iOS 14.0, macOS 11.0, tvOS 15.0, watchOS 9.0, visionOS 1.0, macCatalyst 14.0, *)
    open func generateKey() async throws -> String { stub() }

    /// Mimics `func attestKey(_ keyId: String, clientDataHash: Data, completionHandler: @escaping
    /// @Sendable (Data?, (any Error)?) -> Void)`:
    /// https://developer.apple.com/documentation/devicecheck/dcappattestservice/attestkey(_:clientdatahash:completionhandler:)
    @available(iOS 14.0, macOS 11.0, tvOS 15.0, watchOS 9.0, visionOS 1.0, macCatalyst 14.0, *)
    open func attestKey(
        _ keyId: String, clientDataHash: Data, completionHandler: @escaping @Sendable (Data?, (any Error)?) -> Void
    ) { stub() }

    /// Mimics the asynchronous form, `func attestKey(_ keyId: String, clientDataHash: Data) async throws -> Data`:
    /// https://developer.apple.com/documentation/devicecheck/dcappattestservice/attestkey(_:clientdatahash:completionhandler:)
    @available(iOS 14.0, macOS 11.0, tvOS 15.0, watchOS 9.0, visionOS 1.0, macCatalyst 14.0, *)
    open func attestKey(_ keyId: String, clientDataHash: Data) async throws -> Data { stub() }

    /// Mimics `func generateAssertion(_ keyId: String, clientDataHash: Data, completionHandler:
    /// @escaping @Sendable (Data?, (any Error)?) -> Void)`:
    /// https://developer.apple.com/documentation/devicecheck/dcappattestservice/generateassertion(_:clientdatahash:completionhandler:)
    @available(iOS 14.0, macOS 11.0, tvOS 15.0, watchOS 9.0, visionOS 1.0, macCatalyst 14.0, *)
    open func generateAssertion(
        _ keyId: String, clientDataHash: Data, completionHandler: @escaping @Sendable (Data?, (any Error)?) -> Void
    ) { stub() }

    /// Mimics the asynchronous form, `func generateAssertion(_ keyId: String, clientDataHash: Data)
    /// async throws -> Data`:
    /// https://developer.apple.com/documentation/devicecheck/dcappattestservice/generateassertion(_:clientdatahash:completionhandler:)
    @available(iOS 14.0, macOS 11.0, tvOS 15.0, watchOS 9.0, visionOS 1.0, macCatalyst 14.0, *)
    open func generateAssertion(_ keyId: String, clientDataHash: Data) async throws -> Data { stub() }
}

