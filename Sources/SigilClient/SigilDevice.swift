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
/// if await !device.isEnrolled {
///     try await device.enroll(try SecureEnclaveSigningKey(), server: "https://api.example.com", token: token)
/// }
/// let answer = try await device.send(request, body: body)   // a refusal throws SigilError
/// ```
///
/// What it keeps by itself, in the store, as it happens:
/// - the server's next response key or sealing key, learnt from discovery the key it trusts signed
///   (``DeviceIdentity/following(_:)``), so a server key promotion needs nothing from the app;
/// - the clock's offset from a signed answer (``DeviceIdentity/clockOffset``), so the first request
///   after a launch is signed with the server's time;
/// - the new key, secret and identity of a rotation, all at once.
///
/// Requests whose key must be used in order (App Attest) go one at a time. Every failure is thrown:
/// a server's refusal as ``SigilError`` with its code, whatever the call.
public actor SigilDevice {
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

    /// The device as `store` keeps it.
    ///
    /// - Parameter transport: the transport to a server's host that checks its SPKI pins (on Apple
    ///   platforms `URLSessionTransport.pinned(host:pins:options:)`, which `init(store:pinning:)`
    ///   uses): called with the stored identity's pins, or with those given to
    ///   ``enroll(_:server:token:enrollment:)`` (none: the transport checks the system's trust alone,
    ///   and the identity keeps discovery's pins from then on).
    public init(
        store: any DeviceStore, clock local: any UnixClock = SystemUnixClock(), keyFormats: KeyFormats = .builtIn,
        transport: @escaping @Sendable (_ host: String, _ pins: [String]) throws -> any SigilTransport
    ) throws {
        self.store = store
        self.keyFormats = keyFormats
        makeTransport = transport
        let identity = try store.identity()
        self.identity = identity
        clock = ServerClock(local: local, offset: identity?.clockOffset ?? 0)
    }

    /// Whether the store holds an identity.
    public var isEnrolled: Bool { identity != nil }

    // MARK: Enrollment

    /// Enrolls `key` with `server` (`https://host[:port]`) and stores the identity, key and secret.
    ///
    /// - Parameters:
    ///   - token: the bootstrap token or the logged-in user's enrollment JWT, if the server asks for one.
    ///   - enrollment: what to fetch besides (the secret, a certificate) and the pins to check the
    ///     server with (else discovery's, taken on first use).
    @discardableResult
    public func enroll(
        _ key: any SignatureProvider, server: String, token: String?, enrollment: DeviceEnrollment = DeviceEnrollment()
    ) async throws -> DeviceIdentity {
        let registration = try self.registration(server: server, pins: enrollment.pins)
        return try adopt(try await enrollment.enroll(key, token: token, with: registration, store: store))
    }

    /// Enrolls an App Attest key by attestation with `server`, and stores the identity. With `token`
    /// (the logged-in user's enrollment JWT), the device is bound to that user.
    @discardableResult
    public func enroll(
        appAttest signer: AppAttestSigner, server: String, token: String? = nil,
        enrollment: DeviceEnrollment = DeviceEnrollment()
    ) async throws -> DeviceIdentity {
        let registration = try self.registration(server: server, pins: enrollment.pins)
        let identity = try await enrollment.enroll(
            attested: signer, appAttestKeyID: signer.keyIDBytes, token: token,
            attest: { try await signer.attest(challenge: $0) }, with: registration, store: store)
        return try adopt(identity)
    }

    // MARK: Requests

    /// Signs and sends `request` (to the enrolled server only) and checks the signed answer.
    ///
    /// - Returns: the answer, whatever its status, when it is not a Sigil refusal.
    /// - Throws: ``SigilError`` with the server's code for a refusal (`revoked-key`: enroll again),
    ///   or for an answer whose signature is missing or wrong; the transport's errors.
    public func send(_ request: HTTPRequest, body: [UInt8] = [], sealed: Bool? = nil) async throws -> SigilResponse {
        let session = try await session()
        let response = try await session.send(request, body: body, sealed: sealed)
        try keep(session)
        if let refusal = response.refusal { throw refusal }
        return response
    }

    /// ``send(_:body:sealed:)`` with the body in a file, hashed as it streams and uploaded from disk
    /// (``SigilSession/send(_:bodyFile:)``): for large uploads.
    public func send(_ request: HTTPRequest, bodyFile: URL) async throws -> SigilResponse {
        let session = try await session()
        let response = try await session.send(request, bodyFile: bodyFile)
        try keep(session)
        if let refusal = response.refusal { throw refusal }
        return response
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
    /// possession), a new secret is fetched with it when the device had one, and the new identity,
    /// key and secret replace the old in the store at once. The current key lasts the server's grace
    /// period, so requests in flight still verify.
    @discardableResult
    public func rotate(to next: any SignatureProvider) async throws -> DeviceIdentity {
        let (identity, key) = try enrolled()
        let session = try await session()
        guard let server = session.responses else { throw SigilInputError("the identity names no response key") }
        let registration = try self.registration(server: identity.server, pins: identity.pins)
        let registered = try await registration.rotate(
            from: key, keyID: identity.keyID, to: next, server: server)
        var rotated = identity
        rotated.keyID = registered.keyId
        rotated.deviceID = registered.deviceId
        rotated.algorithm = next.algorithm.rawValue
        var secret: [UInt8]?
        if identity.secretKeyID != nil {
            let issued = try await registration.fetchSecret(key: next, keyID: registered.keyId, server: server)
            secret = try issued.secretBytes(openingWith: try store.sealingKey())
            rotated.secretKeyID = issued.keyId
            rotated.secretIssuedAt = issued.issuedAt ?? clock.now()
        } else {
            rotated.secretKeyID = nil
        }
        rotated.clockOffset = clock.offsetSeconds
        try store.save(rotated, key: next, secret: secret)
        return try adopt(rotated)
    }

    /// Resets the device: tells the server to revoke it (when `revoke`, the default), then deletes
    /// everything the store keeps. The local reset happens even when the server cannot be told; the
    /// error then says so, and the device's keys, gone from the store, can sign nothing more.
    public func reset(revoke: Bool = true) async throws {
        var failure: (any Error)?
        if revoke, let (identity, key) = try? enrolled() {
            do {
                let session = try await session()
                guard let server = session.responses else { throw SigilInputError("no response key") }
                try await registration(server: identity.server, pins: identity.pins)
                    .revoke(key: key, keyID: identity.keyID, server: server)
            } catch {
                failure = error
            }
        }
        try store.reset()
        identity = nil
        current = nil
        if let failure { throw failure }
    }

    // MARK: Plumbing

    func enrolled() throws -> (DeviceIdentity, any SignatureProvider) {
        guard let identity, let key = try store.deviceKey() else {
            throw SigilError(.unknownKey, "this device is not enrolled: enroll it first")
        }
        return (identity, key)
    }

    func registration(server: String, pins: [String]) throws -> DeviceRegistration {
        guard let origin = Origin(url: server) else { throw SigilInputError("\(server) is not an https:// origin") }
        return DeviceRegistration(
            transport: try makeTransport(origin.host, pins), scheme: origin.scheme,
            authority: "\(origin.host):\(origin.port)",
            clock: clock)
    }

    /// The session of the stored identity.
    func session() async throws -> SigilSession {
        if let current { return current }
        let (identity, key) = try enrolled()
        guard let origin = Origin(url: identity.server) else {
            throw SigilInputError("the identity names no origin it enrolled with")
        }
        let session = try SigilSession(
            identity: identity, transport: try makeTransport(origin.host, identity.pins),
            signer: RequestSigner(key: key, keyID: identity.keyID, clock: clock), clock: clock,
            keyFormats: keyFormats)
        current = session
        return session
    }

    /// Takes `identity` as the device's, after it was stored.
    func adopt(_ identity: DeviceIdentity) throws -> DeviceIdentity {
        self.identity = identity
        current = nil
        return identity
    }

    /// Stores what a session learnt: the server keys it follows, the clock's offset.
    func keep(_ session: SigilSession) throws {
        guard session.signer.keyID == identity?.keyID else { return }
        guard var updated = identity else { return }
        if let trusted = session.responses?.trusted, let following = updated.following(trusted) {
            updated = following
        }
        if updated.clockOffset != clock.offsetSeconds { updated.clockOffset = clock.offsetSeconds }
        guard updated != identity else { return }
        try store.saveIdentity(updated)
        identity = updated
    }
}
