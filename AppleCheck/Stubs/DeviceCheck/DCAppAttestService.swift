// DeviceCheck's App Attest service, as Swift imports it: each completion-handler method also comes as
// an `async throws` method.
import Foundation

/// Mimics `DCAppAttestService` (an Objective-C class, not `Sendable`):
/// https://developer.apple.com/documentation/devicecheck/dcappattestservice
open class DCAppAttestService: NSObject {
    /// Mimics `class var shared: DCAppAttestService { get }`:
    /// https://developer.apple.com/documentation/devicecheck/dcappattestservice/shared
    open class var shared: DCAppAttestService { stub() }

    /// Mimics `var isSupported: Bool { get }`:
    /// https://developer.apple.com/documentation/devicecheck/dcappattestservice/issupported
    open var isSupported: Bool { stub() }

    /// Mimics `func generateKey(completionHandler: @escaping @Sendable (String?, (any Error)?) -> Void)`:
    /// https://developer.apple.com/documentation/devicecheck/dcappattestservice/generatekey(completionhandler:)
    open func generateKey(completionHandler: @escaping @Sendable (String?, (any Error)?) -> Void) { stub() }

    /// Mimics the asynchronous form, `func generateKey() async throws -> String`:
    /// https://developer.apple.com/documentation/devicecheck/dcappattestservice/generatekey(completionhandler:)
    open func generateKey() async throws -> String { stub() }

    /// Mimics `func attestKey(_ keyId: String, clientDataHash: Data, completionHandler: @escaping
    /// @Sendable (Data?, (any Error)?) -> Void)`:
    /// https://developer.apple.com/documentation/devicecheck/dcappattestservice/attestkey(_:clientdatahash:completionhandler:)
    open func attestKey(
        _ keyId: String, clientDataHash: Data, completionHandler: @escaping @Sendable (Data?, (any Error)?) -> Void
    ) { stub() }

    /// Mimics the asynchronous form, `func attestKey(_ keyId: String, clientDataHash: Data) async throws -> Data`:
    /// https://developer.apple.com/documentation/devicecheck/dcappattestservice/attestkey(_:clientdatahash:completionhandler:)
    open func attestKey(_ keyId: String, clientDataHash: Data) async throws -> Data { stub() }

    /// Mimics `func generateAssertion(_ keyId: String, clientDataHash: Data, completionHandler:
    /// @escaping @Sendable (Data?, (any Error)?) -> Void)`:
    /// https://developer.apple.com/documentation/devicecheck/dcappattestservice/generateassertion(_:clientdatahash:completionhandler:)
    open func generateAssertion(
        _ keyId: String, clientDataHash: Data, completionHandler: @escaping @Sendable (Data?, (any Error)?) -> Void
    ) { stub() }

    /// Mimics the asynchronous form, `func generateAssertion(_ keyId: String, clientDataHash: Data)
    /// async throws -> Data`:
    /// https://developer.apple.com/documentation/devicecheck/dcappattestservice/generateassertion(_:clientdatahash:completionhandler:)
    open func generateAssertion(_ keyId: String, clientDataHash: Data) async throws -> Data { stub() }
}

/// Stands for every body in these stubs: they are type-checked against, never run or linked.
func stub() -> Never { fatalError("AppleCheck stubs are for type-checking only") }
