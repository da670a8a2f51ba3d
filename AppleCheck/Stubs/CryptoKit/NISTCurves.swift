// CryptoKit's NIST curves P-256 and P-384, as far as Sigil uses them: ECDSA signing keys and
// signatures (key agreement is left out).
//
// Signatures: Apple's, as its documentation gives them (and as swift-crypto, which mirrors CryptoKit's
// API, declares them). Availability: each declaration's, from its documentation page where that was
// looked up; where it was not, the version of CryptoKit's first release that the pages which were
// looked up give its siblings (iOS 13, macOS 10.15, tvOS 13, watchOS 6, visionOS 1), or what a comment
// beside it says. The stubs' report lists which is which.
import Foundation

/// Mimics `P256`, `enum P256`: https://developer.apple.com/documentation/cryptokit/p256
@available(iOS 13.0, macOS 10.15, tvOS 13.0, watchOS 6.0, visionOS 1.0, macCatalyst 13.0, *)
public enum P256: Sendable {
    /// Mimics `P256.Signing`, `enum Signing`: https://developer.apple.com/documentation/cryptokit/p256/signing
    @available(iOS 13.0, macOS 10.15, tvOS 13.0, watchOS 6.0, visionOS 1.0, macCatalyst 13.0, *)
    public enum Signing: Sendable {
        /// Mimics `P256.Signing.PublicKey`, `struct PublicKey`: https://developer.apple.com/documentation/cryptokit/p256/signing/publickey
        @available(iOS 13.0, macOS 10.15, tvOS 13.0, watchOS 6.0, visionOS 1.0, macCatalyst 13.0, *)
        public struct PublicKey: Sendable {
            /// Mimics `init<D>(rawRepresentation: D) throws where D : ContiguousBytes`:
            /// https://developer.apple.com/documentation/cryptokit/p256/signing/publickey/init(rawrepresentation:)
            @available(iOS 13.0, macOS 10.15, tvOS 13.0, watchOS 6.0, visionOS 1.0, macCatalyst 13.0, *)
            public init<D: ContiguousBytes>(rawRepresentation: D) throws { stub() }

            /// Mimics `init<Bytes>(x963Representation: Bytes) throws where Bytes : ContiguousBytes`:
            /// https://developer.apple.com/documentation/cryptokit/p256/signing/publickey/init(x963representation:)
            @available(iOS 13.0, macOS 10.15, tvOS 13.0, watchOS 6.0, visionOS 1.0, macCatalyst 13.0, *)
            public init<Bytes: ContiguousBytes>(x963Representation: Bytes) throws { stub() }

            /// Mimics `init<Bytes>(compactRepresentation: Bytes) throws where Bytes : ContiguousBytes`:
            /// https://developer.apple.com/documentation/cryptokit/p256/signing/publickey/init(compactrepresentation:)
            @available(iOS 13.0, macOS 10.15, tvOS 13.0, watchOS 6.0, visionOS 1.0, macCatalyst 13.0, *)
            public init<Bytes: ContiguousBytes>(compactRepresentation: Bytes) throws { stub() }

            /// Mimics `init<Bytes>(compressedRepresentation: Bytes) throws where Bytes : ContiguousBytes`:
            /// https://developer.apple.com/documentation/cryptokit/p256/signing/publickey/init(compressedrepresentation:)
            @available(iOS 16.0, macOS 13.0, tvOS 16.0, watchOS 9.0, visionOS 1.0, macCatalyst 16.0, *)
            public init<Bytes: ContiguousBytes>(compressedRepresentation: Bytes) throws { stub() }

            /// Mimics `init<Bytes>(derRepresentation: Bytes) throws where Bytes : RandomAccessCollection,
            /// Bytes.Element == UInt8`: https://developer.apple.com/documentation/cryptokit/p256/signing/publickey/init(derrepresentation:)
            @available(iOS 14.0, macOS 11.0, tvOS 14.0, watchOS 7.0, visionOS 1.0, macCatalyst 14.0, *)
            public init<Bytes: RandomAccessCollection>(derRepresentation: Bytes) throws where Bytes.Element == UInt8 {
                stub()
            }

            /// Mimics `init(pemRepresentation: String) throws`: https://developer.apple.com/documentation/cryptokit/p256/signing/publickey/init(pemrepresentation:)
            @available(iOS 14.0, macOS 11.0, tvOS 14.0, watchOS 7.0, visionOS 1.0, macCatalyst 14.0, *)
            public init(pemRepresentation: String) throws { stub() }

