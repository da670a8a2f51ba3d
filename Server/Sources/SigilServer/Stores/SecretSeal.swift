import Crypto
@_spi(Sigil) import SigilCore

/// HMAC secrets at rest: sealed with AES-GCM under the server's master key, with the key ID as
/// associated data, so a copied database reveals no secret and a sealed secret cannot be moved to
/// another key ID. Shared by the SQLite and PostgreSQL registries.
///
/// Without a master key (an operator's tool that lists and revokes on the store alone) every seal
/// and open throws.
package struct SecretSeal: Sendable {
    let key: SymmetricKey?

    /// - Throws: when the master key is not 256 bits.
    package init(masterKey: SymmetricKey?) throws {
        guard masterKey.map({ $0.bitCount == 256 }) ?? true else {
            throw SigilInputError("the master key must be 32 bytes")
        }
        self.key = masterKey
    }

    var masterKey: SymmetricKey {
        get throws {
            guard let key else {
                throw SigilInputError("the directory was opened without the master key: it cannot seal or open secrets")
            }
            return key
        }
    }

    package func seal(_ secret: SymmetricKey, keyID: String) throws -> [UInt8] {
        let masterKey = try self.masterKey
        let sealed = try secret.withUnsafeBytes { bytes in
            try AES.GCM.seal(bytes, using: masterKey, authenticating: Array(keyID.utf8))
        }
        guard let combined = sealed.combined else { throw SigilError(.storeUnavailable, "sealing failed") }
        return Array(combined)
    }

    package func open(_ sealed: [UInt8], keyID: String) throws -> [UInt8] {
        let masterKey = try self.masterKey
        do {
            let box = try AES.GCM.SealedBox(combined: sealed)
            return Array(try AES.GCM.open(box, using: masterKey, authenticating: Array(keyID.utf8)))
        } catch {
            throw SigilError(.storeUnavailable, "the secret of key \(keyID) does not open with this master key")
        }
    }
}

/// A key as a store keeps it at rest: an HMAC secret sealed (``SecretSeal``), any other key as its
/// public key's PEM. Shared by the SQLite and PostgreSQL backends.
package struct StoredMaterial {
    /// The public key's PEM, for a key pair.
    package let publicKey: String?
    /// The sealed secret, for an HMAC secret.
    package let sealedSecret: [UInt8]?

    /// - Throws: `invalid-registration` for a key no store can keep; what sealing throws.
    package init(_ key: RegisteredKey, secrets: SecretSeal) throws {
        if let secret = key.key.hmacSecret {
            publicKey = nil
            sealedSecret = try secrets.seal(secret, keyID: key.keyID)
        } else if let pem = KeyFile.publicKeyFile(for: key.key) {
            publicKey = pem
            sealedSecret = nil
        } else {
            throw SigilError(.invalidRegistration, "key \(key.keyID) cannot be stored")
        }
    }
}

extension SealingPublicKey {
    /// A device's sealing key as a store keeps it (standard base64 of the 1216 bytes), or `nil` for none.
    ///
    /// - Throws: `store-unavailable` for a stored value that is not such a key.
    package init?(storedBase64 stored: String?, keyID: String) throws {
        guard let stored else { return nil }
        guard let raw = Base64.decode(stored), let key = try? SealingPublicKey(rawRepresentation: raw) else {
            throw SigilError(.storeUnavailable, "the sealing key of key \(keyID)'s device is damaged")
        }
        self = key
    }
}
