// Access control, only as far as CryptoKit's Secure Enclave key initializer needs it for its default
// argument.

/// Mimics `SecAccessControlCreateFlags`: https://developer.apple.com/documentation/security/secaccesscontrolcreateflags
public struct SecAccessControlCreateFlags: OptionSet, Sendable {
    public let rawValue: UInt
    public init(rawValue: UInt) { self.rawValue = rawValue }
    /// Mimics `SecAccessControlCreateFlags.privateKeyUsage`.
    public static let privateKeyUsage = SecAccessControlCreateFlags(rawValue: 1 << 30)
}

/// Mimics `SecAccessControlCreateWithFlags(_:_:_:_:)`, `func SecAccessControlCreateWithFlags(_ allocator:
/// CFAllocator?, _ protection: CFTypeRef, _ flags: SecAccessControlCreateFlags, _ error:
/// UnsafeMutablePointer<Unmanaged<CFError>?>?) -> SecAccessControl?`:
/// https://developer.apple.com/documentation/security/secaccesscontrolcreatewithflags(_:_:_:_:)
@discardableResult
public func SecAccessControlCreateWithFlags(
    _ allocator: CFAllocator?, _ protection: CFTypeRef, _ flags: SecAccessControlCreateFlags,
    _ error: UnsafeMutablePointer<Unmanaged<CFError>?>?
) -> SecAccessControl? { stub() }
