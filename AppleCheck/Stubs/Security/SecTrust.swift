// Trust evaluation: policies, anchors, evaluation and the evaluated chain.

/// Mimics `SecPolicyCreateSSL(_:_:)`, `func SecPolicyCreateSSL(_ server: Bool, _ hostname: CFString?) -> SecPolicy`:
/// https://developer.apple.com/documentation/security/secpolicycreatessl(_:_:)
@discardableResult
public func SecPolicyCreateSSL(_ server: Bool, _ hostname: CFString?) -> SecPolicy { stub() }

/// Mimics `SecTrustSetPolicies(_:_:)`, `func SecTrustSetPolicies(_ trust: SecTrust, _ policies: CFTypeRef) -> OSStatus`:
/// https://developer.apple.com/documentation/security/sectrustsetpolicies(_:_:)
@discardableResult
public func SecTrustSetPolicies(_ trust: SecTrust, _ policies: CFTypeRef) -> OSStatus { stub() }

/// Mimics `SecTrustSetAnchorCertificates(_:_:)`,
/// `func SecTrustSetAnchorCertificates(_ trust: SecTrust, _ anchorCertificates: CFArray) -> OSStatus`:
/// https://developer.apple.com/documentation/security/sectrustsetanchorcertificates(_:_:)
@discardableResult
public func SecTrustSetAnchorCertificates(_ trust: SecTrust, _ anchorCertificates: CFArray) -> OSStatus { stub() }

/// Mimics `SecTrustSetAnchorCertificatesOnly(_:_:)`,
/// `func SecTrustSetAnchorCertificatesOnly(_ trust: SecTrust, _ anchorCertificatesOnly: Bool) -> OSStatus`:
/// https://developer.apple.com/documentation/security/sectrustsetanchorcertificatesonly(_:_:)
@discardableResult
public func SecTrustSetAnchorCertificatesOnly(_ trust: SecTrust, _ anchorCertificatesOnly: Bool) -> OSStatus {
    stub()
}

/// Mimics `SecTrustEvaluateWithError(_:_:)`,
/// `func SecTrustEvaluateWithError(_ trust: SecTrust, _ error: UnsafeMutablePointer<CFError?>?) -> Bool`:
/// https://developer.apple.com/documentation/security/sectrustevaluatewitherror(_:_:)
@discardableResult
public func SecTrustEvaluateWithError(_ trust: SecTrust, _ error: UnsafeMutablePointer<CFError?>?) -> Bool { stub() }

/// Mimics `SecTrustCopyCertificateChain(_:)`, `func SecTrustCopyCertificateChain(_ trust: SecTrust) -> CFArray?`:
/// https://developer.apple.com/documentation/security/sectrustcopycertificatechain(_:)
@discardableResult
public func SecTrustCopyCertificateChain(_ trust: SecTrust) -> CFArray? { stub() }
