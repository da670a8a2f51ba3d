import HTTPTypes
import Hummingbird
import NIOCore
import NIOSSL
@_spi(Sigil) import SigilCore
import SigilServer
import SigilTLS

/// Verifies every request that reaches it (either profile), puts the ``SigilIdentity`` on the
/// context, and signs the response when a response key is configured: Hummingbird's conversion to
/// and from the ``Exchange``.
///
/// The body is read as it streams in, and the request is refused with `body-too-large` as soon as it
/// passes the limit: the smaller of the verifier's `bodyLimit` and the context's `maxUploadSize`, so
/// a body that verifies also decodes. The headers, the time window and the key are checked before any
/// body byte is read, and again when the body has ended. A TLS client certificate that names a Sigil
/// key (`urn:sigil:key:`) must name a key of the signer's device (`certificate-mismatch`).
/// Refusals are `application/problem+json`, signed like responses when the request's own signature
/// verified (a replay, an authentic request out of the window, a route refusing a verified request:
/// a ``SigilError`` a route throws is such a refusal). Any other error of a route becomes the response
/// Hummingbird would make of it, signed. Answers to `HEAD` are signed over no body. Hummingbird adds
/// `Date` to every response.
///
/// ```swift
/// let router = Router(context: SigilBasicRequestContext.self)
/// let exchange = Exchange(verifier: verifier, responseSigner: signer)
/// router.group("v1").add(middleware: SigilMiddleware(exchange: exchange))
///     .post("echo") { request, context in try context.requireSigilIdentity().keyID }
/// ```
public struct SigilMiddleware<Context: SigilRequestContext>: RouterMiddleware {
    /// The server's side of each exchange: admission, answers, refusals.
    public let exchange: Exchange
    /// Whether to read the TLS client certificate into the identity and check that it names the
    /// signer's device.
    public let readsClientCertificate: Bool
    /// Whether the server's connections are TLS (`https`), or `nil` to ask each connection. The scheme
    /// a request is verified with is the connection's: Hummingbird's HTTP/1.1 codec says `http` on a
    /// TLS connection too, and an HTTP/2 client writes `:scheme` itself.
    public let secure: Bool?

    /// The verifier.
    public var verifier: RequestVerifier { exchange.verifier }
    /// Signs responses to verified requests, when set.
    public var responseSigner: ResponseSigner? { exchange.responseSigner }

    /// Creates the middleware around `exchange`, which holds everything every adapter shares (the
    /// verifier, signer, sealing, DPoP, origin, monitor mode and body timeout): the one way to make
    /// one, so the adapters cannot differ.
    ///
    /// - Parameters:
    ///   - readsClientCertificate: put the TLS client certificate's identity on the context, and
    ///     refuse a certificate naming a key of another device.
    ///   - secure: whether the server serves TLS, when known (`sigil serve` does); `nil` (the default)
    ///     reads it from each connection.
    public init(exchange: Exchange, readsClientCertificate: Bool = false, secure: Bool? = nil) {
        self.exchange = exchange
        self.readsClientCertificate = readsClientCertificate
        self.secure = secure
    }

