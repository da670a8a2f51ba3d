import HTTPTypes
@_spi(Sigil) import SigilCore

/// The server's side of one exchange, written once for every framework: admit a request, then
/// answer it or refuse it.
///
/// ```
/// admit(head, body chunks, client certificate)
///    │  each authenticator asked in turn, before the body: Sigil signature (headers, window, key),
///    │  DPoP proof and token, client certificate ─► the body, at most the limit ─► the signature
///    │  over it ─► a sealed body opened ─► the credentials resolved to one identity (IdentityResolver)
///    │  ─► Admission (identity, plaintext, the fields answers get)
///    ├─► the route runs ─► answer(response, for: admission)   sealed to the request's context,
///    │                                                        signed for that one request
///    └─► refuse(error, admission?)                problem+json, signed exactly when the request's
///                                                 own signature verified
/// ```
///
/// A framework adapter (Hummingbird's and Vapor's middleware, swift-openapi's server middleware,
/// `sigil gateway`) only converts its request and response types to swift-http-types and back; what
/// it would otherwise copy from another adapter lives here.
public struct Exchange: Sendable {
    /// Verifies requests.
    public let verifier: RequestVerifier
    /// Signs answers and refusals, when set.
    public let responseSigner: ResponseSigner?
    /// Opens sealed bodies after verification and seals their answers, when set.
    public let sealing: SealedBodies?
    /// Whether refusals carry the server's signature base (for development only).
    public let includeSignatureBase: Bool
    /// How long a body may take to arrive whole (then `request-timeout`); `nil` where the transport
    /// enforces its own limits (Hummingbird's ``RequestTimeouts`` in a channel handler).
    public let bodyTimeout: Duration?
    /// Accepts DPoP-bound access tokens (RFC 9449), when set: in place of a Sigil signature, or
    /// with one when ``DPoPVerifier/requiresSigilSignature`` is set.
    public let dpop: DPoPVerifier?
    /// The origin clients reach this server at (`https://api.example`), when set: every request is
    /// taken as addressed to it, so a DPoP proof's `htu` and an rfc9421 signature's `@scheme` and
    /// `@authority` are checked against it, whatever `Host` or `:scheme` the client sent.
    public let origin: String?
    /// Monitor mode (PROTOCOL.md section 15): under these path prefixes a request whose credentials
    /// are missing or fail is not refused; it reaches its route unverified, with the code it would have
    /// been refused with (``Admission/outcome``). A prefix covers a path only when every reading a
    /// router could make of the path falls under it.
    public let monitor: PathPrefixes
    /// Counts every request admitted, refused or let through unverified, by route and outcome.
    public let outcomes: RequestOutcomes?
    /// Path prefixes whose routes take only requests signed by an App Attest assertion (an
    /// `apple-appattest` key): any other verified request under one is refused `forbidden`, signed. A
    /// path is covered when any reading a router could make of it falls under a prefix (refusing is
    /// the side that must not match less than a router would). Discovery lists them
    /// (`assertionPaths`), so an App Attest device signs those requests with its App Attest key.
    public let assertionPaths: PathPrefixes
    /// The budget the unsigned bodies monitor mode holds for their routes share.
    public let unverifiedBodies: UnverifiedBodies
    /// The ways a request proves who sent it, asked in turn: a Sigil signature, a DPoP proof when
    /// ``dpop`` is set (a client certificate, read per connection, is asked last).
    let authenticators: [any RequestAuthenticator]
    /// ``origin`` read: its scheme and authority, or the refusal of every request when it is no origin.
    @usableFromInline let originParts: Result<(scheme: String, authority: String), SigilError>?

