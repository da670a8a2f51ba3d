// CryptoKit's post-quantum algorithms, new in iOS 26 and macOS 26: the X-Wing KEM (ML-KEM-768 with
// X25519), which Sigil seals with through HPKE, and ML-DSA-65 and ML-DSA-87 signatures.
//
// Signatures: Apple's, as its documentation gives them (and as swift-crypto, which mirrors CryptoKit's
// API, declares them). Availability: each declaration's, from its documentation page where that was
// looked up; where it was not, the version of CryptoKit's first release that the pages which were
// looked up give its siblings (iOS 13, macOS 10.15, tvOS 13, watchOS 6, visionOS 1), or what a comment
// beside it says. The stubs' report lists which is which.
import Foundation

/// Mimics `XWingMLKEM768X25519`, `enum XWingMLKEM768X25519`:
/// https://developer.apple.com/documentation/cryptokit/xwingmlkem768x25519
@available(iOS 26.0, macOS 26.0, tvOS 26.0, watchOS 26.0, visionOS 26.0, macCatalyst 26.0, *)
public enum XWingMLKEM768X25519: Sendable {
    /// Mimics `XWingMLKEM768X25519.PublicKey`, `struct PublicKey` (`HPKEKEMPublicKey`, `KEMPublicKey`,
    /// `HPKEPublicKeySerialization`, `Sendable`):
    /// https://developer.apple.com/documentation/cryptokit/xwingmlkem768x25519/publickey
    @available(iOS 26.0, macOS 26.0, tvOS 26.0, watchOS 26.0, visionOS 26.0, macCatalyst 26.0, *)
    public struct PublicKey: HPKEKEMPublicKey {
        /// Mimics `typealias HPKEEphemeralPrivateKey`, the ephemeral key type, which `HPKEKEMPublicKey`
        /// calls `EphemeralPrivateKey`:
        /// https://developer.apple.com/documentation/cryptokit/xwingmlkem768x25519/publickey/hpkeephemeralprivatekey
        public typealias HPKEEphemeralPrivateKey = XWingMLKEM768X25519.PrivateKey
        public typealias EphemeralPrivateKey = XWingMLKEM768X25519.PrivateKey

        /// Mimics `init<D>(rawRepresentation: D) throws where D : ContiguousBytes`:
        /// https://developer.apple.com/documentation/cryptokit/xwingmlkem768x25519/publickey/init(rawrepresentation:)
        @available(iOS 26.0, macOS 26.0, tvOS 26.0, watchOS 26.0, visionOS 26.0, macCatalyst 26.0, *)
        public init<D: ContiguousBytes>(rawRepresentation: D) throws { stub() }

        /// Mimics `var rawRepresentation: Data { get }`:
        /// https://developer.apple.com/documentation/cryptokit/xwingmlkem768x25519/publickey/rawrepresentation
        @available(iOS 26.0, macOS 26.0, tvOS 26.0, watchOS 26.0, visionOS 26.0, macCatalyst 26.0, *)
        public var rawRepresentation: Data { stub() }

        /// Mimics `init<D>(_ serialization: D, kem: HPKE.KEM) throws where D : ContiguousBytes`:
        /// https://developer.apple.com/documentation/cryptokit/xwingmlkem768x25519/publickey/init(_:kem:)
        @available(iOS 26.0, macOS 26.0, tvOS 26.0, watchOS 26.0, visionOS 26.0, macCatalyst 26.0, *)
        public init<D: ContiguousBytes>(_ serialization: D, kem: HPKE.KEM) throws { stub() }

        /// Mimics `func hpkeRepresentation(kem: HPKE.KEM) throws -> Data`:
        /// https://developer.apple.com/documentation/cryptokit/xwingmlkem768x25519/publickey/hpkerepresentation(kem:)
        @available(iOS 26.0, macOS 26.0, tvOS 26.0, watchOS 26.0, visionOS 26.0, macCatalyst 26.0, *)
        public func hpkeRepresentation(kem: HPKE.KEM) throws -> Data { stub() }

        /// Mimics `func encapsulate() throws -> KEM.EncapsulationResult`:
        /// https://developer.apple.com/documentation/cryptokit/xwingmlkem768x25519/publickey/encapsulate()
        @available(iOS 26.0, macOS 26.0, tvOS 26.0, watchOS 26.0, visionOS 26.0, macCatalyst 26.0, *)
        public func encapsulate() throws -> KEM.EncapsulationResult { stub() }
    }

