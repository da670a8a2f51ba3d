// Keychain items: the SecItem functions and the kSec… keys and values the checked files use. The
// keys are `let …: CFString` in Apple's SDK; `nonisolated(unsafe)` stands for an imported C constant,
// which Swift does not check for concurrency either.
//
// Availability: each declaration carries what Apple's documentation gives, where it was looked up
// (its page's address beside it); one with no `@available` here had its availability not looked up,
// which AppleCheck/run cannot tell from one that needs none (see the stubs' report).
import Foundation

/// Mimics `SecItemAdd(_:_:)`,
/// `func SecItemAdd(_ attributes: CFDictionary, _ result: UnsafeMutablePointer<CFTypeRef?>?) -> OSStatus`:
/// https://developer.apple.com/documentation/security/secitemadd(_:_:)
/// (its page is not in what was looked up; its availability is `SecItemCopyMatching(_:_:)`'s, of the same SecItem API:
/// https://developer.apple.com/documentation/security/secitemcopymatching(_:_:))
@available(iOS 2.0, macOS 10.6, tvOS 9.0, watchOS 2.0, visionOS 1.0, macCatalyst 13.1, *)
@discardableResult
public func SecItemAdd(_ attributes: CFDictionary, _ result: UnsafeMutablePointer<CFTypeRef?>?) -> OSStatus { stub() }

/// Mimics `SecItemUpdate(_:_:)`,
/// `func SecItemUpdate(_ query: CFDictionary, _ attributesToUpdate: CFDictionary) -> OSStatus`:
/// https://developer.apple.com/documentation/security/secitemupdate(_:_:)
/// (its page is not in what was looked up; its availability is `SecItemCopyMatching(_:_:)`'s, of the same SecItem API:
/// https://developer.apple.com/documentation/security/secitemcopymatching(_:_:))
@available(iOS 2.0, macOS 10.6, tvOS 9.0, watchOS 2.0, visionOS 1.0, macCatalyst 13.1, *)
public func SecItemUpdate(_ query: CFDictionary, _ attributesToUpdate: CFDictionary) -> OSStatus { stub() }

/// Mimics `SecItemCopyMatching(_:_:)`,
/// `func SecItemCopyMatching(_ query: CFDictionary, _ result: UnsafeMutablePointer<CFTypeRef?>?) -> OSStatus`:
/// https://developer.apple.com/documentation/security/secitemcopymatching(_:_:)
@available(iOS 2.0, macOS 10.6, tvOS 9.0, watchOS 2.0, visionOS 1.0, macCatalyst 13.1, *)
@discardableResult
public func SecItemCopyMatching(_ query: CFDictionary, _ result: UnsafeMutablePointer<CFTypeRef?>?) -> OSStatus {
    stub()
}

/// Mimics `SecItemDelete(_:)`, `func SecItemDelete(_ query: CFDictionary) -> OSStatus`:
/// https://developer.apple.com/documentation/security/secitemdelete(_:)
/// (its page is not in what was looked up; its availability is `SecItemCopyMatching(_:_:)`'s, of the same SecItem API:
/// https://developer.apple.com/documentation/security/secitemcopymatching(_:_:))
@available(iOS 2.0, macOS 10.6, tvOS 9.0, watchOS 2.0, visionOS 1.0, macCatalyst 13.1, *)
@discardableResult
public func SecItemDelete(_ query: CFDictionary) -> OSStatus { stub() }

/// Mimics `kSecClass`: https://developer.apple.com/documentation/security/ksecclass
nonisolated(unsafe) public let kSecClass: CFString = "class"
/// Mimics `kSecClassGenericPassword`: https://developer.apple.com/documentation/security/ksecclassgenericpassword
nonisolated(unsafe) public let kSecClassGenericPassword: CFString = "genp"
/// Mimics `kSecClassKey`: https://developer.apple.com/documentation/security/ksecclasskey
nonisolated(unsafe) public let kSecClassKey: CFString = "keys"

/// Mimics `kSecAttrAccessGroup`, `let kSecAttrAccessGroup: CFString` (iOS 3.0, macOS 10.9, tvOS 9.0,
/// watchOS 2.0, visionOS 1.0, Mac Catalyst 13.1):
/// https://developer.apple.com/documentation/security/ksecattraccessgroup
@available(iOS 3.0, macOS 10.9, tvOS 9.0, watchOS 2.0, visionOS 1.0, macCatalyst 13.1, *)
nonisolated(unsafe) public let kSecAttrAccessGroup: CFString = "agrp"

/// Mimics `kSecAttrService`: https://developer.apple.com/documentation/security/ksecattrservice
nonisolated(unsafe) public let kSecAttrService: CFString = "svce"
/// Mimics `kSecAttrAccount`: https://developer.apple.com/documentation/security/ksecattraccount
nonisolated(unsafe) public let kSecAttrAccount: CFString = "acct"
/// Mimics `kSecAttrApplicationTag`: https://developer.apple.com/documentation/security/ksecattrapplicationtag
nonisolated(unsafe) public let kSecAttrApplicationTag: CFString = "atag"
/// Mimics `kSecAttrKeyType`: https://developer.apple.com/documentation/security/ksecattrkeytype
nonisolated(unsafe) public let kSecAttrKeyType: CFString = "type"
/// Mimics `kSecAttrKeyTypeECSECPrimeRandom`:
/// https://developer.apple.com/documentation/security/ksecattrkeytypeecsecprimerandom
nonisolated(unsafe) public let kSecAttrKeyTypeECSECPrimeRandom: CFString = "73"
/// Mimics `kSecAttrKeyClass`: https://developer.apple.com/documentation/security/ksecattrkeyclass
nonisolated(unsafe) public let kSecAttrKeyClass: CFString = "kcls"
/// Mimics `kSecAttrKeyClassPrivate`: https://developer.apple.com/documentation/security/ksecattrkeyclassprivate
nonisolated(unsafe) public let kSecAttrKeyClassPrivate: CFString = "1"

/// Mimics `kSecAttrAccessible`: https://developer.apple.com/documentation/security/ksecattraccessible
nonisolated(unsafe) public let kSecAttrAccessible: CFString = "pdmn"
/// Mimics `kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly`:
/// https://developer.apple.com/documentation/security/ksecattraccessibleafterfirstunlockthisdeviceonly
@available(iOS 4.0, macOS 10.9, tvOS 9.0, watchOS 2.0, visionOS 1.0, macCatalyst 13.1, *)
nonisolated(unsafe) public let kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly: CFString = "cku"

/// Mimics `kSecValueData`: https://developer.apple.com/documentation/security/ksecvaluedata
nonisolated(unsafe) public let kSecValueData: CFString = "v_Data"
/// Mimics `kSecValueRef`: https://developer.apple.com/documentation/security/ksecvalueref
nonisolated(unsafe) public let kSecValueRef: CFString = "v_Ref"
/// Mimics `kSecReturnData`: https://developer.apple.com/documentation/security/ksecreturndata
nonisolated(unsafe) public let kSecReturnData: CFString = "r_Data"
/// Mimics `kSecReturnRef`: https://developer.apple.com/documentation/security/ksecreturnref
nonisolated(unsafe) public let kSecReturnRef: CFString = "r_Ref"
/// Mimics `kSecMatchLimit`: https://developer.apple.com/documentation/security/ksecmatchlimit
nonisolated(unsafe) public let kSecMatchLimit: CFString = "m_Limit"
/// Mimics `kSecMatchLimitOne`: https://developer.apple.com/documentation/security/ksecmatchlimitone
nonisolated(unsafe) public let kSecMatchLimitOne: CFString = "m_LimitOne"
