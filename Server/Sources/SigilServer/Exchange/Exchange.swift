import HTTPTypes
@_spi(Sigil) import SigilCore

/// The server's side of one exchange, written once for every framework: admit a request, then
/// answer it or refuse it.
///
/// ```
/// admit(head, body chunks, client certificate)    verify ─► open a sealed body ─► bind the client
///    │                                            certificate ─► Admission (identity, plaintext)
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
    public init(
        verifier: RequestVerifier,
        responseSigner: ResponseSigner? = nil,
        sealing: SealedBodies? = nil,
        includeSignatureBase: Bool = false,
        bodyTimeout: Duration? = .seconds(60),
        dpop: DPoPVerifier? = nil,
        origin: String? = nil
    ) {
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
    }

    // MARK: Admit

    /// Admits a request: verifies it (the headers, the window and the key before any body byte is
    /// read, then at most the body limit), opens a sealed body, and checks that a TLS client
    /// certificate naming a Sigil key names a key of the signer's device.
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
        let head = try addressed(head)
        if let dpop, try provesWithDPoPAlone(head, dpop) {
            let proved = try await dpop.verify(head)
            let body: [UInt8]
            let limit = min(limit ?? verifier.configuration.bodyLimit, verifier.configuration.bodyLimit)
            let declared = head.headerFields[.contentLength].flatMap(Int.init)
            if let bodyTimeout {
                body = try await withDeadline(
                    bodyTimeout, SigilError(.requestTimeout, "the body did not arrive in time")
                ) { try await BodyReader.collect(bodyChunks, declaredLength: declared, limit: limit) }
            } else {
                body = try await BodyReader.collect(bodyChunks, declaredLength: declared, limit: limit)
            }
            return try await admitted(head, body: body, dpop: proved, clientCertificate: clientCertificate)
        }
        let verified: VerifiedRequest
        let body: [UInt8]
        if let bodyTimeout {
            let verifier = self.verifier
            (verified, body) = try await withDeadline(
                bodyTimeout, SigilError(.requestTimeout, "the body did not arrive in time")
            ) { try await verifier.verify(head, bodyChunks: bodyChunks, limit: limit) }
        } else {
            (verified, body) = try await verifier.verify(head, bodyChunks: bodyChunks, limit: limit)
        }
        return try await admitted(head, body: body, verified: verified, clientCertificate: clientCertificate)
    }

    /// ``admit(_:bodyChunks:limit:clientCertificate:)`` for a body that has been read already.
    public func admit(
        _ head: HTTPRequest,
        body: [UInt8],
        clientCertificate: (@Sendable () async throws -> ClientCertificateIdentity?)? = nil
    ) async throws -> Admission {
        let head = try addressed(head)
        if let dpop, try provesWithDPoPAlone(head, dpop) {
            try BodyReader.check(body.count, limit: verifier.configuration.bodyLimit)
            let proved = try await dpop.verify(head)
            return try await admitted(head, body: body, dpop: proved, clientCertificate: clientCertificate)
        }
        let verified = try await verifier.verify(head, body: body)
        return try await admitted(head, body: body, verified: verified, clientCertificate: clientCertificate)
    }

    /// Whether `head` is to be admitted on a DPoP proof alone: DPoP stands in for a Sigil signature
    /// and the request carries no Sigil signature. A request with neither is refused here, with
    /// DPoP's challenge beside Sigil's own.
    @usableFromInline
    func provesWithDPoPAlone(_ head: HTTPRequest, _ dpop: DPoPVerifier) throws -> Bool {
        guard !verifier.carriesSignature(head) else { return false }
        if DPoPVerifier.isPresent(in: head.headerFields) { return !dpop.requiresSigilSignature }
        throw dpop.refusal(
            SigilError(.missingSignature, "the request carries no Sigil signature and no DPoP proof"), nil)
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

    /// The steps after verification: the DPoP proof a signed request carries too, the sealed body, the
    /// credentials resolved to one identity.
    @usableFromInline
    func admitted(
        _ head: HTTPRequest,
        body: [UInt8],
        verified: VerifiedRequest,
        clientCertificate: (@Sendable () async throws -> ClientCertificateIdentity?)?
    ) async throws -> Admission {
        do {
            // With DPoP on, a proof sent with a signature is checked too; one is needed where the
            // route requires both.
            var proved: DPoPIdentity?
            if let dpop, dpop.requiresSigilSignature || DPoPVerifier.isPresent(in: head.headerFields) {
                proved = try await dpop.verify(head)
            }
            let opened = try sealing?.open(head, body: body, verified: verified)
            let certificate = try await clientCertificate?()
            let identity = try await identity(
                signature: verified, dpop: proved, certificate: certificate, sealedTo: opened?.keyID)
            return Admission(
                identity: identity,
                request: opened?.request ?? head,
                body: opened?.body ?? body,
                signedRequest: head,
                sealer: opened?.sealer,
                dpopNonce: proved == nil ? nil : dpop?.currentNonce()
            )
        } catch let error as SigilError {
            // After the signature verified: the refusal is the request's own, to be signed.
            throw error.ofVerifiedRequest()
        }
    }

    /// The steps after a DPoP proof stood in for a signature: no sealed body (it is bound to a Sigil
    /// signer, section 6.2), then the credentials resolved to one identity.
    @usableFromInline
    func admitted(
        _ head: HTTPRequest,
        body: [UInt8],
        dpop proved: DPoPIdentity,
        clientCertificate: (@Sendable () async throws -> ClientCertificateIdentity?)?
    ) async throws -> Admission {
        if Sealing.codings(head.headerFields).contains(Sealing.contentEncoding)
            || (!body.isEmpty && sealing?.requiresSealed(head.path ?? "/") == true)
        {
            throw SigilError(.sealedBodyInvalid, "a sealed body needs a Sigil signature, not a DPoP proof alone")
        }
        let certificate = try await clientCertificate?()
        let identity = try await identity(signature: nil, dpop: proved, certificate: certificate, sealedTo: nil)
        return Admission(
            identity: identity, request: head, body: body, signedRequest: head, sealer: nil,
            dpopNonce: dpop?.currentNonce())
    }

    /// ``IdentityResolver``'s answer; a refusal of a request with a DPoP token carries RFC 9449's
    /// `invalid_token` challenge (the token, or its key, is what is refused).
    func resolve(
        signature: VerifiedRequest?, dpop proved: DPoPIdentity?, certificate: ClientCertificateIdentity?
    ) async throws -> ResolvedCredentials {
        do {
            return try await IdentityResolver(
                keys: verifier.keys, now: verifier.clock.now(),
                tokenSkew: dpop?.maxSkew ?? verifier.configuration.maxSkew
            )
            .resolve(signature: signature, dpop: proved, certificate: certificate)
        } catch let error as SigilError where proved != nil && error.code != .storeUnavailable {
            throw dpop?.refusal(error, "invalid_token") ?? error
        }
    }

    /// The request's credentials resolved through the directory and reconciled (PROTOCOL.md section 13.2).
    func identity(
        signature: VerifiedRequest?, dpop: DPoPIdentity?, certificate: ClientCertificateIdentity?,
        sealedTo: String?
    ) async throws -> SigilIdentity {
        // A request of one credential that the verifier resolved already needs no other lookup.
        let resolved =
            if let signature, dpop == nil, certificate?.sigilKeyID == nil || certificate?.sigilKeyID == signature.keyID
            {
                ResolvedCredentials(
                    keyID: signature.keyID, deviceID: signature.deviceID, userID: signature.userID,
                    certificateKeyID: certificate?.sigilKeyID)
            } else {
                try await resolve(signature: signature, dpop: dpop, certificate: certificate)
            }
        return SigilIdentity(
            request: signature, dpop: dpop, clientCertificate: certificate, sealedTo: sealedTo, resolved: resolved)
    }

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
        if let nonce = admission.dpopNonce { head.headerFields[DPoPNonces.field] = nonce }
        // An answer is bound to a Sigil signature (section 2.7); a DPoP proof alone gets it unsigned.
        if let binding = admission.identity.request?.binding {
            try responseSigner?.sign(&head, body: body, answering: admission.signedRequest, binding: binding)
        }
        return (head, body)
    }

    /// Whether ``answer(_:body:for:)`` changes anything, so an adapter can pass a response through
    /// untouched (and unread) when it does not.
    public func answersChange(_ admission: Admission) -> Bool {
        (responseSigner != nil && admission.identity.request != nil) || admission.sealer != nil
            || admission.dpopNonce != nil
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
        guard let admission else {
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
    /// Who signed it, with the client certificate and the key its body was sealed to.
    public let identity: SigilIdentity
    /// The request as its route reads it: without the `sigil-hpke` coding when its body was sealed.
    public let request: HTTPRequest
    /// The body as its route reads it: the plaintext of a sealed body.
    public let body: [UInt8]
    /// The request as signed, which answers are bound to.
    public let signedRequest: HTTPRequest
    /// Seals the answer, when the request was sealed.
    let sealer: SealedResponseSealer?
    /// The server's next DPoP nonce, for the answer's `DPoP-Nonce`.
    var dpopNonce: String? = nil
}