    /// Mimics `XWingMLKEM768X25519.PrivateKey`, `struct PrivateKey` (`HPKEKEMPrivateKeyGeneration`,
    /// `HPKEKEMPrivateKey`, `KEMPrivateKey`, `Sendable`):
    /// https://developer.apple.com/documentation/cryptokit/xwingmlkem768x25519/privatekey
    @available(iOS 26.0, macOS 26.0, tvOS 26.0, watchOS 26.0, visionOS 26.0, macCatalyst 26.0, *)
    public struct PrivateKey: HPKEKEMPrivateKeyGeneration {
        /// Mimics `init() throws` (`HPKEKEMPrivateKeyGeneration`):
        /// https://developer.apple.com/documentation/cryptokit/hpkekemprivatekeygeneration/init()
        @available(iOS 26.0, macOS 26.0, tvOS 26.0, watchOS 26.0, visionOS 26.0, macCatalyst 26.0, *)
        public init() throws { stub() }

        /// Mimics `static func generate() throws -> XWingMLKEM768X25519.PrivateKey` (`KEMPrivateKey`):
        /// https://developer.apple.com/documentation/cryptokit/kemprivatekey/generate()
        @available(iOS 26.0, macOS 26.0, tvOS 26.0, watchOS 26.0, visionOS 26.0, macCatalyst 26.0, *)
        public static func generate() throws -> XWingMLKEM768X25519.PrivateKey { stub() }

        /// Mimics `init<D>(seedRepresentation: D, publicKey: XWingMLKEM768X25519.PublicKey?) throws where D
        /// : DataProtocol`:
        /// https://developer.apple.com/documentation/cryptokit/xwingmlkem768x25519/privatekey/init(seedrepresentation:publickey:)
        @available(iOS 26.0, macOS 26.0, tvOS 26.0, watchOS 26.0, visionOS 26.0, macCatalyst 26.0, *)
        public init<D: DataProtocol>(seedRepresentation: D, publicKey: XWingMLKEM768X25519.PublicKey?) throws {
            stub()
        }

        /// Mimics `init<D>(integrityCheckedRepresentation: D) throws where D : DataProtocol`:
        /// https://developer.apple.com/documentation/cryptokit/xwingmlkem768x25519/privatekey/init(integritycheckedrepresentation:)
        @available(iOS 26.0, macOS 26.0, tvOS 26.0, watchOS 26.0, visionOS 26.0, macCatalyst 26.0, *)
        public init<D: DataProtocol>(integrityCheckedRepresentation: D) throws { stub() }

        /// Mimics `var seedRepresentation: Data { get }`:
        /// https://developer.apple.com/documentation/cryptokit/xwingmlkem768x25519/privatekey/seedrepresentation
        @available(iOS 26.0, macOS 26.0, tvOS 26.0, watchOS 26.0, visionOS 26.0, macCatalyst 26.0, *)
        public var seedRepresentation: Data { stub() }

        /// Mimics `var integrityCheckedRepresentation: Data { get }`:
        /// https://developer.apple.com/documentation/cryptokit/xwingmlkem768x25519/privatekey/integritycheckedrepresentation
        @available(iOS 26.0, macOS 26.0, tvOS 26.0, watchOS 26.0, visionOS 26.0, macCatalyst 26.0, *)
        public var integrityCheckedRepresentation: Data { stub() }

        /// Mimics `var publicKey: XWingMLKEM768X25519.PublicKey { get }` (`KEMPrivateKey`):
        /// https://developer.apple.com/documentation/cryptokit/kemprivatekey/publickey-swift.property
        @available(iOS 26.0, macOS 26.0, tvOS 26.0, watchOS 26.0, visionOS 26.0, macCatalyst 26.0, *)
        public var publicKey: XWingMLKEM768X25519.PublicKey { stub() }

        /// Mimics `func decapsulate(_ encapsulated: Data) throws -> SymmetricKey` (`KEMPrivateKey`):
        /// https://developer.apple.com/documentation/cryptokit/kemprivatekey/decapsulate(_:)
        @available(iOS 26.0, macOS 26.0, tvOS 26.0, watchOS 26.0, visionOS 26.0, macCatalyst 26.0, *)
        public func decapsulate(_ encapsulated: Data) throws -> SymmetricKey { stub() }
    }
}

