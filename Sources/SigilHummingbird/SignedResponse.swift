import HTTPTypes
import Hummingbird
import NIOCore
import SigilCore
import SigilServer

extension Response {
    /// This response signed for the verified request it answers: sigil-v1 (PROTOCOL.md section 2.7,
    /// over the request's nonce) or rfc9421 (covering the request with `;req`), in the request's profile.
    ///
    /// The body is collected to be signed, so use this for bounded bodies.
    public func signed(
        with signer: ResponseSigner,
        answering request: HTTPRequest,
        verified: VerifiedRequest
    ) async throws -> Response {
        try await finished(signer: signer, sealing: nil, answering: request, verified: verified)
    }

    /// This response sealed to the request when it was sealed, then signed when a signer is set.
    func finished(
        signer: ResponseSigner?,
        sealing opened: SealedBodies.Opened?,
        answering request: HTTPRequest,
        verified: VerifiedRequest
    ) async throws -> Response {
        let collector = BodyCollector()
        try await body.write(collector.writer)
        var bytes = collector.bytes
        var head = HTTPResponse(status: status, headerFields: headers)
        try opened?.seal(&head, body: &bytes)
        try signer?.sign(&head, body: bytes, answering: request, binding: ResponseBinding(verified))
        return Response(
            status: head.status, headers: head.headerFields, body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
    }
}

/// Collects a response body so it can be signed.
final class BodyCollector: @unchecked Sendable {
    private(set) var bytes: [UInt8] = []

    struct Writer: ResponseBodyWriter {
        let collector: BodyCollector
        mutating func write(_ buffer: ByteBuffer) async throws { collector.bytes += buffer.readableBytesView }
        consuming func finish(_ trailingHeaders: HTTPFields?) async throws {}
    }

    var writer: Writer { Writer(collector: self) }
}
