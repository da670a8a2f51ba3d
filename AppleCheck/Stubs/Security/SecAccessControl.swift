// Access control, only as far as CryptoKit's Secure Enclave key initializer needs it for its default
// argument.
//
// Availability: each declaration carries what Apple's documentation gives, where it was looked up
// (its page's address beside it); one with no `@available` here had its availability not looked up,
// which AppleCheck/run cannot tell from one that needs none (see the stubs' report).

/// Mimics `SecAccessControlCreateFlags`, `struct SecAccessControlCreateFlags` (an `OptionSet` over
/// `CFOptionFlags`): https://developer.apple.com/documentation/security/secaccesscontrolcreateflags
/// (availability: its `init(rawValue:)`'s, below; the type's own page is not in what was looked up)
@available(iOS 8.0, macOS 10.10, tvOS 9.0, watchOS 2.0, visionOS 1.0, macCatalyst 13.1, *)
public struct SecAccessControlCreateFlags: OptionSet, Sendable {
    public let rawValue: UInt

    /// Mimics `init(rawValue: CFOptionFlags)`:
    /// https://developer.apple.com/documentation/security/secaccesscontrolcreateflags/init(rawvalue:)
    @available(iOS 8.0, macOS 10.10, tvOS 9.0, watchOS 2.0, visionOS 1.0, macCatalyst 13.1, *)
    public init(rawValue: UInt) { self.rawValue = rawValue }

    /// Mimics `static var privateKeyUsage: SecAccessControlCreateFlags { get }`:
    /// https://developer.apple.com/documentation/security/secaccesscontrolcreateflags/privatekeyusage
    /// (availability not looked up)
    public static let privateKeyUsage = SecAccessControlCreateFlags(rawValue: 1 << 30)

    /// Mimics `static var biometryCurrentSet: SecAccessControlCreateFlags { get }`:
    /// https://developer.apple.com/documentation/security/secaccesscontrolcreateflags/biometrycurrentset
    @available(iOS 11.3, macOS 10.13.4, tvOS 11.3, watchOS 4.3, visionOS 1.0, macCatalyst 13.1, *)
    public static var biometryCurrentSet: SecAccessControlCreateFlags { SecAccessControlCreateFlags(rawValue: 1 << 3) }

    /// Mimics `static var userPresence: SecAccessControlCreateFlags { get }`:
    /// https://developer.apple.com/documentation/security/secaccesscontrolcreateflags/userpresence
    /// (availability not looked up: its type's)
    @available(iOS 8.0, macOS 10.10, tvOS 9.0, watchOS 2.0, visionOS 1.0, macCatalyst 13.1, *)
    public static var userPresence: SecAccessControlCreateFlags { SecAccessControlCreateFlags(rawValue: 1) }
}

/// Mimics `SecAccessControlCreateWithFlags(_:_:_:_:)`, `func SecAccessControlCreateWithFlags(_ allocator:
/// CFAllocator?, _ protection: CFTypeRef, _ flags: SecAccessControlCreateFlags, _ error:
/// UnsafeMutablePointer<Unmanaged<CFError>?>?) -> SecAccessControl?`:
/// https://developer.apple.com/documentation/security/secaccesscontrolcreatewithflags(_:_:_:_:)
@available(iOS 8.0, macOS 10.10, tvOS 9.0, watchOS 2.0, visionOS 1.0, macCatalyst 13.1, *)
@discardableResult
public func SecAccessControlCreateWithFlags(
    _ allocator: CFAllocator?, _ protection: CFTypeRef, _ flags: SecAccessControlCreateFlags,
    _ error: UnsafeMutablePointer<Unmanaged<CFError>?>?
) -> SecAccessControl? { stub() }
