import Foundation
import HTTPTypes
@_spi(Sigil) import SigilCore

/// Sends HTTP messages: the app's networking (AsyncHTTPClient, URLSession) behind one function.
public protocol SigilTransport: Sendable {
    /// Sends `request` with `body` and returns the response head and body.
    func send(_ request: HTTPRequest, body: [UInt8]) async throws -> (HTTPResponse, [UInt8])
    /// Sends `request` with the body in the file at `bodyFile`, streamed from disk where the transport
    /// can (``URLSessionTransport`` uploads from the file). The default reads the file whole.
    func send(_ request: HTTPRequest, bodyFile: URL) async throws -> (HTTPResponse, [UInt8])
}

extension SigilTransport {
    public func send(_ request: HTTPRequest, bodyFile: URL) async throws -> (HTTPResponse, [UInt8]) {
        guard let data = try? Data(contentsOf: bodyFile) else {
            throw SigilInputError("\(bodyFile.path) cannot be read")
        }
        return try await send(request, body: Array(data))
    }
}

/// A response as a ``SigilSession`` returns it.
public struct SigilResponse: Sendable {
    /// The response head.
    public let head: HTTPResponse
    /// The response body.
    public let body: [UInt8]
    /// Whether the server's signature on it was checked and verified.
    public let signatureVerified: Bool
    /// How many times the request was sent: 1, or 2 after a clock re-sync.
    public let attempts: Int
    /// The signature base of the request as last sent, for diagnosing a refusal.
    public let sentRequest: HTTPRequest
    /// The key ID of the server's sealing key the request body was sealed to, when it was.
    public var sealedTo: String?
    /// Whether the answer came sealed (its ``body`` is the opened plaintext).
    public var answerSealed = false
    /// The body as sent, when it was sealed (what the request's signature covers).
    public var sentSealedBody: [UInt8]?
    /// Whether the clock was set from this answer's signed time (a bound signature, a round trip of
    /// at most ``ServerClock/maximumRoundTrip``).
    var synchronizedClock = false
    /// Whether the verified signature covers the key ID the request named
    /// (``VerifiedResponse/coversRequestKeyID``).
    var signatureCoversKeyID = false

    /// The PROTOCOL.md code of a problem+json refusal, if this is one with a code Sigil knows: the
    /// server's word only when ``signatureVerified``, a claim otherwise.
    ///
    /// - Warning: `replayed-nonce` says the server had seen this request's nonce before: an earlier
    ///   copy of the request (one a proxy passed on while dropping its answer) may have been carried
    ///   out. Never take it for "not done, send again".
    public var problemCode: SigilError.Code? { refusal?.code }

    /// The refusal as an error (the code and detail), if this is a problem+json refusal with a code
    /// Sigil knows: the server's word only when ``signatureVerified``, a claim otherwise. Act on
    /// ``failure`` instead, which says which.
    public var refusal: SigilError? { Self.refusal(head: head, body: body) }

    /// What this answer is as an error, the one rule every client call throws by: the server's
    /// ``SigilError`` for a refusal its key signed for this request, an untrusted refusal
    /// (``SigilClientError/Kind/untrustedRefusal``, its code only claimed) for an unsigned one, `nil`
    /// for an answer that is no Sigil refusal.
    ///
    /// A signed `unknown-key` or `revoked-key` counts only when the signature covers the key ID this
    /// request named: the server signs those for requests whose signature did not verify, and such a
    /// refusal of a copy naming another key must not read as one about this device's key.
    public var failure: (any Error)? {
        guard let refusal else { return nil }
        guard signatureVerified else { return SigilClientError.untrusted(self, reason: "no signature of the server's") }
        if refusal.code == .unknownKey || refusal.code == .revokedKey, !signatureCoversKeyID {
            return SigilClientError.untrusted(self, reason: "a key refusal whose signature does not cover the key ID")
        }
        return refusal
    }

    /// The server's signature base in a refusal, when its debug option is on.
    public var problemSignatureBase: String? { Self.problem(head: head, body: body)?.signatureBase }

    /// The problem+json members Sigil reads.
    struct Problem: Decodable {
        let code: String?
        let detail: String?
        let signatureBase: String?
    }

