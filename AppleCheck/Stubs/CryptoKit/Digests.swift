// CryptoKit's hash functions and digests, as far as Sigil uses them: SHA-256, SHA-384 and SHA-512,
// the `HashFunction` and `Digest` protocols they conform to, and what those protocols give them.
//
// Signatures: Apple's, as its documentation gives them (and as swift-crypto, which mirrors CryptoKit's
// API, declares them). Availability: each declaration's, from its documentation page where that was
// looked up; where it was not, the version of CryptoKit's first release that the pages which were
// looked up give its siblings (iOS 13, macOS 10.15, tvOS 13, watchOS 6, visionOS 1), or what a comment
// beside it says. The stubs' report lists which is which.
import Foundation

/// Mimics `Digest`, `protocol Digest : ContiguousBytes, CustomStringConvertible, Hashable, Sendable,
/// Sequence where Self.Element == UInt8`:
/// https://developer.apple.com/documentation/cryptokit/digest
@available(iOS 13.0, macOS 10.15, tvOS 13.0, watchOS 6.0, visionOS 1.0, macCatalyst 13.0, *)
public protocol Digest: ContiguousBytes, CustomStringConvertible, Hashable, Sendable, Sequence
where Element == UInt8 {
    /// Mimics `static var byteCount: Int { get }`:
    /// https://developer.apple.com/documentation/cryptokit/digest/bytecount
    static var byteCount: Int { get }
}

/// `Digest`, for `HashFunction`'s associated type of the same name to be constrained to it: Apple's
/// interface writes `CryptoKit.Digest` there, and there is no module named CryptoKit here.
@available(iOS 13.0, macOS 10.15, tvOS 13.0, watchOS 6.0, visionOS 1.0, macCatalyst 13.0, *)
public typealias _CryptoKitDigest = Digest

@available(iOS 13.0, macOS 10.15, tvOS 13.0, watchOS 6.0, visionOS 1.0, macCatalyst 13.0, *)
extension Digest {
    /// Mimics `func makeIterator() -> Array<UInt8>.Iterator`:
    /// https://developer.apple.com/documentation/cryptokit/digest/makeiterator()
    @available(iOS 13.0, macOS 10.15, tvOS 13.0, watchOS 6.0, visionOS 1.0, macCatalyst 13.0, *)
    public func makeIterator() -> Array<UInt8>.Iterator { stub() }

    /// Mimics `static func == (lhs: Self, rhs: Self) -> Bool`:
    /// https://developer.apple.com/documentation/cryptokit/digest/==(_:_:)
    @available(iOS 13.0, macOS 10.15, tvOS 13.0, watchOS 6.0, visionOS 1.0, macCatalyst 13.0, *)
    public static func == (lhs: Self, rhs: Self) -> Bool { stub() }

    /// Mimics `static func == <D>(lhs: Self, rhs: D) -> Bool where D : DataProtocol`:
    /// https://developer.apple.com/documentation/cryptokit/digest/==(_:_:)
    @available(iOS 13.0, macOS 10.15, tvOS 13.0, watchOS 6.0, visionOS 1.0, macCatalyst 13.0, *)
    public static func == <D: DataProtocol>(lhs: Self, rhs: D) -> Bool { stub() }

    /// Mimics `var description: String { get }`:
    /// https://developer.apple.com/documentation/cryptokit/digest/description
    @available(iOS 13.0, macOS 10.15, tvOS 13.0, watchOS 6.0, visionOS 1.0, macCatalyst 13.0, *)
    public var description: String { stub() }
}

/// Mimics `HashFunction`, `protocol HashFunction : Sendable`:
/// https://developer.apple.com/documentation/cryptokit/hashfunction
@available(iOS 13.0, macOS 10.15, tvOS 13.0, watchOS 6.0, visionOS 1.0, macCatalyst 13.0, *)
public protocol HashFunction: Sendable {
    /// Mimics `associatedtype Digest : Digest`:
    /// https://developer.apple.com/documentation/cryptokit/hashfunction/digest
    associatedtype Digest: _CryptoKitDigest

    /// Mimics `static var blockByteCount: Int { get }`:
    /// https://developer.apple.com/documentation/cryptokit/hashfunction/blockbytecount
    static var blockByteCount: Int { get }

