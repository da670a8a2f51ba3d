import Foundation
import HTTPTypes
@_spi(Sigil) import SigilCore

/// What operators do, free of any front end: `sigil admin` runs it on a store directly, the admin API
/// (``handle(_:path:query:actor:)``) on a running server. Every change is one directory write with
/// its audit rows; every admin API call is audited too.
public struct Administration: Sendable {
    /// What a revocation names.
    public enum Target: Sendable, Hashable {
        /// One device, every key.
        case device(String)
        /// One key; its device keeps its other keys.
        case key(String)
        /// Every device of a user.
        case user(String)
    }

    /// The directory.
    public let directory: any AdministeredDirectory
    /// The server's own keys, when the store holds them.
    public let serverKeys: ServerKeyRing?
    /// The clock changes are dated by.
    public let clock: any UnixClock

    /// Creates the service.
    public init(directory: any AdministeredDirectory, serverKeys: ServerKeyRing?, clock: any UnixClock) {
        self.directory = directory
        self.serverKeys = serverKeys
        self.clock = clock
    }

    /// Devices, by device ID.
    public func devices(user: String? = nil, state: DeviceRecord.State? = nil) async throws -> [DeviceRecord] {
        try await directory.devices(DeviceQuery(userID: user, state: state))
    }

    /// The device `id` names: a device ID, else any of its key IDs.
    ///
    /// - Throws: `unknown-key` when neither is in the directory.
    public func device(_ id: String) async throws -> DeviceRecord {
        if let record = try await directory.devices(DeviceQuery(deviceID: id)).first { return record }
        if let record = try await directory.devices(DeviceQuery(keyID: id)).first { return record }
        throw SigilError(
            .unknownKey,
            "no device or key \(OperatorText.escaped(String(id.prefix(128)), quoting: .never)) is in the directory")
    }

    /// Revokes what `target` names, in one write with its audit rows.
    ///
    /// - Parameters:
    ///   - actor: the operator's name (`operator:<name>` in the audit trail).
    ///   - reason: why, for the audit trail.
    /// - Returns: the devices concerned, as they are after the write.
    /// - Throws: `unknown-key` when the target is not in the directory (nothing changes).
    public func revoke(_ target: Target, by actor: String, reason: String? = nil) async throws -> [DeviceRecord] {
        if let reason,
            reason.utf8.count > 512
                || reason.unicodeScalars.contains(where: { $0.properties.generalCategory == .control })
        {
            throw SigilError(.invalidRegistration, "a reason is at most 512 bytes, without control characters")
        }
        let now = clock.now()
        var entry = AuditEntry(
            time: now, action: .revoked, actor: AuditEntry.operatorActor(actor),
            clientAddress: AuditContext.clientAddress, reason: reason)
        switch target {
        case .device(let id):
            guard let record = try await directory.devices(DeviceQuery(deviceID: id)).first else {
                throw DirectoryChange.unknownTarget("device \(id.prefix(128))")
            }
            entry.deviceID = id
            entry.userID = record.userID
            try await directory.apply(DirectoryChange(revokedDevices: [id], audit: [entry]))
            return try await directory.devices(DeviceQuery(deviceID: id))
        case .key(let id):
            // Found through its device, so the key's material (an HMAC key's sealed secret) is never
            // opened: an operator's tool revokes on the store alone, without the master key.
            guard let record = try await directory.devices(DeviceQuery(keyID: id)).first else {
                throw DirectoryChange.unknownTarget("key \(id.prefix(128))")
            }
            let deviceID = record.deviceID
            entry.keyID = id
            entry.deviceID = deviceID
            entry.userID = record.userID
            try await directory.apply(DirectoryChange(revokedKeys: [id], audit: [entry]))
            return try await directory.devices(DeviceQuery(deviceID: deviceID))
        case .user(let user):
            entry.userID = user
            try await directory.apply(DirectoryChange(revokedUsers: [user], audit: [entry]))
            return try await directory.devices(DeviceQuery(userID: user))
        }
    }

    /// The audit trail, oldest first.
    public func audit(_ query: AuditQuery) async throws -> [AuditEntry] {
        try await directory.auditTrail(query)
    }

    /// The server's keys and their states.
    public func keys() throws -> [ServerKeyInfo] {
        guard let serverKeys else { throw SigilError(.forbidden, "this store holds no server keys") }
        return serverKeys.describe()
    }

    /// Publishes a next key of `kind`, current after the overlap.
    public func rotate(_ kind: ServerKeyKind, by actor: String) async throws -> String {
        guard let serverKeys else { throw SigilError(.forbidden, "this store holds no server keys") }
        return try await serverKeys.rotate(kind, actor: AuditEntry.operatorActor(actor))
    }

    /// Makes the next key of `kind` current now.
    public func promote(_ kind: ServerKeyKind, by actor: String) async throws -> String {
        guard let serverKeys else { throw SigilError(.forbidden, "this store holds no server keys") }
        return try await serverKeys.promote(kind, actor: AuditEntry.operatorActor(actor))
    }

