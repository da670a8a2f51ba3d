import HTTPTypes
import NIOCore
@_spi(Sigil) import SigilCore
import SigilServer
import SigilTLS
import SwiftASN1
import Vapor

/// Verifies every request that reaches it (either profile), puts the verified identity on the
/// request (``SigilRequest/identity``, as `request.sigil.identity`) and logs it in
/// (`request.auth.login(identity)`, for `SigilIdentity.guardMiddleware()` and
/// `request.auth.require(SigilIdentity.self)`), and signs every response to a verified request when a
/// response key is configured, errors included. A request it refuses reaches no route and logs
/// nothing in.
///
/// The body is read before the route sees it, and the request is refused with `body-too-large` as
/// soon as it passes the limit: the smaller of the verifier's `bodyLimit` and ``bodyLimit``, which
/// defaults to the application's `routes.defaultMaxBodySize`, so a body that verifies also decodes.
/// Routes find the body collected (`request.body.data`), streaming routes included. The headers,
/// the time window and the key are checked before any body byte is read, and again when the body
/// has ended.
///
/// The path verified is the one Vapor routes on (`request.url`, with Vapor's own normalization: runs
/// of leading `/` collapsed, a target it cannot parse read as `/`), so what was signed is what is
/// routed; a client that signed a target Vapor reads otherwise is refused. The authority is the
/// `Host` field, and the scheme `https` when the application's server has a TLS configuration.
///
/// Refusals are `application/problem+json` (PROTOCOL.md section 4), with `Accept-Signature` unless
/// the request used sigil-v1, signed like responses when the request's own signature verified. A
/// ``SigilError`` thrown by a route becomes a signed refusal; any other error becomes the response
/// Vapor's `ErrorMiddleware` would make, signed.
///
/// ```swift
/// let sigil = SigilMiddleware(exchange: Exchange(verifier: verifier, responseSigner: signer))
/// app.grouped(sigil, SigilIdentity.guardMiddleware()).post("v1", "echo") { request in
///     try request.auth.require(SigilIdentity.self).keyID
/// }
/// ```
public struct SigilMiddleware: AsyncAuthenticator {
    /// The server's side of each exchange: admission, answers, refusals.
    public let exchange: Exchange
    /// Whether to read the TLS client certificate into the identity and check that it names the
    /// signer's device. Vapor keeps the chain only when the server's TLS configuration has a
    /// `customCertificateVerifyCallbackWithMetadata`.
    public let readsClientCertificate: Bool
    /// The most body read, when lower than the verifier's limit; `nil` for the application's
    /// `routes.defaultMaxBodySize`.
    public private(set) var bodyLimit: Int?
    /// Turns a route's errors into the responses that are signed; `nil` for Vapor's default.
    public let errorMiddleware: ErrorMiddleware?

    /// The verifier.
    public var verifier: RequestVerifier { exchange.verifier }
    /// Signs responses to verified requests, when set.
    public var responseSigner: ResponseSigner? { exchange.responseSigner }

    /// Creates the middleware around `exchange`, which holds everything every adapter shares (the
    /// verifier, signer, sealing, DPoP, origin, monitor mode and body timeout): the one way to make
    /// one, so the adapters cannot differ.
    ///
    /// - Parameters:
    ///   - readsClientCertificate: read the TLS client certificate into the identity.
    ///   - bodyLimit: the most body read, when lower than the verifier's; `nil` for the application's
    ///     `routes.defaultMaxBodySize`.
    ///   - errorMiddleware: turns a route's errors into responses, which are signed; Vapor's default
    ///     when `nil`.
    public init(
        exchange: Exchange, readsClientCertificate: Bool = false, bodyLimit: Int? = nil,
        errorMiddleware: ErrorMiddleware? = nil
    ) {
        self.exchange = exchange
        self.errorMiddleware = errorMiddleware
        self.readsClientCertificate = readsClientCertificate
        self.bodyLimit = bodyLimit
    }

    /// This middleware reading bodies up to `bodyLimit` (the registration routes', whatever the
    /// application's default).
    func reading(upTo bodyLimit: Int) -> SigilMiddleware {
        var copy = self
        copy.bodyLimit = bodyLimit
        return copy
    }

