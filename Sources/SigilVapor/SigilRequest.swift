import SigilCore
import SigilServer
import SigilTLS
import Vapor

/// What the ``SigilMiddleware`` learnt about a request: `request.sigil.identity`.
public struct SigilRequest: Sendable {
    let request: Request

    /// The verified signature (key ID, algorithm, profile, timestamp, nonce, device and user); `nil`
    /// before the middleware ran or when the route is not behind it.
    public var identity: VerifiedRequest? { request.storage[Stored.self]?.identity }

    /// The TLS client certificate of the connection, when the middleware reads it and the client
    /// presented one.
    public var clientCertificate: ClientCertificateIdentity? { request.storage[Stored.self]?.clientCertificate }

    /// The identity, or a `missing-signature` error when the route was reached without the middleware.
    public func requireIdentity() throws -> VerifiedRequest {
        guard let identity else { throw SigilError(.missingSignature, "the route requires a signed request") }
        return identity
    }

    func store(_ identity: VerifiedRequest, clientCertificate: ClientCertificateIdentity?) {
        request.storage[Stored.self] = Stored(identity: identity, clientCertificate: clientCertificate)
    }

    struct Stored: StorageKey, Sendable {
        typealias Value = Stored
        let identity: VerifiedRequest
        let clientCertificate: ClientCertificateIdentity?
    }
}

extension Request {
    /// What the ``SigilMiddleware`` verified.
    public var sigil: SigilRequest { SigilRequest(request: self) }
}

/// A ``SigilError`` thrown where no ``SigilMiddleware`` turns it into problem+json (a route not behind
/// it) still answers with its status.
extension SigilError: AbortError {
    public var status: HTTPResponseStatus { HTTPResponseStatus(statusCode: code.httpStatus) }
    public var reason: String { "\(code.rawValue): \(detail)" }
}
