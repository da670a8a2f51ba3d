// What `import Foundation` brings on Apple platforms and not on Linux, implicitly imported into every
// checked file (`-import-module AppleFoundation`, as Apple's Foundation would be): the URL loading
// system, which swift-corelibs-foundation keeps in FoundationNetworking, and the pieces of it that need
// the Security framework, which swift-corelibs-foundation leaves out or marks unavailable.
// Declarations here shadow FoundationNetworking's, since this module imports it.
import Foundation
@_exported import FoundationNetworking
import Security

/// Mimics `NSURLAuthenticationMethodServerTrust`, `let NSURLAuthenticationMethodServerTrust: String`
/// (unavailable in swift-corelibs-foundation):
/// https://developer.apple.com/documentation/foundation/nsurlauthenticationmethodservertrust
public let NSURLAuthenticationMethodServerTrust: String = "NSURLAuthenticationMethodServerTrust"

/// Mimics `NSURLAuthenticationMethodClientCertificate`,
/// `let NSURLAuthenticationMethodClientCertificate: String` (unavailable in swift-corelibs-foundation):
/// https://developer.apple.com/documentation/foundation/nsurlauthenticationmethodclientcertificate
public let NSURLAuthenticationMethodClientCertificate: String = "NSURLAuthenticationMethodClientCertificate"

extension URLProtectionSpace {
    /// Mimics `var serverTrust: SecTrust? { get }`:
    /// https://developer.apple.com/documentation/foundation/urlprotectionspace/servertrust
    public var serverTrust: SecTrust? { stub() }
}

extension URLCredential {
    /// Mimics `init(trust: SecTrust)`: https://developer.apple.com/documentation/foundation/urlcredential/init(trust:)
    public convenience init(trust: SecTrust) { stub() }

    /// Mimics `init(identity: SecIdentity, certificates certArray: [Any]?, persistence:
    /// URLCredential.Persistence)`:
    /// https://developer.apple.com/documentation/foundation/urlcredential/init(identity:certificates:persistence:)
    public convenience init(
        identity: SecIdentity, certificates certArray: [Any]?, persistence: URLCredential.Persistence
    ) { stub() }
}

/// Mimics `URLSessionDelegate`, `protocol URLSessionDelegate : NSObjectProtocol, Sendable`:
/// https://developer.apple.com/documentation/foundation/urlsessiondelegate
///
/// Its methods are optional requirements, which Swift states only with Objective-C: a delegate method
/// whose signature drifts from Apple's only draws a "nearly matches" warning there, and is never
/// called. So this declares none, shadowing FoundationNetworking's protocol, whose default
/// implementations would stand in for a drifted method here; each method a checked delegate
/// implements is instead stated below, as Apple declares it, and `Checks/` conforms the delegate to
/// it: a method that no longer matches fails the check.
public protocol URLSessionDelegate: NSObjectProtocol, Sendable {}

/// Mimics `URLSessionTaskDelegate`, `protocol URLSessionTaskDelegate : URLSessionDelegate` (optional
/// methods: see ``URLSessionDelegate``):
/// https://developer.apple.com/documentation/foundation/urlsessiontaskdelegate
public protocol URLSessionTaskDelegate: URLSessionDelegate {}

/// Apple's URLSession delegate methods, one protocol each, for `Checks/` to hold a delegate to.
public enum URLSessionDelegateMethod {
    /// Mimics `URLSessionDelegate.urlSession(_:didReceive:completionHandler:)`:
    /// https://developer.apple.com/documentation/foundation/urlsessiondelegate/urlsession(_:didreceive:completionhandler:)
    public protocol DidReceiveChallenge {
        func urlSession(
            _ session: URLSession, didReceive challenge: URLAuthenticationChallenge,
            completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void)
    }

    /// Mimics `URLSessionTaskDelegate.urlSession(_:task:willPerformHTTPRedirection:newRequest:completionHandler:)`:
    /// https://developer.apple.com/documentation/foundation/urlsessiontaskdelegate/urlsession(_:task:willperformhttpredirection:newrequest:completionhandler:)
    public protocol WillPerformHTTPRedirection {
        func urlSession(
            _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
            newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void)
    }
}

/// Stands for every body in these stubs: they are type-checked against, never run or linked.
func stub() -> Never { fatalError("AppleCheck stubs are for type-checking only") }
