import HTTPTypes
import OpenAPIRuntime
@_spi(Sigil) import SigilCore
import SigilServer

/// Verifies each request of an OpenAPI server (either profile) before its handler runs, and signs
/// every response to a verified request when a response key is configured: swift-openapi's
/// conversion to and from the ``Exchange`` (sealed bodies open here too).
///
/// The handler reads the identity from ``SigilServerMiddleware/identity`` (a task-local value set
/// for the handler's call). The request body is collected (up to the verifier's `bodyLimit`, within
/// the body deadline) and handed on, opened when it was sealed; the response body is collected to be
/// sealed and signed. A request without an authority takes
/// its `Host` field's, or else ``authority`` (swift-openapi-vapor passes neither: set it to the host
/// and port clients use, for rfc9421's `@authority`); ``scheme``, when set, is every request's scheme
/// (a transport's own is a client's word over HTTP/2, and `http` for HTTP/1.1 over TLS). Refusals are
/// `application/problem+json` (PROTOCOL.md section 4), with `Accept-Signature` unless the request
/// used sigil-v1, signed when the request's own signature verified; a ``SigilError`` a handler throws
/// becomes a signed refusal too.
///
/// ```swift
/// let sigil = SigilServerMiddleware(exchange: Exchange(verifier: verifier, responseSigner: signer))
/// try handler.registerHandlers(on: transport, middlewares: [sigil])
/// // in a handler:
/// let device = try SigilServerMiddleware.requireIdentity().deviceID
/// ```
public struct SigilServerMiddleware: ServerMiddleware {
    /// The identity of the request whose handler is running; `nil` outside one.
    @TaskLocal public static var identity: SigilIdentity?
    /// The code the running request would have been refused with, when monitor mode let it through
    /// unverified (``SigilServer/Admission/outcome``); `nil` when it verified, and outside a handler.
    @TaskLocal public static var outcome: SigilError.Code?

    /// The server's side of each exchange: admission, answers, refusals.
    public let exchange: Exchange
    /// The scheme of every request, when set (`https` behind TLS): the connection's, whatever the
    /// transport passes; unset, the transport's.
    public let scheme: String?
    /// The authority of requests that arrive with neither an authority nor a `Host` field.
    public let authority: String?
    /// The largest response body collected to be signed.
    public var responseLimit = 64 << 20

    /// The verifier.
    public var verifier: RequestVerifier { exchange.verifier }
    /// Signs responses to verified requests, when set.
    public var responseSigner: ResponseSigner? { exchange.responseSigner }

    /// Creates the middleware around `exchange`, which holds everything every adapter shares (the
    /// verifier, signer, sealing, DPoP, origin, monitor mode and body timeout): the one way to make
    /// one, so the adapters cannot differ.
    ///
    /// - Parameters:
    ///   - scheme: the scheme requests are verified with, when the transport does not say (`https`
    ///     behind TLS); `authority`: the authority, when a request carries no `Host`.
    public init(exchange: Exchange, scheme: String? = nil, authority: String? = nil) {
        self.exchange = exchange
        self.authority = authority
        self.scheme = scheme
    }

    /// The identity, or a `missing-signature` error outside a handler this middleware verified.
    public static func requireIdentity() throws -> SigilIdentity {
        guard let identity else { throw SigilError(.missingSignature, "the operation requires a signed request") }
        return identity
    }

    public func intercept(
        _ request: HTTPRequest,
        body: HTTPBody?,
        metadata: ServerRequestMetadata,
        operationID: String,
        next: @Sendable (HTTPRequest, HTTPBody?, ServerRequestMetadata) async throws -> (HTTPResponse, HTTPBody?)
    ) async throws -> (HTTPResponse, HTTPBody?) {
        var head = request
        if head.authority == nil { head.authority = request.headerFields[Self.host] ?? authority }
        if let scheme { head.scheme = scheme }
        let admission: Admission
        do {
            guard request.headerFields[values: Self.host].count <= 1 else {
                throw SigilError(.forbidden, "the request has more than one Host field")
            }
            admission = try await exchange.admit(head, bodyChunks: body ?? HTTPBody())
        } catch let error as SigilError {
            return refusal(error, for: head)
        }
        let response: HTTPResponse
        let responseBody: HTTPBody?
        do {
            var routed = request
            routed.headerFields = admission.request.headerFields
            (response, responseBody) = try await Self.$identity.withValue(admission.identity) {
                try await Self.$outcome.withValue(admission.outcome) {
                    try await next(routed, body == nil ? nil : HTTPBody(admission.body), metadata)
                }
            }
        } catch {
            if let refused = (error as? SigilError) ?? ((error as? ServerError)?.underlyingError as? SigilError) {
                return refusal(refused, for: head, admission: admission)
            }
            // Any other failure of the handler: a 500 signed for the request, as the other adapters answer.
            guard let (failed, failedBody) = try exchange.failure(error, for: admission) else { throw error }
            return (failed, failedBody.isEmpty ? nil : HTTPBody(failedBody))
        }
        guard exchange.answersChange(admission) else { return (response, responseBody) }
        let out = try await BodyReader.collect(responseBody ?? HTTPBody(), declaredLength: nil, limit: responseLimit)
        let (answered, answeredBody) = try exchange.answer(response, body: out, for: admission)
        return (answered, answeredBody.isEmpty && responseBody == nil ? nil : HTTPBody(answeredBody))
    }

    /// The problem+json refusal for `error`, signed for the request exactly when its signature
    /// verified (during admission, or `admission` given: a handler refusing an admitted request).
    public func refusal(_ error: SigilError, for request: HTTPRequest, admission: Admission? = nil)
        -> (HTTPResponse, HTTPBody?)
    {
        let (head, body) = exchange.refuse(error, for: request, admission: admission)
        return (head, HTTPBody(body))
    }

    static let host = HTTPField.Name("host")!
}
