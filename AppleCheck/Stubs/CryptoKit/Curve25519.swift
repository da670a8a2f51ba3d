// CryptoKit's Curve25519, as far as Sigil uses it: Ed25519 signing keys (key agreement is left out).
//
// Signatures: Apple's, as its documentation gives them (and as swift-crypto, which mirrors CryptoKit's
// API, declares them). Availability: each declaration's, from its documentation page where that was
// looked up; where it was not, the version of CryptoKit's first release that the pages which were
// looked up give its siblings (iOS 13, macOS 10.15, tvOS 13, watchOS 6, visionOS 1), or what a comment
// beside it says. The stubs' report lists which is which.
import Foundation

/// Mimics `Curve25519`, `enum Curve25519`: https://developer.apple.com/documentation/cryptokit/curve25519
@available(iOS 13.0, macOS 10.15, tvOS 13.0, watchOS 6.0, visionOS 1.0, macCatalyst 13.0, *)
public enum Curve25519: Sendable {
    /// Mimics `Curve25519.Signing`, `enum Signing`:
    /// https://developer.apple.com/documentation/cryptokit/curve25519/signing
    @available(iOS 13.0, macOS 10.15, tvOS 13.0, watchOS 6.0, visionOS 1.0, macCatalyst 13.0, *)
    public enum Signing: Sendable {
        /// Mimics `Curve25519.Signing.PublicKey`, `struct PublicKey`:
        /// https://developer.apple.com/documentation/cryptokit/curve25519/signing/publickey
        @available(iOS 13.0, macOS 10.15, tvOS 13.0, watchOS 6.0, visionOS 1.0, macCatalyst 13.0, *)
        public struct PublicKey: Sendable {
            /// Mimics `init<D>(rawRepresentation: D) throws where D : ContiguousBytes`:
            /// https://developer.apple.com/documentation/cryptokit/curve25519/signing/publickey/init(rawrepresentation:)
            @available(iOS 13.0, macOS 10.15, tvOS 13.0, watchOS 6.0, visionOS 1.0, macCatalyst 13.0, *)
            public init<D: ContiguousBytes>(rawRepresentation: D) throws { stub() }

            /// Mimics `var rawRepresentation: Data { get }`:
            /// https://developer.apple.com/documentation/cryptokit/curve25519/signing/publickey/rawrepresentation
            @available(iOS 13.0, macOS 10.15, tvOS 13.0, watchOS 6.0, visionOS 1.0, macCatalyst 13.0, *)
            public var rawRepresentation: Data { stub() }

            /// Mimics `func isValidSignature<S, D>(_ signature: S, for data: D) -> Bool where S :
            /// DataProtocol, D : DataProtocol`:
            /// https://developer.apple.com/documentation/cryptokit/curve25519/signing/publickey/isvalidsignature(_:for:)
            @available(iOS 13.0, macOS 10.15, tvOS 13.0, watchOS 6.0, visionOS 1.0, macCatalyst 13.0, *)
            public func isValidSignature<S: DataProtocol, D: DataProtocol>(_ signature: S, for data: D) -> Bool {
                stub()
            }
        }

        /// Mimics `Curve25519.Signing.PrivateKey`, `struct PrivateKey`:
        /// https://developer.apple.com/documentation/cryptokit/curve25519/signing/privatekey
        @available(iOS 13.0, macOS 10.15, tvOS 13.0, watchOS 6.0, visionOS 1.0, macCatalyst 13.0, *)
        public struct PrivateKey: Sendable {
            /// Mimics `init()`: https://developer.apple.com/documentation/cryptokit/curve25519/signing/privatekey/init()
            @available(iOS 13.0, macOS 10.15, tvOS 13.0, watchOS 6.0, visionOS 1.0, macCatalyst 13.0, *)
            public init() { stub() }

            /// Mimics `init<D>(rawRepresentation data: D) throws where D : ContiguousBytes`:
            /// https://developer.apple.com/documentation/cryptokit/curve25519/signing/privatekey/init(rawrepresentation:)
            @available(iOS 13.0, macOS 10.15, tvOS 13.0, watchOS 6.0, visionOS 1.0, macCatalyst 13.0, *)
            public init<D: ContiguousBytes>(rawRepresentation data: D) throws { stub() }

            /// Mimics `var publicKey: Curve25519.Signing.PublicKey { get }`:
            /// https://developer.apple.com/documentation/cryptokit/curve25519/signing/privatekey/publickey
            @available(iOS 13.0, macOS 10.15, tvOS 13.0, watchOS 6.0, visionOS 1.0, macCatalyst 13.0, *)
            public var publicKey: Curve25519.Signing.PublicKey { stub() }

            /// Mimics `var rawRepresentation: Data { get }`:
            /// https://developer.apple.com/documentation/cryptokit/curve25519/signing/privatekey/rawrepresentation
            @available(iOS 13.0, macOS 10.15, tvOS 13.0, watchOS 6.0, visionOS 1.0, macCatalyst 13.0, *)
            public var rawRepresentation: Data { stub() }

            /// Mimics `func signature<D>(for data: D) throws -> Data where D : DataProtocol`:
            /// https://developer.apple.com/documentation/cryptokit/curve25519/signing/privatekey/signature(for:)
            @available(iOS 13.0, macOS 10.15, tvOS 13.0, watchOS 6.0, visionOS 1.0, macCatalyst 13.0, *)
            public func signature<D: DataProtocol>(for data: D) throws -> Data { stub() }
        }
    }
}
