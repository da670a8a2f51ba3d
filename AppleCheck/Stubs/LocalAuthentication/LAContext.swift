// LocalAuthentication, only as far as CryptoKit's Secure Enclave key initializers name it.
import Foundation

/// Mimics `LAContext`: https://developer.apple.com/documentation/localauthentication/lacontext
open class LAContext: NSObject {}