            /// Mimics `var rawRepresentation: Data { get }`: https://developer.apple.com/documentation/cryptokit/p256/signing/publickey/rawrepresentation
            @available(iOS 13.0, macOS 10.15, tvOS 13.0, watchOS 6.0, visionOS 1.0, macCatalyst 13.0, *)
            public var rawRepresentation: Data { stub() }

            /// Mimics `var x963Representation: Data { get }`: https://developer.apple.com/documentation/cryptokit/p256/signing/publickey/x963representation
            @available(iOS 13.0, macOS 10.15, tvOS 13.0, watchOS 6.0, visionOS 1.0, macCatalyst 13.0, *)
            public var x963Representation: Data { stub() }

            /// Mimics `var compactRepresentation: Data? { get }`: https://developer.apple.com/documentation/cryptokit/p256/signing/publickey/compactrepresentation
            @available(iOS 13.0, macOS 10.15, tvOS 13.0, watchOS 6.0, visionOS 1.0, macCatalyst 13.0, *)
            public var compactRepresentation: Data? { stub() }

            /// Mimics `var compressedRepresentation: Data { get }`:
            /// https://developer.apple.com/documentation/cryptokit/p256/signing/publickey/compressedrepresentation
            @available(iOS 16.0, macOS 13.0, tvOS 16.0, watchOS 9.0, visionOS 1.0, macCatalyst 16.0, *)
            public var compressedRepresentation: Data { stub() }

            /// Mimics `var derRepresentation: Data { get }`: https://developer.apple.com/documentation/cryptokit/p256/signing/publickey/derrepresentation
            @available(iOS 14.0, macOS 11.0, tvOS 14.0, watchOS 7.0, visionOS 1.0, macCatalyst 14.0, *)
            public var derRepresentation: Data { stub() }

            /// Mimics `var pemRepresentation: String { get }`: https://developer.apple.com/documentation/cryptokit/p256/signing/publickey/pemrepresentation
            @available(iOS 14.0, macOS 11.0, tvOS 14.0, watchOS 7.0, visionOS 1.0, macCatalyst 14.0, *)
            public var pemRepresentation: String { stub() }

            /// Mimics `func isValidSignature<D>(_ signature: P256.Signing.ECDSASignature, for digest: D) -> Bool
            /// where D : Digest`: https://developer.apple.com/documentation/cryptokit/p256/signing/publickey/isvalidsignature(_:for:)
            @available(iOS 13.0, macOS 10.15, tvOS 13.0, watchOS 6.0, visionOS 1.0, macCatalyst 13.0, *)
            public func isValidSignature<D: Digest>(_ signature: P256.Signing.ECDSASignature, for digest: D) -> Bool {
                stub()
            }

            /// Mimics `func isValidSignature<D>(_ signature: P256.Signing.ECDSASignature, for data: D) -> Bool
            /// where D : DataProtocol`: https://developer.apple.com/documentation/cryptokit/p256/signing/publickey/isvalidsignature(_:for:)
            @available(iOS 13.0, macOS 10.15, tvOS 13.0, watchOS 6.0, visionOS 1.0, macCatalyst 13.0, *)
            public func isValidSignature<D: DataProtocol>(_ signature: P256.Signing.ECDSASignature, for data: D) -> Bool {
                stub()
            }
        }

        /// Mimics `P256.Signing.PrivateKey`, `struct PrivateKey`: https://developer.apple.com/documentation/cryptokit/p256/signing/privatekey
        @available(iOS 13.0, macOS 10.15, tvOS 13.0, watchOS 6.0, visionOS 1.0, macCatalyst 13.0, *)
        public struct PrivateKey: Sendable {
            /// Mimics `init(compactRepresentable: Bool = true)`:
            /// https://developer.apple.com/documentation/cryptokit/p256/signing/privatekey/init(compactrepresentable:)
            @available(iOS 13.0, macOS 10.15, tvOS 13.0, watchOS 6.0, visionOS 1.0, macCatalyst 13.0, *)
            public init(compactRepresentable: Bool = true) { stub() }