    /// Creates the exchange.
    ///
    /// - Parameters:
    ///   - verifier: verifies requests; its configuration sets the profiles, window and body limit.
    ///   - responseSigner: signs answers and refusals (section 2.7, or rfc9421 with `;req`).
    ///   - sealing: the keys sealed bodies open with; routes then see the plaintext.
    ///   - includeSignatureBase: put `signatureBase` in refusals.
    ///     - Warning: for development: it shows a caller what the server expected.
    ///   - bodyTimeout: how long a body may take to arrive whole, or `nil` when the transport limits it.
    ///   - dpop: accepts DPoP requests (RFC 9449) too.
    ///   - origin: the public origin (`https://host[:port]`) requests are checked against, when the
    ///     server sits behind a name the connection does not show (a proxy, a load balancer).
    ///     An `origin` that is no `http(s)://` scheme and authority alone (``parseOrigin(_:)``) refuses
    ///     every request (`forbidden`, saying why): a server not told where it is reached checks nothing
    ///     against a client's word.
    ///   - monitor: path prefixes under which refusals are held back (``monitor``).
    ///   - outcomes: where each request's outcome is counted.
    ///   - requireAssertion: path prefixes that take App Attest assertions only (``assertionPaths``).
    ///   - unverifiedBodyBudget: the bytes unsigned bodies under monitored prefixes may hold at once,
    ///     across requests (``unverifiedBodies``); twice the body limit when `nil`.
    public init(
        verifier: RequestVerifier,
        responseSigner: ResponseSigner? = nil,
        sealing: SealedBodies? = nil,
        includeSignatureBase: Bool = false,
        bodyTimeout: Duration? = .seconds(60),
        dpop: DPoPVerifier? = nil,
        origin: String? = nil,
        monitor: [String] = [],
        outcomes: RequestOutcomes? = nil,
        requireAssertion: [String] = [],
        unverifiedBodyBudget: Int? = nil
    ) {
        self.monitor = PathPrefixes(monitor)
        self.unverifiedBodies = UnverifiedBodies(
            budget: unverifiedBodyBudget ?? 2 * verifier.configuration.bodyLimit)
        self.assertionPaths = PathPrefixes(requireAssertion)
        self.outcomes = outcomes
        self.origin = origin
        self.originParts = origin.map { origin in
            guard let parts = Self.parseOrigin(origin) else {
                return .failure(
                    SigilError(.forbidden, "the server's origin is not http(s)://host[:port]; nothing is admitted"))
            }
            return .success(parts)
        }
        self.verifier = verifier
        self.responseSigner = responseSigner
        self.sealing = sealing
        self.includeSignatureBase = includeSignatureBase
        self.bodyTimeout = bodyTimeout
        self.dpop = dpop
        self.authenticators =
            [SignatureAuthenticator(verifier: verifier, dpopStandsIn: dpop.map { !$0.requiresSigilSignature } ?? false)]
            + (dpop.map { [DPoPAuthenticator(dpop: $0)] } ?? [])
    }

    // MARK: Admit

    /// Admits a request: asks each authenticator in turn about the credential it carries (a Sigil
    /// signature's headers, window and key, a DPoP proof alone and its token, the TLS client
    /// certificate) before any body byte is read, then reads at most the body limit, verifies the
    /// signature over it (then a DPoP proof beside it, so that its refusal is signed), opens a sealed
    /// body, and resolves the credentials to one identity (PROTOCOL.md section 13.2).
    ///
    /// - Parameters:
    ///   - head: the request as signed (method, scheme, authority, path and query, fields).
    ///   - bodyChunks: the body as it arrives.
    ///   - limit: the framework's own upload limit, when lower than the verifier's.
    ///   - clientCertificate: reads the connection's client certificate (`nil` for none); `nil` when
    ///     the adapter does not read client certificates. One that cannot be read must throw
    ///     `certificate-mismatch`: a certificate not read is one not checked.
    /// - Returns: what the route needs.
    /// - Throws: ``SigilError``, for ``refuse(_:for:admission:)``.
    @inlinable
    public func admit<Chunks: AsyncSequence & Sendable>(
        _ head: HTTPRequest,
        bodyChunks: Chunks,
        limit: Int? = nil,
        clientCertificate: (@Sendable () async throws -> ClientCertificateIdentity?)? = nil
    ) async throws -> Admission where Chunks.Element: Collection<UInt8> {
        // Inlinable, so the body is read by code specialized for the caller's chunks.
        let route = monitored(head)
        let limit = min(limit ?? verifier.configuration.bodyLimit, verifier.configuration.bodyLimit)
        let declared = head.headerFields[.contentLength].flatMap(Int.init)
        let read = {
            try await self.withBodyTimeout {
                try await BodyReader.collect(bodyChunks, declaredLength: declared, limit: limit)
            }
        }
        let pending: PendingAdmission
        do {
            pending = try await authenticateHead(head, clientCertificate: clientCertificate)
        } catch let refused as SigilError where holdsBack(refused, head, route) {
            // Unsigned, so held under the budget every such body shares.
            let held = try await counted(route) {
                try await self.withBodyTimeout {
                    try await self.unverifiedBodies.collect(bodyChunks, declaredLength: declared, limit: limit)
                }
            }
            var admission = unverified(head, body: held.body, refused, route)
            admission.bodyHold = held.hold
            return admission
        } catch {
            throw counted(error, route)
        }
        let body: [UInt8]
        // Under a monitored prefix a body whose signature has not verified yet may be let through
        // unverified (a forged signature naming a registered key): it draws on the same budget as an
        // unsigned one, which it keeps only when let through; a request that verifies gives it back.
        var hold: UnverifiedBodies.Hold?
        do {
            if route != nil {
                let held = try await withBodyTimeout {
                    try await self.unverifiedBodies.collect(bodyChunks, declaredLength: declared, limit: limit)
                }
                (body, hold) = (held.body, held.hold)
            } else {
                body = try await read()
            }
        } catch {
            bodyFailed(error, pending)
            throw counted(error, route)
        }
        var admission = try await admitted(pending, body: body, awaited: true, route: route)
        if admission.outcome != nil { admission.bodyHold = hold }
        return admission
    }

