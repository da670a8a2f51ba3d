#if canImport(Security) && canImport(CryptoKit)
    import CryptoKit
    import Foundation
    import Security
    @_spi(Sigil) import SigilCore

    /// A ``DeviceStore`` in the Keychain, readable only on this device after its first unlock:
    ///
    /// - a Secure Enclave key as its `dataRepresentation` (the key never leaves the enclave), an App
    ///   Attest key as its key ID;
    /// - a software P-256 or P-384 key as a Keychain key (`kSecClassKey`), the way Apple stores
    ///   CryptoKit's NIST keys;
    /// - an Ed25519 or ML-DSA key, which `SecKey` cannot hold, as its raw form in a generic password,
    ///   as Apple's sample does for Curve25519 keys;
    /// - the identity, the HMAC secret and the X-Wing sealing key's seed as generic passwords.
    ///
    /// Nothing is stored as PEM. With an access group (a Keychain sharing group the app and its
    /// extensions are entitled to), an app extension reads the same identity and signs as the app.
    @available(iOS 17, macOS 14, *)
    public struct KeychainDeviceStore: DeviceStore {
        /// The Keychain service the items are filed under (and the Keychain key's tag prefix).
        public let service: String
        /// The Keychain access group every item is kept in (`kSecAttrAccessGroup`), or `nil` for the
        /// app's default one.
        public let accessGroup: String?
        /// What reopens a stored App Attest key: App Attest itself, or the provider that made it (the
        /// simulator's debug provider).
        public let appAttestProvider: (any AppAttestProvider)?

        /// Creates a store under `service`, in `accessGroup` when given (`TEAMID.com.example.shared`,
        /// listed in the app's and its extensions' Keychain Sharing entitlement).
        ///
        /// - Parameter appAttestProvider: the provider the App Attest key was made with, when it is not
        ///   App Attest itself (`AppAttestDebugProvider` on the simulator).
        public init(
            service: String = "dev.sigil.device", accessGroup: String? = nil,
            appAttestProvider: (any AppAttestProvider)? = nil
        ) {
            self.service = service
            self.accessGroup = accessGroup
            self.appAttestProvider = appAttestProvider
        }

        /// The attributes that find this store's generic passwords, or the one named `account`.
        func passwordQuery(account: String? = nil) -> [String: Any] {
            var query: [String: Any] = [
                kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: service,
            ]
            if let account { query[kSecAttrAccount as String] = account }
            if let accessGroup { query[kSecAttrAccessGroup as String] = accessGroup }
            return query
        }

        /// The attributes that find this store's Keychain key.
        func keyQuery() -> [String: Any] {
            var query: [String: Any] = [kSecClass as String: kSecClassKey, kSecAttrApplicationTag as String: keyTag]
            if let accessGroup { query[kSecAttrAccessGroup as String] = accessGroup }
            return query
        }

        public func saveIdentity(_ identity: DeviceIdentity) throws {
            try store(try JSONEncoder().encode(identity), as: "identity")
        }

        /// Deletes every item this store made: its generic passwords (identity, secret, sealing key,
        /// raw keys, the Secure Enclave key's reference, the App Attest key's ID) and its Keychain key.
        /// A Secure Enclave key exists only through the reference deleted here; an App Attest key
        /// cannot be deleted by an app, and is never used again once its ID is gone.
        public func reset() throws {
            for query in [passwordQuery(), keyQuery()] {
                let status = SecItemDelete(query as CFDictionary)
                guard status == errSecSuccess || status == errSecItemNotFound else {
                    throw Self.unavailable("the Keychain refused to delete Sigil's items", status)
                }
            }
        }

        static let enclaveAccount = "device-key.secure-enclave"
        static let appAttestAccount = "device-key.app-attest"
        static let rawKeyAlgorithms: [SignatureAlgorithm] = [.ed25519, .mlDSA65, .mlDSA87]

        var keyTag: Data { Data((service + ".device-key").utf8) }

        public func identity() throws -> DeviceIdentity? {
            guard let data = try password("identity") else { return nil }
            do {
                return try JSONDecoder().decode(DeviceIdentity.self, from: data)
            } catch {
                throw SigilInputError("the Keychain identity does not decode")
            }
        }

        public func deviceKey() throws -> (any SignatureProvider)? {
            #if canImport(DeviceCheck)
                if let keyID = try password(Self.appAttestAccount) {
                    let id = String(decoding: keyID, as: UTF8.self)
                    return appAttestProvider.map { AppAttestSigner(appAttestKeyID: id, provider: $0) }
                        ?? AppAttestSigner(appAttestKeyID: id)
                }
            #endif
            if let blob = try password(Self.enclaveAccount) {
                return try SecureEnclaveSigningKey(dataRepresentation: blob)
            }
            if let x963 = try keychainKey() {
                let algorithm = try identity().flatMap { SignatureAlgorithm(rawValue: $0.algorithm) }
                if x963.count == 97 {
                    return try SigningKey(
                        P256.Signing.PrivateKey(x963Representation: x963), algorithm: algorithm ?? .ecdsaP256SHA256)
                }
                return try SigningKey(
                    material: .p384(try P384.Signing.PrivateKey(x963Representation: x963)), algorithm: .ecdsaP384SHA384)
            }
            for algorithm in Self.rawKeyAlgorithms {
                guard let raw = try password("device-key." + algorithm.rawValue) else { continue }
                switch algorithm {
                case .ed25519:
                    return try SigningKey(
                        material: .ed25519(try Curve25519.Signing.PrivateKey(rawRepresentation: raw)),
                        algorithm: algorithm)
                default:
                    // Below iOS 26 / macOS 26 this throws unsupported-algorithm, saying why.
                    return try SigningKey(
                        material: .mlDSA(try MLDSAPrivateKey(seed: raw, algorithm: algorithm)), algorithm: algorithm)
                }
            }
            return nil
        }

        public func secret() throws -> SigningKey? {
            guard let data = try password("secret") else { return nil }
            return try SigningKey(hmacSecret: data)
        }

        public func sealingKey() throws -> SealingPrivateKey? {
            try password("sealing-key").map { try SealingPrivateKey(seed: $0) }
        }

        public func saveSealingKey(_ key: SealingPrivateKey) throws {
            try store(Data(try key.seed), as: "sealing-key")
        }

        public func save(_ identity: DeviceIdentity, key: any SignatureProvider, secret: [UInt8]?) throws {
            try deleteDeviceKey()
            #if canImport(DeviceCheck)
                if let appAttest = key as? AppAttestSigner {
                    // The key stays in App Attest: its ID is what reopens it.
                    try store(Data(appAttest.appAttestKeyID.utf8), as: Self.appAttestAccount)
                    if let secret { try store(Data(secret), as: "secret") }
                    try store(try JSONEncoder().encode(identity), as: "identity")
                    return
                }
            #endif
            if let enclave = key as? SecureEnclaveSigningKey {
                try store(enclave.dataRepresentation, as: Self.enclaveAccount)
            } else if let software = key as? SigningKey {
                switch software.material {
                case .p256(let privateKey): try storeKeychainKey(privateKey.x963Representation)
                case .p384(let privateKey): try storeKeychainKey(privateKey.x963Representation)
                case .ed25519(let privateKey):
                    try store(privateKey.rawRepresentation, as: "device-key." + software.algorithm.rawValue)
                case .mlDSA(let privateKey):
                    try store(Data(try privateKey.seed()), as: "device-key." + software.algorithm.rawValue)
                case .hmac, .external:
                    throw SigilInputError("the Keychain store keeps EC, Ed25519 and ML-DSA device keys")
                }
            } else {
                throw SigilInputError("the Keychain store cannot keep a \(type(of: key))")
            }
            if let secret { try store(Data(secret), as: "secret") }
            try saveIdentity(identity)
        }

        /// A Keychain failure: ``SigilClientError/Kind/keychainUnavailable`` with its `OSStatus`
        /// (`errSecInteractionNotAllowed` before the first unlock after a restart, or while prewarmed).
        static func unavailable(_ what: String, _ status: OSStatus) -> SigilClientError {
            SigilClientError(.keychainUnavailable, "\(what) (\(status))", keychainStatus: status)
        }

        // MARK: Generic passwords

        /// Stores `data` as the generic password `account`, replacing it.
        func store(_ data: Data, as account: String) throws {
            let query = passwordQuery(account: account)
            // Replaced in place where it exists, so no moment finds it missing (another process reading,
            // a failure between a delete and an add).
            let update: [String: Any] = [
                kSecValueData as String: data,
                kSecAttrAccessible as String: kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly,
            ]
            var status = SecItemUpdate(query as CFDictionary, update as CFDictionary)
            if status == errSecItemNotFound {
                var attributes = query
                attributes[kSecValueData as String] = data
                attributes[kSecAttrAccessible as String] = kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly
                status = SecItemAdd(attributes as CFDictionary, nil)
            }
            guard status == errSecSuccess else {
                throw Self.unavailable("the Keychain refused to store \(account)", status)
            }
        }

        /// The generic password `account`, or `nil` when there is none.
        func password(_ account: String) throws -> Data? {
            var query = passwordQuery(account: account)
            query[kSecReturnData as String] = true
            query[kSecMatchLimit as String] = kSecMatchLimitOne
            var result: CFTypeRef?
            let status = SecItemCopyMatching(query as CFDictionary, &result)
            if status == errSecItemNotFound { return nil }
            guard status == errSecSuccess, let data = result as? Data else {
                throw Self.unavailable("the Keychain could not read \(account)", status)
            }
            return data
        }

        // MARK: Keychain keys

        /// Stores a NIST private key (its ANSI X9.63 form) as a `SecKey` under ``keyTag``.
        func storeKeychainKey(_ x963: Data) throws {
            let attributes: [String: Any] = [
                kSecAttrKeyType as String: kSecAttrKeyTypeECSECPrimeRandom,
                kSecAttrKeyClass as String: kSecAttrKeyClassPrivate,
            ]
            var error: Unmanaged<CFError>?
            guard let key = SecKeyCreateWithData(x963 as CFData, attributes as CFDictionary, &error) else {
                throw SigilInputError("the Keychain could not make a key from the device key")
            }
            var query = keyQuery()
            query[kSecValueRef as String] = key
            query[kSecAttrAccessible as String] = kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly
            let status = SecItemAdd(query as CFDictionary, nil)
            guard status == errSecSuccess else {
                throw Self.unavailable("the Keychain refused to store the device key", status)
            }
        }

        /// The X9.63 form of the `SecKey` under ``keyTag``, or `nil` when there is none.
        func keychainKey() throws -> Data? {
            var query = keyQuery()
            query[kSecAttrKeyType as String] = kSecAttrKeyTypeECSECPrimeRandom
            query[kSecReturnRef as String] = true
            var item: CFTypeRef?
            let status = SecItemCopyMatching(query as CFDictionary, &item)
            if status == errSecItemNotFound { return nil }
            guard status == errSecSuccess, let item, CFGetTypeID(item) == SecKeyGetTypeID() else {
                throw Self.unavailable("the Keychain could not read the device key", status)
            }
            var error: Unmanaged<CFError>?
            // A CoreFoundation type cannot be cast conditionally; its type ID was checked just above.
            let key = unsafeBitCast(item, to: SecKey.self)
            guard let data = SecKeyCopyExternalRepresentation(key, &error) as Data? else {
                throw SigilInputError("the Keychain could not export the device key")
            }
            return data
        }

        /// Removes every form a device key may have been stored in.
        func deleteDeviceKey() throws {
            SecItemDelete(keyQuery() as CFDictionary)
            for account in [Self.enclaveAccount, Self.appAttestAccount]
                + Self.rawKeyAlgorithms.map({ "device-key." + $0.rawValue })
            {
                SecItemDelete(passwordQuery(account: account) as CFDictionary)
            }
        }
    }
#endif