            /// Mimics `init<Bytes>(rawRepresentation: Bytes) throws where Bytes : ContiguousBytes`:
            /// https://developer.apple.com/documentation/cryptokit/p256/signing/privatekey/init(rawrepresentation:)
            @available(iOS 13.0, macOS 10.15, tvOS 13.0, watchOS 6.0, visionOS 1.0, macCatalyst 13.0, *)
            public init<Bytes: ContiguousBytes>(rawRepresentation: Bytes) throws { stub() }

            /// Mimics `init<Bytes>(x963Representation: Bytes) throws where Bytes : ContiguousBytes`:
            /// https://developer.apple.com/documentation/cryptokit/p256/signing/privatekey/init(x963representation:)
            @available(iOS 13.0, macOS 10.15, tvOS 13.0, watchOS 6.0, visionOS 1.0, macCatalyst 13.0, *)
            public init<Bytes: ContiguousBytes>(x963Representation: Bytes) throws { stub() }

            /// Mimics `init<Bytes>(derRepresentation: Bytes) throws where Bytes : RandomAccessCollection,
            /// Bytes.Element == UInt8`: https://developer.apple.com/documentation/cryptokit/p256/signing/privatekey/init(derrepresentation:)
            @available(iOS 14.0, macOS 11.0, tvOS 14.0, watchOS 7.0, visionOS 1.0, macCatalyst 14.0, *)
            public init<Bytes: RandomAccessCollection>(derRepresentation: Bytes) throws where Bytes.Element == UInt8 {
                stub()
            }

            /// Mimics `init(pemRepresentation: String) throws`: https://developer.apple.com/documentation/cryptokit/p256/signing/privatekey/init(pemrepresentation:)
            @available(iOS 14.0, macOS 11.0, tvOS 14.0, watchOS 7.0, visionOS 1.0, macCatalyst 14.0, *)
            public init(pemRepresentation: String) throws { stub() }

            /// Mimics `var publicKey: P256.Signing.PublicKey { get }`: https://developer.apple.com/documentation/cryptokit/p256/signing/privatekey/publickey
            @available(iOS 13.0, macOS 10.15, tvOS 13.0, watchOS 6.0, visionOS 1.0, macCatalyst 13.0, *)
            public var publicKey: P256.Signing.PublicKey { stub() }

            /// Mimics `var rawRepresentation: Data { get }`: https://developer.apple.com/documentation/cryptokit/p256/signing/privatekey/rawrepresentation
            @available(iOS 13.0, macOS 10.15, tvOS 13.0, watchOS 6.0, visionOS 1.0, macCatalyst 13.0, *)
            public var rawRepresentation: Data { stub() }

            /// Mimics `var x963Representation: Data { get }`: https://developer.apple.com/documentation/cryptokit/p256/signing/privatekey/x963representation
            @available(iOS 13.0, macOS 10.15, tvOS 13.0, watchOS 6.0, visionOS 1.0, macCatalyst 13.0, *)
            public var x963Representation: Data { stub() }

            /// Mimics `var derRepresentation: Data { get }`: https://developer.apple.com/documentation/cryptokit/p256/signing/privatekey/derrepresentation
            @available(iOS 14.0, macOS 11.0, tvOS 14.0, watchOS 7.0, visionOS 1.0, macCatalyst 14.0, *)
            public var derRepresentation: Data { stub() }

            /// Mimics `var pemRepresentation: String { get }`: https://developer.apple.com/documentation/cryptokit/p256/signing/privatekey/pemrepresentation
            @available(iOS 14.0, macOS 11.0, tvOS 14.0, watchOS 7.0, visionOS 1.0, macCatalyst 14.0, *)
            public var pemRepresentation: String { stub() }

            /// Mimics `func signature<D>(for digest: D) throws -> P256.Signing.ECDSASignature where D : Digest`:
            /// https://developer.apple.com/documentation/cryptokit/p256/signing/privatekey/signature(for:)
            @available(iOS 13.0, macOS 10.15, tvOS 13.0, watchOS 6.0, visionOS 1.0, macCatalyst 13.0, *)
            public func signature<D: Digest>(for digest: D) throws -> P256.Signing.ECDSASignature { stub() }

            /// Mimics `func signature<D>(for data: D) throws -> P256.Signing.ECDSASignature where D : DataProtocol`:
            /// https://developer.apple.com/documentation/cryptokit/p256/signing/privatekey/signature(for:)
            @available(iOS 13.0, macOS 10.15, tvOS 13.0, watchOS 6.0, visionOS 1.0, macCatalyst 13.0, *)
            public func signature<D: DataProtocol>(for data: D) throws -> P256.Signing.ECDSASignature { stub() }
        }

