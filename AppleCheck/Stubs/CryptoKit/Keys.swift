// CryptoKit's symmetric keys, message authentication codes and key derivation, as far as Sigil uses
// them (HKDF's extract and expand, over the keys and codes they take and give), with HMAC beside them.
//
// Signatures: Apple's, as its documentation gives them (and as swift-crypto, which mirrors CryptoKit's
// API, declares them). Availability: each declaration's, from its documentation page where that was
// looked up; where it was not, the version of CryptoKit's first release that the pages which were
// looked up give its siblings (iOS 13, macOS 10.15, tvOS 13, watchOS 6, visionOS 1), or what a comment
// beside it says. The stubs' report lists which is which.
import Foundation

/// Mimics `SymmetricKeySize`, `struct SymmetricKeySize`:
/// https://developer.apple.com/documentation/cryptokit/symmetrickeysize
@available(iOS 13.0, macOS 10.15, tvOS 13.0, watchOS 6.0, visionOS 1.0, macCatalyst 13.0, *)
public struct SymmetricKeySize: Sendable {
    /// Mimics `let bitCount: Int`: https://developer.apple.com/documentation/cryptokit/symmetrickeysize/bitcount
    @available(iOS 13.0, macOS 10.15, tvOS 13.0, watchOS 6.0, visionOS 1.0, macCatalyst 13.0, *)
    public let bitCount: Int

    /// Mimics `init(bitCount: Int)`: https://developer.apple.com/documentation/cryptokit/symmetrickeysize/init(bitcount:)
    @available(iOS 13.0, macOS 10.15, tvOS 13.0, watchOS 6.0, visionOS 1.0, macCatalyst 13.0, *)
    public init(bitCount: Int) { stub() }

    /// Mimics `static var bits128: SymmetricKeySize { get }`:
    /// https://developer.apple.com/documentation/cryptokit/symmetrickeysize/bits128
    @available(iOS 13.0, macOS 10.15, tvOS 13.0, watchOS 6.0, visionOS 1.0, macCatalyst 13.0, *)
    public static var bits128: SymmetricKeySize { stub() }

    /// Mimics `static var bits192: SymmetricKeySize { get }`:
    /// https://developer.apple.com/documentation/cryptokit/symmetrickeysize/bits192
    @available(iOS 13.0, macOS 10.15, tvOS 13.0, watchOS 6.0, visionOS 1.0, macCatalyst 13.0, *)
    public static var bits192: SymmetricKeySize { stub() }

    /// Mimics `static var bits256: SymmetricKeySize { get }`:
    /// https://developer.apple.com/documentation/cryptokit/symmetrickeysize/bits256
    @available(iOS 13.0, macOS 10.15, tvOS 13.0, watchOS 6.0, visionOS 1.0, macCatalyst 13.0, *)
    public static var bits256: SymmetricKeySize { stub() }
}

/// Mimics `SymmetricKey`, `struct SymmetricKey` (`ContiguousBytes`, `Equatable`, `Sendable`):
/// https://developer.apple.com/documentation/cryptokit/symmetrickey
@available(iOS 13.0, macOS 10.15, tvOS 13.0, watchOS 6.0, visionOS 1.0, macCatalyst 13.0, *)
public struct SymmetricKey: ContiguousBytes, Equatable, Sendable {
    /// Mimics `init<D>(data: D) where D : ContiguousBytes`:
    /// https://developer.apple.com/documentation/cryptokit/symmetrickey/init(data:)
    @available(iOS 13.0, macOS 10.15, tvOS 13.0, watchOS 6.0, visionOS 1.0, macCatalyst 13.0, *)
    public init<D: ContiguousBytes>(data: D) { stub() }

    /// Mimics `init(size: SymmetricKeySize)`: https://developer.apple.com/documentation/cryptokit/symmetrickey/init(size:)
    @available(iOS 13.0, macOS 10.15, tvOS 13.0, watchOS 6.0, visionOS 1.0, macCatalyst 13.0, *)
    public init(size: SymmetricKeySize) { stub() }

    /// Mimics `var bitCount: Int { get }`: https://developer.apple.com/documentation/cryptokit/symmetrickey/bitcount
    @available(iOS 13.0, macOS 10.15, tvOS 13.0, watchOS 6.0, visionOS 1.0, macCatalyst 13.0, *)
    public var bitCount: Int { stub() }

