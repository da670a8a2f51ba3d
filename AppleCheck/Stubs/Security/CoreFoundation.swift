// The CoreFoundation types and functions the checked files use, which Security re-exports on Apple
// platforms. The toll-free-bridged types are the Foundation classes they bridge to, so that `as
// CFDictionary`, `as CFData`, `as String` and `as Data` type-check here as they do on Apple
// platforms (swift-corelibs-foundation bridges with `as` too), and so that a missing bridge fails
// here as it does there.
//
// Availability: each declaration carries what Apple's documentation gives, where it was looked up
// (its page's address beside it); one with no `@available` here had its availability not looked up,
// which AppleCheck/run cannot tell from one that needs none (see the stubs' report).
import Foundation

/// Mimics `CFTypeRef`: https://developer.apple.com/documentation/corefoundation/cftyperef
public typealias CFTypeRef = AnyObject

/// Mimics `CFTypeID`: https://developer.apple.com/documentation/corefoundation/cftypeid
public typealias CFTypeID = UInt

/// Mimics `CFString`, toll-free bridged to `NSString`: https://developer.apple.com/documentation/corefoundation/cfstring
public typealias CFString = NSString

/// Mimics `CFData`, toll-free bridged to `NSData`: https://developer.apple.com/documentation/corefoundation/cfdata
public typealias CFData = NSData

/// Mimics `CFArray`, toll-free bridged to `NSArray`: https://developer.apple.com/documentation/corefoundation/cfarray
public typealias CFArray = NSArray

/// Mimics `CFDictionary`, toll-free bridged to `NSDictionary`: https://developer.apple.com/documentation/corefoundation/cfdictionary
public typealias CFDictionary = NSDictionary

/// Mimics `CFError`, toll-free bridged to `NSError`: https://developer.apple.com/documentation/corefoundation/cferror
public typealias CFError = NSError

/// Mimics `CFAllocator`: https://developer.apple.com/documentation/corefoundation/cfallocator
public final class CFAllocator {}

/// Mimics `OSStatus` (MacTypes): https://developer.apple.com/documentation/kernel/osstatus
public typealias OSStatus = Int32

/// Mimics `CFGetTypeID(_:)`, `func CFGetTypeID(_ cf: CFTypeRef!) -> CFTypeID`:
/// https://developer.apple.com/documentation/corefoundation/cfgettypeid(_:)
///
/// Like every imported C function, its result may be discarded.
@discardableResult
public func CFGetTypeID(_ cf: CFTypeRef!) -> CFTypeID { stub() }

