// CryptoKit's Secure Enclave, as far as Sigil uses it: P-256 signing keys held in the enclave.
//
// Signatures: Apple's, as its documentation gives them (and as swift-crypto, which mirrors CryptoKit's
// API, declares them). Availability: each declaration's, from its documentation page where that was
// looked up; where it was not, the version of CryptoKit's first release that the pages which were
// looked up give its siblings (iOS 13, macOS 10.15, tvOS 13, watchOS 6, visionOS 1), or what a comment
// beside it says. The stubs' report lists which is which.
import Foundation

/// The top-level `P256`, for the Secure Enclave's key to name its public key's type from inside
/// `SecureEnclave.P256`, where `P256` is the enclave's own: Apple's interface writes `CryptoKit.P256`
/// there, and there is no module named CryptoKit here.
@available(iOS 13.0, macOS 10.15, tvOS 13.0, watchOS 6.0, visionOS 1.0, macCatalyst 13.0, *)
public typealias _CryptoKitP256 = P256

/// Mimics `SecureEnclave`, `enum SecureEnclave`: https://developer.apple.com/documentation/cryptokit/secureenclave
@available(iOS 13.0, macOS 10.15, tvOS 13.0, watchOS 6.0, visionOS 1.0, macCatalyst 13.0, *)
public enum SecureEnclave: Sendable {
    /// Mimics `static var isAvailable: Bool { get }`:
    /// https://developer.apple.com/documentation/cryptokit/secureenclave/isavailable
    @available(iOS 13.0, macOS 10.15, tvOS 13.0, watchOS 6.0, visionOS 1.0, macCatalyst 13.0, *)
    public static var isAvailable: Bool { stub() }

    /// Mimics `SecureEnclave.P256`, `enum P256`: https://developer.apple.com/documentation/cryptokit/secureenclave/p256
    @available(iOS 13.0, macOS 10.15, tvOS 13.0, watchOS 6.0, visionOS 1.0, macCatalyst 13.0, *)
    public enum P256: Sendable {
        /// Mimics `SecureEnclave.P256.Signing`, `enum Signing`:
        /// https://developer.apple.com/documentation/cryptokit/secureenclave/p256/signing
        @available(iOS 13.0, macOS 10.15, tvOS 13.0, watchOS 6.0, visionOS 1.0, macCatalyst 13.0, *)
        public enum Signing: Sendable {
            /// Mimics `SecureEnclave.P256.Signing.PrivateKey`, `struct PrivateKey`:
            /// https://developer.apple.com/documentation/cryptokit/secureenclave/p256/signing/privatekey
            @available(iOS 13.0, macOS 10.15, tvOS 13.0, watchOS 6.0, visionOS 1.0, macCatalyst 13.0, *)
            public struct PrivateKey: Sendable {
                /// Mimics `let publicKey: P256.Signing.PublicKey` (the top-level `P256`):
                /// https://developer.apple.com/documentation/cryptokit/secureenclave/p256/signing/privatekey/publickey
                @available(iOS 13.0, macOS 10.15, tvOS 13.0, watchOS 6.0, visionOS 1.0, macCatalyst 13.0, *)
                public var publicKey: _CryptoKitP256.Signing.PublicKey { stub() }

                /// Mimics `let dataRepresentation: Data`:
                /// https://developer.apple.com/documentation/cryptokit/secureenclave/p256/signing/privatekey/datarepresentation
                @available(iOS 13.0, macOS 10.15, tvOS 13.0, watchOS 6.0, visionOS 1.0, macCatalyst 13.0, *)
                public var dataRepresentation: Data { stub() }

                /// Mimics `init(compactRepresentable: Bool = true, accessControl: SecAccessControl =
                /// SecAccessControlCreateWithFlags(nil, kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly, [],
                /// nil)!, authenticationContext: LAContext? = nil) throws`:
                /// https://developer.apple.com/documentation/cryptokit/secureenclave/p256/signing/privatekey/init(compactrepresentable:accesscontrol:authenticationcontext:)
                /// (not on tvOS, whose initializer takes no authentication context; from watchOS 9).
                @available(iOS 13.0, macOS 10.15, watchOS 9.0, visionOS 1.0, macCatalyst 13.0, *)
                @available(tvOS, unavailable)
                public init(
                    compactRepresentable: Bool = true,
                    accessControl: SecAccessControl = SecAccessControlCreateWithFlags(
                        nil, kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly, [], nil)!,
                    authenticationContext: LAContext? = nil
                ) throws { stub() }

                /// Mimics `init(dataRepresentation: Data, authenticationContext: LAContext? = nil) throws`:
                /// https://developer.apple.com/documentation/cryptokit/secureenclave/p256/signing/privatekey/init(datarepresentation:authenticationcontext:)
                /// (its page is not in the documentation searched; its availability is its sibling's above,
                /// and that of `SecureEnclave.P256.KeyAgreement.PrivateKey`'s initializer of the same form:
                /// https://developer.apple.com/documentation/cryptokit/secureenclave/p256/keyagreement/privatekey/init(datarepresentation:authenticationcontext:))
                @available(iOS 13.0, macOS 10.15, watchOS 9.0, visionOS 1.0, macCatalyst 13.0, *)
                @available(tvOS, unavailable)
                public init(dataRepresentation: Data, authenticationContext: LAContext? = nil) throws { stub() }

                /// Mimics `func signature<D>(for digest: D) throws -> P256.Signing.ECDSASignature where D : Digest`:
                /// https://developer.apple.com/documentation/cryptokit/secureenclave/p256/signing/privatekey/signature(for:)
                @available(iOS 13.0, macOS 10.15, tvOS 13.0, watchOS 6.0, visionOS 1.0, macCatalyst 13.0, *)
                public func signature<D: Digest>(for digest: D) throws -> _CryptoKitP256.Signing.ECDSASignature {
                    stub()
                }

                /// Mimics `func signature<D>(for data: D) throws -> P256.Signing.ECDSASignature where D :
                /// DataProtocol`:
                /// https://developer.apple.com/documentation/cryptokit/secureenclave/p256/signing/privatekey/signature(for:)
                @available(iOS 13.0, macOS 10.15, tvOS 13.0, watchOS 6.0, visionOS 1.0, macCatalyst 13.0, *)
                public func signature<D: DataProtocol>(for data: D) throws -> _CryptoKitP256.Signing.ECDSASignature {
                    stub()
                }
            }
        }
    }
}
