// What `import Foundation` brings on Apple platforms and not on Linux: the URL loading system, which
// swift-corelibs-foundation keeps in FoundationNetworking (which the checked files import under
// `#if canImport(FoundationNetworking)`), and the pieces of it that need the Security framework, which
// swift-corelibs-foundation leaves out or marks unavailable. Being of the checked module itself (one
// module: AppleCheck/run), declarations here shadow FoundationNetworking's.
//
// Availability: each declaration carries what Apple's documentation gives, where it was looked up
// (its page's address beside it); one with no `@available` here had its availability not looked up.
import Foundation
@_exported import FoundationNetworking

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
    @available(iOS 3.0, macOS 10.6, tvOS 9.0, watchOS 2.0, visionOS 1.0, macCatalyst 13.1, *)
    public var serverTrust: SecTrust? { stub() }
}

extension URLCredential {
    /// Mimics `init(trust: SecTrust)`: https://developer.apple.com/documentation/foundation/urlcredential/init(trust:)
    @available(iOS 3.0, macOS 10.6, tvOS 9.0, watchOS 2.0, visionOS 1.0, macCatalyst 13.1, *)
    public convenience init(trust: SecTrust) { stub() }

    /// Mimics `init(identity: SecIdentity, certificates certArray: [Any]?, persistence:
    /// URLCredential.Persistence)`:
    /// https://developer.apple.com/documentation/foundation/urlcredential/init(identity:certificates:persistence:)
    /// (its page is not in what was looked up; its availability is `init(trust:)`'s, its sibling's)
    @available(iOS 3.0, macOS 10.6, tvOS 9.0, watchOS 2.0, visionOS 1.0, macCatalyst 13.1, *)
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

extension URLSession {
    /// Mimics `init(configuration: URLSessionConfiguration, delegate: (any URLSessionDelegate)?,
    /// delegateQueue queue: OperationQueue?)`, taking the `URLSessionDelegate` declared below (Apple's),
    /// which FoundationNetworking's initializer does not take:
    /// https://developer.apple.com/documentation/foundation/urlsession/init(configuration:delegate:delegatequeue:)
    /// (availability not looked up). Disfavored, so that a `nil` delegate, which either initializer
    /// takes, is not ambiguous: it goes to FoundationNetworking's.
    @_disfavoredOverload
    public convenience init(
        configuration: URLSessionConfiguration, delegate: (any URLSessionDelegate)?, delegateQueue queue: OperationQueue?
    ) { stub() }
}

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