    static func problem(head: HTTPResponse, body: [UInt8]) -> Problem? {
        guard head.headerFields[.contentType]?.hasPrefix("application/problem+json") == true else { return nil }
        return try? JSONDecoder().decode(Problem.self, from: Data(body))
    }

    static func refusal(head: HTTPResponse, body: [UInt8]) -> SigilError? {
        guard let problem = problem(head: head, body: body), let code = problem.code.flatMap(SigilError.Code.init)
        else { return nil }
        return SigilError(code, String((problem.detail ?? "").prefix(512)))
    }
}

/// The app's side of every request: signed with server-corrected time, the response's signature
/// checked, the clock learnt only from what the server signed, and one resend after a signed
/// `timestamp-out-of-window`.
///
/// ```swift
/// let session = SigilSession(transport: transport, signer: signer, clock: serverClock,
///                            responses: ResponseVerifier(key: serverKey, keyID: serverKeyID, clock: serverClock))
/// let response = try await session.send(request, body: body)
/// ```
///
/// Unsigned responses never move the clock and never cause a resend: a forger who can answer in the
/// server's place (a hostile proxy, a captive portal) could otherwise make the device sign requests
/// dated in the future, or send one request twice.
public struct SigilSession: Sendable {
    /// Sends the messages.
    public let transport: any SigilTransport
    /// Signs every request; its clock should be ``clock``.
    public let signer: RequestSigner
    /// The server-corrected clock, learnt from verified response signatures.
    public let clock: ServerClock
    /// Checks signed responses, when set.
    public let responses: ResponseVerifier?
    /// Refuse responses the server did not sign (needs ``responses``).
    public var requireSignedResponses: Bool
    /// The server's sealing key (the first of discovery's `sealingKeys`), for sealed bodies.
    public var sealingKey: SealingPublicKey?
    /// Seal every request body to ``sealingKey`` (PROTOCOL.md section 6); `send(_:body:sealed:)`
    /// decides per request.
    public var sealsBodies = false
    /// The one origin this session signs for (the server its identity enrolled with): a request to
    /// any other is refused before it is signed. sigil-v1 covers no authority, so a request signed
    /// for another server could be replayed by that server to this one within the window.
    public var origin: Origin?
    /// Adds a DPoP-bound access token and a proof to every request, for a server that wants DPoP
    /// with the Sigil signature (`sigil serve --dpop with-signature`). A signed `use_dpop_nonce`
    /// refusal is answered once with the server's nonce.
    public var dpop: DPoPAuthorization?

    /// Creates a session.
    ///
    /// - Parameters:
    ///   - responses: the server's response key; without it, response signatures are not checked, the
    ///     clock is never corrected and nothing is resent.
    ///   - requireSignedResponses: refuse unsigned responses, refusals included.
    public init(
        transport: any SigilTransport,
        signer: RequestSigner,
        clock: ServerClock,
        responses: ResponseVerifier? = nil,
        requireSignedResponses: Bool = false
    ) {
        self.transport = transport
        self.signer = signer
        self.clock = clock
        self.responses = responses
        self.requireSignedResponses = requireSignedResponses && responses != nil
    }

    /// A session for a stored identity: one identity, one origin. It signs for the server the identity
    /// enrolled with only (``origin``), requires every answer signed by the response key it pinned
    /// at enrollment, and seals to the sealing key discovery gave then.
    ///
    /// - Throws: ``SigilInputError`` when the identity's server or response key does not read.
    public init(
        identity: DeviceIdentity, transport: any SigilTransport, signer: RequestSigner, clock: ServerClock,
        keyFormats: KeyFormats = .builtIn
    ) throws {
        guard let origin = Origin(url: identity.server) else {
            throw SigilInputError("the identity names no origin it enrolled with")
        }
        let key = try KeyFile.load(Array(identity.responseKey.utf8), formats: keyFormats).verificationKey
        var responses = ResponseVerifier(key: key, keyID: identity.responseKeyID, clock: clock)
        // The server's next response key is learnt from its discovery, signed by the key pinned here.
        responses.trusted = TrustedResponseKeys([identity.responseKeyID: key], keyFormats: keyFormats)
        responses.trusted?.keysTag = identity.keysTag
        self.init(
            transport: transport, signer: signer, clock: clock, responses: responses, requireSignedResponses: true)
        self.origin = origin
        self.sealingKey = try identity.sealingKey?.key()
    }

