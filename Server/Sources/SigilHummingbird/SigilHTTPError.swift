import HTTPTypes
import Hummingbird
import NIOCore
@_spi(Sigil) import SigilCore
import SigilServer

/// A ``SigilError`` as Hummingbird sends it: `application/problem+json` (PROTOCOL.md section 4) with
/// `serverTime`, signed for the request it answers when the middleware has a response signer.
public struct SigilHTTPError: HTTPResponseError {
    /// The refusal.
    public let error: SigilError
    /// The response head, signature fields included when signed.
    public let head: HTTPResponse
    /// The problem+json body.
    public let body: [UInt8]

    /// Creates the response error for a refusal as ``RequestVerifier/refusal(_:for:signer:includeSignatureBase:)``
    /// made it.
    public init(_ error: SigilError, head: HTTPResponse, body: [UInt8]) {
        self.error = error
        self.head = head
        self.body = body
    }

    /// Creates an unsigned refusal.
    ///
    /// - Parameters:
    ///   - serverTime: the server's time, for `serverTime`.
    ///   - acceptSignature: the `Accept-Signature` value to send, if any.
    ///   - includeSignatureBase: whether the body carries the server's signature base (the debug option).
    public init(
        _ error: SigilError,
        serverTime: Int64 = SystemUnixClock().now(),
        acceptSignature: String? = nil,
        includeSignatureBase: Bool = false
    ) {
        var head = HTTPResponse(status: .init(code: error.code.httpStatus))
        head.headerFields[.contentType] = Problem.contentType
        head.headerFields[.cacheControl] = "no-store"
        if let acceptSignature { head.headerFields[MessageSignatures.acceptSignatureField] = acceptSignature }
        self.init(
            error,
            head: head,
            body: Problem.body(for: error, serverTime: serverTime, includeSignatureBase: includeSignatureBase)
        )
    }

    public var status: HTTPResponse.Status { head.status }

    public func response(from request: Request, context: some RequestContext) throws -> Response {
        Response(status: head.status, headers: head.headerFields, body: .init(byteBuffer: ByteBuffer(bytes: body)))
    }
}