    /// ``admit(_:bodyChunks:limit:clientCertificate:)`` for a body that has been read already.
    public func admit(
        _ head: HTTPRequest,
        body: [UInt8],
        clientCertificate: (@Sendable () async throws -> ClientCertificateIdentity?)? = nil
    ) async throws -> Admission {
        let route = monitored(head)
        do {
            // Before any credential is checked: a proof is not spent on a body that is refused anyway.
            try BodyReader.check(body.count, limit: verifier.configuration.bodyLimit)
        } catch {
            if verifier.carriesSignature(head) { verifier.metrics.recordRefusal(error) }
            throw counted(error, route)
        }
        let pending: PendingAdmission
        do {
            pending = try await authenticateHead(head, clientCertificate: clientCertificate)
        } catch let refused as SigilError where holdsBack(refused, head, route) {
            return unverified(head, body: body, refused, route)
        } catch {
            throw counted(error, route)
        }
        return try await admitted(pending, body: body, awaited: false, route: route)
    }

    // MARK: Monitor

    /// The monitored prefix `head`'s path falls under in every reading, or `nil`.
    @usableFromInline
    func monitored(_ head: HTTPRequest) -> String? {
        monitor.everyReading(of: head.path ?? "/")
    }

    /// Whether monitor mode lets a request refused with `error` through, unverified: under a monitored
    /// prefix, a refusal of its credentials (every 401 but `enrollment-refused`), a key directory or
    /// nonce store that did not answer, and a plain body where a sealed one is required. Never what no
    /// route could read or trust the shape of: a body over the limit or too slow, a sealed body (bound
    /// to a signer that did not verify), two `Host` fields or a bad origin (`forbidden`).
    @usableFromInline
    func holdsBack(_ error: SigilError, _ head: HTTPRequest, _ route: String?) -> Bool {
        guard route != nil, !Sealing.codings(head.headerFields).contains(Sealing.contentEncoding) else {
            return false
        }
        switch error.code {
        case .enrollmentRefused: return false
        case .storeUnavailable, .sealedBodyInvalid: return true
        default: return error.code.httpStatus == 401
        }
    }

    /// The admission of a request monitor mode let through: no identity, the refusal held back, and
    /// the request as addressed to the server's origin.
    @usableFromInline
    func unverified(_ head: HTTPRequest, body: [UInt8], _ refused: SigilError, _ route: String?) -> Admission {
        outcomes?.record(route: route, outcome: refused.code)
        RequestRecord.note(identity: nil, outcome: refused.code.rawValue, bodyBytes: body.count)
        let head = (try? addressed(head)) ?? head
        return Admission(
            identity: nil, request: head, body: body, signedRequest: head, sealer: nil, outcome: refused.code)
    }

    /// `error`, once counted as the outcome of a request under `route`.
    @usableFromInline
    func counted(_ error: any Error, _ route: String?) -> any Error {
        let code = (error as? SigilError)?.code ?? .malformedSignature
        outcomes?.record(route: route, outcome: code)
        RequestRecord.note(identity: nil, outcome: code.rawValue, bodyBytes: nil)
        return error
    }

    /// What `read` reads, within ``bodyTimeout`` when one is set.
    @usableFromInline
    func withBodyTimeout<Body: Sendable>(_ read: @escaping @Sendable () async throws -> Body) async throws -> Body {
        guard let bodyTimeout else { return try await read() }
        return try await withDeadline(bodyTimeout, SigilError(.requestTimeout, "the body did not arrive in time")) {
            try await read()
        }
    }