    /// Signs and sends `request`. A response whose signature verifies and covers the request's nonce
    /// sets the clock's offset from its signed time; when it is a `timestamp-out-of-window` refusal,
    /// the request is sent once more with a new nonce and timestamp, never more.
    ///
    /// - Throws: the transport's errors; ``SigilError`` when the response's signature is missing
    ///   (with ``requireSignedResponses``), from another key, stale, or does not verify.
    ///
    /// With `sealed` (or ``sealsBodies``), the body is sealed to ``sealingKey`` for this request's
    /// nonce before it is signed, and the sealed answer opened; a successful answer that is not sealed
    /// is refused (`sealed-body-invalid`), so a proxy that strips the coding learns nothing from it.
    public func send(_ request: HTTPRequest, body: [UInt8] = [], sealed: Bool? = nil) async throws -> SigilResponse {
        try await send(request, sealed: sealed) { _ in body }
    }

    /// ``send(_:body:sealed:)`` with a body made for each attempt's nonce, for a body that names the
    /// request's nonce (a rotation's proof): the resend after a signed `timestamp-out-of-window` has a
    /// new nonce (PROTOCOL.md section 2.8), and so a new body.
    public func send(_ request: HTTPRequest, sealed: Bool? = nil, body makeBody: (_ nonce: String) throws -> [UInt8])
        async throws -> SigilResponse
    {
        // An App Attest key's requests go one at a time, so its assertions arrive in counter order.
        try await OrderedRequests.run(for: signer.key, keyID: signer.keyID) {
            try await sendInTurn(request, sealed: sealed, body: makeBody)
        }
    }

    /// ``send(_:body:sealed:)`` with the body in a file, which is hashed as it streams (in 1 MiB
    /// chunks, ``BodyDigest``) and uploaded from disk by the transport, never held whole: for large
    /// uploads. A file changed between its hashing and its upload is refused by the server
    /// (`digest-mismatch` or `invalid-signature`).
    ///
    /// - Throws: ``SigilInputError`` for a JSON body with canonical JSON on (its body-hash is of its
    ///   canonical form: send it from memory), and for sealing (a sealed body is made in memory).
    public func send(_ request: HTTPRequest, bodyFile: URL) async throws -> SigilResponse {
        guard !sealsBodies else {
            throw SigilInputError("a body sealed to the server is made in memory, not from a file")
        }
        let digest = try BodyDigest(file: bodyFile)
        return try await OrderedRequests.run(for: signer.key, keyID: signer.keyID) {
            try await sendInTurn(request, sealed: false, file: (bodyFile, digest)) { _ in [] }
        }
    }

