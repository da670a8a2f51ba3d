import HTTPTypes
import OpenAPIRuntime
import SigilCore
import SigilServer

/// Verifies each request of an OpenAPI server (either profile) before its handler runs, and signs
/// every response to a verified request when a response key is configured.
///
/// The handler reads the identity from ``SigilServerMiddleware/identity`` (a task-local value set
/// for the handler's call). The request body is collected (up to the verifier's `bodyLimit`) and
/// handed on; the response body is collected to be signed. A request without an authority takes
/// its `Host` field's, or else ``authority`` (swift-openapi-vapor passes neither: set it to the host
/// and port clients use, for rfc9421's `@authority`), and one without a scheme takes ``scheme``. Refusals are
/// `application/problem+json` (PROTOCOL.md section 4), with `Accept-Signature` unless the request
/// used sigil-v1, signed when the request's own signature verified; a ``SigilError`` a handler throws
/// becomes a signed refusal too.
///
/// ```swift
/// try handler.registerHandlers(on: transport, middlewares: [SigilServerMiddleware(verifier: verifier, responseSigner: signer)])
/// // in a handler:
/// let keyID = try SigilServerMiddleware.requireIdentity().keyID
/// ```
public struct SigilServerMiddleware: ServerMiddleware {
    /// The identity of the request whose handler is running; `nil` outside one.
    @TaskLocal public static var identity: VerifiedRequest?

    /// The verifier.
    public let verifier: RequestVerifier
    /// Signs responses to verified requests, when set.
    public let responseSigner: ResponseSigner?
    /// Whether refusals carry the server's signature base (for development only).
    public let includeSignatureBase: Bool
    /// The scheme of requests that arrive without one (`https` behind TLS).
    public let scheme: String?
    /// The authority of requests that arrive with neither an authority nor a `Host` field.
    public let authority: String?
    /// The largest response body collected to be signed.
    public var responseLimit = 64 << 20
    /// How long the request body may take to arrive whole; then `request-timeout` (408).
    public var bodyTimeout: Duration = .seconds(60)

    /// Creates the middleware.
    ///
    /// - Parameters:
    ///   - verifier: verifies requests; its configuration sets the profiles, window and body limit.
    ///   - responseSigner: signs responses and refusals (sigil-v1 section 2.7, or rfc9421 with `;req`).
    ///   - includeSignatureBase: put `signatureBase` in refusals.
    ///     - Warning: for development: it shows a caller what the server expected.
    ///   - scheme: the scheme of requests the transport passes without one.
    ///   - authority: the authority (host and port clients use) of requests the transport passes
    ///     with neither an authority nor a `Host` field.
    public init(
        verifier: RequestVerifier,
        responseSigner: ResponseSigner? = nil,
        includeSignatureBase: Bool = false,
        scheme: String? = nil,
        authority: String? = nil
    ) {
        self.authority = authority
        self.verifier = verifier
        self.responseSigner = responseSigner
        self.includeSignatureBase = includeSignatureBase
        self.scheme = scheme
    }

    /// The identity, or a `missing-signature` error outside a handler this middleware verified.
    public static func requireIdentity() throws -> VerifiedRequest {
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
        if head.scheme == nil { head.scheme = scheme }
        let verified: VerifiedRequest
        let bytes: [UInt8]
        do {
            guard request.headerFields[values: Self.host].count <= 1 else {
                throw SigilError(.forbidden, "the request has more than one Host field")
            }
            (verified, bytes) = try await withDeadline(
                bodyTimeout, SigilError(.requestTimeout, "the body did not arrive in time")
            ) { [verifier, head] in try await verifier.verify(head, bodyChunks: body ?? HTTPBody()) }
        } catch let error as SigilError {
            return refusal(error, for: head)
        }
        let response: HTTPResponse
        let responseBody: HTTPBody?
        do {
            (response, responseBody) = try await Self.$identity.withValue(verified) {
                try await next(request, body == nil ? nil : HTTPBody(bytes), metadata)
            }
        } catch {
            guard let refused = (error as? SigilError) ?? ((error as? ServerError)?.underlyingError as? SigilError)
            else { throw error }
            return refusal(refused, for: head, requestVerified: true)
        }
        guard let responseSigner else { return (response, responseBody) }
        let out = try await BodyReader.collect(responseBody ?? HTTPBody(), declaredLength: nil, limit: responseLimit)
        var signed = response
        try responseSigner.sign(&signed, body: out, answering: head, binding: ResponseBinding(verified))
        return (signed, out.isEmpty && responseBody == nil ? nil : HTTPBody(out))
    }

    /// The problem+json refusal for `error`, signed for the request when a response signer is set and
    /// the request's signature verified.
    public func refusal(_ error: SigilError, for request: HTTPRequest, requestVerified: Bool = false)
        -> (HTTPResponse, HTTPBody?)
    {
        let refused = requestVerified ? error.ofVerifiedRequest() : error
        let (head, body) = verifier.refusal(
            refused, for: request, signer: responseSigner, includeSignatureBase: includeSignatureBase)
        return (head, HTTPBody(body))
    }

    static let host = HTTPField.Name("host")!
}
