import Foundation
import HTTPTypes
import Metrics
@_spi(Sigil) import SigilCore

/// What operators do, free of any front end: `sigil admin` runs it on a store directly, the admin API
/// (``handle(_:path:query:actor:)``) on a running server. Every change is one directory write with
/// its audit rows, and every admin API call that may change something is audited too; reads are
/// counted (``AdminReads``), so the trail holds changes rather than page views.
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
    public let directory: Directory
    /// The server's own keys, when the store holds them.
    public let serverKeys: ServerKeyRing?
    /// The clock changes are dated by.
    public let clock: any UnixClock
    /// The outcomes of the running server's requests (the console's rollout charts), when there is one.
    public let outcomes: RequestOutcomes?
    /// Counts the admin API's reads.
    public let reads: AdminReads
    /// The backup TLS key of the server's data directory, which a TLS rotation publishes as the next
    /// key, when this process holds it.
    public var backupTLSKey: BackupTLSKey?

    /// Creates the service.
    ///
    /// - Parameter metrics: where the admin API's reads are counted (`MetricsSystem`'s by default).
    public init(
        directory: Directory, serverKeys: ServerKeyRing?, clock: any UnixClock,
        outcomes: RequestOutcomes? = nil, metrics: any MetricsFactory = MetricsSystem.factory
    ) {
        self.directory = directory
        self.serverKeys = serverKeys
        self.clock = clock
        self.outcomes = outcomes
        self.reads = AdminReads(factory: metrics)
    }

    /// Devices, by device ID.
    public func devices(user: String? = nil, state: DeviceRecord.State? = nil) async throws -> [DeviceRecord] {
        try await directory.devices(DeviceQuery(userID: user, state: state))
    }

    /// A page of devices, by device ID (``PageRule``): at most `limit` (``PageRule/defaultLimit``
    /// when `nil`), after the cursor `after` a page before gave.
    ///
    /// - Throws: `invalid-registration` for a limit outside 1...1000 or a malformed cursor.
    public func devices(
        user: String? = nil, state: DeviceRecord.State? = nil, limit: Int?, after cursor: String? = nil
    ) async throws -> Page<DeviceRecord> {
        let limit = try PageRule.limit(limit)
        let after = try cursor.map(PageRule.deviceCursor)
        // One more than the page, to know whether another follows.
        let found = try await directory.devices(
            DeviceQuery(userID: user, state: state, limit: limit + 1, after: after))
        let (page, more) = PageRule.cut(found, limit: limit)
        return Page(items: page, next: more ? page.last?.deviceID : nil)
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

    /// A page of the audit trail `query` selects (``PageRule``): the newest `limit` rows
    /// (``PageRule/defaultLimit`` when `nil`) written before the cursor `before` a page gave, oldest
    /// first; the next page goes back in time. `query`'s own limit and `before` are not read.
    ///
    /// - Throws: `invalid-registration` for a limit outside 1...1000 or a malformed cursor.
    public func audit(
        _ query: AuditQuery, limit: Int?, before cursor: String? = nil
    ) async throws -> Page<AuditEntry> {
        var query = query
        let limit = try PageRule.limit(limit)
        query.limit = limit + 1
        query.before = try cursor.map(PageRule.auditCursor)
        // Oldest first: the row before the page, if any, comes first.
        let rows = try await directory.auditRows(query)
        let more = rows.count > limit
        let page = more ? Array(rows.dropFirst(rows.count - limit)) : rows
        return Page(
            items: page.map(\.entry), next: more ? page.first.map { PageRule.auditCursor(before: $0.sequence) } : nil)
    }

    /// The server's keys and their states.
    public func keys() throws -> [ServerKeyInfo] {
        guard let serverKeys else { throw SigilError(.forbidden, "this store holds no server keys") }
        return serverKeys.describe()
    }

    /// Publishes a next key of `kind`, current after the overlap.
    ///
    /// A TLS key's next key is the backup key (``backupTLSKey``) when there is one: every device
    /// pins it already, so none is stranded by a promotion it did not hear of; a new backup key then
    /// takes its place.
    public func rotate(_ kind: ServerKeyKind, by actor: String) async throws -> String {
        guard let serverKeys else { throw SigilError(.forbidden, "this store holds no server keys") }
        let backup = kind == .tls ? backupTLSKey : nil
        // A backup the ring holds already (a stale copy put back, a renewal that failed) is no backup:
        // a new key then, and a new backup after.
        let known = Set(serverKeys.describe().map(\.keyID))
        let backupKey = try backup?.current()
        let keyID = try await serverKeys.rotate(
            kind, actor: AuditEntry.operatorActor(actor),
            tlsKey: try backupKey.flatMap { try known.contains($0.verificationKey.derivedKeyID ?? "") ? nil : $0 })
        // Only once the key is published: a rotation refused keeps the backup devices pin.
        try backup?.renew()
        return keyID
    }

    /// Makes the next key of `kind` current now.
    public func promote(_ kind: ServerKeyKind, by actor: String) async throws -> String {
        guard let serverKeys else { throw SigilError(.forbidden, "this store holds no server keys") }
        return try await serverKeys.promote(kind, actor: AuditEntry.operatorActor(actor))
    }

    // MARK: The admin API

    /// An admin API answer: a status, a JSON body and header fields of its own.
    public struct Answer: Sendable {
        /// The status.
        public var status: HTTPResponse.Status
        /// The JSON body.
        public var body: [UInt8]
        /// Fields the answer carries besides its content type: `Link: <…>; rel="next"` on a page that
        /// has a next one (RFC 8288).
        public var headers: HTTPFields = [:]
    }

    /// The `Link` field (RFC 8288).
    public static let linkField = HTTPField.Name("Link")!

    /// Answers an admin API call (PROTOCOL.md, "Admin API"):
    /// `GET /admin/v1/devices?user=…&state=…&limit=…&after=…`,
    /// `GET /admin/v1/devices/{id}`, `POST /admin/v1/devices/{id}/revoke`,
    /// `POST /admin/v1/keys/{id}/revoke`, `POST /admin/v1/users/{user}/revoke` (each with
    /// `?reason=…`), `GET /admin/v1/audit?device=…&user=…&since=…&limit=…&before=…`, `GET /admin/v1/keys`,
    /// `GET /admin/v1/rollout?window=hour|day`, `POST /admin/v1/keys/{response|sealing}/rotate` and `…/promote`.
    ///
    /// The caller has authenticated the operator (`actor`). A call that may change something (any
    /// method but `GET` and `HEAD`) is audited before it runs, so one whose audit row cannot be
    /// written does nothing (503); a read is counted in ``reads``.
    public func handle(
        _ method: HTTPRequest.Method, path: String, query: [String: String], actor: String
    ) async -> Answer {
        do {
            let segments = path.split(separator: "/", omittingEmptySubsequences: false).dropFirst().map {
                String(decoding: PercentEncoding.decode(Array($0.utf8)[...]), as: UTF8.self)
            }
            guard segments.count >= 3, segments[0] == "admin", segments[1] == "v1" else { return Self.notFound }
            if method == .get || method == .head {
                reads.count(segments[2])
            } else {
                try await directory.appendAudit([
                    AuditEntry(
                        time: clock.now(), action: .adminCall, actor: AuditEntry.operatorActor(actor),
                        clientAddress: AuditContext.clientAddress, reason: "\(method.rawValue) \(path.prefix(512))")
                ])
            }
            // No ID, user or query value holds a control character (a NUL byte is refused by PostgreSQL
            // as an outage would be): a bad request, said as such.
            func holdsControl(_ text: String) -> Bool {
                text.unicodeScalars.contains { $0.properties.generalCategory == .control }
            }
            if let (name, _) = query.first(where: { holdsControl($0.key) || holdsControl($0.value) }) {
                let named = holdsControl(name) ? "a query parameter" : name
                throw SigilError(.invalidRegistration, "\(named) is text without control characters")
            }
            guard !segments.contains(where: holdsControl) else {
                throw SigilError(.invalidRegistration, "an ID is text without control characters")
            }
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
            let limit = try PageRule.limit(parsing: query["limit"])
            let page = try await devices(user: query["user"], state: state, limit: limit, after: query["after"])
            return try Self.json(page.items).linking(
                next: page.next.map { cursor in
                    PageRule.link(
                        "/admin/v1/devices",
                        ["user": query["user"], "state": state?.rawValue, "limit": String(limit), "after": cursor])
                })
        case 1 where get && path[0] == "audit":
            let since = try query["since"].map { text in
                guard let since = Int64(text) else { throw SigilError(.invalidRegistration, "since is Unix seconds") }
                return since
            }
            let limit = try PageRule.limit(parsing: query["limit"])
            let page = try await audit(
                AuditQuery(deviceID: query["device"], userID: query["user"], since: since), limit: limit,
                before: query["before"])
            return try Self.json(page.items).linking(
                next: page.next.map { cursor in
                    PageRule.link(
                        "/admin/v1/audit",
                        [
                            "device": query["device"], "user": query["user"], "since": since.map(String.init),
                            "limit": String(limit), "before": cursor,
                        ])
                })
        case 1 where get && path[0] == "keys":
            return try Self.json(try keys())
        case 1 where get && path[0] == "rollout":
            guard let outcomes else { throw SigilError(.forbidden, "no server is counting requests here") }
            let window = query["window"] ?? "hour"
            guard window == "hour" || window == "day" else {
                throw SigilError(.invalidRegistration, "window is hour or day")
            }
            return try Self.json(outcomes.rollout(day: window == "day"))
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

extension Administration.Answer {
    /// The answer with `Link: <next>; rel="next"` (RFC 8288) when there is a next page.
    func linking(next: String?) -> Self {
        guard let next else { return self }
        var answer = self
        answer.headers[Administration.linkField] = "<\(next)>; rel=\"next\""
        return answer
    }
}

/// The admin API's reads, counted by collection: `sigil_admin_reads_total{route}`, `route` one of
/// `devices`, `audit`, `keys`, `rollout` or `other`.
public struct AdminReads: Sendable {
    /// The collections counted by name.
    public static let routes = ["devices", "audit", "keys", "rollout"]
    private let counters: [String: Counter]

    init(factory: any MetricsFactory) {
        var counters: [String: Counter] = [:]
        for route in Self.routes + ["other"] {
            counters[route] = Counter(
                label: "sigil_admin_reads_total", dimensions: [("route", route)], factory: factory)
        }
        self.counters = counters
    }

    /// Counts one read of `collection`.
    func count(_ collection: String) {
        (counters[collection] ?? counters["other"])?.increment()
    }
}

/// A key that clients pin beside the served one and that is not served yet (a self-signed server's
/// backup TLS key): read for a rotation, then replaced by a new one.
public struct BackupTLSKey: Sendable {
    /// The backup key now.
    public var current: @Sendable () throws -> SigningKey
    /// Replaces it with a new one (its pin listed from then on).
    public var renew: @Sendable () throws -> Void

    /// A backup key read by `current` and replaced by `renew`.
    public init(current: @escaping @Sendable () throws -> SigningKey, renew: @escaping @Sendable () throws -> Void) {
        self.current = current
        self.renew = renew
    }
}