/// Mimics `MLDSA65`, `enum MLDSA65`: https://developer.apple.com/documentation/cryptokit/mldsa65
@available(iOS 26.0, macOS 26.0, tvOS 26.0, watchOS 26.0, visionOS 26.0, macCatalyst 26.0, *)
public enum MLDSA65: Sendable {
    /// Mimics `MLDSA65.PublicKey`, `struct PublicKey`: https://developer.apple.com/documentation/cryptokit/mldsa65/publickey
    @available(iOS 26.0, macOS 26.0, tvOS 26.0, watchOS 26.0, visionOS 26.0, macCatalyst 26.0, *)
    public struct PublicKey: Sendable {
        /// Mimics `init<D>(rawRepresentation: D) throws where D : DataProtocol`:
        /// https://developer.apple.com/documentation/cryptokit/mldsa65/publickey/init(rawrepresentation:)
        @available(iOS 26.0, macOS 26.0, tvOS 26.0, watchOS 26.0, visionOS 26.0, macCatalyst 26.0, *)
        public init<D: DataProtocol>(rawRepresentation: D) throws { stub() }

        /// Mimics `var rawRepresentation: Data { get }`: https://developer.apple.com/documentation/cryptokit/mldsa65/publickey/rawrepresentation
        @available(iOS 26.0, macOS 26.0, tvOS 26.0, watchOS 26.0, visionOS 26.0, macCatalyst 26.0, *)
        public var rawRepresentation: Data { stub() }

        /// Mimics `func isValidSignature<S, D>(_ signature: S, for data: D) -> Bool where S : DataProtocol,
        /// D : DataProtocol`: https://developer.apple.com/documentation/cryptokit/mldsa65/publickey/isvalidsignature(_:for:)
        @available(iOS 26.0, macOS 26.0, tvOS 26.0, watchOS 26.0, visionOS 26.0, macCatalyst 26.0, *)
        public func isValidSignature<S: DataProtocol, D: DataProtocol>(_ signature: S, for data: D) -> Bool {
            stub()
        }

        /// Mimics `func isValidSignature<S, D, C>(_ signature: S, for data: D, context: C) -> Bool where S :
        /// DataProtocol, D : DataProtocol, C : DataProtocol`: https://developer.apple.com/documentation/cryptokit/mldsa65/publickey/isvalidsignature(_:for:context:)
        @available(iOS 26.0, macOS 26.0, tvOS 26.0, watchOS 26.0, visionOS 26.0, macCatalyst 26.0, *)
        public func isValidSignature<S: DataProtocol, D: DataProtocol, C: DataProtocol>(
            _ signature: S, for data: D, context: C
        ) -> Bool { stub() }
    }

    /// Mimics `MLDSA65.PrivateKey`, `struct PrivateKey`: https://developer.apple.com/documentation/cryptokit/mldsa65/privatekey
    @available(iOS 26.0, macOS 26.0, tvOS 26.0, watchOS 26.0, visionOS 26.0, macCatalyst 26.0, *)
    public struct PrivateKey: Sendable {
        /// Mimics `init() throws`: https://developer.apple.com/documentation/cryptokit/mldsa65/privatekey/init()
        @available(iOS 26.0, macOS 26.0, tvOS 26.0, watchOS 26.0, visionOS 26.0, macCatalyst 26.0, *)
        public init() throws { stub() }

        /// Mimics `init<D>(seedRepresentation: D, publicKey: MLDSA65.PublicKey?) throws where D : DataProtocol`:
        /// https://developer.apple.com/documentation/cryptokit/mldsa65/privatekey/init(seedrepresentation:publickey:)
        @available(iOS 26.0, macOS 26.0, tvOS 26.0, watchOS 26.0, visionOS 26.0, macCatalyst 26.0, *)
        public init<D: DataProtocol>(seedRepresentation: D, publicKey: MLDSA65.PublicKey?) throws { stub() }

        /// Mimics `init<D>(integrityCheckedRepresentation: D) throws where D : DataProtocol`:
        /// https://developer.apple.com/documentation/cryptokit/mldsa65/privatekey/init(integritycheckedrepresentation:)
        @available(iOS 26.0, macOS 26.0, tvOS 26.0, watchOS 26.0, visionOS 26.0, macCatalyst 26.0, *)
        public init<D: DataProtocol>(integrityCheckedRepresentation: D) throws { stub() }