    /// The body `read` reads, a failure counted as the request's outcome.
    @usableFromInline
    func counted<Body>(_ route: String?, _ read: () async throws -> Body) async throws -> Body {
        do {
            return try await read()
        } catch {
            throw counted(error, route)
        }
    }

    /// A request whose credentials were checked as far as its head goes, waiting for its body.
    @usableFromInline
    struct PendingAdmission: Sendable {
        /// The request as addressed to the server's origin.
        @usableFromInline let head: HTTPRequest
        /// The authenticators whose credential the request carries, in the order asked.
        let carried: [any RequestAuthenticator]
        let credentials: Credentials
    }

    /// Asks each authenticator about the credential `head` carries, before the body: a request must
    /// carry every credential required and one that proves a request (a signature, or a DPoP proof
    /// where it stands in for one), else it is refused with the challenge of each it lacks.
    @usableFromInline
    func authenticateHead(
        _ head: HTTPRequest, clientCertificate: (@Sendable () async throws -> ClientCertificateIdentity?)?
    ) async throws -> PendingAdmission {
        let head = try addressed(head)
        var asked = authenticators
        if let clientCertificate { asked.append(ClientCertificateAuthenticator(read: clientCertificate)) }
        let carried = asked.filter { $0.isCarried(by: head) }
        let lacking = asked.filter { ($0.isRequired || $0.provesRequest) && !$0.isCarried(by: head) }
        guard carried.contains(where: \.provesRequest), !lacking.contains(where: \.isRequired) else {
            let missing = SigilError(
                .missingSignature, "the request carries no " + lacking.map(\.credential).joined(separator: " and no "))
            throw lacking.reduce(missing) { $1.challenge($0) }
        }
        var credentials = Credentials()
        for authenticator in carried { try await authenticator.authenticate(head, into: &credentials) }
        return PendingAdmission(head: head, carried: carried, credentials: credentials)
    }

    /// A body that could not be read (too large, too slow) is the refusal of the signature waiting for it.
    @usableFromInline
    func bodyFailed(_ error: any Error, _ pending: PendingAdmission) {
        if pending.credentials.signatureHead != nil { verifier.metrics.recordRefusal(error) }
    }

    /// The steps after the body: the signature over it, the sealed body opened, the credentials resolved
    /// to one identity, the fields each credential adds to answers.
    @usableFromInline
    func admitted(_ pending: PendingAdmission, body: [UInt8], awaited: Bool, route: String?) async throws
        -> Admission
    {
        do {
            let admission = try await admitted(pending, body: body, awaited: awaited)
            outcomes?.record(route: route, outcome: nil)
            RequestRecord.note(identity: admission.identity, outcome: RequestOutcomes.verified, bodyBytes: body.count)
            return admission
        } catch let refused as SigilError where holdsBack(refused, pending.head, route) {
            return unverified(pending.head, body: body, refused, route)
        } catch {
            throw counted(error, route)
        }
    }

    func admitted(_ pending: PendingAdmission, body: [UInt8], awaited: Bool) async throws -> Admission {
        let head = pending.head
        var credentials = pending.credentials
        do {
            for authenticator in pending.carried {
                try await authenticator.authenticate(head, body: body, awaited: awaited, into: &credentials)
            }
            let opened = try open(head, body: body, signature: credentials.signature)
            let identity = try await identity(credentials, carried: pending.carried, sealedTo: opened?.keyID)
            if let prefix = assertionPaths.anyReading(of: head.path ?? "/"),
                identity.request?.algorithm != .appleAppAttest
            {
                throw SigilError(.forbidden, "\(prefix) takes only requests signed by an App Attest assertion")
            }
            var answerFields = HTTPFields()
            for authenticator in pending.carried { answerFields.append(contentsOf: authenticator.answerFields()) }
            return Admission(
                identity: identity,
                request: opened?.request ?? head,
                body: opened?.body ?? body,
                signedRequest: head,
                sealer: opened?.sealer,
                answerFields: answerFields
            )
        } catch let error as SigilError where credentials.signature != nil {
            // After the signature verified: the refusal is the request's own, to be signed.
            throw error.ofVerifiedRequest()
        }
    }