    /// Mimics `func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R`:
    /// https://developer.apple.com/documentation/cryptokit/symmetrickey/withunsafebytes(_:)
    @available(iOS 13.0, macOS 10.15, tvOS 13.0, watchOS 6.0, visionOS 1.0, macCatalyst 13.0, *)
    public func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R { stub() }

    /// Mimics `static func == (lhs: SymmetricKey, rhs: SymmetricKey) -> Bool`:
    /// https://developer.apple.com/documentation/cryptokit/symmetrickey/==(_:_:)
    @available(iOS 13.0, macOS 10.15, tvOS 13.0, watchOS 6.0, visionOS 1.0, macCatalyst 13.0, *)
    public static func == (lhs: SymmetricKey, rhs: SymmetricKey) -> Bool { stub() }
}

/// Mimics `MessageAuthenticationCode`, `protocol MessageAuthenticationCode : ContiguousBytes,
/// CustomStringConvertible, Hashable, Sendable, Sequence where Self.Element == UInt8`:
/// https://developer.apple.com/documentation/cryptokit/messageauthenticationcode
@available(iOS 13.0, macOS 10.15, tvOS 13.0, watchOS 6.0, visionOS 1.0, macCatalyst 13.0, *)
public protocol MessageAuthenticationCode: ContiguousBytes, CustomStringConvertible, Hashable, Sendable, Sequence
where Element == UInt8 {
    /// Mimics `var byteCount: Int { get }`:
    /// https://developer.apple.com/documentation/cryptokit/messageauthenticationcode/bytecount
    var byteCount: Int { get }
}

@available(iOS 13.0, macOS 10.15, tvOS 13.0, watchOS 6.0, visionOS 1.0, macCatalyst 13.0, *)
extension MessageAuthenticationCode {
    /// Mimics `func makeIterator() -> Array<UInt8>.Iterator`:
    /// https://developer.apple.com/documentation/cryptokit/messageauthenticationcode/makeiterator()
    @available(iOS 13.0, macOS 10.15, tvOS 13.0, watchOS 6.0, visionOS 1.0, macCatalyst 13.0, *)
    public func makeIterator() -> Array<UInt8>.Iterator { stub() }

    /// Mimics `static func == (lhs: Self, rhs: Self) -> Bool`:
    /// https://developer.apple.com/documentation/cryptokit/messageauthenticationcode/==(_:_:)
    @available(iOS 13.0, macOS 10.15, tvOS 13.0, watchOS 6.0, visionOS 1.0, macCatalyst 13.0, *)
    public static func == (lhs: Self, rhs: Self) -> Bool { stub() }

    /// Mimics `static func == <D>(lhs: Self, rhs: D) -> Bool where D : DataProtocol`:
    /// https://developer.apple.com/documentation/cryptokit/messageauthenticationcode/==(_:_:)
    @available(iOS 13.0, macOS 10.15, tvOS 13.0, watchOS 6.0, visionOS 1.0, macCatalyst 13.0, *)
    public static func == <D: DataProtocol>(lhs: Self, rhs: D) -> Bool { stub() }

    /// Mimics `var description: String { get }`:
    /// https://developer.apple.com/documentation/cryptokit/messageauthenticationcode/description
    @available(iOS 13.0, macOS 10.15, tvOS 13.0, watchOS 6.0, visionOS 1.0, macCatalyst 13.0, *)
    public var description: String { stub() }
}

/// Mimics `HashedAuthenticationCode`, `struct HashedAuthenticationCode<H> where H : HashFunction`:
/// https://developer.apple.com/documentation/cryptokit/hashedauthenticationcode
@available(iOS 13.0, macOS 10.15, tvOS 13.0, watchOS 6.0, visionOS 1.0, macCatalyst 13.0, *)
public struct HashedAuthenticationCode<H: HashFunction>: MessageAuthenticationCode {
    /// Mimics `var byteCount: Int { get }`:
    /// https://developer.apple.com/documentation/cryptokit/hashedauthenticationcode/bytecount
    @available(iOS 13.0, macOS 10.15, tvOS 13.0, watchOS 6.0, visionOS 1.0, macCatalyst 13.0, *)
    public var byteCount: Int { stub() }

    /// Mimics `func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R`:
    /// https://developer.apple.com/documentation/cryptokit/hashedauthenticationcode/withunsafebytes(_:)
    @available(iOS 13.0, macOS 10.15, tvOS 13.0, watchOS 6.0, visionOS 1.0, macCatalyst 13.0, *)
    public func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R { stub() }

