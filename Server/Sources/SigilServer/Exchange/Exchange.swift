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
    public init(
        verifier: RequestVerifier,
        responseSigner: ResponseSigner? = nil,
        sealing: SealedBodies? = nil,
        includeSignatureBase: Bool = false,
        bodyTimeout: Duration? = .seconds(60),
        dpop: DPoPVerifier? = nil
    ) {
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
        try Self.checkHost(head)
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
        try Self.checkHost(head)
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
        var missing = SigilError(.missingSignature, "the request carries no Sigil signature and no DPoP proof")
        missing.challenge = dpop.challenge
        missing.dpopNonce = dpop.currentNonce()
        throw missing
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

    /// The steps after verification: the sealed body, the client certificate.
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
            if let certificateKeyID = certificate?.sigilKeyID {
                try await verifier.checkClientCertificate(naming: certificateKeyID, for: verified)
            }
            return Admission(
                identity: SigilIdentity(
                    request: verified, dpop: proved, clientCertificate: certificate, sealedTo: opened?.keyID),
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
    /// signer, section 6.2), the client certificate read as it is (it names no key to compare with).
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
        return Admission(
            identity: SigilIdentity(dpop: proved, clientCertificate: certificate),
            request: head, body: body, signedRequest: head, sealer: nil, dpopNonce: dpop?.currentNonce())
    }

    /// The admission of a request a route verified itself (a registration, signed by the key it
    /// registers), so its answers and refusals are bound to it like any other's. Nothing is sealed.
    public func admission(of request: HTTPRequest, body: [UInt8] = [], verified: VerifiedRequest) -> Admission {
        Admission(
            identity: SigilIdentity(request: verified, dpop: nil, clientCertificate: nil), request: request, body: body,
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

/// Who sent a verified request: the key and its device and user, how it was signed, the TLS client
/// certificate when one was presented, and the key its body was sealed to; or, for a request proved
/// by DPoP alone, the access token's subject and the proof key. The one identity every adapter hands
/// its routes.
public struct SigilIdentity: Sendable, Hashable {
    /// The verified Sigil signature: key ID, algorithm, profile, timestamp, nonce, device and user;
    /// `nil` when a DPoP proof stood in for it.
    public let request: VerifiedRequest?
    /// The verified DPoP proof and access token, when the request carried them.
    public let dpop: DPoPIdentity?
    /// The client certificate of the TLS connection, if the client presented one and the adapter reads them.
    public let clientCertificate: ClientCertificateIdentity?
    /// The server sealing key the request's body was sealed to, when it was sealed.
    public let sealedTo: String?

    /// Creates the identity of a signed request (and its DPoP proof, when it carried one too).
    public init(
        request: VerifiedRequest, dpop: DPoPIdentity? = nil, clientCertificate: ClientCertificateIdentity?,
        sealedTo: String? = nil
    ) {
        self.request = request
        self.dpop = dpop
        self.clientCertificate = clientCertificate
        self.sealedTo = sealedTo
    }

    /// Creates the identity of a request proved by DPoP alone.
    public init(dpop: DPoPIdentity, clientCertificate: ClientCertificateIdentity?) {
        self.request = nil
        self.dpop = dpop
        self.clientCertificate = clientCertificate
        self.sealedTo = nil
    }

    /// The Sigil key ID that signed the request; for a request proved by DPoP alone, `dpop:` and the
    /// proof key's thumbprint (which no Sigil key ID can be).
    public var keyID: String { request?.keyID ?? "dpop:" + (dpop?.thumbprint ?? "") }
    /// The device the key belongs to, if registered with one; none for DPoP alone.
    public var deviceID: String? { request?.deviceID }
    /// The user the device belongs to, if any; for DPoP alone, the access token's `sub`.
    public var userID: String? { request.map(\.userID) ?? dpop?.subject }
    /// The profile that proved the request: `sigil-v1`, `rfc9421`, or `dpop` (alone).
    public var profile: String { request?.profile.rawValue ?? "dpop" }
    /// The algorithm of the signature by its Sigil name (`ecdsa-p256-sha256`), or of a DPoP proof alone
    /// by its JOSE name (`ES256`).
    public var algorithm: String { request?.algorithm.rawValue ?? dpop?.algorithm ?? "" }
    /// Whether a signature covers the body (a Sigil signature does; a DPoP proof signs none).
    public var coversBody: Bool { request != nil }
    /// Whether a signature covers the request's authority (rfc9421 `@authority`). A DPoP proof's `htu`
    /// is compared with the origin the server is configured with, when it is: nothing should be
    /// decided on the `Host` of a request proved by DPoP alone.
    public var coversAuthority: Bool { request?.coversAuthority ?? false }
}
