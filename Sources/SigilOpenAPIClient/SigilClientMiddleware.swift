import Foundation
import HTTPTypes
import OpenAPIRuntime
import SigilClient
@_spi(Sigil) import SigilCore

/// Signs each request of a generated OpenAPI client, as a ``SigilSession`` does: the server-corrected
/// clock dates it, a signed response is checked (and required, with `requireSignedResponses`) and
/// teaches the clock, and a signed `timestamp-out-of-window` refusal sends the request once more.
///
/// The request is signed for the target the transport sends it to: the base URL's scheme, authority
/// and path followed by the operation's path, the way the URLSession and AsyncHTTPClient transports
/// join them. Request and response bodies are collected (up to ``bodyLimit``) to be signed and checked.
///
/// ```swift
/// let clock = ServerClock()
/// let client = Client(
///     serverURL: URL(string: "https://api.example.com")!,
///     transport: AsyncHTTPClientTransport(),
///     middlewares: [SigilClientMiddleware(
///         signer: RequestSigner(key: key, keyID: keyID, clock: clock),
///         clock: clock, responses: serverKey, requireSignedResponses: true)])
/// ```
public struct SigilClientMiddleware: ClientMiddleware {
    /// Signs every request; its clock should be ``clock``.
    public let signer: RequestSigner
    /// The server-corrected clock, learnt from verified response signatures.
    public let clock: ServerClock
    /// Checks signed responses, when set.
    public let responses: ResponseVerifier?
    /// Refuse responses the server did not sign (needs ``responses``).
    public let requireSignedResponses: Bool
    /// The largest request or response body collected.
    public var bodyLimit = 16 << 20

    /// Creates the middleware; the parameters are ``SigilSession``'s.
    public init(
        signer: RequestSigner,
        clock: ServerClock,
        responses: ResponseVerifier? = nil,
        requireSignedResponses: Bool = false
    ) {
        self.signer = signer
        self.clock = clock
        self.responses = responses
        self.requireSignedResponses = requireSignedResponses
    }

    public func intercept(
        _ request: HTTPRequest,
        body: HTTPBody?,
        baseURL: URL,
        operationID: String,
        next: @Sendable (HTTPRequest, HTTPBody?, URL) async throws -> (HTTPResponse, HTTPBody?)
    ) async throws -> (HTTPResponse, HTTPBody?) {
        let bytes = try await Self.collect(body, upTo: bodyLimit)
        guard let base = URLComponents(url: baseURL, resolvingAgainstBaseURL: true), let host = base.percentEncodedHost,
            let scheme = base.scheme
        else { throw SigilInputError("the server URL \(baseURL) has no scheme or host") }
        var target = request
        target.scheme = scheme
        target.authority =
            (host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host) + (base.port.map { ":\($0)" } ?? "")
        target.path = base.percentEncodedPath + (request.path ?? "")
        // The session lives only for this call, so `next` does not outlive it.
        let response = try await withoutActuallyEscaping(next) { next in
            let transport = Next(request: request, hasBody: body != nil, baseURL: baseURL, limit: bodyLimit, next: next)
            let session = SigilSession(
                transport: transport, signer: signer, clock: clock, responses: responses,
                requireSignedResponses: requireSignedResponses)
            return try await session.send(target, body: bytes)
        }
        return (response.head, response.body.isEmpty ? nil : HTTPBody(response.body))
    }

    /// `body`'s bytes, at most `limit` of them.
    static func collect(_ body: HTTPBody?, upTo limit: Int) async throws -> [UInt8] {
        guard let body else { return [] }
        return try await BodyReader.collect(body, declaredLength: nil, limit: limit)
    }

    /// The rest of the client's middleware chain as a ``SigilTransport``: the operation's own request
    /// with the signature's fields.
    struct Next: SigilTransport {
        let request: HTTPRequest
        let hasBody: Bool
        let baseURL: URL
        let limit: Int
        let next: @Sendable (HTTPRequest, HTTPBody?, URL) async throws -> (HTTPResponse, HTTPBody?)

        func send(_ signed: HTTPRequest, body: [UInt8]) async throws -> (HTTPResponse, [UInt8]) {
            var outgoing = request
            outgoing.headerFields = signed.headerFields
            let (head, responseBody) = try await next(outgoing, hasBody ? HTTPBody(body) : nil, baseURL)
            return (head, try await SigilClientMiddleware.collect(responseBody, upTo: limit))
        }
    }
}
