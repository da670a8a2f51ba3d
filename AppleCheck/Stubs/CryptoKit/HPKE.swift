// CryptoKit's HPKE (RFC 9180) and key encapsulation, as far as Sigil uses them: base mode with a KEM
// key (X-Wing), sealing, opening and exporting secrets. The Diffie-Hellman modes and keys are left
// out.
//
// Signatures: Apple's, as its documentation gives them (and as swift-crypto, which mirrors CryptoKit's
// API, declares them). Availability: each declaration's, from its documentation page where that was
// looked up; where it was not, the version of CryptoKit's first release that the pages which were
// looked up give its siblings (iOS 13, macOS 10.15, tvOS 13, watchOS 6, visionOS 1), or what a comment
// beside it says. The stubs' report lists which is which.
import Foundation

/// Mimics `KEM`, `enum KEM`: https://developer.apple.com/documentation/cryptokit/kem
@available(iOS 17.0, macOS 14.0, tvOS 17.0, watchOS 10.0, visionOS 1.0, macCatalyst 17.0, *)
public enum KEM: Sendable {
    /// Mimics `KEM.EncapsulationResult`, `struct EncapsulationResult`:
    /// https://developer.apple.com/documentation/cryptokit/kem/encapsulationresult
    @available(iOS 17.0, macOS 14.0, tvOS 17.0, watchOS 10.0, visionOS 1.0, macCatalyst 17.0, *)
    public struct EncapsulationResult: Sendable {
        /// Mimics `let sharedSecret: SymmetricKey`:
        /// https://developer.apple.com/documentation/cryptokit/kem/encapsulationresult/sharedsecret
        @available(iOS 17.0, macOS 14.0, tvOS 17.0, watchOS 10.0, visionOS 1.0, macCatalyst 17.0, *)
        public let sharedSecret: SymmetricKey

        /// Mimics `let encapsulated: Data`:
        /// https://developer.apple.com/documentation/cryptokit/kem/encapsulationresult/encapsulated
        @available(iOS 17.0, macOS 14.0, tvOS 17.0, watchOS 10.0, visionOS 1.0, macCatalyst 17.0, *)
        public let encapsulated: Data

        /// Mimics `init(sharedSecret: SymmetricKey, encapsulated: Data)`:
        /// https://developer.apple.com/documentation/cryptokit/kem/encapsulationresult/init(sharedsecret:encapsulated:)
        @available(iOS 17.0, macOS 14.0, tvOS 17.0, watchOS 10.0, visionOS 1.0, macCatalyst 17.0, *)
        public init(sharedSecret: SymmetricKey, encapsulated: Data) { stub() }
    }
}

/// Mimics `KEMPublicKey`, `protocol KEMPublicKey : Sendable`:
/// https://developer.apple.com/documentation/cryptokit/kempublickey
@available(iOS 17.0, macOS 14.0, tvOS 17.0, watchOS 10.0, visionOS 1.0, macCatalyst 17.0, *)
public protocol KEMPublicKey: Sendable {
    /// Mimics `func encapsulate() throws -> KEM.EncapsulationResult`:
    /// https://developer.apple.com/documentation/cryptokit/kempublickey/encapsulate()
    func encapsulate() throws -> KEM.EncapsulationResult
}

/// Mimics `KEMPrivateKey`, `protocol KEMPrivateKey : Sendable`:
/// https://developer.apple.com/documentation/cryptokit/kemprivatekey
@available(iOS 17.0, macOS 14.0, tvOS 17.0, watchOS 10.0, visionOS 1.0, macCatalyst 17.0, *)
public protocol KEMPrivateKey: Sendable {
    /// Mimics `associatedtype PublicKey : KEMPublicKey`:
    /// https://developer.apple.com/documentation/cryptokit/kemprivatekey/publickey-swift.associatedtype
    associatedtype PublicKey: KEMPublicKey

    /// Mimics `static func generate() throws -> Self`:
    /// https://developer.apple.com/documentation/cryptokit/kemprivatekey/generate()
    static func generate() throws -> Self

    /// Mimics `func decapsulate(_ encapsulated: Data) throws -> SymmetricKey`:
    /// https://developer.apple.com/documentation/cryptokit/kemprivatekey/decapsulate(_:)
    func decapsulate(_ encapsulated: Data) throws -> SymmetricKey