    public func respond(to request: Request, chainingTo next: any AsyncResponder) async throws -> Response {
        var head = HTTPRequest(method: .get, scheme: nil, authority: nil, path: "/")
        let admission: Admission
        do {
            head = try Self.head(of: request)
            admission = try await admit(request, head: head)
        } catch let error as SigilError {
            request.logger.info("request refused", metadata: ["sigil.code": "\(error.code)"])
            return refusal(error, for: head)
        }
        request.logger[metadataKey: "sigil.key-id"] = "\(admission.identity?.keyID ?? "-")"
        if let outcome = admission.outcome {
            request.logger.info("request let through unverified", metadata: ["sigil.code": "\(outcome)"])
        }
        let response: Response
        do {
            response = try await next.respond(to: request)
        } catch let error as SigilError {
            return refusal(error, for: head, admission: admission)
        } catch {
            guard exchange.answersChange(admission) else { throw error }
            response = try await
                (errorMiddleware ?? ErrorMiddleware.default(environment: request.application.environment))
                .respond(to: request, chainingTo: Failing(error: error)).get()
        }
        guard exchange.answersChange(admission) else { return response }
        return try await answer(response, for: admission, on: request)
    }

    /// Admits `request`, records who sent it, and hands the route the plaintext of a sealed body.
    func admit(_ request: Request, head: HTTPRequest) async throws -> Admission {
        let limit = min(
            bodyLimit ?? request.application.routes.defaultMaxBodySize.value, verifier.configuration.bodyLimit)
        var readCertificate: (@Sendable () async throws -> ClientCertificateIdentity?)?
        if readsClientCertificate {
            let server = request.application.http.server.configuration
            let shown =
                server.tlsConfiguration == nil
                || (server.customCertificateVerifyCallbackWithMetadata != nil && request.version.major < 2)
            let leaf = request.peerCertificateChain?.leaf
            readCertificate = {
                // Vapor keeps the chain only then: a certificate it does not show is one not checked.
                guard shown else {
                    throw SigilError(
                        .certificateMismatch,
                        "the client certificate cannot be checked: Vapor keeps it only over HTTP/1.1, with customCertificateVerifyCallbackWithMetadata"
                    )
                }
                guard let leaf else { return nil }
                var serializer = DER.Serializer()
                // Bytes that do not serialize read as no certificate, which is refused.
                let der = (try? serializer.serialize(leaf)) != nil ? serializer.serializedBytes : []
                return try ClientCertificateIdentity(readingPeer: der)
            }
        }
        let admission = try await exchange.admit(
            head, bodyChunks: CollectedBody(request: request, limit: limit), limit: limit,
            clientCertificate: readCertificate)
        if admission.request.headerFields != head.headerFields {
            // A sealed body: the route reads the plaintext, under its own type and length.
            request.headers = HTTPHeaders(admission.request.headerFields)
            try request.content.encode(Plaintext(), using: PlaintextEncoder(bytes: admission.body))
        }
        // Only here, once the exchange admitted the request: what Vapor's authentication sees.
        request.sigil.store(outcome: admission.outcome)
        if let identity = admission.identity {
            request.sigil.store(identity)
            request.auth.login(identity)
        }
        return admission
    }

    /// The problem+json refusal for `error`, with `Accept-Signature` unless the request used sigil-v1,
    /// signed for the request exactly when its signature verified (during admission, or `admission`
    /// given: a route refusing an admitted request).
    public func refusal(_ error: SigilError, for request: HTTPRequest, admission: Admission? = nil) -> Response {
        let (head, body) = exchange.refuse(error, for: request, admission: admission)
        return Response(head, body: body)
    }

    /// `response` as the exchange answers it: sealed and signed for the admitted request (its body
    /// collected to be signed).
    func answer(_ response: Response, for admission: Admission, on request: Request) async throws -> Response {
        let body =
            admission.signedRequest.method == .head
            ? [] : try await response.body.collect(on: request.eventLoop).get().map { Array(buffer: $0) } ?? []
        var head = HTTPResponse(status: .init(code: Int(response.status.code)))
        head.headerFields = try HTTPFields(checking: response.headers)
        let (answered, answeredBody) = try exchange.answer(head, body: body, for: admission)
        return Response(answered, body: answeredBody)
    }

