// CryptoKit. On Apple platforms swift-crypto's `Crypto` is CryptoKit re-exported (swift-crypto's
// Package.swift defines no CRYPTO_IN_SWIFTPM_FORCE_BUILD_API there), so `P256`, `SHA256`, `MLDSA65`…
// are one type whether a file imports Crypto or CryptoKit. This stub re-exports the Linux-built
// Crypto the same way and adds what only CryptoKit has: the Secure Enclave.
@_exported import Crypto
import Foundation
import LocalAuthentication
import Security

/// Mimics `SecureEnclave`: https://developer.apple.com/documentation/cryptokit/secureenclave
public enum SecureEnclave {
    /// Mimics `SecureEnclave.isAvailable`, `static var isAvailable: Bool { get }`:
    /// https://developer.apple.com/documentation/cryptokit/secureenclave/isavailable
    public static var isAvailable: Bool { stub() }

    /// Mimics `SecureEnclave.P256`: https://developer.apple.com/documentation/cryptokit/secureenclave/p256
    public enum P256: Sendable {
        /// Mimics `SecureEnclave.P256.Signing`:
        /// https://developer.apple.com/documentation/cryptokit/secureenclave/p256/signing
        public enum Signing: Sendable {
            /// Mimics `SecureEnclave.P256.Signing.PrivateKey`:
            /// https://developer.apple.com/documentation/cryptokit/secureenclave/p256/signing/privatekey
            public struct PrivateKey {
                /// Mimics `let publicKey: P256.Signing.PublicKey` (the top-level `P256`):
                /// https://developer.apple.com/documentation/cryptokit/secureenclave/p256/signing/privatekey/publickey
                public let publicKey: Crypto.P256.Signing.PublicKey

                /// Mimics `let dataRepresentation: Data`:
                /// https://developer.apple.com/documentation/cryptokit/secureenclave/p256/signing/privatekey/datarepresentation
                public let dataRepresentation: Data

                /// Mimics `init(compactRepresentable:accessControl:authenticationContext:)`, with its
                /// documented defaults:
                /// https://developer.apple.com/documentation/cryptokit/secureenclave/p256/signing/privatekey/init(compactrepresentable:accesscontrol:authenticationcontext:)
                public init(
                    compactRepresentable: Bool = true,
                    accessControl: SecAccessControl = SecAccessControlCreateWithFlags(
                        nil, kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly, [], nil)!,
                    authenticationContext: LAContext? = nil
                ) throws { stub() }

                /// Mimics `init(dataRepresentation:authenticationContext:)`:
                /// https://developer.apple.com/documentation/cryptokit/secureenclave/p256/signing/privatekey/init(datarepresentation:authenticationcontext:)
                public init(dataRepresentation: Data, authenticationContext: LAContext? = nil) throws { stub() }

                /// Mimics `func signature<D>(for data: D) throws -> P256.Signing.ECDSASignature where D : DataProtocol`:
                /// https://developer.apple.com/documentation/cryptokit/secureenclave/p256/signing/privatekey (Signing data)
                public func signature<D: DataProtocol>(for data: D) throws -> Crypto.P256.Signing.ECDSASignature {
                    stub()
                }

                /// Mimics `func signature<D>(for digest: D) throws -> P256.Signing.ECDSASignature where D : Digest`:
                /// https://developer.apple.com/documentation/cryptokit/secureenclave/p256/signing/privatekey (Signing data)
                public func signature<D: Digest>(for digest: D) throws -> Crypto.P256.Signing.ECDSASignature {
                    stub()
                }
            }
        }
    }
}

/// Stands for every body in these stubs: they are type-checked against, never run or linked.
func stub() -> Never { fatalError("AppleCheck stubs are for type-checking only") }