    /// Mimics `var publicKey: Self.PublicKey { get }`:
    /// https://developer.apple.com/documentation/cryptokit/kemprivatekey/publickey-swift.property
    var publicKey: Self.PublicKey { get }
}

/// Mimics `HPKEPublicKeySerialization`, `protocol HPKEPublicKeySerialization : Sendable`:
/// https://developer.apple.com/documentation/cryptokit/hpkepublickeyserialization
@available(iOS 17.0, macOS 14.0, tvOS 17.0, watchOS 10.0, visionOS 1.0, macCatalyst 17.0, *)
public protocol HPKEPublicKeySerialization: Sendable {
    /// Mimics `init<D>(_ serialization: D, kem: HPKE.KEM) throws where D : ContiguousBytes`:
    /// https://developer.apple.com/documentation/cryptokit/hpkepublickeyserialization/init(_:kem:)
    init<D: ContiguousBytes>(_ serialization: D, kem: HPKE.KEM) throws

    /// Mimics `func hpkeRepresentation(kem: HPKE.KEM) throws -> Data`:
    /// https://developer.apple.com/documentation/cryptokit/hpkepublickeyserialization/hpkerepresentation(kem:)
    func hpkeRepresentation(kem: HPKE.KEM) throws -> Data
}

/// Mimics `HPKEKEMPublicKey`, `protocol HPKEKEMPublicKey : HPKEPublicKeySerialization, KEMPublicKey`:
/// https://developer.apple.com/documentation/cryptokit/hpkekempublickey
@available(iOS 26.0, macOS 26.0, tvOS 26.0, watchOS 26.0, visionOS 26.0, macCatalyst 26.0, *)
public protocol HPKEKEMPublicKey: HPKEPublicKeySerialization, KEMPublicKey {
    /// Mimics `associatedtype EphemeralPrivateKey : HPKEKEMPrivateKeyGeneration`:
    /// https://developer.apple.com/documentation/cryptokit/hpkekempublickey/ephemeralprivatekey
    associatedtype EphemeralPrivateKey: HPKEKEMPrivateKeyGeneration
}

/// Mimics `HPKEKEMPrivateKey`, `protocol HPKEKEMPrivateKey : KEMPrivateKey where Self.PublicKey :
/// HPKEKEMPublicKey`: https://developer.apple.com/documentation/cryptokit/hpkekemprivatekey
@available(iOS 26.0, macOS 26.0, tvOS 26.0, watchOS 26.0, visionOS 26.0, macCatalyst 26.0, *)
public protocol HPKEKEMPrivateKey: KEMPrivateKey where PublicKey: HPKEKEMPublicKey {}

/// Mimics `HPKEKEMPrivateKeyGeneration`, `protocol HPKEKEMPrivateKeyGeneration : HPKEKEMPrivateKey`:
/// https://developer.apple.com/documentation/cryptokit/hpkekemprivatekeygeneration
@available(iOS 26.0, macOS 26.0, tvOS 26.0, watchOS 26.0, visionOS 26.0, macCatalyst 26.0, *)
public protocol HPKEKEMPrivateKeyGeneration: HPKEKEMPrivateKey {
    /// Mimics `init() throws`: https://developer.apple.com/documentation/cryptokit/hpkekemprivatekeygeneration/init()
    init() throws
}

/// Mimics `HPKE`, `enum HPKE`: https://developer.apple.com/documentation/cryptokit/hpke
@available(iOS 17.0, macOS 14.0, tvOS 17.0, watchOS 10.0, visionOS 1.0, macCatalyst 17.0, *)
public enum HPKE: Sendable {
    /// Mimics `HPKE.KEM`, `enum KEM` (`CaseIterable`, `Hashable`, `Sendable`; its `allCases` is declared
    /// rather than synthesized, the X-Wing case being newer than the type):
    /// https://developer.apple.com/documentation/cryptokit/hpke/kem
    @available(iOS 17.0, macOS 14.0, tvOS 17.0, watchOS 10.0, visionOS 1.0, macCatalyst 17.0, *)
    public enum KEM: CaseIterable, Hashable, Sendable {
        /// Mimics `case P256_HKDF_SHA256`: https://developer.apple.com/documentation/cryptokit/hpke/kem/p256_hkdf_sha256
        case P256_HKDF_SHA256
        /// Mimics `case P384_HKDF_SHA384`: https://developer.apple.com/documentation/cryptokit/hpke/kem/p384_hkdf_sha384
        case P384_HKDF_SHA384
        /// Mimics `case P521_HKDF_SHA512`: https://developer.apple.com/documentation/cryptokit/hpke/kem/p521_hkdf_sha512
        case P521_HKDF_SHA512
        /// Mimics `case Curve25519_HKDF_SHA256`:
        /// https://developer.apple.com/documentation/cryptokit/hpke/kem/curve25519_hkdf_sha256
        case Curve25519_HKDF_SHA256
        /// Mimics `case XWingMLKEM768X25519`:
        /// https://developer.apple.com/documentation/cryptokit/hpke/kem/xwingmlkem768x25519
        @available(iOS 26.0, macOS 26.0, tvOS 26.0, watchOS 26.0, visionOS 26.0, macCatalyst 26.0, *)
        case XWingMLKEM768X25519