    func sendInTurn(
        _ request: HTTPRequest, sealed: Bool?, file: (url: URL, digest: BodyDigest)? = nil,
        body makeBody: (_ nonce: String) throws -> [UInt8]
    ) async throws -> SigilResponse {
        // Origin-form targets only: a transport joins the path to the authority, so `@evil.example/…`
        // would go elsewhere than the origin checked here, signed for a path the server accepts.
        guard request.path?.utf8.first == UInt8(ascii: "/") else {
            throw SigilInputError("the request's path must start with /")
        }
        if let origin, Origin(request) != origin {
            throw SigilInputError(
                "this session signs for \(origin) only, not \(request.scheme ?? "?")://\(request.authority ?? "?")")
        }
        let seal = sealed ?? sealsBodies
        if seal && currentSealingKey == nil {
            throw SigilInputError("no sealing key: the server's discovery lists none")
        }
        var attempts = 0
        while true {
            attempts += 1
            var signed = request
            let nonce = signer.nonces.next()
            let body = try makeBody(nonce)
            var sent = body
            var opener: SealedResponseOpener?
            let sealingKey = currentSealingKey
            if seal, let sealingKey {
                (sent, opener) = try Sealing.sealRequest(body, to: sealingKey, keyID: signer.keyID, nonce: nonce)
                signed.headerFields[.contentEncoding] = Sealing.contentEncoding
            }
            try dpop?.authorize(&signed)
            try await signer.signWithoutBlocking(
                &signed, body: file.map { .digest($0.digest) } ?? .bytes(sent), nonce: nonce)
            let sentAt = clock.localTime
            let head: HTTPResponse
            let responseBody: [UInt8]
            do {
                (head, responseBody) =
                    if let file {
                        try await transport.send(signed, bodyFile: file.url)
                    } else {
                        try await transport.send(signed, body: sent)
                    }
            } catch {
                throw SigilClientError.transport(error)
            }
            let received = SigilResponse(
                head: head, body: responseBody, signatureVerified: false, attempts: attempts, sentRequest: signed)
            let roundTrip = (sentAt, clock.localTime)
            var response: SigilResponse
            do {
                do {
                    response = try verified(received, request: signed, roundTrip: roundTrip)
                } catch let error as SigilError where error.code == .unknownKey {
                    // Signed by a key this client does not trust yet: the server may have promoted its
                    // next key. Its discovery, signed by a key trusted already, says so; nothing else does.
                    guard try await learnResponseKeys(for: signed) else { throw error }
                    response = try verified(received, request: signed, roundTrip: roundTrip)
                }
                if let opener {
                    response = try Self.opened(response, with: opener, sealedTo: sealingKey?.keyID)
                    response.sentSealedBody = sent
                }
            } catch let error as SigilError {
                // The client's own verdict on the answer, never the server's: not one of its codes.
                throw SigilClientError.untrusted(received, reason: error.detail)
            }
            // The server's keys moved (a rotation, a promotion): its signed discovery says how. The answer
            // stands whatever that read does.
            if response.signatureVerified, let tag = head.headerFields[Self.keysTagField],
                let trusted = responses?.trusted, trusted.needsRead(tag: tag)
            {
                if (try? await learnResponseKeys(for: signed, tag: tag)) != nil { trusted.refusedRead(tag: tag) }
            }
            // The server's DPoP nonce is learnt from signed answers only; a signed use_dpop_nonce
            // refusal (the request did not run) is resent once with it.
            if response.signatureVerified, let dpop, dpop.learn(from: head), attempts == 1 { continue }
            // Resent only when the refusal's signed time was just learnt: an answer held back by a
            // proxy (a round trip over the limit) says nothing about this moment, and the request it
            // refuses may be a replay of one that ran.
            if attempts == 1, response.signatureVerified, response.synchronizedClock, head.status.code == 401,
                response.problemCode == .timestampOutOfWindow
            {
                continue
            }
            // A sealed body the server could not open, in a refusal its key signed (so the request did
            // not run): the server may have moved to a new sealing key. Its signed discovery says so;
            // sent once more to that key, never more.
            if attempts == 1, seal, response.signatureVerified, response.problemCode == .sealedBodyInvalid,
                try await learnResponseKeys(for: signed), currentSealingKey != sealingKey
            {
                continue
            }
            return response
        }
    }

    static let keysTagField = HTTPField.Name(Registration.keysTagField)!

    /// The key bodies are sealed to: the server's current one as its signed discovery last said, else
    /// ``sealingKey``.
    var currentSealingKey: SealingPublicKey? { responses?.trusted?.sealingKey ?? sealingKey }

    /// Fetches the server's discovery and learns the response keys and sealing key it lists, when a
    /// key this session trusts signed it.
    ///
    /// - Returns: whether a key was learnt (a response key, or another sealing key).
    func learnResponseKeys(for request: HTTPRequest, tag: String? = nil) async throws -> Bool {
        guard let trusted = responses?.trusted else { return false }
        let discovery = HTTPRequest(
            method: .get, scheme: request.scheme, authority: request.authority, path: Registration.Path.discovery)
        let head: HTTPResponse
        let body: [UInt8]
        do {
            (head, body) = try await transport.send(discovery, body: [])
        } catch {
            throw SigilClientError.transport(error)
        }
        guard head.status == .ok, let field = HTTPField.Name(Registration.DiscoverySignature.field) else {
            return false
        }
        let sealing = trusted.sealingKey
        let learnt = trusted.learn(discovery: body, signature: head.headerFields[field], now: clock.now(), tag: tag)
        return !learnt.isEmpty || trusted.sealingKey != sealing
    }