        /// Mimics `P256.Signing.ECDSASignature`, `struct ECDSASignature` (`ContiguousBytes`, `Sendable`):
        /// https://developer.apple.com/documentation/cryptokit/p256/signing/ecdsasignature
        @available(iOS 13.0, macOS 10.15, tvOS 13.0, watchOS 6.0, visionOS 1.0, macCatalyst 13.0, *)
        public struct ECDSASignature: ContiguousBytes, Sendable {
            /// Mimics `var rawRepresentation: Data`: https://developer.apple.com/documentation/cryptokit/p256/signing/ecdsasignature/rawrepresentation
            @available(iOS 13.0, macOS 10.15, tvOS 13.0, watchOS 6.0, visionOS 1.0, macCatalyst 13.0, *)
            public var rawRepresentation: Data { get { stub() } set { stub() } }

            /// Mimics `init<D>(rawRepresentation: D) throws where D : DataProtocol`:
            /// https://developer.apple.com/documentation/cryptokit/p256/signing/ecdsasignature/init(rawrepresentation:)
            @available(iOS 13.0, macOS 10.15, tvOS 13.0, watchOS 6.0, visionOS 1.0, macCatalyst 13.0, *)
            public init<D: DataProtocol>(rawRepresentation: D) throws { stub() }

            /// Mimics `init<D>(derRepresentation: D) throws where D : DataProtocol`:
            /// https://developer.apple.com/documentation/cryptokit/p256/signing/ecdsasignature/init(derrepresentation:)
            @available(iOS 13.0, macOS 10.15, tvOS 13.0, watchOS 6.0, visionOS 1.0, macCatalyst 13.0, *)
            public init<D: DataProtocol>(derRepresentation: D) throws { stub() }

            /// Mimics `var derRepresentation: Data { get }`: https://developer.apple.com/documentation/cryptokit/p256/signing/ecdsasignature/derrepresentation
            @available(iOS 13.0, macOS 10.15, tvOS 13.0, watchOS 6.0, visionOS 1.0, macCatalyst 13.0, *)
            public var derRepresentation: Data { stub() }

            /// Mimics `func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R`:
            /// https://developer.apple.com/documentation/cryptokit/p256/signing/ecdsasignature/withunsafebytes(_:)
            @available(iOS 13.0, macOS 10.15, tvOS 13.0, watchOS 6.0, visionOS 1.0, macCatalyst 13.0, *)
            public func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R { stub() }
        }
    }
}

/// Mimics `P384`, `enum P384`: https://developer.apple.com/documentation/cryptokit/p384
@available(iOS 13.0, macOS 10.15, tvOS 13.0, watchOS 6.0, visionOS 1.0, macCatalyst 13.0, *)
public enum P384: Sendable {
    /// Mimics `P384.Signing`, `enum Signing`: https://developer.apple.com/documentation/cryptokit/p384/signing
    @available(iOS 13.0, macOS 10.15, tvOS 13.0, watchOS 6.0, visionOS 1.0, macCatalyst 13.0, *)
    public enum Signing: Sendable {
        /// Mimics `P384.Signing.PublicKey`, `struct PublicKey`: https://developer.apple.com/documentation/cryptokit/p384/signing/publickey
        @available(iOS 13.0, macOS 10.15, tvOS 13.0, watchOS 6.0, visionOS 1.0, macCatalyst 13.0, *)
        public struct PublicKey: Sendable {
            /// Mimics `init<D>(rawRepresentation: D) throws where D : ContiguousBytes`:
            /// https://developer.apple.com/documentation/cryptokit/p384/signing/publickey/init(rawrepresentation:)
            @available(iOS 13.0, macOS 10.15, tvOS 13.0, watchOS 6.0, visionOS 1.0, macCatalyst 13.0, *)
            public init<D: ContiguousBytes>(rawRepresentation: D) throws { stub() }

            /// Mimics `init<Bytes>(x963Representation: Bytes) throws where Bytes : ContiguousBytes`:
            /// https://developer.apple.com/documentation/cryptokit/p384/signing/publickey/init(x963representation:)
            @available(iOS 13.0, macOS 10.15, tvOS 13.0, watchOS 6.0, visionOS 1.0, macCatalyst 13.0, *)
            public init<Bytes: ContiguousBytes>(x963Representation: Bytes) throws { stub() }