        /// Mimics `static var allCases: [HPKE.KEM] { get }`:
        /// https://developer.apple.com/documentation/cryptokit/hpke/kem/allcases
        public static var allCases: [HPKE.KEM] { stub() }
    }

    /// Mimics `HPKE.KDF`, `enum KDF`: https://developer.apple.com/documentation/cryptokit/hpke/kdf
    @available(iOS 17.0, macOS 14.0, tvOS 17.0, watchOS 10.0, visionOS 1.0, macCatalyst 17.0, *)
    public enum KDF: CaseIterable, Hashable, Sendable {
        /// Mimics `case HKDF_SHA256`: https://developer.apple.com/documentation/cryptokit/hpke/kdf/hkdf_sha256
        case HKDF_SHA256
        /// Mimics `case HKDF_SHA384`: https://developer.apple.com/documentation/cryptokit/hpke/kdf/hkdf_sha384
        case HKDF_SHA384
        /// Mimics `case HKDF_SHA512`: https://developer.apple.com/documentation/cryptokit/hpke/kdf/hkdf_sha512
        case HKDF_SHA512
    }

    /// Mimics `HPKE.AEAD`, `enum AEAD`: https://developer.apple.com/documentation/cryptokit/hpke/aead
    @available(iOS 17.0, macOS 14.0, tvOS 17.0, watchOS 10.0, visionOS 1.0, macCatalyst 17.0, *)
    public enum AEAD: CaseIterable, Hashable, Sendable {
        /// Mimics `case AES_GCM_128`: https://developer.apple.com/documentation/cryptokit/hpke/aead/aes_gcm_128
        case AES_GCM_128
        /// Mimics `case AES_GCM_256`: https://developer.apple.com/documentation/cryptokit/hpke/aead/aes_gcm_256
        case AES_GCM_256
        /// Mimics `case chaChaPoly`: https://developer.apple.com/documentation/cryptokit/hpke/aead/chachapoly
        case chaChaPoly
        /// Mimics `case exportOnly`: https://developer.apple.com/documentation/cryptokit/hpke/aead/exportonly
        case exportOnly
    }

    /// Mimics `HPKE.Ciphersuite`, `struct Ciphersuite`:
    /// https://developer.apple.com/documentation/cryptokit/hpke/ciphersuite
    @available(iOS 17.0, macOS 14.0, tvOS 17.0, watchOS 10.0, visionOS 1.0, macCatalyst 17.0, *)
    public struct Ciphersuite: Sendable {
        /// Mimics `let kem: HPKE.KEM`: https://developer.apple.com/documentation/cryptokit/hpke/ciphersuite/kem
        @available(iOS 17.0, macOS 14.0, tvOS 17.0, watchOS 10.0, visionOS 1.0, macCatalyst 17.0, *)
        public let kem: HPKE.KEM

        /// Mimics `let kdf: HPKE.KDF`: https://developer.apple.com/documentation/cryptokit/hpke/ciphersuite/kdf
        @available(iOS 17.0, macOS 14.0, tvOS 17.0, watchOS 10.0, visionOS 1.0, macCatalyst 17.0, *)
        public let kdf: HPKE.KDF

        /// Mimics `let aead: HPKE.AEAD`: https://developer.apple.com/documentation/cryptokit/hpke/ciphersuite/aead
        @available(iOS 17.0, macOS 14.0, tvOS 17.0, watchOS 10.0, visionOS 1.0, macCatalyst 17.0, *)
        public let aead: HPKE.AEAD