    // MARK: The admin API

    /// An admin API answer: a status and a JSON body.
    public struct Answer: Sendable {
        /// The status.
        public var status: HTTPResponse.Status
        /// The JSON body.
        public var body: [UInt8]
    }

    /// Answers an admin API call (PROTOCOL.md, "Admin API"): `GET /admin/v1/devices?user=…&state=…`,
    /// `GET /admin/v1/devices/{id}`, `POST /admin/v1/devices/{id}/revoke`,
    /// `POST /admin/v1/keys/{id}/revoke`, `POST /admin/v1/users/{user}/revoke` (each with
    /// `?reason=…`), `GET /admin/v1/audit?device=…&user=…&since=…`, `GET /admin/v1/keys`,
    /// `POST /admin/v1/keys/{response|sealing}/rotate` and `…/promote`.
    ///
    /// The caller has authenticated the operator (`actor`); the call is audited before it runs, so a
    /// call whose audit row cannot be written does nothing (503).
    public func handle(
        _ method: HTTPRequest.Method, path: String, query: [String: String], actor: String
    ) async -> Answer {
        do {
            let segments = path.split(separator: "/", omittingEmptySubsequences: false).dropFirst().map {
                String(decoding: PercentEncoding.decode(Array($0.utf8)[...]), as: UTF8.self)
            }
            guard segments.count >= 3, segments[0] == "admin", segments[1] == "v1" else { return Self.notFound }
            try await directory.appendAudit([
                AuditEntry(
                    time: clock.now(), action: .adminCall, actor: AuditEntry.operatorActor(actor),
                    clientAddress: AuditContext.clientAddress, reason: "\(method.rawValue) \(path.prefix(512))")
            ])
            return try await route(method, Array(segments.dropFirst(2)), query: query, actor: actor) ?? Self.notFound
        } catch let error as SigilError {
            // An unknown ID is 404 here: 401 is kept for a missing or wrong credential.
            let status = error.code == .unknownKey ? 404 : error.code.httpStatus
            return Answer(
                status: HTTPResponse.Status(code: status),
                body: Problem.body(for: error, serverTime: clock.now(), status: status))
        } catch {
            let error = SigilError(.storeUnavailable, "the call could not be completed")
            return Answer(status: .serviceUnavailable, body: Problem.body(for: error, serverTime: clock.now()))
        }
    }

    /// The answer to a path that is no admin route.
    static let notFound = Answer(
        status: .notFound, body: Array(#"{"type":"about:blank","title":"No such admin route","status":404}"#.utf8))

    /// The answer to a call without a valid operator credential (none, or a wrong one: not told
    /// apart): 401, problem+json `missing-signature`, whatever the path. The caller adds
    /// `WWW-Authenticate: Bearer` (RFC 6750).
    public static func unauthorized(serverTime: Int64) -> Answer {
        let error = SigilError(
            .missingSignature,
            "the admin API needs an operator's credential: Authorization: Bearer <admin token>, or a client certificate of the admin CA"
        )
        return Answer(status: .unauthorized, body: Problem.body(for: error, serverTime: serverTime, status: 401))
    }

    func route(_ method: HTTPRequest.Method, _ path: [String], query: [String: String], actor: String) async throws
        -> Answer?
    {
        let get = method == .get
        let post = method == .post
        switch path.count {
        case 1 where get && path[0] == "devices":
            let state = try query["state"].map { name in
                guard let state = DeviceRecord.State(rawValue: name) else {
                    throw SigilError(.invalidRegistration, "state is active or revoked")
                }
                return state
            }
            return try Self.json(try await devices(user: query["user"], state: state))
        case 1 where get && path[0] == "audit":
            let since = try query["since"].map { text in
                guard let since = Int64(text) else { throw SigilError(.invalidRegistration, "since is Unix seconds") }
                return since
            }
            return try Self.json(
                try await audit(AuditQuery(deviceID: query["device"], userID: query["user"], since: since)))
        case 1 where get && path[0] == "keys":
            return try Self.json(try keys())
        case 2 where get && path[0] == "devices":
            return try Self.json(try await device(path[1]))
        case 3 where post && path[2] == "revoke":
            let target: Target
            switch path[0] {
            case "devices": target = .device(path[1])
            case "keys": target = .key(path[1])
            case "users": target = .user(path[1])
            default: return nil
            }
            return try Self.json(try await revoke(target, by: actor, reason: query["reason"]))
        case 3 where post && path[0] == "keys" && (path[2] == "rotate" || path[2] == "promote"):
            guard let kind = ServerKeyKind(rawValue: path[1]) else { return nil }
            let keyID = path[2] == "rotate" ? try await rotate(kind, by: actor) : try await promote(kind, by: actor)
            return try Self.json(try keys().filter { $0.keyID == keyID })
        default:
            return nil
        }
    }

    static func json(_ value: some Encodable) throws -> Answer {
        Answer(status: .ok, body: try Registration.json(value))
    }
}