    /// The sealed body opened for the signer; a request proved without a Sigil signature opens none,
    /// since a sealed body is bound to a Sigil signer (section 6.2).
    func open(_ head: HTTPRequest, body: [UInt8], signature: VerifiedRequest?) throws -> SealedBodies.Opened? {
        guard let signature else {
            if Sealing.codings(head.headerFields).contains(Sealing.contentEncoding)
                || (!body.isEmpty && sealing?.requiresSealed(head.path ?? "/") == true)
            {
                throw SigilError(.sealedBodyInvalid, "a sealed body needs a Sigil signature, not a DPoP proof alone")
            }
            return nil
        }
        return try sealing?.open(head, body: body, verified: signature)
    }

    /// The request's credentials resolved through the directory and reconciled (PROTOCOL.md section
    /// 13.2); a refusal in the terms of each credential carried (RFC 9449's `invalid_token` for a token).
    func identity(_ credentials: Credentials, carried: [any RequestAuthenticator], sealedTo: String?) async throws
        -> SigilIdentity
    {
        let signature = credentials.signature
        let certificate = credentials.certificate
        let resolved: ResolvedCredentials
        // A request of one credential that the verifier resolved already needs no other lookup.
        if let signature, credentials.dpop == nil,
            certificate?.sigilKeyID == nil || certificate?.sigilKeyID == signature.keyID
        {
            resolved = ResolvedCredentials(
                keyID: signature.keyID, deviceID: signature.deviceID, userID: signature.userID,
                certificateKeyID: certificate?.sigilKeyID)
        } else {
            do {
                resolved = try await IdentityResolver(
                    keys: verifier.keys, now: verifier.clock.now(),
                    tokenSkew: dpop?.maxSkew ?? verifier.configuration.maxSkew,
                    acceptsDebugKeys: verifier.configuration.acceptsAppAttestDebugKeys
                )
                .resolve(signature: signature, dpop: credentials.dpop, certificate: certificate)
            } catch let error as SigilError {
                throw carried.reduce(error) { $1.refusal(of: $0) }
            }
        }
        return SigilIdentity(
            request: signature, dpop: credentials.dpop, clientCertificate: certificate, sealedTo: sealedTo,
            resolved: resolved)
    }

    /// `head` as addressed to ``origin``, when set, once its `Host` is checked.
    @usableFromInline
    func addressed(_ head: HTTPRequest) throws -> HTTPRequest {
        try Self.checkHost(head)
        guard let originParts else { return head }
        let (scheme, authority) = try originParts.get()
        var head = head
        head.scheme = scheme
        head.authority = authority
        return head
    }

    /// The scheme (lowercased) and authority of an origin `http(s)://host[:port]`, or `nil` for
    /// anything else (a path, a query, user information).
    public static func parseOrigin(_ origin: String) -> (scheme: String, authority: String)? {
        for scheme in ["https", "http"] {
            let prefix = scheme + "://"
            guard origin.lowercased().hasPrefix(prefix) else { continue }
            return plainAuthority(String(origin.dropFirst(prefix.count))).map { (scheme, $0) }
        }
        return nil
    }

    /// `authority` when it is `host[:port]` alone (letters, digits, `-.:[]`), else `nil`: nothing
    /// that could carry a path, user information or parameters into a header built from it.
    public static func plainAuthority(_ authority: String) -> String? {
        let plain = authority.utf8.allSatisfy { byte in
            (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte | 0x20)
                || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || Array("-.:[]".utf8).contains(byte)
        }
        return plain && !authority.isEmpty ? authority : nil
    }

    /// Refuses a request whose `Host` fields say more than its authority: two of them, or one that
    /// differs from the authority verified (a route reading the field would see another host).
    @usableFromInline
    static func checkHost(_ head: HTTPRequest) throws {
        let hosts = head.headerFields[values: hostField]
        guard hosts.count <= 1, hosts.first.map({ $0 == head.authority }) ?? true else {
            throw SigilError(.forbidden, "the request names more than one host")
        }
    }

    @usableFromInline static let hostField = HTTPField.Name("Host")!

    /// The admission of a request a route verified itself (a registration, signed by the key it
    /// registers), so its answers and refusals are bound to it like any other's. Nothing is sealed.
    public func admission(of request: HTTPRequest, body: [UInt8] = [], verified: VerifiedRequest) -> Admission {
        Admission(
            identity: SigilIdentity(request: verified), request: request, body: body,
            signedRequest: request, sealer: nil)
    }

    // MARK: Answer

