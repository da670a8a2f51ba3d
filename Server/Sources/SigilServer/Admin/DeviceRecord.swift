@_spi(Sigil) import SigilCore

/// A device as operators see it: its user, state, keys (with their last use), attestation, sealing
/// key and certificates. Holds no key material.
public struct DeviceRecord: Sendable, Hashable, Codable {
    /// Whether the device may still sign.
    public enum State: String, Sendable, Hashable, Codable {
        /// Not revoked (its keys have their own states).
        case active
        /// Revoked: every key refused.
        case revoked
    }

    /// One key of the device.
    public struct Key: Sendable, Hashable, Codable {
        /// The key ID.
        public var keyID: String
        /// The algorithm's wire name.
        public var alg: String
        /// `active`, `rotating` or `revoked` (revoked whenever the device is).
        public var state: RegisteredKey.State
        /// When it was registered (Unix seconds).
        public var created: Int64
        /// When a rotating key stops being accepted, if it does.
        public var validUntil: Int64?
        /// Its last verified use (Unix seconds, to the minute), if any was recorded.
        public var lastUsed: Int64?
        /// Its RFC 7638 JWK thumbprint (the other name an rfc9421 request may give it); none for a secret.
        public var thumbprint: String?

        /// Creates a key entry.
        public init(
            keyID: String, alg: String, state: RegisteredKey.State, created: Int64, validUntil: Int64? = nil,
            lastUsed: Int64? = nil, thumbprint: String? = nil
        ) {
            self.thumbprint = thumbprint
            self.keyID = keyID
            self.alg = alg
            self.state = state
            self.created = created
            self.validUntil = validUntil
            self.lastUsed = lastUsed
        }

        enum CodingKeys: String, CodingKey {
            case keyID = "keyId"
            case alg, state, created, validUntil, lastUsed, thumbprint
        }
    }

    /// A client certificate issued to the device.
    public struct Certificate: Sendable, Hashable, Codable {
        /// Its serial number, lowercase hex.
        public var serial: String
        /// The key it names.
        public var keyID: String
        /// The end of its validity (Unix seconds).
        public var notAfter: Int64

        enum CodingKeys: String, CodingKey {
            case keyID = "keyId"
            case serial, notAfter
        }
    }

    /// The device ID.
    public var deviceID: String
    /// Its user, if enrollment named one.
    public var userID: String?
    /// Whether it is revoked.
    public var state: State
    /// When it registered (Unix seconds).
    public var created: Int64
    /// When it was revoked, if it was.
    public var revoked: Int64?
    /// Its keys, by key ID.
    public var keys: [Key]
    /// `apple-appattest` when a key was enrolled by App Attest, the facts of an Android Key Attestation
    /// (`android-key,TrustedEnvironment,patch=202602,boot=Verified,app=com.example.app`), else `none`.
    public var attestation: String
    /// The ID of the X-Wing key its secrets are sealed to, if it registered one.
    public var sealingKeyID: String?
    /// Its client certificates.
    public var certificates: [Certificate]

    enum CodingKeys: String, CodingKey {
        case deviceID = "deviceId"
        case userID = "user"
        case sealingKeyID = "sealingKeyId"
        case state, created, revoked, keys, attestation, certificates
    }

    /// Creates a record: the state follows `revoked`, every key of a revoked device reads revoked, and
    /// the attestation follows the keys' algorithms.
    public init(
        deviceID: String,
        userID: String?,
        created: Int64,
        revoked: Int64?,
        keys: [Key],
        sealingKeyID: String?,
        certificates: [IssuedCertificateRecord],
        attestation: String? = nil
    ) {
        self.deviceID = deviceID
        self.userID = userID
        self.created = created
        self.revoked = revoked
        self.state = revoked == nil ? .active : .revoked
        self.keys = keys.sorted { $0.keyID < $1.keyID }.map { key in
            var key = key
            if revoked != nil { key.state = .revoked }
            return key
        }
        self.attestation =
            attestation
            ?? (keys.contains { $0.alg == SignatureAlgorithm.appleAppAttest.rawValue }
                ? SignatureAlgorithm.appleAppAttest.rawValue : "none")
        self.sealingKeyID = sealingKeyID
        self.certificates = certificates.sorted { $0.serial < $1.serial }.map {
            Certificate(serial: $0.serial, keyID: $0.keyID, notAfter: $0.notAfter)
        }
    }

    /// One line for people: ID, user, state, then each key with its algorithm, state, creation and
    /// last use (ISO 8601, UTC).
    /// What devices and users supplied is escaped (``OperatorText``): the line stays one line.
    public var line: String {
        let text = { OperatorText.escaped($0) }
        var fields = [
            text(deviceID), "user=\(userID.map(text) ?? "-")", state.rawValue, "attestation=\(text(attestation))",
        ]
        if let sealingKeyID { fields.append("sealing=\(text(sealingKeyID))") }
        for key in keys {
            fields.append(
                "key=\(text(key.keyID))(\(text(key.alg)),\(key.state.rawValue),created \(OperatorText.time(key.created)),last used \(key.lastUsed.map(OperatorText.time) ?? "never")\(key.thumbprint.map { ",jkt " + text($0) } ?? ""))"
            )
        }
        if !certificates.isEmpty {
            fields.append("certificates=\(certificates.map { text($0.serial) }.joined(separator: ","))")
        }
        return fields.joined(separator: " ")
    }
}

/// Which devices to list.
public struct DeviceQuery: Sendable, Hashable {
    /// This device.
    public var deviceID: String?
    /// The device of this key.
    public var keyID: String?
    /// This user's devices.
    public var userID: String?
    /// Devices in this state.
    public var state: DeviceRecord.State?
    /// At most this many devices, the first by device ID (`nil`: every one selected). The store
    /// limits in its query, so a page costs the page, not the directory.
    public var limit: Int?
    /// Only devices whose ID comes after this one in byte order (the last ID of the page before).
    public var after: String?

    /// Creates a query; with no field set, every device.
    public init(
        deviceID: String? = nil, keyID: String? = nil, userID: String? = nil, state: DeviceRecord.State? = nil,
        limit: Int? = nil, after: String? = nil
    ) {
        self.deviceID = deviceID
        self.keyID = keyID
        self.userID = userID
        self.state = state
        self.limit = limit
        self.after = after
    }
}

extension DeviceQuery {
    /// Whether `record` is selected (for backends that filter in memory).
    public func selects(_ record: DeviceRecord) -> Bool {
        // IDs by their bytes, as the stores compare them (``Identifiers``).
        (deviceID == nil || Identifiers.same(record.deviceID, deviceID))
            && (userID == nil || Identifiers.same(record.userID, userID))
            && (state == nil || record.state == state)
            && (keyID == nil || record.keys.contains { Identifiers.same($0.keyID, keyID) })
    }
}

extension RegisteredKey.State: Codable {}
