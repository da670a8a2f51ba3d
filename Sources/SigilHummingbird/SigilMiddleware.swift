import HTTPTypes
import Hummingbird
import NIOCore
import NIOSSL
import SigilCore
import SigilServer
import SigilTLS

/// Verifies every request that reaches it (either profile), puts the ``SigilIdentity`` on the
/// context, and signs the response when a response key is configured.
///
/// The body is read as it streams in, and the request is refused with `body-too-large` as soon as it
/// passes the limit: the smaller of the verifier's `bodyLimit` and the context's `maxUploadSize`, so
/// a body that verifies also decodes. The headers, the time window and the key are checked before any
/// body byte is read, and again when the body has ended. A TLS client certificate that names a Sigil
/// key (`urn:sigil:key:`) must name a key of the signer's device (`certificate-mismatch`).
/// Refusals are `application/problem+json`, signed like responses when the request's own signature
/// verified (a replay, an authentic request out of the window, a route refusing a verified request).
/// Hummingbird adds `Date` to every response.
///
/// ```swift
/// let router = Router(context: SigilBasicRequestContext.self)
/// router.group("v1").add(middleware: SigilMiddleware(verifier: verifier, responseSigner: signer))
///     .post("echo") { request, context in try context.requireSigilIdentity().keyID }
/// ```
public struct SigilMiddleware<Context: SigilRequestContext>: RouterMiddleware {
    /// The verifier.
    public let verifier: RequestVerifier
    /// Signs responses to verified requests, when set.
    public let responseSigner: ResponseSigner?
    /// Whether refusals carry the server's signature base (for development only).
    public let includeSignatureBase: Bool
    /// Whether to read the TLS client certificate into the identity and check that it names the
    /// signer's device.
    public let readsClientCertificate: Bool
    /// Opens sealed bodies (PROTOCOL.md section 6) after verification and seals their answers.
    public let sealing: SealedBodies?

    /// Creates the middleware.
    ///
    /// - Parameters:
    ///   - verifier: verifies requests; its configuration sets the profiles, window and body limit.
    ///   - responseSigner: signs responses and refusals (sigil-v1 section 2.7, or rfc9421 with `;req`).
    ///   - includeSignatureBase: put `signatureBase` in refusals.
    ///     - Warning: for development: it shows a caller what the server expected.
    ///   - readsClientCertificate: put the TLS client certificate's identity on the context, and
    ///     refuse a certificate naming a key of another device.
    ///   - sealing: the keys sealed bodies open with; routes then see the plaintext and the answer to
    ///     a sealed request is sealed.
    public init(
        verifier: RequestVerifier,
        responseSigner: ResponseSigner? = nil,
        includeSignatureBase: Bool = false,
        readsClientCertificate: Bool = false,
        sealing: SealedBodies? = nil
    ) {
        self.sealing = sealing
        self.verifier = verifier
        self.responseSigner = responseSigner
        self.includeSignatureBase = includeSignatureBase
        self.readsClientCertificate = readsClientCertificate
    }

    public func handle(
        _ request: Request,
        context: Context,
        next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        let signed = request.head
        var request = request
        var context = context
        let verified: VerifiedRequest
        let certificate: ClientCertificateIdentity?
        var opened: SealedBodies.Opened?
        do {
            let (identity, body) = try await verifier.verify(
                request.head,
                bodyChunks: request.body.map { $0.readableBytesView },
                limit: context.maxUploadSize
            )
            verified = identity
            if let sealing {
                let plain = try sealing.open(request.head, body: body, verified: identity)
                request = Request(head: plain.request, body: RequestBody(buffer: ByteBuffer(bytes: plain.body)))
                opened = plain
            } else {
                request.body = RequestBody(buffer: ByteBuffer(bytes: body))
            }
            certificate = readsClientCertificate ? try await Self.clientCertificate(of: context.channel) : nil
            if let certificateKeyID = certificate?.sigilKeyID {
                try await verifier.checkClientCertificate(naming: certificateKeyID, for: verified)
            }
        } catch let error as SigilError {
            context.logger.info("request refused", metadata: ["sigil.code": "\(error.code)"])
            throw refusal(error, for: signed)
        }
        context.sigilIdentity = SigilIdentity(request: verified, clientCertificate: certificate)
        context.logger[metadataKey: "sigil.key-id"] = "\(verified.keyID)"
        let response = try await next(request, context)
        guard responseSigner != nil || opened?.sealer != nil else { return response }
        return try await response.finished(
            signer: responseSigner, sealing: opened, answering: signed, verified: verified)
    }

    /// The problem+json refusal for `error`, with `Accept-Signature` unless the request used sigil-v1,
    /// signed for the request when a response signer is set and the request's signature verified.
    ///
    /// - Parameter requestVerified: the request passed this middleware (a route refusing a verified
    ///   request), so the refusal may be signed whatever `error` says.
    public func refusal(_ error: SigilError, for request: HTTPRequest, requestVerified: Bool = false)
        -> SigilHTTPError
    {
        let refused = requestVerified ? error.ofVerifiedRequest() : error
        let (head, body) = verifier.refusal(
            refused, for: request, signer: responseSigner, includeSignatureBase: includeSignatureBase)
        return SigilHTTPError(refused, head: head, body: body)
    }

    /// The client certificate of the connection `channel` belongs to (the stream's parent for HTTP/2).
    ///
    /// - Throws: `certificate-mismatch` for a certificate that cannot be read: one not read is one not checked.
    static func clientCertificate(of channel: (any Channel)?) async throws -> ClientCertificateIdentity? {
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
}
