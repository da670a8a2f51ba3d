// CryptoKit's AES-GCM, as far as Sigil uses it: sealing and opening with a key and nonce, the nonce
// and the sealed box.
//
// Signatures: Apple's, as its documentation gives them (and as swift-crypto, which mirrors CryptoKit's
// API, declares them). Availability: each declaration's, from its documentation page where that was
// looked up; where it was not, the version of CryptoKit's first release that the pages which were
// looked up give its siblings (iOS 13, macOS 10.15, tvOS 13, watchOS 6, visionOS 1), or what a comment
// beside it says. The stubs' report lists which is which.
import Foundation

/// Mimics `AES`, `enum AES`: https://developer.apple.com/documentation/cryptokit/aes
@available(iOS 13.0, macOS 10.15, tvOS 13.0, watchOS 6.0, visionOS 1.0, macCatalyst 13.0, *)
public enum AES: Sendable {
    /// Mimics `AES.GCM`, `enum GCM`: https://developer.apple.com/documentation/cryptokit/aes/gcm
    @available(iOS 13.0, macOS 10.15, tvOS 13.0, watchOS 6.0, visionOS 1.0, macCatalyst 13.0, *)
    public enum GCM: Sendable {
        /// Mimics `static func seal<Plaintext, AuthenticatedData>(_ message: Plaintext, using key:
        /// SymmetricKey, nonce: AES.GCM.Nonce? = nil, authenticating authenticatedData: AuthenticatedData)
        /// throws -> AES.GCM.SealedBox where Plaintext : DataProtocol, AuthenticatedData : DataProtocol`:
        /// https://developer.apple.com/documentation/cryptokit/aes/gcm/seal(_:using:nonce:authenticating:)
        @available(iOS 13.0, macOS 10.15, tvOS 13.0, watchOS 6.0, visionOS 1.0, macCatalyst 13.0, *)
        public static func seal<Plaintext: DataProtocol, AuthenticatedData: DataProtocol>(
            _ message: Plaintext, using key: SymmetricKey, nonce: AES.GCM.Nonce? = nil,
            authenticating authenticatedData: AuthenticatedData
        ) throws -> AES.GCM.SealedBox { stub() }

        /// Mimics `static func seal<Plaintext>(_ message: Plaintext, using key: SymmetricKey, nonce:
        /// AES.GCM.Nonce? = nil) throws -> AES.GCM.SealedBox where Plaintext : DataProtocol`:
        /// https://developer.apple.com/documentation/cryptokit/aes/gcm/seal(_:using:nonce:)
        @available(iOS 13.0, macOS 10.15, tvOS 13.0, watchOS 6.0, visionOS 1.0, macCatalyst 13.0, *)
        public static func seal<Plaintext: DataProtocol>(
            _ message: Plaintext, using key: SymmetricKey, nonce: AES.GCM.Nonce? = nil
        ) throws -> AES.GCM.SealedBox { stub() }

        /// Mimics `static func open<AuthenticatedData>(_ sealedBox: AES.GCM.SealedBox, using key:
        /// SymmetricKey, authenticating authenticatedData: AuthenticatedData) throws -> Data where
        /// AuthenticatedData : DataProtocol`:
        /// https://developer.apple.com/documentation/cryptokit/aes/gcm/open(_:using:authenticating:)
        @available(iOS 13.0, macOS 10.15, tvOS 13.0, watchOS 6.0, visionOS 1.0, macCatalyst 13.0, *)
        public static func open<AuthenticatedData: DataProtocol>(
            _ sealedBox: AES.GCM.SealedBox, using key: SymmetricKey, authenticating authenticatedData: AuthenticatedData
        ) throws -> Data { stub() }

        /// Mimics `static func open(_ sealedBox: AES.GCM.SealedBox, using key: SymmetricKey) throws -> Data`:
        /// https://developer.apple.com/documentation/cryptokit/aes/gcm/open(_:using:)
        @available(iOS 13.0, macOS 10.15, tvOS 13.0, watchOS 6.0, visionOS 1.0, macCatalyst 13.0, *)
        public static func open(_ sealedBox: AES.GCM.SealedBox, using key: SymmetricKey) throws -> Data { stub() }