        /// Mimics `var publicKey: MLDSA65.PublicKey { get }`: https://developer.apple.com/documentation/cryptokit/mldsa65/privatekey/publickey
        @available(iOS 26.0, macOS 26.0, tvOS 26.0, watchOS 26.0, visionOS 26.0, macCatalyst 26.0, *)
        public var publicKey: MLDSA65.PublicKey { stub() }

        /// Mimics `var seedRepresentation: Data { get }`: https://developer.apple.com/documentation/cryptokit/mldsa65/privatekey/seedrepresentation
        @available(iOS 26.0, macOS 26.0, tvOS 26.0, watchOS 26.0, visionOS 26.0, macCatalyst 26.0, *)
        public var seedRepresentation: Data { stub() }

        /// Mimics `var integrityCheckedRepresentation: Data { get }`:
        /// https://developer.apple.com/documentation/cryptokit/mldsa65/privatekey/integritycheckedrepresentation
        @available(iOS 26.0, macOS 26.0, tvOS 26.0, watchOS 26.0, visionOS 26.0, macCatalyst 26.0, *)
        public var integrityCheckedRepresentation: Data { stub() }

        /// Mimics `func signature<D>(for data: D) throws -> Data where D : DataProtocol`:
        /// https://developer.apple.com/documentation/cryptokit/mldsa65/privatekey/signature(for:)
        @available(iOS 26.0, macOS 26.0, tvOS 26.0, watchOS 26.0, visionOS 26.0, macCatalyst 26.0, *)
        public func signature<D: DataProtocol>(for data: D) throws -> Data { stub() }

        /// Mimics `func signature<D, C>(for data: D, context: C) throws -> Data where D : DataProtocol, C :
        /// DataProtocol`: https://developer.apple.com/documentation/cryptokit/mldsa65/privatekey/signature(for:context:)
        @available(iOS 26.0, macOS 26.0, tvOS 26.0, watchOS 26.0, visionOS 26.0, macCatalyst 26.0, *)
        public func signature<D: DataProtocol, C: DataProtocol>(for data: D, context: C) throws -> Data { stub() }
    }
}

/// Mimics `MLDSA87`, `enum MLDSA87`: https://developer.apple.com/documentation/cryptokit/mldsa87
@available(iOS 26.0, macOS 26.0, tvOS 26.0, watchOS 26.0, visionOS 26.0, macCatalyst 26.0, *)
public enum MLDSA87: Sendable {
    /// Mimics `MLDSA87.PublicKey`, `struct PublicKey`: https://developer.apple.com/documentation/cryptokit/mldsa87/publickey
    @available(iOS 26.0, macOS 26.0, tvOS 26.0, watchOS 26.0, visionOS 26.0, macCatalyst 26.0, *)
    public struct PublicKey: Sendable {
        /// Mimics `init<D>(rawRepresentation: D) throws where D : DataProtocol`:
        /// https://developer.apple.com/documentation/cryptokit/mldsa87/publickey/init(rawrepresentation:)
        @available(iOS 26.0, macOS 26.0, tvOS 26.0, watchOS 26.0, visionOS 26.0, macCatalyst 26.0, *)
        public init<D: DataProtocol>(rawRepresentation: D) throws { stub() }

        /// Mimics `var rawRepresentation: Data { get }`: https://developer.apple.com/documentation/cryptokit/mldsa87/publickey/rawrepresentation
        @available(iOS 26.0, macOS 26.0, tvOS 26.0, watchOS 26.0, visionOS 26.0, macCatalyst 26.0, *)
        public var rawRepresentation: Data { stub() }

        /// Mimics `func isValidSignature<S, D>(_ signature: S, for data: D) -> Bool where S : DataProtocol,
        /// D : DataProtocol`: https://developer.apple.com/documentation/cryptokit/mldsa87/publickey/isvalidsignature(_:for:)
        @available(iOS 26.0, macOS 26.0, tvOS 26.0, watchOS 26.0, visionOS 26.0, macCatalyst 26.0, *)
        public func isValidSignature<S: DataProtocol, D: DataProtocol>(_ signature: S, for data: D) -> Bool {
            stub()
        }

