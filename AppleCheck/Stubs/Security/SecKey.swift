// Keys, certificates and identities: creating, exporting and recognizing them.
//
// Availability: each declaration carries what Apple's documentation gives, where it was looked up
// (its page's address beside it); one with no `@available` here had its availability not looked up,
// which AppleCheck/run cannot tell from one that needs none (see the stubs' report).

/// Mimics `SecKeyCreateWithData(_:_:_:)`, `func SecKeyCreateWithData(_ keyData: CFData, _ attributes:
/// CFDictionary, _ error: UnsafeMutablePointer<Unmanaged<CFError>?>?) -> SecKey?`:
/// https://developer.apple.com/documentation/security/seckeycreatewithdata(_:_:_:)
@available(iOS 10.0, macOS 10.12, tvOS 10.0, watchOS 3.0, visionOS 1.0, macCatalyst 13.1, *)
@discardableResult
public func SecKeyCreateWithData(
    _ keyData: CFData, _ attributes: CFDictionary, _ error: UnsafeMutablePointer<Unmanaged<CFError>?>?
) -> SecKey? { stub() }

/// Mimics `SecKeyCopyExternalRepresentation(_:_:)`, `func SecKeyCopyExternalRepresentation(_ key:
/// SecKey, _ error: UnsafeMutablePointer<Unmanaged<CFError>?>?) -> CFData?`:
/// https://developer.apple.com/documentation/security/seckeycopyexternalrepresentation(_:_:)
@available(iOS 10.0, macOS 10.12, tvOS 10.0, watchOS 3.0, visionOS 1.0, macCatalyst 13.1, *)
@discardableResult
public func SecKeyCopyExternalRepresentation(
    _ key: SecKey, _ error: UnsafeMutablePointer<Unmanaged<CFError>?>?
) -> CFData? { stub() }

/// Mimics `SecKeyGetTypeID()`, `func SecKeyGetTypeID() -> CFTypeID`:
/// https://developer.apple.com/documentation/security/seckeygettypeid()
@discardableResult
public func SecKeyGetTypeID() -> CFTypeID { stub() }

/// Mimics `SecIdentityGetTypeID()`, `func SecIdentityGetTypeID() -> CFTypeID`:
/// https://developer.apple.com/documentation/security/secidentitygettypeid()
@discardableResult
public func SecIdentityGetTypeID() -> CFTypeID { stub() }

/// Mimics `SecCertificateCopyData(_:)`, `func SecCertificateCopyData(_ certificate: SecCertificate) -> CFData`:
/// https://developer.apple.com/documentation/security/seccertificatecopydata(_:)
@discardableResult
public func SecCertificateCopyData(_ certificate: SecCertificate) -> CFData { stub() }

/// Mimics `SecPKCS12Import(_:_:_:)`, `func SecPKCS12Import(_ pkcs12_data: CFData, _ options:
/// CFDictionary, _ items: UnsafeMutablePointer<CFArray?>) -> OSStatus`:
/// https://developer.apple.com/documentation/security/secpkcs12import(_:_:_:)
@discardableResult
public func SecPKCS12Import(
    _ pkcs12_data: CFData, _ options: CFDictionary, _ items: UnsafeMutablePointer<CFArray?>
) -> OSStatus { stub() }

/// Mimics `kSecImportExportPassphrase`: https://developer.apple.com/documentation/security/ksecimportexportpassphrase
nonisolated(unsafe) public let kSecImportExportPassphrase: CFString = "passphrase"
/// Mimics `kSecImportItemIdentity`: https://developer.apple.com/documentation/security/ksecimportitemidentity
nonisolated(unsafe) public let kSecImportItemIdentity: CFString = "identity"