    /// Reads the server's signed key directory (`/.well-known/http-message-signatures-directory`)
    /// and learns the response keys it lists when a key this session trusts signed it (see
    /// ``TrustedResponseKeys/learn(directory:response:request:now:maxSkew:)``): the next key before a
    /// promotion, so answers signed by it verify from its first one.
    ///
    /// - Returns: the key IDs learnt now.
    public func readKeyDirectory(scheme: String? = nil, authority: String? = nil) async throws -> [String] {
        guard let trusted = responses?.trusted else { return [] }
        let scheme = scheme ?? origin?.scheme ?? "https"
        guard let authority = authority ?? origin.map({ "\($0.host):\($0.port)" }) else {
            throw SigilInputError("the session names no server to read the key directory of")
        }
        let request = HTTPRequest(
            method: .get, scheme: scheme, authority: authority, path: Registration.Path.keyDirectory)
        let (head, body) = try await transport.send(request, body: [])
        return trusted.learn(directory: body, response: head, request: request, now: clock.now())
    }

    /// The answer to a sealed request, opened.
    static func opened(_ response: SigilResponse, with opener: SealedResponseOpener, sealedTo keyID: String?) throws
        -> SigilResponse
    {
        var head = response.head
        let codings = Sealing.codings(head.headerFields)
        guard codings == [Sealing.contentEncoding] else {
            // Only a refusal may come back in the clear (the server refused before opening).
            if (200..<300).contains(head.status.code) {
                throw SigilError(.sealedBodyInvalid, "the answer to a sealed request is not sealed")
            }
            var refusal = response
            refusal.sealedTo = keyID
            return refusal
        }
        head.headerFields[.contentEncoding] = nil
        var opened = SigilResponse(
            head: head, body: try opener.open(response.body), signatureVerified: response.signatureVerified,
            attempts: response.attempts, sentRequest: response.sentRequest)
        opened.sealedTo = keyID
        opened.answerSealed = true
        opened.synchronizedClock = response.synchronizedClock
        opened.signatureCoversKeyID = response.signatureCoversKeyID
        return opened
    }

    /// Checks the response's signature when a server key is configured, and learns the clock from it
    /// (the signed time placed in the middle of the round trip).
    func verified(
        _ response: SigilResponse,
        request: HTTPRequest,
        roundTrip: (sentAt: Int64, receivedAt: Int64)
    ) throws -> SigilResponse {
        guard let responses else { return response }
        let fields = response.head.headerFields
        // The answer is verified in the profile of the request it answers, never in one it picks.
        let answered = signer.profile == .sigilV1 ? SigilV1.AnsweredRequest(request.headerFields) : nil
        let signed =
            answered != nil ? fields[SigilV1.signatureField] != nil : fields[MessageSignatures.signatureField] != nil
        guard signed else {
            if requireSignedResponses {
                throw SigilError(.missingSignature, "the response (status \(response.head.status.code)) is not signed")
            }
            return response
        }
        // Freshness comes from the nonce this request just sent, so the window is not what decides; a
        // response that is not bound to the nonce is held to the window instead.
        let signature =
            if let answered {
                try responses.verifySigilV1(
                    response.head, body: response.body, answering: answered, checkingWindow: false)
            } else {
                try responses.verifyRFC9421(
                    response.head, body: response.body, answering: request, checkingWindow: false)
            }
        let synchronized =
            signature.isBoundToRequestNonce
            && clock.synchronize(
                serverTime: signature.timestamp, sentAt: roundTrip.sentAt, receivedAt: roundTrip.receivedAt)
        var verified = SigilResponse(
            head: response.head, body: response.body, signatureVerified: true, attempts: response.attempts,
            sentRequest: response.sentRequest)
        verified.synchronizedClock = synchronized
        verified.signatureCoversKeyID = signature.coversRequestKeyID
        return verified
    }
}