    /// The request as the verifier reads it: method, the scheme of the server, the `Host` field as
    /// authority, the path and query Vapor routes on, and the fields.
    ///
    /// - Throws: ``SigilError`` `forbidden` for a method or field name HTTP does not allow (NIO's
    ///   parser lets none through; a request made in process might).
    static func head(of request: Request) throws -> HTTPRequest {
        guard let method = HTTPRequest.Method(request.method.rawValue) else {
            throw SigilError(.forbidden, "the method is not an HTTP token")
        }
        guard request.headers[.host].count <= 1 else {
            throw SigilError(.forbidden, "the request has more than one Host field")
        }
        let query = request.url.query.map { "?\($0)" } ?? ""
        let secure = request.application.http.server.configuration.tlsConfiguration != nil
        return HTTPRequest(
            method: method,
            scheme: secure ? "https" : "http",
            authority: request.headers.first(name: .host),
            path: request.url.path + query,
            headerFields: try HTTPFields(checking: request.headers)
        )
    }
}

/// Nothing: what ``PlaintextEncoder`` is asked to encode.
struct Plaintext: Encodable {}

/// Writes given bytes as a request's collected body, through Vapor's public content API.
struct PlaintextEncoder: ContentEncoder {
    let bytes: [UInt8]

    func encode<E: Encodable>(_ encodable: E, to body: inout ByteBuffer, headers: inout HTTPHeaders) throws {
        body.writeBytes(bytes)
    }
}

/// A responder that fails with `error`, for Vapor's `ErrorMiddleware` to turn into a response.
struct Failing: Responder {
    let error: any Error

    func respond(to request: Request) -> EventLoopFuture<Response> { request.eventLoop.makeFailedFuture(error) }
}

/// The request's body as one chunk, collected by Vapor up to `limit` when the verifier first asks
/// for it (after the headers are checked), and kept on the request for the route.
struct CollectedBody: AsyncSequence, Sendable {
    let request: Request
    let limit: Int

    struct AsyncIterator: AsyncIteratorProtocol {
        let body: CollectedBody
        var done = false

        mutating func next() async throws -> ByteBufferView? {
            guard !done else { return nil }
            done = true
            let (request, limit) = (body.request, body.limit)
            do {
                // Vapor refuses a body of `max` bytes already; the verifier holds it to `limit` exactly.
                let collected = try await request.body.collect(max: limit + 1).get()
                return collected?.readableBytesView ?? ByteBuffer().readableBytesView
            } catch let abort as Abort where abort.status == .payloadTooLarge {
                throw SigilError(.bodyTooLarge, "the body is larger than \(limit) bytes")
            }
        }
    }

    func makeAsyncIterator() -> AsyncIterator { AsyncIterator(body: self) }
}

extension HTTPFields {
    /// NIO's fields as HTTP types.
    ///
    /// - Throws: ``SigilError`` `forbidden` for a name HTTP does not allow.
    init(checking headers: HTTPHeaders) throws {
        self.init()
        reserveCapacity(headers.count)
        for (name, value) in headers {
            guard let name = HTTPField.Name(name) else {
                throw SigilError(.forbidden, "a field name is not an HTTP token")
            }
            append(HTTPField(name: name, value: value))
        }
    }
}

extension HTTPHeaders {
    /// HTTP types' fields as NIO's.
    init(_ fields: HTTPFields) {
        self.init()
        reserveCapacity(fields.count)
        for field in fields { add(name: field.name.rawName, value: field.value) }
    }
}

extension Response {
    /// A response of `head` and `body`.
    convenience init(_ head: HTTPResponse, body: [UInt8]) {
        self.init(
            status: HTTPResponseStatus(statusCode: head.status.code, reasonPhrase: head.status.reasonPhrase),
            headers: HTTPHeaders(head.headerFields),
            body: .init(buffer: ByteBuffer(bytes: body))
        )
    }
}