    /// Mimics `func hash(into hasher: inout Hasher)`:
    /// https://developer.apple.com/documentation/cryptokit/hashedauthenticationcode/hash(into:)
    @available(iOS 13.0, macOS 10.15, tvOS 13.0, watchOS 6.0, visionOS 1.0, macCatalyst 13.0, *)
    public func hash(into hasher: inout Hasher) { stub() }
}

/// Mimics `HMAC`, `struct HMAC<H> where H : HashFunction`: https://developer.apple.com/documentation/cryptokit/hmac
@available(iOS 13.0, macOS 10.15, tvOS 13.0, watchOS 6.0, visionOS 1.0, macCatalyst 13.0, *)
public struct HMAC<H: HashFunction>: Sendable {
    /// Mimics `typealias Key = SymmetricKey`: https://developer.apple.com/documentation/cryptokit/hmac/key
    public typealias Key = SymmetricKey

    /// Mimics `typealias MAC = HashedAuthenticationCode<H>`: https://developer.apple.com/documentation/cryptokit/hmac/mac
    public typealias MAC = HashedAuthenticationCode<H>

    /// Mimics `init(key: SymmetricKey)`: https://developer.apple.com/documentation/cryptokit/hmac/init(key:)
    @available(iOS 13.0, macOS 10.15, tvOS 13.0, watchOS 6.0, visionOS 1.0, macCatalyst 13.0, *)
    public init(key: SymmetricKey) { stub() }

    /// Mimics `static func authenticationCode<D>(for data: D, using key: SymmetricKey) -> HMAC<H>.MAC where D : DataProtocol`:
    /// https://developer.apple.com/documentation/cryptokit/hmac/authenticationcode(for:using:)
    @available(iOS 13.0, macOS 10.15, tvOS 13.0, watchOS 6.0, visionOS 1.0, macCatalyst 13.0, *)
    public static func authenticationCode<D: DataProtocol>(for data: D, using key: SymmetricKey) -> HMAC<H>.MAC {
        stub()
    }

    /// Mimics `static func isValidAuthenticationCode<D>(_ authenticationCode: HMAC<H>.MAC, authenticating
    /// authenticatedData: D, using key: SymmetricKey) -> Bool where D : DataProtocol`:
    /// https://developer.apple.com/documentation/cryptokit/hmac/isvalidauthenticationcode(_:authenticating:using:)
    @available(iOS 13.0, macOS 10.15, tvOS 13.0, watchOS 6.0, visionOS 1.0, macCatalyst 13.0, *)
    public static func isValidAuthenticationCode<D: DataProtocol>(
        _ authenticationCode: HMAC<H>.MAC, authenticating authenticatedData: D, using key: SymmetricKey
    ) -> Bool { stub() }

    /// Mimics `static func isValidAuthenticationCode<C, D>(_ authenticationCode: C, authenticating
    /// authenticatedData: D, using key: SymmetricKey) -> Bool where C : ContiguousBytes, D : DataProtocol`:
    /// https://developer.apple.com/documentation/cryptokit/hmac/isvalidauthenticationcode(_:authenticating:using:)
    @available(iOS 13.0, macOS 10.15, tvOS 13.0, watchOS 6.0, visionOS 1.0, macCatalyst 13.0, *)
    public static func isValidAuthenticationCode<C: ContiguousBytes, D: DataProtocol>(
        _ authenticationCode: C, authenticating authenticatedData: D, using key: SymmetricKey
    ) -> Bool { stub() }

    /// Mimics `mutating func update<D>(data: D) where D : DataProtocol`:
    /// https://developer.apple.com/documentation/cryptokit/hmac/update(data:)
    @available(iOS 13.0, macOS 10.15, tvOS 13.0, watchOS 6.0, visionOS 1.0, macCatalyst 13.0, *)
    public mutating func update<D: DataProtocol>(data: D) { stub() }

    /// Mimics `func finalize() -> HMAC<H>.MAC`: https://developer.apple.com/documentation/cryptokit/hmac/finalize()
    @available(iOS 13.0, macOS 10.15, tvOS 13.0, watchOS 6.0, visionOS 1.0, macCatalyst 13.0, *)
    public func finalize() -> HMAC<H>.MAC { stub() }
}

