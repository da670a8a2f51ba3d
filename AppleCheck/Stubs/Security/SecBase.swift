// Security's opaque CoreFoundation types and the result codes the checked files compare against.
// Not `Sendable` here; should Apple's SDK mark one `Sendable`, this check is only the stricter.
//
// Availability: each declaration carries what Apple's documentation gives, where it was looked up
// (its page's address beside it); one with no `@available` here had its availability not looked up,
// which AppleCheck/run cannot tell from one that needs none (see the stubs' report).

/// Mimics `SecKey`: https://developer.apple.com/documentation/security/seckey
public final class SecKey {}

/// Mimics `SecCertificate`: https://developer.apple.com/documentation/security/seccertificate
public final class SecCertificate {}

/// Mimics `SecIdentity`: https://developer.apple.com/documentation/security/secidentity
public final class SecIdentity {}

/// Mimics `SecTrust`: https://developer.apple.com/documentation/security/sectrust
public final class SecTrust {}

/// Mimics `SecPolicy`: https://developer.apple.com/documentation/security/secpolicy
public final class SecPolicy {}

/// Mimics `SecAccessControl`: https://developer.apple.com/documentation/security/secaccesscontrol
public final class SecAccessControl {}

/// Mimics `errSecSuccess`, `var errSecSuccess: OSStatus { get }`:
/// https://developer.apple.com/documentation/security/errsecsuccess
public var errSecSuccess: OSStatus { 0 }

/// Mimics `errSecItemNotFound`, `var errSecItemNotFound: OSStatus { get }`:
/// https://developer.apple.com/documentation/security/errsecitemnotfound
public var errSecItemNotFound: OSStatus { -25300 }
