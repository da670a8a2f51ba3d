// LocalAuthentication, only as far as CryptoKit's Secure Enclave key initializers name it.
import Foundation

/// Mimics `LAContext`, `class LAContext` (not on tvOS):
/// https://developer.apple.com/documentation/localauthentication/lacontext
@available(iOS 8.0, macOS 10.10, watchOS 3.0, visionOS 1.0, macCatalyst 13.1, *)
@available(tvOS, unavailable)
open class LAContext: NSObject {}