        /// Mimics `AES.GCM.Nonce`, `struct Nonce` (`ContiguousBytes`, `Sendable`, `Sequence`):
        /// https://developer.apple.com/documentation/cryptokit/aes/gcm/nonce
        @available(iOS 13.0, macOS 10.15, tvOS 13.0, watchOS 6.0, visionOS 1.0, macCatalyst 13.0, *)
        public struct Nonce: ContiguousBytes, Sequence, Sendable {
            /// Mimics `init()`: https://developer.apple.com/documentation/cryptokit/aes/gcm/nonce/init()
            @available(iOS 13.0, macOS 10.15, tvOS 13.0, watchOS 6.0, visionOS 1.0, macCatalyst 13.0, *)
            public init() { stub() }

            /// Mimics `init<D>(data: D) throws where D : DataProtocol`:
            /// https://developer.apple.com/documentation/cryptokit/aes/gcm/nonce/init(data:)
            @available(iOS 13.0, macOS 10.15, tvOS 13.0, watchOS 6.0, visionOS 1.0, macCatalyst 13.0, *)
            public init<D: DataProtocol>(data: D) throws { stub() }

            /// Mimics `func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R`:
            /// https://developer.apple.com/documentation/cryptokit/aes/gcm/nonce/withunsafebytes(_:)
            @available(iOS 13.0, macOS 10.15, tvOS 13.0, watchOS 6.0, visionOS 1.0, macCatalyst 13.0, *)
            public func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R { stub() }

            /// Mimics `func makeIterator() -> Array<UInt8>.Iterator`:
            /// https://developer.apple.com/documentation/cryptokit/aes/gcm/nonce/makeiterator()
            @available(iOS 13.0, macOS 10.15, tvOS 13.0, watchOS 6.0, visionOS 1.0, macCatalyst 13.0, *)
            public func makeIterator() -> Array<UInt8>.Iterator { stub() }
        }

        /// Mimics `AES.GCM.SealedBox`, `struct SealedBox`:
        /// https://developer.apple.com/documentation/cryptokit/aes/gcm/sealedbox
        @available(iOS 13.0, macOS 10.15, tvOS 13.0, watchOS 6.0, visionOS 1.0, macCatalyst 13.0, *)
        public struct SealedBox: Sendable {
            /// Mimics `init<C, T>(nonce: AES.GCM.Nonce, ciphertext: C, tag: T) throws where C :
            /// DataProtocol, T : DataProtocol`:
            /// https://developer.apple.com/documentation/cryptokit/aes/gcm/sealedbox/init(nonce:ciphertext:tag:)
            @available(iOS 13.0, macOS 10.15, tvOS 13.0, watchOS 6.0, visionOS 1.0, macCatalyst 13.0, *)
            public init<C: DataProtocol, T: DataProtocol>(nonce: AES.GCM.Nonce, ciphertext: C, tag: T) throws {
                stub()
            }

            /// Mimics `init<D>(combined: D) throws where D : DataProtocol`:
            /// https://developer.apple.com/documentation/cryptokit/aes/gcm/sealedbox/init(combined:)
            @available(iOS 13.0, macOS 10.15, tvOS 13.0, watchOS 6.0, visionOS 1.0, macCatalyst 13.0, *)
            public init<D: DataProtocol>(combined: D) throws { stub() }

            /// Mimics `var ciphertext: Data { get }`:
            /// https://developer.apple.com/documentation/cryptokit/aes/gcm/sealedbox/ciphertext
            @available(iOS 13.0, macOS 10.15, tvOS 13.0, watchOS 6.0, visionOS 1.0, macCatalyst 13.0, *)
            public var ciphertext: Data { stub() }

            /// Mimics `var tag: Data { get }`: https://developer.apple.com/documentation/cryptokit/aes/gcm/sealedbox/tag
            @available(iOS 13.0, macOS 10.15, tvOS 13.0, watchOS 6.0, visionOS 1.0, macCatalyst 13.0, *)
            public var tag: Data { stub() }

            /// Mimics `var nonce: AES.GCM.Nonce { get }`:
            /// https://developer.apple.com/documentation/cryptokit/aes/gcm/sealedbox/nonce
            @available(iOS 13.0, macOS 10.15, tvOS 13.0, watchOS 6.0, visionOS 1.0, macCatalyst 13.0, *)
            public var nonce: AES.GCM.Nonce { stub() }

            /// Mimics `var combined: Data? { get }`:
            /// https://developer.apple.com/documentation/cryptokit/aes/gcm/sealedbox/combined
            @available(iOS 13.0, macOS 10.15, tvOS 13.0, watchOS 6.0, visionOS 1.0, macCatalyst 13.0, *)
            public var combined: Data? { stub() }
        }
    }
}