            /// Mimics `init<Bytes>(compactRepresentation: Bytes) throws where Bytes : ContiguousBytes`:
            /// https://developer.apple.com/documentation/cryptokit/p384/signing/publickey/init(compactrepresentation:)
            @available(iOS 13.0, macOS 10.15, tvOS 13.0, watchOS 6.0, visionOS 1.0, macCatalyst 13.0, *)
            public init<Bytes: ContiguousBytes>(compactRepresentation: Bytes) throws { stub() }

            /// Mimics `init<Bytes>(compressedRepresentation: Bytes) throws where Bytes : ContiguousBytes`:
            /// https://developer.apple.com/documentation/cryptokit/p384/signing/publickey/init(compressedrepresentation:)
            @available(iOS 16.0, macOS 13.0, tvOS 16.0, watchOS 9.0, visionOS 1.0, macCatalyst 16.0, *)
            public init<Bytes: ContiguousBytes>(compressedRepresentation: Bytes) throws { stub() }

            /// Mimics `init<Bytes>(derRepresentation: Bytes) throws where Bytes : RandomAccessCollection,
            /// Bytes.Element == UInt8`: https://developer.apple.com/documentation/cryptokit/p384/signing/publickey/init(derrepresentation:)
            @available(iOS 14.0, macOS 11.0, tvOS 14.0, watchOS 7.0, visionOS 1.0, macCatalyst 14.0, *)
            public init<Bytes: RandomAccessCollection>(derRepresentation: Bytes) throws where Bytes.Element == UInt8 {
                stub()
            }

            /// Mimics `init(pemRepresentation: String) throws`: https://developer.apple.com/documentation/cryptokit/p384/signing/publickey/init(pemrepresentation:)
            @available(iOS 14.0, macOS 11.0, tvOS 14.0, watchOS 7.0, visionOS 1.0, macCatalyst 14.0, *)
            public init(pemRepresentation: String) throws { stub() }

            /// Mimics `var rawRepresentation: Data { get }`: https://developer.apple.com/documentation/cryptokit/p384/signing/publickey/rawrepresentation
            @available(iOS 13.0, macOS 10.15, tvOS 13.0, watchOS 6.0, visionOS 1.0, macCatalyst 13.0, *)
            public var rawRepresentation: Data { stub() }

            /// Mimics `var x963Representation: Data { get }`: https://developer.apple.com/documentation/cryptokit/p384/signing/publickey/x963representation
            @available(iOS 13.0, macOS 10.15, tvOS 13.0, watchOS 6.0, visionOS 1.0, macCatalyst 13.0, *)
            public var x963Representation: Data { stub() }

            /// Mimics `var compactRepresentation: Data? { get }`: https://developer.apple.com/documentation/cryptokit/p384/signing/publickey/compactrepresentation
            @available(iOS 13.0, macOS 10.15, tvOS 13.0, watchOS 6.0, visionOS 1.0, macCatalyst 13.0, *)
            public var compactRepresentation: Data? { stub() }

            /// Mimics `var compressedRepresentation: Data { get }`:
            /// https://developer.apple.com/documentation/cryptokit/p384/signing/publickey/compressedrepresentation
            @available(iOS 16.0, macOS 13.0, tvOS 16.0, watchOS 9.0, visionOS 1.0, macCatalyst 16.0, *)
            public var compressedRepresentation: Data { stub() }

            /// Mimics `var derRepresentation: Data { get }`: https://developer.apple.com/documentation/cryptokit/p384/signing/publickey/derrepresentation
            @available(iOS 14.0, macOS 11.0, tvOS 14.0, watchOS 7.0, visionOS 1.0, macCatalyst 14.0, *)
            public var derRepresentation: Data { stub() }

            /// Mimics `var pemRepresentation: String { get }`: https://developer.apple.com/documentation/cryptokit/p384/signing/publickey/pemrepresentation
            @available(iOS 14.0, macOS 11.0, tvOS 14.0, watchOS 7.0, visionOS 1.0, macCatalyst 14.0, *)
            public var pemRepresentation: String { stub() }

            /// Mimics `func isValidSignature<D>(_ signature: P384.Signing.ECDSASignature, for digest: D) -> Bool
            /// where D : Digest`: https://developer.apple.com/documentation/cryptokit/p384/signing/publickey/isvalidsignature(_:for:)
            @available(iOS 13.0, macOS 10.15, tvOS 13.0, watchOS 6.0, visionOS 1.0, macCatalyst 13.0, *)
            public func isValidSignature<D: Digest>(_ signature: P384.Signing.ECDSASignature, for digest: D) -> Bool {
                stub()
            }

