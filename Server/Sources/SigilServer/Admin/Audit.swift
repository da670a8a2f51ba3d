@_spi(Sigil) import SigilCore

/// One row of the audit trail: what changed in the directory, when, to what, and on whose authority.
///
/// A row never holds a secret: key IDs, device IDs and user IDs only. Rows are written in the same
/// transaction as the change they describe (``DirectoryChange/audit``), so a change whose row cannot
/// be written does not happen.
public struct AuditEntry: Sendable, Hashable, Codable {
    /// What happened.
    public enum Action: String, Sendable, Hashable, Codable, CaseIterable {
        /// A device registered with a key and an enrollment credential.
        case registered
        /// A device enrolled by App Attest attestation.
        case attested
        /// An HMAC secret was issued to a device.
        case secretIssued = "secret-issued"
        /// A device registered its next key.
        case rotated
        /// A device or a key was revoked.
        case revoked
        /// A client certificate was issued.
        case certificateIssued = "certificate-issued"
        /// The server published a next response or sealing key.
        case serverKeyRotated = "server-key-rotated"
        /// The server's next key became current.
        case serverKeyPromoted = "server-key-promoted"
        /// An operator called the admin API (a read or a change, named in ``AuditEntry/reason``).
        case adminCall = "admin-call"
    }

    /// When, in Unix seconds.
    public var time: Int64
    /// What happened.
    public var action: Action
    /// The device it happened to, if any.
    public var deviceID: String?
    /// The key it happened to (the key added, revoked, certified), if any.
    public var keyID: String?
    /// The device's user, if known.
    public var userID: String?
    /// Who: the acting key ID, or `operator:<name>`.
    public var actor: String
    /// The client's address, when the change came over the network.
    public var clientAddress: String?
    /// Why, as the operator said, or what an admin call was.
    public var reason: String?

    /// Creates a row.
    public init(
        time: Int64,
        action: Action,
        deviceID: String? = nil,
        keyID: String? = nil,
        userID: String? = nil,
        actor: String,
        clientAddress: String? = nil,
        reason: String? = nil
    ) {
        self.time = time
        self.action = action
        self.deviceID = deviceID
        self.keyID = keyID
        self.userID = userID
        self.actor = actor
        self.clientAddress = clientAddress
        self.reason = reason
    }

    enum CodingKeys: String, CodingKey {
        case time, action, actor, reason
        case deviceID = "device"
        case keyID = "key"
        case userID = "user"
        case clientAddress = "client"
    }

    /// The actor name of an operator.
    public static func operatorActor(_ name: String) -> String { "operator:" + name }
}

/// Which audit rows to read.
public struct AuditQuery: Sendable, Hashable {
    /// Rows about this device only.
    public var deviceID: String?
    /// Rows about this user only.
    public var userID: String?
    /// Rows at or after this Unix time only.
    public var since: Int64?
    /// At most this many rows, the newest.
    public var limit: Int
    /// Only rows written before the row of this sequence (``AuditRow/sequence``): the cursor of the
    /// page before, going back in time.
    public var before: Int64?

    /// Creates a query.
    public init(
        deviceID: String? = nil, userID: String? = nil, since: Int64? = nil, limit: Int = 10_000,
        before: Int64? = nil
    ) {
        self.deviceID = deviceID
        self.userID = userID
        self.since = since
        self.limit = limit
        self.before = before
    }

    /// Whether `entry` matches (for stores that filter in memory).
    public func matches(_ entry: AuditEntry) -> Bool {
        // IDs by their bytes, as the stores compare them (``Identifiers``).
        (deviceID == nil || Identifiers.same(entry.deviceID, deviceID))
            && (userID == nil || Identifiers.same(entry.userID, userID)) && (since.map { entry.time >= $0 } ?? true)
    }
}

/// An audit row as the store keeps it: the row, and its place in the trail.
public struct AuditRow: Sendable, Hashable {
    /// Its place: a number the store assigns as it writes, greater for every row written after it,
    /// never reused (SQLite's `AUTOINCREMENT` row ID, PostgreSQL's `BIGSERIAL`). Rows that share a
    /// second are told apart by it: the audit trail's page cursor (``PageRule``).
    public var sequence: Int64
    /// The row.
    public var entry: AuditEntry

    /// Creates a row.
    public init(sequence: Int64, entry: AuditEntry) {
        self.sequence = sequence
        self.entry = entry
    }
}

/// Who and where a change comes from, for its audit rows: set once by whatever runs a route
/// (``Exchange`` adapters, the admin API), read where the change is made.
public enum AuditContext {
    /// The client's address of the request being served.
    @TaskLocal public static var clientAddress: String?
}

extension DirectoryChange {
    /// The rows to write: ``audit``, with each row naming a revoked user and no device repeated once
    /// for each of that user's devices (`devicesOfUsers`, as the store found them inside the write).
    func auditRows(devicesOfUsers: [Identifiers.Key: [String]] = [:]) -> [AuditEntry] {
        audit.flatMap { entry -> [AuditEntry] in
            guard entry.action == .revoked, entry.deviceID == nil, entry.keyID == nil, let user = entry.userID,
                let devices = devicesOfUsers[Identifiers.Key(user)], !devices.isEmpty
            else { return [entry] }
            return devices.map { device in
                var row = entry
                row.deviceID = device
                return row
            }
        }
    }

    /// The refusal when a revocation names nothing that exists: nothing changes. `what` (`user
    /// <ID>`, as the operator gave it) is escaped: the detail is printed to operators.
    package static func unknownTarget(_ what: String) -> SigilError {
        SigilError(
            .unknownKey,
            "\(OperatorText.escaped(String(what.prefix(160)), quoting: .never)) is not in the directory; nothing changed"
        )
    }
}
