@_spi(Sigil) import SigilCore

/// One atomic change to a key directory: keys added, keys given an end date, devices revoked,
/// client certificates recorded, devices' sealing keys set.
///
/// A ``Directory`` applies a change all at once or not at all, so a failed write never leaves a
/// device with its new key but without its old key's end date, or the reverse. Its rules are checked
/// inside the same write, so a change racing a revocation either lands before it (and is revoked
/// with the device) or fails:
/// - nothing is added to a revoked device (`revoked-key`);
/// - with ``actingKeyID``, that key must be its device's active key when the change applies
///   (`revoked-key` when it or its device is revoked, `forbidden` when it is rotating out).
///
/// A revocation is best applied without ``actingKeyID`` (its signer checked when the request was
/// verified): it only takes rights away, so it should land even when a rotation overtook it, and
/// then revokes the key that rotation added too.
public struct DirectoryChange: Sendable {
    /// Keys to add; adding a key ID that exists fails the whole change.
    public var added: [RegisteredKey]
    /// Keys to move to ``RegisteredKey/State-swift.enum/rotating``, accepted until the given Unix time.
    public var retiring: [(keyID: String, until: Int64)]
    /// Devices whose every key is revoked; a device not in the directory fails the whole change
    /// (`unknown-key`).
    public var revokedDevices: [String]
    /// Keys revoked one by one (their devices keep their other keys); an unknown key ID fails the
    /// whole change (`unknown-key`). A key pair revoked takes its device's HMAC secrets with it: one
    /// of them may have been fetched with it (by whoever stole it), and the device's remaining key
    /// pair fetches a new one.
    public var revokedKeys: [String]
    /// Users revoked: every device of theirs, as found inside the write, and every access token issued
    /// to them before now (PROTOCOL.md section 13.2); a user with no device (an OAuth client's user)
    /// is recorded as revoked all the same.
    public var revokedUsers: [String]
    /// A device whose HMAC secrets all move to rotating, accepted until the given Unix time (what a
    /// rotation does, so a secret fetched with the old key does not outlive it).
    public var retiringSecrets: (deviceID: String, until: Int64)?
    /// Client certificates issued to devices.
    public var certificates: [IssuedCertificateRecord]
    /// Devices' X-Wing keys (PROTOCOL.md section 6.4), each replacing the one the device had.
    public var sealingKeys: [(deviceID: String, key: SealingPublicKey)]
    /// A device's sealing key as the change's maker read it (`nil`: none), which must still be the
    /// device's when the change applies (`forbidden` otherwise): a secret sealed to a key that a
    /// rotation replaced meanwhile is never issued.
    public var sealingKeyRead: (deviceID: String, key: SealingPublicKey?)?
    /// The key on whose authority the change is made, which must be its device's active key.
    public var actingKeyID: String?
    /// The audit rows of the change, written in its transaction: a change whose rows cannot be written
    /// does not happen. A ``AuditEntry/Action/revoked`` row naming a user of ``revokedUsers`` and no
    /// device is written once for each device revoked.
    public var audit: [AuditEntry]
    /// Single-use credentials the change spends (an enrollment JWT's ID, an attestation challenge):
    /// recorded in the change's transaction until they expire, and one recorded already fails the
    /// whole change (`enrollment-refused`). Kept in the directory, not the nonce store, so a restart
    /// or another replica refuses them too.
    public var spent: [SingleUseCredential]

    /// Creates a change.
    public init(
        added: [RegisteredKey] = [],
        retiring: [(keyID: String, until: Int64)] = [],
        retiringSecrets: (deviceID: String, until: Int64)? = nil,
        revokedDevices: [String] = [],
        revokedKeys: [String] = [],
        revokedUsers: [String] = [],
        certificates: [IssuedCertificateRecord] = [],
        sealingKeys: [(deviceID: String, key: SealingPublicKey)] = [],
        sealingKeyRead: (deviceID: String, key: SealingPublicKey?)? = nil,
        actingKeyID: String? = nil,
        audit: [AuditEntry] = [],
        spent: [SingleUseCredential] = []
    ) {
        self.added = added
        self.retiring = retiring
        self.retiringSecrets = retiringSecrets
        self.revokedDevices = revokedDevices
        self.revokedKeys = revokedKeys
        self.revokedUsers = revokedUsers
        self.certificates = certificates
        self.sealingKeys = sealingKeys
        self.sealingKeyRead = sealingKeyRead
        self.actingKeyID = actingKeyID
        self.audit = audit
        self.spent = spent
    }

    /// The devices the change adds something to.
    package var receivingDevices: Set<String> {
        Set(added.compactMap(\.deviceID) + certificates.map(\.deviceID) + sealingKeys.map(\.deviceID))
    }

    /// The refusal for an acting key in `key`'s state at `now`, or `nil` when it may act.
    package static func refusal(actingKey key: RegisteredKey?, keyID: String, now: Int64) -> SigilError? {
        guard let key else { return SigilError(.unknownKey, "no key is registered as \(keyID)") }
        guard key.isUsable(at: now) else { return SigilError(.revokedKey, "key \(keyID) is revoked") }
        guard key.isActive(at: now) else {
            return SigilError(.forbidden, "key \(keyID) is rotating out; only the device's active key manages it")
        }
        return nil
    }

    /// The refusal when the device's sealing key, read as `read`, is `current` now; `nil` when the same.
    package func sealingKeyRefusal(current: SealingPublicKey?) -> SigilError? {
        guard let read = sealingKeyRead, read.key != current else { return nil }
        return SigilError(.forbidden, "the sealing key of device \(read.deviceID) changed meanwhile; nothing changed")
    }

    /// The refusal for a single-use credential spent already.
    package static func spentAlready(_ credential: SingleUseCredential) -> SigilError {
        SigilError(.enrollmentRefused, "this \(credential.what) was used already")
    }

    /// The most keys one call of ``DirectoryStatements/add(_:now:)`` is given: 9,000 values in one
    /// statement, under SQLite's 32,766 variables and PostgreSQL's 65,535 parameters.
    package static let keysPerStatement = 1_000

    /// The refusal for adding a key whose ID is taken (or named twice in one change).
    package static func registeredAlready(_ keyID: String) -> SigilError {
        SigilError(.invalidRegistration, "key \(keyID) is registered already")
    }

    /// The refusal for adding to a revoked device.
    package static func revokedDevice(_ deviceID: String) -> SigilError {
        SigilError(.revokedKey, "device \(deviceID) is revoked; nothing can be added to it")
    }
}

/// A client certificate issued to a device, as the directory records it.
public struct IssuedCertificateRecord: Sendable, Hashable {
    /// The serial number, lowercase hex.
    public let serial: String
    /// The key the certificate names.
    public let keyID: String
    /// The device of that key.
    public let deviceID: String
    /// The end of its validity (Unix seconds).
    public let notAfter: Int64

    /// Creates a record.
    public init(serial: String, keyID: String, deviceID: String, notAfter: Int64) {
        self.serial = serial
        self.keyID = keyID
        self.deviceID = deviceID
        self.notAfter = notAfter
    }
}

extension RegisteredKey {
    /// The key with its state moved to rotating and its end date set, unless it is revoked or ends sooner.
    func retiring(until end: Int64) -> RegisteredKey {
        var key = self
        guard key.state != .revoked else { return key }
        key.state = .rotating
        key.validUntil = min(key.validUntil ?? end, end)
        return key
    }
}