            /// Mimics `func isValidSignature<D>(_ signature: P384.Signing.ECDSASignature, for data: D) -> Bool
            /// where D : DataProtocol`: https://developer.apple.com/documentation/cryptokit/p384/signing/publickey/isvalidsignature(_:for:)
            @available(iOS 13.0, macOS 10.15, tvOS 13.0, watchOS 6.0, visionOS 1.0, macCatalyst 13.0, *)
            public func isValidSignature<D: DataProtocol>(_ signature: P384.Signing.ECDSASignature, for data: D) -> Bool {
                stub()
            }
        }

        /// Mimics `P384.Signing.PrivateKey`, `struct PrivateKey`: https://developer.apple.com/documentation/cryptokit/p384/signing/privatekey
        @available(iOS 13.0, macOS 10.15, tvOS 13.0, watchOS 6.0, visionOS 1.0, macCatalyst 13.0, *)
        public struct PrivateKey: Sendable {
            /// Mimics `init(compactRepresentable: Bool = true)`:
            /// https://developer.apple.com/documentation/cryptokit/p384/signing/privatekey/init(compactrepresentable:)
            @available(iOS 13.0, macOS 10.15, tvOS 13.0, watchOS 6.0, visionOS 1.0, macCatalyst 13.0, *)
            public init(compactRepresentable: Bool = true) { stub() }

            /// Mimics `init<Bytes>(rawRepresentation: Bytes) throws where Bytes : ContiguousBytes`:
            /// https://developer.apple.com/documentation/cryptokit/p384/signing/privatekey/init(rawrepresentation:)
            @available(iOS 13.0, macOS 10.15, tvOS 13.0, watchOS 6.0, visionOS 1.0, macCatalyst 13.0, *)
            public init<Bytes: ContiguousBytes>(rawRepresentation: Bytes) throws { stub() }

            /// Mimics `init<Bytes>(x963Representation: Bytes) throws where Bytes : ContiguousBytes`:
            /// https://developer.apple.com/documentation/cryptokit/p384/signing/privatekey/init(x963representation:)
            @available(iOS 13.0, macOS 10.15, tvOS 13.0, watchOS 6.0, visionOS 1.0, macCatalyst 13.0, *)
            public init<Bytes: ContiguousBytes>(x963Representation: Bytes) throws { stub() }

            /// Mimics `init<Bytes>(derRepresentation: Bytes) throws where Bytes : RandomAccessCollection,
            /// Bytes.Element == UInt8`: https://developer.apple.com/documentation/cryptokit/p384/signing/privatekey/init(derrepresentation:)
            @available(iOS 14.0, macOS 11.0, tvOS 14.0, watchOS 7.0, visionOS 1.0, macCatalyst 14.0, *)
            public init<Bytes: RandomAccessCollection>(derRepresentation: Bytes) throws where Bytes.Element == UInt8 {
                stub()
            }

            /// Mimics `init(pemRepresentation: String) throws`: https://developer.apple.com/documentation/cryptokit/p384/signing/privatekey/init(pemrepresentation:)
            @available(iOS 14.0, macOS 11.0, tvOS 14.0, watchOS 7.0, visionOS 1.0, macCatalyst 14.0, *)
            public init(pemRepresentation: String) throws { stub() }

            /// Mimics `var publicKey: P384.Signing.PublicKey { get }`: https://developer.apple.com/documentation/cryptokit/p384/signing/privatekey/publickey
            @available(iOS 13.0, macOS 10.15, tvOS 13.0, watchOS 6.0, visionOS 1.0, macCatalyst 13.0, *)
            public var publicKey: P384.Signing.PublicKey { stub() }

            /// Mimics `var rawRepresentation: Data { get }`: https://developer.apple.com/documentation/cryptokit/p384/signing/privatekey/rawrepresentation
            @available(iOS 13.0, macOS 10.15, tvOS 13.0, watchOS 6.0, visionOS 1.0, macCatalyst 13.0, *)
            public var rawRepresentation: Data { stub() }