        /// Mimics `init(kem: HPKE.KEM, kdf: HPKE.KDF, aead: HPKE.AEAD)`:
        /// https://developer.apple.com/documentation/cryptokit/hpke/ciphersuite/init(kem:kdf:aead:)
        @available(iOS 17.0, macOS 14.0, tvOS 17.0, watchOS 10.0, visionOS 1.0, macCatalyst 17.0, *)
        public init(kem: HPKE.KEM, kdf: HPKE.KDF, aead: HPKE.AEAD) { stub() }

        /// Mimics `static let P256_SHA256_AES_GCM_256: HPKE.Ciphersuite`:
        /// https://developer.apple.com/documentation/cryptokit/hpke/ciphersuite/p256_sha256_aes_gcm_256
        @available(iOS 17.0, macOS 14.0, tvOS 17.0, watchOS 10.0, visionOS 1.0, macCatalyst 17.0, *)
        public static var P256_SHA256_AES_GCM_256: HPKE.Ciphersuite { stub() }

        /// Mimics `static let P384_SHA384_AES_GCM_256: HPKE.Ciphersuite`:
        /// https://developer.apple.com/documentation/cryptokit/hpke/ciphersuite/p384_sha384_aes_gcm_256
        @available(iOS 17.0, macOS 14.0, tvOS 17.0, watchOS 10.0, visionOS 1.0, macCatalyst 17.0, *)
        public static var P384_SHA384_AES_GCM_256: HPKE.Ciphersuite { stub() }

        /// Mimics `static let P521_SHA512_AES_GCM_256: HPKE.Ciphersuite`:
        /// https://developer.apple.com/documentation/cryptokit/hpke/ciphersuite/p521_sha512_aes_gcm_256
        @available(iOS 17.0, macOS 14.0, tvOS 17.0, watchOS 10.0, visionOS 1.0, macCatalyst 17.0, *)
        public static var P521_SHA512_AES_GCM_256: HPKE.Ciphersuite { stub() }

        /// Mimics `static let Curve25519_SHA256_ChachaPoly: HPKE.Ciphersuite`:
        /// https://developer.apple.com/documentation/cryptokit/hpke/ciphersuite/curve25519_sha256_chachapoly
        @available(iOS 17.0, macOS 14.0, tvOS 17.0, watchOS 10.0, visionOS 1.0, macCatalyst 17.0, *)
        public static var Curve25519_SHA256_ChachaPoly: HPKE.Ciphersuite { stub() }

        /// Mimics `static let XWingMLKEM768X25519_SHA256_AES_GCM_256: HPKE.Ciphersuite`:
        /// https://developer.apple.com/documentation/cryptokit/hpke/ciphersuite/xwingmlkem768x25519_sha256_aes_gcm_256
        @available(iOS 26.0, macOS 26.0, tvOS 26.0, watchOS 26.0, visionOS 26.0, macCatalyst 26.0, *)
        public static var XWingMLKEM768X25519_SHA256_AES_GCM_256: HPKE.Ciphersuite { stub() }
    }

    /// Mimics `HPKE.Sender`, `struct Sender`: https://developer.apple.com/documentation/cryptokit/hpke/sender
    @available(iOS 17.0, macOS 14.0, tvOS 17.0, watchOS 10.0, visionOS 1.0, macCatalyst 17.0, *)
    public struct Sender: Sendable {
        /// Mimics `let encapsulatedKey: Data`:
        /// https://developer.apple.com/documentation/cryptokit/hpke/sender/encapsulatedkey
        @available(iOS 17.0, macOS 14.0, tvOS 17.0, watchOS 10.0, visionOS 1.0, macCatalyst 17.0, *)
        public let encapsulatedKey: Data

        /// Mimics `init<PK>(recipientKey: PK, ciphersuite: HPKE.Ciphersuite, info: Data) throws where PK :
        /// HPKEKEMPublicKey`:
        /// https://developer.apple.com/documentation/cryptokit/hpke/sender/init(recipientkey:ciphersuite:info:)-swk5
        @available(iOS 26.0, macOS 26.0, tvOS 26.0, watchOS 26.0, visionOS 26.0, macCatalyst 26.0, *)
        public init<PK: HPKEKEMPublicKey>(recipientKey: PK, ciphersuite: HPKE.Ciphersuite, info: Data) throws {
            stub()
        }