    /// The route's answer as sent: sealed to the request's context when the request was sealed,
    /// signed for that one request when a signer is set; a `HEAD` answer is signed over no body and
    /// sent with none.
    ///
    /// - Throws: when sealing or signing fails (a key that cannot sign).
    public func answer(_ response: HTTPResponse, body: [UInt8], for admission: Admission) throws
        -> (head: HTTPResponse, body: [UInt8])
    {
        var head = response
        var body = admission.signedRequest.method == .head ? [] : body
        if let sealer = admission.sealer {
            body = try sealer.seal(body)
            head.headerFields[.contentEncoding] = Sealing.contentEncoding
            if head.headerFields[.contentLength] != nil { head.headerFields[.contentLength] = String(body.count) }
        }
        for field in admission.answerFields { head.headerFields[field.name] = field.value }
        // An answer is bound to a Sigil signature (section 2.7); a DPoP proof alone gets it unsigned.
        if let binding = admission.identity?.request?.binding {
            try responseSigner?.sign(&head, body: body, answering: admission.signedRequest, binding: binding)
        }
        return (head, body)
    }

    /// Whether ``answer(_:body:for:)`` changes anything, so an adapter can pass a response through
    /// untouched (and unread) when it does not.
    public func answersChange(_ admission: Admission) -> Bool {
        (responseSigner != nil && admission.identity?.request != nil) || admission.sealer != nil
            || !admission.answerFields.isEmpty
    }

    /// What a route's failure becomes: a ``SigilError`` its refusal, signed for the admitted request;
    /// any other error a 500 signed for it. `nil` when answers pass through untouched (no signer, no
    /// sealing), so the framework's own error handling runs.
    public func failure(_ error: any Error, for admission: Admission) throws -> (head: HTTPResponse, body: [UInt8])? {
        if let refused = error as? SigilError {
            return refuse(refused, for: admission.signedRequest, admission: admission)
        }
        guard answersChange(admission) else { return nil }
        return try answer(HTTPResponse(status: .internalServerError), body: [], for: admission)
    }

    // MARK: Refuse

    /// The problem+json refusal of `request` for `error` (PROTOCOL.md section 4), with
    /// `Accept-Signature` unless the request used sigil-v1.
    ///
    /// It is signed exactly when the request's own signature verified: when an `admission` is given
    /// (a route refusing an admitted request), or when admission itself found the signature valid
    /// before refusing (a replay, an authentic request out of the window). A refusal of a request
    /// whose signature did not verify is never signed: anyone can copy a nonce onto a forgery.
    ///
    /// A route's refusal of a sealed request is sealed like any answer to it (section 6.3).
    public func refuse(_ error: SigilError, for request: HTTPRequest, admission: Admission? = nil)
        -> (head: HTTPResponse, body: [UInt8])
    {
        // A request let through unverified is refused as one that did not verify: never signed.
        guard let admission, admission.identity != nil else {
            return verifier.refusal(
                error, for: request, signer: responseSigner, includeSignatureBase: includeSignatureBase)
        }
        let (head, body) = verifier.refusal(
            error.ofVerifiedRequest(), for: admission.signedRequest, signer: nil,
            includeSignatureBase: includeSignatureBase)
        if let answered = try? answer(head, body: body, for: admission) { return answered }
        // Sealing or signing failed: the refusal goes unsigned rather than not at all.
        return (head, body)
    }
}

/// A request the exchange admitted: who sent it, and the request and body its route reads.
public struct Admission: Sendable {
    /// Who signed it, with the client certificate and the key its body was sealed to; `nil` for a
    /// request monitor mode let through unverified (``outcome``).
    public let identity: SigilIdentity?
    /// The request as its route reads it: without the `sigil-hpke` coding when its body was sealed.
    public let request: HTTPRequest
    /// The body as its route reads it: the plaintext of a sealed body.
    public let body: [UInt8]
    /// The request as signed, which answers are bound to.
    public let signedRequest: HTTPRequest
    /// Seals the answer, when the request was sealed.
    let sealer: SealedResponseSealer?
    /// The fields the request's credentials add to its answers (the next `DPoP-Nonce`).
    var answerFields = HTTPFields()
    /// The code the request would have been refused with, when monitor mode let it through unverified;
    /// `nil` when it verified.
    public var outcome: SigilError.Code? = nil
    /// The budget an unsigned body holds while the route has it (``Exchange/unverifiedBodies``).
    @usableFromInline var bodyHold: UnverifiedBodies.Hold? = nil
}