            /// Mimics `var x963Representation: Data { get }`: https://developer.apple.com/documentation/cryptokit/p384/signing/privatekey/x963representation
            @available(iOS 13.0, macOS 10.15, tvOS 13.0, watchOS 6.0, visionOS 1.0, macCatalyst 13.0, *)
            public var x963Representation: Data { stub() }

            /// Mimics `var derRepresentation: Data { get }`: https://developer.apple.com/documentation/cryptokit/p384/signing/privatekey/derrepresentation
            @available(iOS 14.0, macOS 11.0, tvOS 14.0, watchOS 7.0, visionOS 1.0, macCatalyst 14.0, *)
            public var derRepresentation: Data { stub() }

            /// Mimics `var pemRepresentation: String { get }`: https://developer.apple.com/documentation/cryptokit/p384/signing/privatekey/pemrepresentation
            @available(iOS 14.0, macOS 11.0, tvOS 14.0, watchOS 7.0, visionOS 1.0, macCatalyst 14.0, *)
            public var pemRepresentation: String { stub() }

            /// Mimics `func signature<D>(for digest: D) throws -> P384.Signing.ECDSASignature where D : Digest`:
            /// https://developer.apple.com/documentation/cryptokit/p384/signing/privatekey/signature(for:)
            @available(iOS 13.0, macOS 10.15, tvOS 13.0, watchOS 6.0, visionOS 1.0, macCatalyst 13.0, *)
            public func signature<D: Digest>(for digest: D) throws -> P384.Signing.ECDSASignature { stub() }

            /// Mimics `func signature<D>(for data: D) throws -> P384.Signing.ECDSASignature where D : DataProtocol`:
            /// https://developer.apple.com/documentation/cryptokit/p384/signing/privatekey/signature(for:)
            @available(iOS 13.0, macOS 10.15, tvOS 13.0, watchOS 6.0, visionOS 1.0, macCatalyst 13.0, *)
            public func signature<D: DataProtocol>(for data: D) throws -> P384.Signing.ECDSASignature { stub() }
        }

        /// Mimics `P384.Signing.ECDSASignature`, `struct ECDSASignature` (`ContiguousBytes`, `Sendable`):
        /// https://developer.apple.com/documentation/cryptokit/p384/signing/ecdsasignature
        @available(iOS 13.0, macOS 10.15, tvOS 13.0, watchOS 6.0, visionOS 1.0, macCatalyst 13.0, *)
        public struct ECDSASignature: ContiguousBytes, Sendable {
            /// Mimics `var rawRepresentation: Data`: https://developer.apple.com/documentation/cryptokit/p384/signing/ecdsasignature/rawrepresentation
            @available(iOS 13.0, macOS 10.15, tvOS 13.0, watchOS 6.0, visionOS 1.0, macCatalyst 13.0, *)
            public var rawRepresentation: Data { get { stub() } set { stub() } }

            /// Mimics `init<D>(rawRepresentation: D) throws where D : DataProtocol`:
            /// https://developer.apple.com/documentation/cryptokit/p384/signing/ecdsasignature/init(rawrepresentation:)
            @available(iOS 13.0, macOS 10.15, tvOS 13.0, watchOS 6.0, visionOS 1.0, macCatalyst 13.0, *)
            public init<D: DataProtocol>(rawRepresentation: D) throws { stub() }

            /// Mimics `init<D>(derRepresentation: D) throws where D : DataProtocol`:
            /// https://developer.apple.com/documentation/cryptokit/p384/signing/ecdsasignature/init(derrepresentation:)
            @available(iOS 13.0, macOS 10.15, tvOS 13.0, watchOS 6.0, visionOS 1.0, macCatalyst 13.0, *)
            public init<D: DataProtocol>(derRepresentation: D) throws { stub() }

            /// Mimics `var derRepresentation: Data { get }`: https://developer.apple.com/documentation/cryptokit/p384/signing/ecdsasignature/derrepresentation
            @available(iOS 13.0, macOS 10.15, tvOS 13.0, watchOS 6.0, visionOS 1.0, macCatalyst 13.0, *)
            public var derRepresentation: Data { stub() }

            /// Mimics `func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R`:
            /// https://developer.apple.com/documentation/cryptokit/p384/signing/ecdsasignature/withunsafebytes(_:)
            @available(iOS 13.0, macOS 10.15, tvOS 13.0, watchOS 6.0, visionOS 1.0, macCatalyst 13.0, *)
            public func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R { stub() }
        }
    }
}
