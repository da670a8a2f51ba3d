#if canImport(Security)
    import Foundation
    import Security
    import SigilCore

    /// A ``DeviceStore`` in the Keychain: generic-password items under one service, readable only on
    /// this device after its first unlock.
    public struct KeychainDeviceStore: DeviceStore {
        /// The Keychain service the items are filed under.
        public let service: String

        /// Creates a store under `service`.
        public init(service: String = "dev.sigil.device") { self.service = service }

        public func identity() throws -> DeviceIdentity? {
            guard let data = try item("identity") else { return nil }
            do {
                return try JSONDecoder().decode(DeviceIdentity.self, from: data)
            } catch {
                throw SigilInputError("the Keychain identity does not decode")
            }
        }

        public func privateKey() throws -> SigningKey? {
            guard let data = try item("device-key") else { return nil }
            return try KeyFile.load(Array(data)).signingKey
        }

        public func secret() throws -> SigningKey? {
            guard let data = try item("secret") else { return nil }
            return try SigningKey(hmacSecret: data)
        }

        public func save(_ identity: DeviceIdentity, privateKey: SigningKey, secret: [UInt8]?) throws {
            try store(Data(try KeyFile.privateKeyFile(for: privateKey).utf8), as: "device-key")
            if let secret { try store(Data(secret), as: "secret") }
            try store(try JSONEncoder().encode(identity), as: "identity")
        }

        /// Stores `data` as the item `account`, replacing it.
        public func store(_ data: Data, as account: String) throws {
            let query: [String: Any] = [
                kSecClass as String: kSecClassGenericPassword,
                kSecAttrService as String: service,
                kSecAttrAccount as String: account,
            ]
            SecItemDelete(query as CFDictionary)
            var attributes = query
            attributes[kSecValueData as String] = data
            attributes[kSecAttrAccessible as String] = kSecAttrAccessibleAfterFirstUnlockThisDeviceOnly
            let status = SecItemAdd(attributes as CFDictionary, nil)
            guard status == errSecSuccess else {
                throw SigilInputError("the Keychain refused to store \(account) (\(status))")
            }
        }

        /// The item `account`, or `nil` when there is none.
        public func item(_ account: String) throws -> Data? {
            let query: [String: Any] = [
                kSecClass as String: kSecClassGenericPassword,
                kSecAttrService as String: service,
                kSecAttrAccount as String: account,
                kSecReturnData as String: true,
                kSecMatchLimit as String: kSecMatchLimitOne,
            ]
            var result: CFTypeRef?
            let status = SecItemCopyMatching(query as CFDictionary, &result)
            if status == errSecItemNotFound { return nil }
            guard status == errSecSuccess, let data = result as? Data else {
                throw SigilInputError("the Keychain could not read \(account) (\(status))")
            }
            return data
        }
    }
#endif
