// Trust evaluation: policies, anchors, evaluation and the evaluated chain.
//
// Availability: each declaration carries what Apple's documentation gives, where it was looked up
// (its page's address beside it); one with no `@available` here had its availability not looked up,
// which AppleCheck/run cannot tell from one that needs none (see the stubs' report).

/// Mimics `SecPolicyCreateSSL(_:_:)`, `func SecPolicyCreateSSL(_ server: Bool, _ hostname: CFString?) -> SecPolicy`:
/// https://developer.apple.com/documentation/security/secpolicycreatessl(_:_:)
@available(iOS 2.0, macOS 10.6, tvOS 9.0, watchOS 2.0, visionOS 1.0, macCatalyst 13.1, *)
@discardableResult
public func SecPolicyCreateSSL(_ server: Bool, _ hostname: CFString?) -> SecPolicy { stub() }

/// Mimics `SecTrustSetPolicies(_:_:)`, `func SecTrustSetPolicies(_ trust: SecTrust, _ policies: CFTypeRef) -> OSStatus`:
/// https://developer.apple.com/documentation/security/sectrustsetpolicies(_:_:)
@discardableResult
public func SecTrustSetPolicies(_ trust: SecTrust, _ policies: CFTypeRef) -> OSStatus { stub() }

/// Mimics `SecTrustSetAnchorCertificates(_:_:)`,
/// `func SecTrustSetAnchorCertificates(_ trust: SecTrust, _ anchorCertificates: CFArray?) -> OSStatus`:
/// https://developer.apple.com/documentation/security/sectrustsetanchorcertificates(_:_:)
@available(iOS 2.0, macOS 10.3, tvOS 9.0, watchOS 2.0, visionOS 1.0, macCatalyst 13.1, *)
@discardableResult
public func SecTrustSetAnchorCertificates(_ trust: SecTrust, _ anchorCertificates: CFArray?) -> OSStatus { stub() }

/// Mimics `SecTrustSetAnchorCertificatesOnly(_:_:)`,
/// `func SecTrustSetAnchorCertificatesOnly(_ trust: SecTrust, _ anchorCertificatesOnly: Bool) -> OSStatus`:
/// https://developer.apple.com/documentation/security/sectrustsetanchorcertificatesonly(_:_:)
@available(iOS 2.0, macOS 10.6, tvOS 9.0, watchOS 2.0, visionOS 1.0, macCatalyst 13.1, *)
@discardableResult
public func SecTrustSetAnchorCertificatesOnly(_ trust: SecTrust, _ anchorCertificatesOnly: Bool) -> OSStatus {
    stub()
}

/// Mimics `SecTrustEvaluateWithError(_:_:)`,
/// `func SecTrustEvaluateWithError(_ trust: SecTrust, _ error: UnsafeMutablePointer<CFError?>?) -> Bool`:
/// https://developer.apple.com/documentation/security/sectrustevaluatewitherror(_:_:)
@available(iOS 12.0, macOS 10.14, tvOS 12.0, watchOS 5.0, visionOS 1.0, macCatalyst 13.1, *)
@discardableResult
public func SecTrustEvaluateWithError(_ trust: SecTrust, _ error: UnsafeMutablePointer<CFError?>?) -> Bool { stub() }

/// Mimics `SecTrustCopyCertificateChain(_:)`, `func SecTrustCopyCertificateChain(_ trust: SecTrust) -> CFArray?`:
/// https://developer.apple.com/documentation/security/sectrustcopycertificatechain(_:)
@available(iOS 15.0, macOS 12.0, tvOS 15.0, watchOS 8.0, visionOS 1.0, macCatalyst 15.0, *)
@discardableResult
public func SecTrustCopyCertificateChain(_ trust: SecTrust) -> CFArray? { stub() }
