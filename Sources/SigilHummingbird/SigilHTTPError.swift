import HTTPTypes
import Hummingbird
import NIOCore
import SigilCore
import SigilServer

/// A ``SigilError`` as Hummingbird sends it: `application/problem+json` (PROTOCOL.md section 4) with
/// `serverTime`, and `Accept-Signature` when the server takes rfc9421 signatures.
public struct SigilHTTPError: HTTPResponseError {
    /// The refusal.
    public let error: SigilError
    /// The server's time, for `serverTime`.
    public let serverTime: Int64
    /// The `Accept-Signature` value to send, if any.
    public let acceptSignature: String?
    /// Whether the body carries the server's signature base (the debug option).
    public let includeSignatureBase: Bool

    /// Creates the response error for a refusal.
    public init(
        _ error: SigilError,
        serverTime: Int64 = SystemUnixClock().now(),
        acceptSignature: String? = nil,
        includeSignatureBase: Bool = false
    ) {
        self.error = error
        self.serverTime = serverTime
        self.acceptSignature = acceptSignature
        self.includeSignatureBase = includeSignatureBase
    }

    public var status: HTTPResponse.Status { .init(code: error.code.httpStatus) }

    public func response(from request: Request, context: some RequestContext) throws -> Response {
        let body = Problem.body(for: error, serverTime: serverTime, includeSignatureBase: includeSignatureBase)
        var headers = HTTPFields()
        headers[.contentType] = Problem.contentType
        headers[.cacheControl] = "no-store"
        if let acceptSignature { headers[MessageSignatures.acceptSignatureField] = acceptSignature }
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: body)))
    }
}
