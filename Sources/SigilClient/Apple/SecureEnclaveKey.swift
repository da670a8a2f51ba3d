#if canImport(Security) && canImport(CryptoKit)
    import CryptoKit
    import Foundation
    import Security
    @_spi(Sigil) import SigilCore

    @available(iOS 17, macOS 14, *)
    extension SecureEnclave.P256.Signing.PrivateKey: HardwareP256Key {}

    /// A P-256 key held in the Secure Enclave: it signs `ecdsa-p256-sha256` and never leaves the chip.
    ///
    /// Store ``HardwareKeySigner/dataRepresentation`` (an opaque, device-bound blob, not the key) to
    /// use the key again; ``KeychainDeviceStore`` does.
    @available(iOS 17, macOS 14, *)
    public typealias SecureEnclaveSigningKey = HardwareKeySigner<SecureEnclave.P256.Signing.PrivateKey>

    @available(iOS 17, macOS 14, *)
    extension HardwareKeySigner where Key == SecureEnclave.P256.Signing.PrivateKey {
        /// Makes a new key in the Secure Enclave.
        public init() throws {
            self.init(try SecureEnclave.P256.Signing.PrivateKey())
        }

        /// Makes a new key in the Secure Enclave that signs only once the user passes `flags`
        /// (`.biometryCurrentSet`: Face ID or Touch ID as enrolled now, the key lost if that changes;
        /// `.userPresence`: biometry or the passcode). The key is usable on this device only, after
        /// its first unlock; its signatures run off the cooperative pool, so a prompt blocks no task.
        public init(accessControl flags: SecAccessControlCreateFlags) throws {
            var error: Unmanaged<CFError>?
            guard
                let access = SecAccessControlCreateWithFlags(
                    nil, kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly, [.privateKeyUsage, flags], &error)
            else {
                throw SigilInputError("the Secure Enclave key's access control could not be made")
            }
            self.init(try SecureEnclave.P256.Signing.PrivateKey(accessControl: access))
        }

        /// Uses a key made earlier, from its ``HardwareKeySigner/dataRepresentation``.
        public init(dataRepresentation: Data) throws {
            self.init(try SecureEnclave.P256.Signing.PrivateKey(dataRepresentation: dataRepresentation))
        }

        /// Whether this device has a Secure Enclave.
        public static var isAvailable: Bool { SecureEnclave.isAvailable }
    }
#endif