    /// Mimics `init()`: https://developer.apple.com/documentation/cryptokit/hashfunction/init()
    init()

    /// Mimics `mutating func update(bufferPointer: UnsafeRawBufferPointer)`:
    /// https://developer.apple.com/documentation/cryptokit/hashfunction/update(bufferpointer:)
    mutating func update(bufferPointer: UnsafeRawBufferPointer)

    /// Mimics `func finalize() -> Self.Digest`:
    /// https://developer.apple.com/documentation/cryptokit/hashfunction/finalize()
    func finalize() -> Self.Digest
}

@available(iOS 13.0, macOS 10.15, tvOS 13.0, watchOS 6.0, visionOS 1.0, macCatalyst 13.0, *)
extension HashFunction {
    /// Mimics `static func hash<D>(data: D) -> Self.Digest where D : DataProtocol`:
    /// https://developer.apple.com/documentation/cryptokit/hashfunction/hash(data:)
    @available(iOS 13.0, macOS 10.15, tvOS 13.0, watchOS 6.0, visionOS 1.0, macCatalyst 13.0, *)
    public static func hash<D: DataProtocol>(data: D) -> Self.Digest { stub() }

    /// Mimics `mutating func update<D>(data: D) where D : DataProtocol`:
    /// https://developer.apple.com/documentation/cryptokit/hashfunction/update(data:)
    @available(iOS 13.0, macOS 10.15, tvOS 13.0, watchOS 6.0, visionOS 1.0, macCatalyst 13.0, *)
    public mutating func update<D: DataProtocol>(data: D) { stub() }
}

/// Mimics `SHA256`, `struct SHA256`: https://developer.apple.com/documentation/cryptokit/sha256
@available(iOS 13.0, macOS 10.15, tvOS 13.0, watchOS 6.0, visionOS 1.0, macCatalyst 13.0, *)
public struct SHA256: HashFunction {
    /// Mimics `typealias Digest = SHA256Digest`: https://developer.apple.com/documentation/cryptokit/sha256/digest
    public typealias Digest = SHA256Digest

    /// Mimics `static let blockByteCount: Int`:
    /// https://developer.apple.com/documentation/cryptokit/sha256/blockbytecount
    /// (its page is not in the documentation searched; its availability is `SHA384.blockByteCount`'s:
    /// https://developer.apple.com/documentation/cryptokit/sha384/blockbytecount)
    @available(iOS 13.2, macOS 10.15, tvOS 13.2, watchOS 6.1, visionOS 1.0, macCatalyst 13.2, *)
    public static var blockByteCount: Int { stub() }

    /// Mimics `static var byteCount: Int { get }`: https://developer.apple.com/documentation/cryptokit/sha256/bytecount
    @available(iOS 13.0, macOS 10.15, tvOS 13.0, watchOS 6.0, visionOS 1.0, macCatalyst 13.0, *)
    public static var byteCount: Int { stub() }

    /// Mimics `init()`: https://developer.apple.com/documentation/cryptokit/sha256/init()
    @available(iOS 13.0, macOS 10.15, tvOS 13.0, watchOS 6.0, visionOS 1.0, macCatalyst 13.0, *)
    public init() { stub() }

    /// Mimics `mutating func update(bufferPointer: UnsafeRawBufferPointer)`:
    /// https://developer.apple.com/documentation/cryptokit/sha256/update(bufferpointer:)
    @available(iOS 13.0, macOS 10.15, tvOS 13.0, watchOS 6.0, visionOS 1.0, macCatalyst 13.0, *)
    public mutating func update(bufferPointer: UnsafeRawBufferPointer) { stub() }

    /// Mimics `func finalize() -> SHA256.Digest`: https://developer.apple.com/documentation/cryptokit/sha256/finalize()
    @available(iOS 13.0, macOS 10.15, tvOS 13.0, watchOS 6.0, visionOS 1.0, macCatalyst 13.0, *)
    public func finalize() -> SHA256.Digest { stub() }
}

/// Mimics `SHA384`, `struct SHA384`: https://developer.apple.com/documentation/cryptokit/sha384
@available(iOS 13.0, macOS 10.15, tvOS 13.0, watchOS 6.0, visionOS 1.0, macCatalyst 13.0, *)
public struct SHA384: HashFunction {
    /// Mimics `typealias Digest = SHA384Digest`: https://developer.apple.com/documentation/cryptokit/sha384/digest
    public typealias Digest = SHA384Digest