        /// Mimics `mutating func seal<M>(_ msg: M) throws -> Data where M : DataProtocol`:
        /// https://developer.apple.com/documentation/cryptokit/hpke/sender/seal(_:)
        @available(iOS 17.0, macOS 14.0, tvOS 17.0, watchOS 10.0, visionOS 1.0, macCatalyst 17.0, *)
        public mutating func seal<M: DataProtocol>(_ msg: M) throws -> Data { stub() }

        /// Mimics `mutating func seal<M, AD>(_ msg: M, authenticating aad: AD) throws -> Data where M :
        /// DataProtocol, AD : DataProtocol`:
        /// https://developer.apple.com/documentation/cryptokit/hpke/sender/seal(_:authenticating:)
        @available(iOS 17.0, macOS 14.0, tvOS 17.0, watchOS 10.0, visionOS 1.0, macCatalyst 17.0, *)
        public mutating func seal<M: DataProtocol, AD: DataProtocol>(_ msg: M, authenticating aad: AD) throws -> Data {
            stub()
        }

        /// Mimics `func exportSecret<Context>(context: Context, outputByteCount: Int) throws -> SymmetricKey
        /// where Context : DataProtocol`:
        /// https://developer.apple.com/documentation/cryptokit/hpke/sender/exportsecret(context:outputbytecount:)
        @available(iOS 17.0, macOS 14.0, tvOS 17.0, watchOS 10.0, visionOS 1.0, macCatalyst 17.0, *)
        public func exportSecret<Context: DataProtocol>(context: Context, outputByteCount: Int) throws -> SymmetricKey {
            stub()
        }
    }

    /// Mimics `HPKE.Recipient`, `struct Recipient`: https://developer.apple.com/documentation/cryptokit/hpke/recipient
    @available(iOS 17.0, macOS 14.0, tvOS 17.0, watchOS 10.0, visionOS 1.0, macCatalyst 17.0, *)
    public struct Recipient: Sendable {
        /// Mimics `init<SK>(privateKey: SK, ciphersuite: HPKE.Ciphersuite, info: Data, encapsulatedKey: Data)
        /// throws where SK : HPKEKEMPrivateKey` (the KEM key's overload of
        /// https://developer.apple.com/documentation/cryptokit/hpke/recipient; its own page is not in the
        /// documentation searched, and its availability is that of `HPKEKEMPrivateKey`, which it takes:
        /// https://developer.apple.com/documentation/cryptokit/hpkekemprivatekey)
        @available(iOS 26.0, macOS 26.0, tvOS 26.0, watchOS 26.0, visionOS 26.0, macCatalyst 26.0, *)
        public init<SK: HPKEKEMPrivateKey>(
            privateKey: SK, ciphersuite: HPKE.Ciphersuite, info: Data, encapsulatedKey: Data
        ) throws { stub() }

        /// Mimics `mutating func open<C>(_ ciphertext: C) throws -> Data where C : DataProtocol`:
        /// https://developer.apple.com/documentation/cryptokit/hpke/recipient/open(_:)
        @available(iOS 17.0, macOS 14.0, tvOS 17.0, watchOS 10.0, visionOS 1.0, macCatalyst 17.0, *)
        public mutating func open<C: DataProtocol>(_ ciphertext: C) throws -> Data { stub() }

        /// Mimics `mutating func open<C, AD>(_ ciphertext: C, authenticating aad: AD) throws -> Data where C
        /// : DataProtocol, AD : DataProtocol`:
        /// https://developer.apple.com/documentation/cryptokit/hpke/recipient/open(_:authenticating:)
        @available(iOS 17.0, macOS 14.0, tvOS 17.0, watchOS 10.0, visionOS 1.0, macCatalyst 17.0, *)
        public mutating func open<C: DataProtocol, AD: DataProtocol>(
            _ ciphertext: C, authenticating aad: AD
        ) throws -> Data { stub() }

        /// Mimics `func exportSecret<Context>(context: Context, outputByteCount: Int) throws -> SymmetricKey
        /// where Context : DataProtocol`:
        /// https://developer.apple.com/documentation/cryptokit/hpke/recipient/exportsecret(context:outputbytecount:)
        @available(iOS 17.0, macOS 14.0, tvOS 17.0, watchOS 10.0, visionOS 1.0, macCatalyst 17.0, *)
        public func exportSecret<Context: DataProtocol>(context: Context, outputByteCount: Int) throws -> SymmetricKey {
            stub()
        }
    }
}
