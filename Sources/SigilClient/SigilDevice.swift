import Foundation
import HTTPTypes
import HTTPTypesFoundation
@_spi(Sigil) import SigilCore

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The app's one object for its Sigil identity: it enrolls the device, signs and sends its requests,
/// rotates its key and resets it, and keeps what it learns in its store without the app's help.
///
/// ```swift
/// // On Apple platforms: the Keychain (shared with the app's extensions) and URLSession, pinned to
/// // the identity's pins on every connection.
/// let device = try SigilDevice(store: KeychainDeviceStore(accessGroup: "TEAMID.com.example.shared"))
/// switch await device.enrollmentState {
/// case .notEnrolled:
///     try await device.enroll(try SecureEnclaveSigningKey(), server: "https://api.example.com", token: token)
/// case .enrolled(let identity) where identity.userID != user:
///     try await device.reset()                 // another user's device: not this one's to use
/// case .enrolled: break
/// case .unknown: return                        // the Keychain is locked (before first unlock): wait
/// }
/// let answer = try await device.send(request, body: body)
/// ```
///
/// A refusal the server signed throws ``SigilError`` with its code (`revoked-key`, `unknown-key`:
/// enroll again); anything else throws ``SigilClientError``, which is never a reason to reset.
///
/// What it keeps by itself, in the store, as it happens:
/// - the server's next response key or sealing key, learnt from discovery the key it trusts signed
///   (``DeviceIdentity/following(_:)``), so a server key promotion needs nothing from the app;
/// - the clock's offset from a signed answer (``DeviceIdentity/clockOffset``), so the first request
///   after a launch is signed with the server's time;
/// - the new key, secret and identity of a rotation, all at once.
///
/// Keychain work after an answer (a server key followed, the clock's offset) never fails the request
/// the server carried out: it is kept in memory, tried again on the next answer, and reported to
/// ``log`` (``SigilEvent/storeDeferred(reason:)``). The device resets nothing by itself.
///
/// Requests whose key must be used in order (App Attest assertions) go one at a time.
public actor SigilDevice: SigilDeviceProtocol {
    /// Where the identity, key and secret are kept.
    public nonisolated let store: any DeviceStore
    /// The server-corrected clock, started from the stored offset.
    public nonisolated let clock: ServerClock
    /// The key kinds beyond the built-in ones the server's response key may be of.
    public nonisolated let keyFormats: KeyFormats
    /// Makes the transport for a server's host and pins: the identity's, or those given at enrollment.
    let makeTransport: @Sendable (_ host: String, _ pins: [String]) throws -> any SigilTransport
    /// The stored identity, `nil` before enrollment and after a reset.
    public private(set) var identity: DeviceIdentity?
    /// The session of the stored identity, made on first use.
    private var current: SigilSession?
    /// Enrollment, rotation and reset run one at a time: each spans awaits, and a reset in the middle
    /// of a rotation must not be undone by the rotation's save.
    private let lifecycle = OrderedRequests.Turns()
    /// Bumped by every reset: a change that began before one stores nothing after it.
    private var generation = 0
    /// An identity learnt after an answer that the store did not take yet: written on the next answer.
    private var unsaved: DeviceIdentity?
    /// How long a reset waits for the server to revoke the device; the device is reset locally before
    /// it asks.
    public var revocationDeadline: Duration = .seconds(10)
    /// Where the device's events go (``SigilEvent``): the unified log by default.
    public nonisolated let log: @Sendable (SigilEvent) -> Void
    /// What makes App Attest assertions for an identity an App Attest key vouched for: the one given
    /// at enrollment or to ``init(store:clock:keyFormats:log:appAttestProvider:transport:)``, else App
    /// Attest itself where there is one.
    private var appAttestProvider: (any AppAttestProvider)?
    /// The session signing with the App Attest key, for requests that need an assertion.
    private var assertions: SigilSession?

    /// The device as `store` keeps it.
    ///
    /// - Parameter transport: the transport to a server's host that checks its SPKI pins (on Apple
    ///   platforms `URLSessionTransport.pinned(host:pins:options:)`, which `init(store:pinning:)`
    ///   uses): called with the stored identity's pins, or with those given to
    ///   ``enroll(_:server:token:enrollment:)`` (none: the transport checks the system's trust alone,
    ///   and the identity keeps discovery's pins from then on).
    ///   - log: where the device's events go (``SigilEvent``); the unified log on Apple platforms.
    ///   - appAttestProvider: what makes App Attest assertions when the identity's key was vouched for by
    ///     App Attest (``enroll(_:vouchedBy:server:token:enrollment:)``): App Attest itself by default;
    ///     the simulator's `AppAttestDebugProvider` where that is what enrolled.
    ///
    /// A store that cannot be read yet (the Keychain before the first unlock) does not fail this: the
    /// identity is read again when it is needed (``enrollmentState``).
    public init(
        store: any DeviceStore, clock local: any UnixClock = SystemUnixClock(), keyFormats: KeyFormats = .builtIn,
        log: @escaping @Sendable (SigilEvent) -> Void = SigilEvent.systemLog,
        appAttestProvider: (any AppAttestProvider)? = nil,
        transport: @escaping @Sendable (_ host: String, _ pins: [String]) throws -> any SigilTransport
    ) throws {
        self.store = store
        self.keyFormats = keyFormats
        self.log = log
        self.appAttestProvider = appAttestProvider
        makeTransport = transport
        let identity = try? store.identity()
        self.identity = identity
        clock = ServerClock(local: local, offset: identity?.clockOffset ?? 0)
    }

    /// Sets ``revocationDeadline``.
    public func setRevocationDeadline(_ deadline: Duration) { revocationDeadline = deadline }

    /// Whether the device is enrolled, as its store says now (read again: an app extension on the same
    /// store may have enrolled or reset it).
    public enum EnrollmentState: Sendable, Hashable {
        /// The store holds this identity.
        case enrolled(DeviceIdentity)
        /// The store holds none: enroll.
        case notEnrolled
        /// The store cannot be read now (the Keychain before the first unlock after a restart, or
        /// while the app is prewarmed): wait and ask again; never enroll on it.
        case unknown(reason: String)
    }

    /// The device's ``EnrollmentState``, three-valued: a store that cannot be read is `unknown`, never
    /// "not enrolled", so an app never enrolls a second device over the first.
    public var enrollmentState: EnrollmentState {
        do {
            try refresh()
        } catch {
            return .unknown(reason: String(describing: error))
        }
        return identity.map(EnrollmentState.enrolled) ?? .notEnrolled
    }

    /// Whether the store holds an identity; `false` also when the store cannot be read.
    @available(*, deprecated, message: "use enrollmentState: a Keychain not readable yet is not 'not enrolled'")
    public var isEnrolled: Bool {
        if case .enrolled = enrollmentState { return true }
        return false
    }

    /// Takes the store's identity when it is not this one's any more (another process rotated or
    /// reset), dropping the session made for the old one.
    ///
    /// - Throws: the store's failure to read (the identity in memory is kept then).
    func refresh() throws {
        let stored = try store.identity()
        guard stored?.keyID != identity?.keyID else { return }
        identity = stored
        unsaved = nil
        current = nil
        assertions = nil
    }

    // MARK: Enrollment

    /// Enrolls `key` with `server` (`https://host[:port]`) and stores the identity, key and secret. A
    /// device enrolled already is refused: ``reset(revoke:)`` it first.
    ///
    /// - Parameters:
    ///   - token: the bootstrap token or the logged-in user's enrollment JWT, if the server asks for one.
    ///   - enrollment: what to fetch besides (the secret, a certificate) and the pins to check the
    ///     server with. Without pins, discovery's are taken on first use: over a connection only the
    ///     system's trust checked, they stand on that first connection alone (pin out of band, as
    ///     `DeviceEnrollment(pins:)`, where that matters).
    @discardableResult
    public func enroll(
        _ key: any SignatureProvider, server: String, token: String?, enrollment: DeviceEnrollment = DeviceEnrollment()
    ) async throws -> DeviceIdentity {
        try await enrolling {
            try await self.changing { [store] in
                try await self.ensureNotEnrolled()
                let registration = try await self.registration(server: server, pins: enrollment.pins)
                return try await enrollment.enroll(key, token: token, with: registration, store: store)
            }
        }
    }

    /// ``enroll(_:server:token:enrollment:)`` with the server's `URL`.
    @discardableResult
    public func enroll(
        _ key: any SignatureProvider, server: URL, token: String?, enrollment: DeviceEnrollment = DeviceEnrollment()
    ) async throws -> DeviceIdentity {
        try await enroll(key, server: server.absoluteString, token: token, enrollment: enrollment)
    }

    /// Enrolls an App Attest key by attestation with `server`, and stores the identity. With `token`
    /// (the logged-in user's enrollment JWT), the device is bound to that user.
    @discardableResult
    public func enroll(
        appAttest signer: AppAttestSigner, server: String, token: String? = nil,
        enrollment: DeviceEnrollment = DeviceEnrollment()
    ) async throws -> DeviceIdentity {
        try await enrolling {
            try await self.changing { [store] in
                try await self.ensureNotEnrolled()
                let registration = try await self.registration(server: server, pins: enrollment.pins)
                return try await enrollment.enroll(
                    attested: signer, appAttestKeyID: signer.keyIDBytes, token: token,
                    attest: { try await signer.attest(challenge: $0) }, with: registration, store: store)
            }
        }
    }

    /// Enrolls `key` (a Secure Enclave P-256 key, `ecdsa-p256-sha256`) with `server`, vouched for by an
    /// App Attest attestation of `appAttest` (PROTOCOL.md section 7), and stores the identity. The
    /// device then signs with `key`, any number of requests at once; only requests under the server's
    /// `assertionPaths`, and a rotation, are signed by App Attest assertions, one at a time.
    ///
    /// An app extension that shares the identity (a Keychain access group) signs with the same key;
    /// where App Attest does not run there (most extensions, a Mac), a request that needs an assertion
    /// throws ``SigilClientError/Kind/appAttestUnavailable``.
    ///
    /// - Parameter token: the logged-in user's enrollment JWT, binding the device to that user.
    @discardableResult
    public func enroll(
        _ key: any SignatureProvider, vouchedBy appAttest: AppAttestSigner, server: String, token: String? = nil,
        enrollment: DeviceEnrollment = DeviceEnrollment()
    ) async throws -> DeviceIdentity {
        appAttestProvider = appAttest.provider
        return try await enrolling {
            try await self.changing { [store] in
                try await self.ensureNotEnrolled()
                let registration = try await self.registration(server: server, pins: enrollment.pins)
                return try await enrollment.enroll(
                    key, vouchedBy: appAttest, token: token, with: registration, store: store)
            }
        }
    }

    /// An enrollment, told to ``log`` once it is stored.
    func enrolling(_ enroll: () async throws -> DeviceIdentity) async throws -> DeviceIdentity {
        let identity = try await enroll()
        log(.enrolled(keyID: identity.keyID, deviceID: identity.deviceID, userID: identity.userID))
        return identity
    }

    // MARK: Requests

    /// Signs and sends `request` (to the enrolled server only) and checks the signed answer.
    ///
    /// - Returns: the answer, whatever its status, when it is not a Sigil refusal.
    /// - Throws: ``SigilError`` with the server's code for a refusal the server signed (`revoked-key`,
    ///   `unknown-key`: enroll again); ``SigilClientError`` for everything else: an unsigned refusal
    ///   (its code only claimed), an answer whose signature is missing or wrong, the transport's
    ///   failure, a device not enrolled, a Keychain not readable yet.
    public func send(_ request: HTTPRequest, body: [UInt8] = [], sealed: Bool? = nil) async throws -> SigilResponse {
        try await exchange(for: request) { try await $0.send(request, body: body, sealed: sealed) }
    }

    /// ``send(_:body:sealed:)`` with the body in a file, hashed as it streams and uploaded from disk
    /// (``SigilSession/send(_:bodyFile:)``): for large uploads.
    public func send(_ request: HTTPRequest, bodyFile: URL) async throws -> SigilResponse {
        try await exchange(for: request) { try await $0.send(request, bodyFile: bodyFile) }
    }

    /// One exchange through the identity's session: what it learnt is kept, a refusal thrown.
    func exchange(for request: HTTPRequest, _ send: (SigilSession) async throws -> SigilResponse) async throws
        -> SigilResponse
    {
        let session = try await session(for: request)
        let response: SigilResponse
        do {
            response = try await send(session)
        } catch let failure as SigilClientError {
            if failure.kind == .untrustedAnswer || failure.kind == .untrustedRefusal {
                log(.untrustedAnswer(status: failure.status, claimedCode: failure.claimedCode))
            }
            throw failure
        }
        // What the session learnt is kept; the answer is returned whatever the store does.
        keep(session)
        guard let failure = response.failure else { return response }
        if let refusal = failure as? SigilError {
            log(.refused(code: refusal.code, status: response.head.status.code))
        } else {
            log(.untrustedAnswer(status: response.head.status.code, claimedCode: response.problemCode))
        }
        throw failure
    }

    /// ``send(_:body:sealed:)`` for a Foundation `URLRequest` (its `httpBody` is the body), in one
    /// call: signed, sent, its answer's signature checked, sent once more after a signed
    /// `timestamp-out-of-window`.
    ///
    /// - Returns: the answer's body and head, as `URLSession.data(for:)` returns them.
    public func data(for urlRequest: URLRequest, sealed: Bool? = nil) async throws -> (Data, HTTPURLResponse) {
        guard let request = urlRequest.httpRequest, let url = urlRequest.url else {
            throw SigilInputError("the URLRequest has no absolute http(s) URL")
        }
        if urlRequest.httpBodyStream != nil {
            throw SigilInputError("a streamed URLRequest body cannot be signed; give it as httpBody")
        }
        let response = try await send(request, body: urlRequest.httpBody.map(Array.init) ?? [], sealed: sealed)
        guard let head = HTTPURLResponse(httpResponse: response.head, url: url) else {
            throw SigilInputError("the answer does not convert to an HTTPURLResponse")
        }
        return (Data(response.body), head)
    }

    /// An interceptor for a networking stack of the app's own (Alamofire's `RequestInterceptor`
    /// shape, without depending on it), signing with this device's identity.
    public func interceptor() async throws -> SigilInterceptor {
        SigilInterceptor(session: try await session(), device: self)
    }

    // MARK: Lifecycle

    /// Rotates the device to `next`: the server registers it (the current key signs, `next` proves
    /// possession), and the new identity and key replace the old in the store as soon as the server
    /// answers; a new secret is then fetched with `next` when the device had one, and stored with them.
    /// The current key lasts the server's grace period, so requests in flight still verify. When the
    /// server's answer is lost (the connection dropped after the server rotated), `next` is tried
    /// once: if the server knows it, the rotation is taken as done.
    @discardableResult
    public func rotate(to next: any SignatureProvider) async throws -> DeviceIdentity {
        try await changing { [store] in
            let (identity, key) = try await self.enrolled()
            let session = try await self.session()
            guard let server = session.responses else { throw SigilInputError("the identity names no response key") }
            let registration = try await self.registration(server: identity.server, pins: identity.pins)
            guard let nextKeyID = next.publicKey?.derivedKeyID else {
                throw SigilInputError("only a key pair can be rotated to")
            }
            // A key App Attest vouched for moves only by an assertion of the App Attest key: the genuine
            // app asks for the rotation.
            let assertion = identity.appAttestKeyID != nil ? try await self.assertionSigner() : nil
            let (signer, signerKeyID): (any SignatureProvider, String) =
                assertion.map { ($0, $0.keyID) } ?? (key, identity.keyID)
            let deviceID: String
            do {
                deviceID = try await registration.rotate(from: signer, keyID: signerKeyID, to: next, server: server)
                    .deviceId
            } catch let error where !(error is SigilError) {
                // Not a refusal: the server may have rotated and its answer been lost. It knows `next`
                // then, which a request signed by `next` shows (a signed refusal of the secret, for an
                // attested device, shows it as well as a secret does).
                let known: Bool
                do {
                    _ = try await registration.fetchSecret(key: next, keyID: nextKeyID, server: server)
                    known = true
                } catch let refusal as SigilError {
                    known = refusal.code == .forbidden
                } catch {
                    known = false
                }
                guard known else { throw error }
                deviceID = identity.deviceID
            }
            // The identity as it is now (a promotion a send stored meanwhile), with the new key.
            var rotated = await self.identity ?? identity
            rotated.keyID = nextKeyID
            rotated.deviceID = deviceID
            rotated.algorithm = next.algorithm.rawValue
            rotated.secretKeyID = nil
            rotated.secretIssuedAt = nil
            rotated.clockOffset = self.clock.offsetSeconds
            self.log(.rotated(from: identity.keyID, to: nextKeyID))
            try store.save(rotated, key: next, secret: nil)
            if identity.secretKeyID != nil {
                let issued = try await registration.fetchSecret(key: next, keyID: nextKeyID, server: server)
                rotated.secretKeyID = issued.keyId
                rotated.secretIssuedAt = issued.issuedAt ?? self.clock.now()
                try store.save(rotated, key: next, secret: try issued.secretBytes(openingWith: try store.sealingKey()))
            }
            return rotated
        }
    }

    /// Resets the device: deletes everything the store keeps, then tells the server to revoke it
    /// (when `revoke`, the default) with the key still in memory, waiting ``revocationDeadline`` at
    /// most. The local reset happens first and whatever the server does; an error then says the
    /// server was not told, and the device's keys, gone from the store, sign nothing more.
    public func reset(revoke: Bool = true) async throws {
        await lifecycle.take()
        let enrolled = try? enrolled()
        let session = revoke && enrolled != nil ? try? await session() : nil
        generation += 1
        log(.reset(keyID: enrolled?.0.keyID ?? identity?.keyID, revoked: revoke && enrolled != nil))
        identity = nil
        unsaved = nil
        current = nil
        assertions = nil
        do {
            try store.reset()
        } catch {
            await lifecycle.pass()
            throw error
        }
        await lifecycle.pass()
        guard revoke, let (identity, key) = enrolled else { return }
        guard let server = session?.responses else { throw SigilInputError("the identity names no response key") }
        let registration = try registration(server: identity.server, pins: identity.pins)
        let deadline = revocationDeadline
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await registration.revoke(key: key, keyID: identity.keyID, server: server) }
            group.addTask {
                try await Task.sleep(for: deadline)
                throw SigilClientError(
                    .transport, "the server did not answer the revocation in time; the device is reset here")
            }
            defer { group.cancelAll() }
            try await group.next()
        }
    }

    /// Replaces an App Attest key App Attest gave up (``AppAttestFailure/keyInvalidated``: the app
    /// was reinstalled or restored to another device) with a new one, enrolled with the same server
    /// under the same pins: the old identity is deleted (its key can sign nothing, not even its
    /// revocation), a new key is made and attested, and `token` (the logged-in user's enrollment JWT,
    /// or `nil` where attestation alone enrolls) binds it to its user.
    @discardableResult
    public func replaceAppAttestKey(provider: any AppAttestProvider, token: String?) async throws -> DeviceIdentity {
        guard let identity else { throw SigilClientError.notEnrolled }
        try await reset(revoke: false)
        let signer = try await AppAttestSigner.generate(provider: provider)
        return try await enroll(
            appAttest: signer, server: identity.server, token: token, enrollment: DeviceEnrollment(pins: identity.pins))
    }

    // MARK: Plumbing

    /// Refuses to enroll over an identity: the device registered before would stay live on the server,
    /// unknown to the app. ``reset(revoke:)`` first.
    func ensureNotEnrolled() throws {
        // A store that cannot be read throws here: enrolling on it would orphan the device it holds.
        try refresh()
        guard identity == nil else {
            throw SigilInputError("this device is enrolled already (key \(identity?.keyID ?? "")): reset it first")
        }
    }

    func enrolled() throws -> (DeviceIdentity, any SignatureProvider) {
        try refresh()
        guard let identity, let key = try store.deviceKey() else { throw SigilClientError.notEnrolled }
        return (unsaved ?? identity, key)
    }

    func registration(server: String, pins: [String]) throws -> DeviceRegistration {
        guard let origin = Origin(url: server) else { throw SigilInputError("\(server) is not an https:// origin") }
        return DeviceRegistration(
            transport: try makeTransport(origin.host, pins), scheme: origin.scheme,
            authority: "\(origin.host):\(origin.port)",
            clock: clock)
    }

    /// The session that signs `request`: the App Attest key's, one request at a time, when the server
    /// takes only assertions on its path (the identity's ``DeviceIdentity/assertionPaths``); else the
    /// identity's own.
    func session(for request: HTTPRequest) async throws -> SigilSession {
        // The identity in memory: a session made already signs without reading the store (which may be
        // locked again by now).
        guard let identity = unsaved ?? identity, identity.appAttestKeyID != nil, let paths = identity.assertionPaths,
            Self.falls(request.path ?? "/", under: paths)
        else { return try await session() }
        if let assertions { return assertions }
        let signer = try assertionSigner()
        let base = try await session()
        var session = SigilSession(
            transport: base.transport, signer: RequestSigner(key: signer, keyID: signer.keyID, clock: clock),
            clock: clock, responses: base.responses, requireSignedResponses: true)
        session.origin = base.origin
        session.sealingKey = base.sealingKey
        assertions = session
        return session
    }

    /// Whether `path` (its query dropped) falls under one of `prefixes`: the prefix itself or below it.
    static func falls(_ path: String, under prefixes: [String]) -> Bool {
        let path =
            path.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init)
            ?? path
        return prefixes.contains { prefix in
            prefix == "/" || path == prefix || path.hasPrefix(prefix.hasSuffix("/") ? prefix : prefix + "/")
        }
    }

    /// The App Attest key that vouched for the identity's key, as a signer of assertions.
    ///
    /// - Throws: ``SigilClientError/Kind/appAttestUnavailable`` where nothing makes assertions here.
    func assertionSigner() throws -> AppAttestSigner {
        guard let keyID = identity?.appAttestKeyID else { throw SigilClientError.notEnrolled }
        var provider = appAttestProvider
        #if canImport(DeviceCheck)
            provider = provider ?? SystemAppAttest()
        #endif
        guard let provider, provider.isSupported else {
            throw SigilClientError(
                .appAttestUnavailable,
                "App Attest does not run here (a Mac, an app extension, a simulator without the debug provider); this request needs an assertion"
            )
        }
        return AppAttestSigner(appAttestKeyID: keyID, provider: provider)
    }

    /// The session of the stored identity.
    func session() async throws -> SigilSession {
        if let current { return current }
        let (identity, key) = try enrolled()
        let session = try session(of: identity, key: key)
        current = session
        return session
    }

    /// A session of `identity` signing with `key`, over a transport checking the identity's pins.
    func session(of identity: DeviceIdentity, key: any SignatureProvider) throws -> SigilSession {
        guard let origin = Origin(url: identity.server) else {
            throw SigilInputError("the identity names no origin it enrolled with")
        }
        return try SigilSession(
            identity: identity, transport: try makeTransport(origin.host, identity.pins),
            signer: RequestSigner(key: key, keyID: identity.keyID, clock: clock), clock: clock,
            keyFormats: keyFormats)
    }

    /// Runs a lifecycle change (enrollment, rotation) in its turn, and takes the identity it stored as
    /// the device's, unless a reset came in between (then the store is emptied again).
    func changing(_ change: @Sendable () async throws -> DeviceIdentity) async throws -> DeviceIdentity {
        await lifecycle.take()
        let started = generation
        do {
            let changed = try await change()
            guard started == generation else {
                try store.reset()
                await lifecycle.pass()
                throw SigilInputError("the device was reset while it changed; nothing is kept")
            }
            identity = changed
            unsaved = nil
            current = nil
            assertions = nil
            await lifecycle.pass()
            return changed
        } catch {
            await lifecycle.pass()
            throw error
        }
    }

    /// Stores what a session learnt: the server keys it follows, the clock's offset. Never fails: a
    /// store that does not take it now is tried again after the next answer, and the identity in
    /// memory already holds it.
    func keep(_ session: SigilSession) {
        // The identity's own session, or the one its App Attest key signs assertions in.
        guard let keyID = identity?.keyID,
            session.signer.keyID == keyID || session.signer.keyID == assertions?.signer.keyID
        else { return }
        // Another process on the same store (an app extension) may have rotated or reset: its identity
        // wins, and this one's is never written over it.
        let stored: DeviceIdentity?
        do {
            stored = try store.identity()
        } catch {
            deferred(unsaved ?? identity, because: error)
            return
        }
        guard let stored, stored.keyID == keyID else {
            try? refresh()
            return
        }
        var updated = unsaved ?? stored
        if let trusted = session.responses?.trusted, let following = updated.following(trusted) {
            if following.responseKeyID != updated.responseKeyID {
                log(.responseKeysLearnt(keyIDs: [following.responseKeyID]))
            }
            if following.pins != updated.pins {
                // New connections check the new pins: the sessions are made again for them, with the key
                // in memory (the store may not be readable now).
                log(.pinsAdopted(pins: following.pins))
                current = current.flatMap { try? self.session(of: following, key: $0.signer.key) }
                assertions = nil
            }
            updated = following
        }
        // The offset moves by a second now and then (whole seconds, a round trip's middle): stored when
        // it moved more, so a request does not write the Keychain each time.
        if abs((updated.clockOffset ?? 0) - clock.offsetSeconds) > 1 {
            updated.clockOffset = clock.offsetSeconds
            log(.clockCorrected(offsetSeconds: clock.offsetSeconds))
        }
        identity = updated
        guard updated != stored else { return }
        do {
            try store.saveIdentity(updated)
            if unsaved != nil { log(.storeCaughtUp) }
            unsaved = nil
        } catch {
            deferred(updated, because: error)
        }
    }

    /// Keeps `identity` in memory to be stored after the next answer, and says so.
    func deferred(_ identity: DeviceIdentity?, because error: any Error) {
        guard let identity else { return }
        unsaved = identity
        log(.storeDeferred(reason: String(describing: error).prefix(256).description))
    }
}