/// Mimics `HKDF`, `struct HKDF<H> where H : HashFunction`: https://developer.apple.com/documentation/cryptokit/hkdf
@available(iOS 14.0, macOS 11.0, tvOS 14.0, watchOS 7.0, visionOS 1.0, macCatalyst 14.0, *)
public struct HKDF<H: HashFunction>: Sendable {
    /// Mimics `static func deriveKey<Salt, Info>(inputKeyMaterial: SymmetricKey, salt: Salt, info: Info,
    /// outputByteCount: Int) -> SymmetricKey where Salt : DataProtocol, Info : DataProtocol`:
    /// https://developer.apple.com/documentation/cryptokit/hkdf/derivekey(inputkeymaterial:salt:info:outputbytecount:)
    @available(iOS 14.0, macOS 11.0, tvOS 14.0, watchOS 7.0, visionOS 1.0, macCatalyst 14.0, *)
    public static func deriveKey<Salt: DataProtocol, Info: DataProtocol>(
        inputKeyMaterial: SymmetricKey, salt: Salt, info: Info, outputByteCount: Int
    ) -> SymmetricKey { stub() }

    /// Mimics `static func deriveKey<Info>(inputKeyMaterial: SymmetricKey, info: Info, outputByteCount:
    /// Int) -> SymmetricKey where Info : DataProtocol`:
    /// https://developer.apple.com/documentation/cryptokit/hkdf/derivekey(inputkeymaterial:info:outputbytecount:)
    @available(iOS 14.0, macOS 11.0, tvOS 14.0, watchOS 7.0, visionOS 1.0, macCatalyst 14.0, *)
    public static func deriveKey<Info: DataProtocol>(
        inputKeyMaterial: SymmetricKey, info: Info, outputByteCount: Int
    ) -> SymmetricKey { stub() }

    /// Mimics `static func deriveKey<Salt>(inputKeyMaterial: SymmetricKey, salt: Salt, outputByteCount:
    /// Int) -> SymmetricKey where Salt : DataProtocol`:
    /// https://developer.apple.com/documentation/cryptokit/hkdf/derivekey(inputkeymaterial:salt:outputbytecount:)
    @available(iOS 14.0, macOS 11.0, tvOS 14.0, watchOS 7.0, visionOS 1.0, macCatalyst 14.0, *)
    public static func deriveKey<Salt: DataProtocol>(
        inputKeyMaterial: SymmetricKey, salt: Salt, outputByteCount: Int
    ) -> SymmetricKey { stub() }

    /// Mimics `static func deriveKey(inputKeyMaterial: SymmetricKey, outputByteCount: Int) -> SymmetricKey`:
    /// https://developer.apple.com/documentation/cryptokit/hkdf/derivekey(inputkeymaterial:outputbytecount:)
    @available(iOS 14.0, macOS 11.0, tvOS 14.0, watchOS 7.0, visionOS 1.0, macCatalyst 14.0, *)
    public static func deriveKey(inputKeyMaterial: SymmetricKey, outputByteCount: Int) -> SymmetricKey { stub() }

    /// Mimics `static func extract<Salt>(inputKeyMaterial: SymmetricKey, salt: Salt?) ->
    /// HashedAuthenticationCode<H> where Salt : DataProtocol`:
    /// https://developer.apple.com/documentation/cryptokit/hkdf/extract(inputkeymaterial:salt:)-4f5wf
    @available(iOS 14.0, macOS 11.0, tvOS 14.0, watchOS 7.0, visionOS 1.0, macCatalyst 14.0, *)
    public static func extract<Salt: DataProtocol>(
        inputKeyMaterial: SymmetricKey, salt: Salt?
    ) -> HashedAuthenticationCode<H> { stub() }

    /// Mimics `static func expand<PRK, Info>(pseudoRandomKey prk: PRK, info: Info?, outputByteCount: Int)
    /// -> SymmetricKey where PRK : ContiguousBytes, Info : DataProtocol`:
    /// https://developer.apple.com/documentation/cryptokit/hkdf/expand(pseudorandomkey:info:outputbytecount:)
    @available(iOS 14.0, macOS 11.0, tvOS 14.0, watchOS 7.0, visionOS 1.0, macCatalyst 14.0, *)
    public static func expand<PRK: ContiguousBytes, Info: DataProtocol>(
        pseudoRandomKey prk: PRK, info: Info?, outputByteCount: Int
    ) -> SymmetricKey { stub() }
}