        /// Mimics `func isValidSignature<S, D, C>(_ signature: S, for data: D, context: C) -> Bool where S :
        /// DataProtocol, D : DataProtocol, C : DataProtocol`: https://developer.apple.com/documentation/cryptokit/mldsa87/publickey/isvalidsignature(_:for:context:)
        @available(iOS 26.0, macOS 26.0, tvOS 26.0, watchOS 26.0, visionOS 26.0, macCatalyst 26.0, *)
        public func isValidSignature<S: DataProtocol, D: DataProtocol, C: DataProtocol>(
            _ signature: S, for data: D, context: C
        ) -> Bool { stub() }
    }

    /// Mimics `MLDSA87.PrivateKey`, `struct PrivateKey`: https://developer.apple.com/documentation/cryptokit/mldsa87/privatekey
    @available(iOS 26.0, macOS 26.0, tvOS 26.0, watchOS 26.0, visionOS 26.0, macCatalyst 26.0, *)
    public struct PrivateKey: Sendable {
        /// Mimics `init() throws`: https://developer.apple.com/documentation/cryptokit/mldsa87/privatekey/init()
        @available(iOS 26.0, macOS 26.0, tvOS 26.0, watchOS 26.0, visionOS 26.0, macCatalyst 26.0, *)
        public init() throws { stub() }

        /// Mimics `init<D>(seedRepresentation: D, publicKey: MLDSA87.PublicKey?) throws where D : DataProtocol`:
        /// https://developer.apple.com/documentation/cryptokit/mldsa87/privatekey/init(seedrepresentation:publickey:)
        @available(iOS 26.0, macOS 26.0, tvOS 26.0, watchOS 26.0, visionOS 26.0, macCatalyst 26.0, *)
        public init<D: DataProtocol>(seedRepresentation: D, publicKey: MLDSA87.PublicKey?) throws { stub() }

        /// Mimics `init<D>(integrityCheckedRepresentation: D) throws where D : DataProtocol`:
        /// https://developer.apple.com/documentation/cryptokit/mldsa87/privatekey/init(integritycheckedrepresentation:)
        @available(iOS 26.0, macOS 26.0, tvOS 26.0, watchOS 26.0, visionOS 26.0, macCatalyst 26.0, *)
        public init<D: DataProtocol>(integrityCheckedRepresentation: D) throws { stub() }

        /// Mimics `var publicKey: MLDSA87.PublicKey { get }`: https://developer.apple.com/documentation/cryptokit/mldsa87/privatekey/publickey
        @available(iOS 26.0, macOS 26.0, tvOS 26.0, watchOS 26.0, visionOS 26.0, macCatalyst 26.0, *)
        public var publicKey: MLDSA87.PublicKey { stub() }

        /// Mimics `var seedRepresentation: Data { get }`: https://developer.apple.com/documentation/cryptokit/mldsa87/privatekey/seedrepresentation
        @available(iOS 26.0, macOS 26.0, tvOS 26.0, watchOS 26.0, visionOS 26.0, macCatalyst 26.0, *)
        public var seedRepresentation: Data { stub() }

        /// Mimics `var integrityCheckedRepresentation: Data { get }`:
        /// https://developer.apple.com/documentation/cryptokit/mldsa87/privatekey/integritycheckedrepresentation
        @available(iOS 26.0, macOS 26.0, tvOS 26.0, watchOS 26.0, visionOS 26.0, macCatalyst 26.0, *)
        public var integrityCheckedRepresentation: Data { stub() }

        /// Mimics `func signature<D>(for data: D) throws -> Data where D : DataProtocol`:
        /// https://developer.apple.com/documentation/cryptokit/mldsa87/privatekey/signature(for:)
        @available(iOS 26.0, macOS 26.0, tvOS 26.0, watchOS 26.0, visionOS 26.0, macCatalyst 26.0, *)
        public func signature<D: DataProtocol>(for data: D) throws -> Data { stub() }

        /// Mimics `func signature<D, C>(for data: D, context: C) throws -> Data where D : DataProtocol, C :
        /// DataProtocol`: https://developer.apple.com/documentation/cryptokit/mldsa87/privatekey/signature(for:context:)
        @available(iOS 26.0, macOS 26.0, tvOS 26.0, watchOS 26.0, visionOS 26.0, macCatalyst 26.0, *)
        public func signature<D: DataProtocol, C: DataProtocol>(for data: D, context: C) throws -> Data { stub() }
    }
}
