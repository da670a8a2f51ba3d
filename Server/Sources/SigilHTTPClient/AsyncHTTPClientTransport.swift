import AsyncHTTPClient
import HTTPTypes
import NIOCore
import SigilClient
@_spi(Sigil) import SigilCore

/// A ``SigilTransport`` over AsyncHTTPClient: the request's scheme, authority and path make the URL.
public struct AsyncHTTPClientTransport: SigilTransport {
    /// The client; its TLS configuration (see `ClientTLS`) decides groups, anchors and identity.
    public let client: HTTPClient
    /// How long one request may take.
    public var timeout: TimeAmount = .seconds(30)
    /// The largest response body accepted.
    public var maximumResponseSize = 16 << 20
    /// Turns the error of a failed request into one that says why, when it can (``SigilHTTPClient``'s
    /// transport names a refused connection or a client certificate the server requires).
    public var explain: (@Sendable (any Error) async -> any Error)?

    /// Creates a transport over `client`.
    public init(client: HTTPClient) { self.client = client }

    public func send(_ request: HTTPRequest, body: [UInt8]) async throws -> (HTTPResponse, [UInt8]) {
        guard let scheme = request.scheme, let authority = request.authority else {
            throw SigilInputError("the request needs a scheme and an authority")
        }
        var outgoing = HTTPClientRequest(url: "\(scheme)://\(authority)\(request.path ?? "/")")
        outgoing.method = .init(rawValue: request.method.rawValue)
        for field in request.headerFields { outgoing.headers.add(name: field.name.rawName, value: field.value) }
        if !body.isEmpty || request.method == .post || request.method == .put {
            outgoing.body = .bytes(ByteBuffer(bytes: body))
        }
        let response: HTTPClientResponse
        do {
            response = try await client.execute(outgoing, timeout: timeout)
        } catch {
            throw await explain?(error) ?? error
        }
        var head = HTTPResponse(
            status: .init(code: Int(response.status.code), reasonPhrase: response.status.reasonPhrase))
        for (name, value) in response.headers {
            if let name = HTTPField.Name(name) { head.headerFields.append(HTTPField(name: name, value: value)) }
        }
        let received = try await response.body.collect(upTo: maximumResponseSize)
        return (head, Array(buffer: received))
    }
}