    /// Mimics `static let blockByteCount: Int`:
    /// https://developer.apple.com/documentation/cryptokit/sha384/blockbytecount
    @available(iOS 13.2, macOS 10.15, tvOS 13.2, watchOS 6.1, visionOS 1.0, macCatalyst 13.2, *)
    public static var blockByteCount: Int { stub() }

    /// Mimics `static var byteCount: Int { get }`: https://developer.apple.com/documentation/cryptokit/sha384/bytecount
    @available(iOS 13.0, macOS 10.15, tvOS 13.0, watchOS 6.0, visionOS 1.0, macCatalyst 13.0, *)
    public static var byteCount: Int { stub() }

    /// Mimics `init()`: https://developer.apple.com/documentation/cryptokit/sha384/init()
    @available(iOS 13.0, macOS 10.15, tvOS 13.0, watchOS 6.0, visionOS 1.0, macCatalyst 13.0, *)
    public init() { stub() }

    /// Mimics `mutating func update(bufferPointer: UnsafeRawBufferPointer)`:
    /// https://developer.apple.com/documentation/cryptokit/sha384/update(bufferpointer:)
    @available(iOS 13.0, macOS 10.15, tvOS 13.0, watchOS 6.0, visionOS 1.0, macCatalyst 13.0, *)
    public mutating func update(bufferPointer: UnsafeRawBufferPointer) { stub() }

    /// Mimics `func finalize() -> SHA384.Digest`: https://developer.apple.com/documentation/cryptokit/sha384/finalize()
    @available(iOS 13.0, macOS 10.15, tvOS 13.0, watchOS 6.0, visionOS 1.0, macCatalyst 13.0, *)
    public func finalize() -> SHA384.Digest { stub() }
}

/// Mimics `SHA512`, `struct SHA512`: https://developer.apple.com/documentation/cryptokit/sha512
@available(iOS 13.0, macOS 10.15, tvOS 13.0, watchOS 6.0, visionOS 1.0, macCatalyst 13.0, *)
public struct SHA512: HashFunction {
    /// Mimics `typealias Digest = SHA512Digest`: https://developer.apple.com/documentation/cryptokit/sha512/digest
    public typealias Digest = SHA512Digest

    /// Mimics `static let blockByteCount: Int`:
    /// https://developer.apple.com/documentation/cryptokit/sha512/blockbytecount
    /// (its page is not in the documentation searched; its availability is `SHA384.blockByteCount`'s:
    /// https://developer.apple.com/documentation/cryptokit/sha384/blockbytecount)
    @available(iOS 13.2, macOS 10.15, tvOS 13.2, watchOS 6.1, visionOS 1.0, macCatalyst 13.2, *)
    public static var blockByteCount: Int { stub() }

    /// Mimics `static var byteCount: Int { get }`: https://developer.apple.com/documentation/cryptokit/sha512/bytecount
    @available(iOS 13.0, macOS 10.15, tvOS 13.0, watchOS 6.0, visionOS 1.0, macCatalyst 13.0, *)
    public static var byteCount: Int { stub() }

    /// Mimics `init()`: https://developer.apple.com/documentation/cryptokit/sha512/init()
    @available(iOS 13.0, macOS 10.15, tvOS 13.0, watchOS 6.0, visionOS 1.0, macCatalyst 13.0, *)
    public init() { stub() }

    /// Mimics `mutating func update(bufferPointer: UnsafeRawBufferPointer)`:
    /// https://developer.apple.com/documentation/cryptokit/sha512/update(bufferpointer:)
    @available(iOS 13.0, macOS 10.15, tvOS 13.0, watchOS 6.0, visionOS 1.0, macCatalyst 13.0, *)
    public mutating func update(bufferPointer: UnsafeRawBufferPointer) { stub() }

    /// Mimics `func finalize() -> SHA512.Digest`: https://developer.apple.com/documentation/cryptokit/sha512/finalize()
    @available(iOS 13.0, macOS 10.15, tvOS 13.0, watchOS 6.0, visionOS 1.0, macCatalyst 13.0, *)
    public func finalize() -> SHA512.Digest { stub() }
}