    public func handle(
        _ request: Request,
        context: Context,
        next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        var context = context
        let admission: Admission
        let head = await self.head(of: request, context: context)
        do {
            var readCertificate: (@Sendable () async throws -> ClientCertificateIdentity?)?
            if readsClientCertificate {
                let channel = context.channel
                readCertificate = { try await clientCertificate(of: channel) }
            }
            admission = try await exchange.admit(
                head, bodyChunks: BodyChunks(body: request.body), limit: context.maxUploadSize,
                clientCertificate: readCertificate)
        } catch let error as SigilError {
            context.logger.info("request refused", metadata: ["sigil.code": "\(error.code)"])
            throw refusal(error, for: head)
        }
        context.sigilIdentity = admission.identity
        context.sigilOutcome = admission.outcome
        context.logger[metadataKey: "sigil.key-id"] = "\(admission.identity?.keyID ?? "-")"
        if let outcome = admission.outcome {
            context.logger.info("request let through unverified", metadata: ["sigil.code": "\(outcome)"])
        }
        let routed = Request(
            head: admission.request, body: RequestBody(buffer: ByteBuffer(bytes: admission.body)))
        let response: Response
        do {
            response = try await next(routed, context)
        } catch let error as SigilError {
            throw refusal(error, for: head, admission: admission)
        } catch let error as SigilHTTPError {
            throw refusal(error.error, for: head, admission: admission)
        } catch let error as any HTTPResponseError {
            guard exchange.answersChange(admission) else { throw error }
            return try await answer(try error.response(from: routed, context: context), for: admission)
        } catch {
            context.logger.error("route failed", metadata: ["error": "\(type(of: error))"])
            guard let (head, body) = try exchange.failure(error, for: admission) else { throw error }
            return Response(
                status: head.status, headers: head.headerFields, body: .init(byteBuffer: ByteBuffer(bytes: body)))
        }
        guard exchange.answersChange(admission) else { return response }
        return try await answer(response, for: admission)
    }

    /// The request's head with the connection's scheme: `https` on TLS, whatever HTTP version.
    public func head(of request: Request, context: Context) async -> HTTPRequest {
        var head = request.head
        let secure: Bool
        if let known = self.secure { secure = known } else { secure = await isTLS(context.channel) }
        head.scheme = secure ? "https" : "http"
        return head
    }

    /// `response` as the exchange answers it: sealed and signed for the admitted request (its body
    /// collected to be signed).
    func answer(_ response: Response, for admission: Admission) async throws -> Response {
        let collector = BodyCollector()
        try await response.body.write(collector.writer)
        let (head, body) = try exchange.answer(
            HTTPResponse(status: response.status, headerFields: response.headers), body: collector.bytes,
            for: admission)
        return Response(
            status: head.status, headers: head.headerFields, body: .init(byteBuffer: ByteBuffer(bytes: body)))
    }

    /// The problem+json refusal for `error`, with `Accept-Signature` unless the request used sigil-v1,
    /// signed for the request exactly when its signature verified (during admission, or `admission`
    /// given: a route refusing an admitted request).
    public func refusal(_ error: SigilError, for request: HTTPRequest, admission: Admission? = nil) -> SigilHTTPError {
        let (head, body) = exchange.refuse(error, for: request, admission: admission)
        return SigilHTTPError(admission?.identity == nil ? error : error.ofVerifiedRequest(), head: head, body: body)
    }

}

/// Whether the connection `channel` belongs to (the stream's parent for HTTP/2) runs TLS.
func isTLS(_ channel: (any Channel)?) async -> Bool {
    var candidate = channel
    while let current = candidate {
        if (try? await current.pipeline.handler(type: NIOSSLHandler.self).get()) != nil { return true }
        candidate = current.parent
    }
    return false
}

/// The client certificate of the connection `channel` belongs to (the stream's parent for HTTP/2).
///
/// - Throws: `certificate-mismatch` for a certificate that cannot be read: one not read is one not checked.
func clientCertificate(of channel: (any Channel)?) async throws -> ClientCertificateIdentity? {
    var candidate = channel
    while let current = candidate {
        let found: NIOSSLCertificate?
        do {
            found = try await current.nioSSL_peerCertificate().get()
        } catch {
            candidate = current.parent
            continue
        }
        return try found.map { try ClientCertificateIdentity(readingPeer: (try? $0.toDERBytes()) ?? []) }
    }
    return nil
}

/// A request body as the byte views the verifier reads.
struct BodyChunks: AsyncSequence, Sendable {
    let body: RequestBody

    struct AsyncIterator: AsyncIteratorProtocol {
        var buffers: RequestBody.AsyncIterator

        mutating func next() async throws -> ByteBufferView? { try await buffers.next()?.readableBytesView }
    }

    func makeAsyncIterator() -> AsyncIterator { AsyncIterator(buffers: body.makeAsyncIterator()) }
}