/// Mimics `SHA256Digest`, `struct SHA256Digest` (a `Digest`):
/// https://developer.apple.com/documentation/cryptokit/sha256digest
@available(iOS 13.0, macOS 10.15, tvOS 13.0, watchOS 6.0, visionOS 1.0, macCatalyst 13.0, *)
public struct SHA256Digest: Digest {
    /// Mimics `static var byteCount: Int { get }`:
    /// https://developer.apple.com/documentation/cryptokit/sha256digest/bytecount
    @available(iOS 13.0, macOS 10.15, tvOS 13.0, watchOS 6.0, visionOS 1.0, macCatalyst 13.0, *)
    public static var byteCount: Int { stub() }

    /// Mimics `func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R`:
    /// https://developer.apple.com/documentation/cryptokit/sha256digest/withunsafebytes(_:)
    @available(iOS 13.0, macOS 10.15, tvOS 13.0, watchOS 6.0, visionOS 1.0, macCatalyst 13.0, *)
    public func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R { stub() }

    /// Mimics `func hash(into hasher: inout Hasher)`:
    /// https://developer.apple.com/documentation/cryptokit/sha256digest/hash(into:)
    @available(iOS 13.0, macOS 10.15, tvOS 13.0, watchOS 6.0, visionOS 1.0, macCatalyst 13.0, *)
    public func hash(into hasher: inout Hasher) { stub() }
}

/// Mimics `SHA384Digest`, `struct SHA384Digest` (a `Digest`):
/// https://developer.apple.com/documentation/cryptokit/sha384digest
@available(iOS 13.0, macOS 10.15, tvOS 13.0, watchOS 6.0, visionOS 1.0, macCatalyst 13.0, *)
public struct SHA384Digest: Digest {
    /// Mimics `static var byteCount: Int { get }`:
    /// https://developer.apple.com/documentation/cryptokit/sha384digest/bytecount
    @available(iOS 13.0, macOS 10.15, tvOS 13.0, watchOS 6.0, visionOS 1.0, macCatalyst 13.0, *)
    public static var byteCount: Int { stub() }

    /// Mimics `func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R`:
    /// https://developer.apple.com/documentation/cryptokit/sha384digest/withunsafebytes(_:)
    @available(iOS 13.0, macOS 10.15, tvOS 13.0, watchOS 6.0, visionOS 1.0, macCatalyst 13.0, *)
    public func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R { stub() }

    /// Mimics `func hash(into hasher: inout Hasher)`:
    /// https://developer.apple.com/documentation/cryptokit/sha384digest/hash(into:)
    @available(iOS 13.0, macOS 10.15, tvOS 13.0, watchOS 6.0, visionOS 1.0, macCatalyst 13.0, *)
    public func hash(into hasher: inout Hasher) { stub() }
}

/// Mimics `SHA512Digest`, `struct SHA512Digest` (a `Digest`):
/// https://developer.apple.com/documentation/cryptokit/sha512digest
@available(iOS 13.0, macOS 10.15, tvOS 13.0, watchOS 6.0, visionOS 1.0, macCatalyst 13.0, *)
public struct SHA512Digest: Digest {
    /// Mimics `static var byteCount: Int { get }`:
    /// https://developer.apple.com/documentation/cryptokit/sha512digest/bytecount
    @available(iOS 13.0, macOS 10.15, tvOS 13.0, watchOS 6.0, visionOS 1.0, macCatalyst 13.0, *)
    public static var byteCount: Int { stub() }

    /// Mimics `func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R`:
    /// https://developer.apple.com/documentation/cryptokit/sha512digest/withunsafebytes(_:)
    @available(iOS 13.0, macOS 10.15, tvOS 13.0, watchOS 6.0, visionOS 1.0, macCatalyst 13.0, *)
    public func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R { stub() }

    /// Mimics `func hash(into hasher: inout Hasher)`:
    /// https://developer.apple.com/documentation/cryptokit/sha512digest/hash(into:)
    @available(iOS 13.0, macOS 10.15, tvOS 13.0, watchOS 6.0, visionOS 1.0, macCatalyst 13.0, *)
    public func hash(into hasher: inout Hasher) { stub() }
}
