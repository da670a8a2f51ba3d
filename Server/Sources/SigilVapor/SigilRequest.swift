@_spi(Sigil) import SigilCore
import SigilServer
import SigilTLS
import Vapor

/// A verified identity is Vapor's `Authenticatable`: the ``SigilMiddleware`` logs it in
/// (`request.auth.login(identity)`) once it verified the request, and nothing else in Sigil does, so
/// `SigilIdentity.guardMiddleware()` and `request.auth.require(SigilIdentity.self)` accept only a
/// request Sigil verified.
///
/// ```swift
/// app.grouped(sigil, SigilIdentity.guardMiddleware()).get("me") { request in
///     try request.auth.require(SigilIdentity.self).keyID
/// }
/// ```
///
/// - Warning: it is not `SessionAuthenticatable`, and must not be made so: an identity is proved by
///   each request's own signature, never remembered from an earlier one by a session cookie.
extension SigilIdentity: Authenticatable {}

/// What the ``SigilMiddleware`` learnt about a request: `request.sigil.identity`.
public struct SigilRequest: Sendable {
    let request: Request

    /// Who signed the request (the verified signature, the client certificate, the key its body was
    /// sealed to); `nil` before the middleware ran or when the route is not behind it.
    public var identity: SigilIdentity? { request.storage[Stored.self] }

    /// The TLS client certificate of the connection, when the middleware reads it and the client
    /// presented one.
    public var clientCertificate: ClientCertificateIdentity? { identity?.clientCertificate }

    /// The identity, or a `missing-signature` error when the route was reached without the middleware.
    public func requireIdentity() throws -> SigilIdentity {
        guard let identity else { throw SigilError(.missingSignature, "the route requires a signed request") }
        return identity
    }

    /// The user of the request's device (``SigilServer/SigilIdentity/requireUser()``): a route that
    /// serves users reads a `String`, never an optional (`request.sigil.requireUser()`).
    public func requireUser() throws -> String { try requireIdentity().requireUser() }

    /// The code a request monitor mode let through unverified would have been refused with
    /// (``SigilServer/Admission/outcome``); `nil` when it verified or no middleware ran.
    public var outcome: SigilError.Code? { request.storage[StoredOutcome.self] }

    func store(_ identity: SigilIdentity) {
        request.storage[Stored.self] = identity
    }

    func store(outcome: SigilError.Code?) {
        request.storage[StoredOutcome.self] = outcome
    }

    struct Stored: StorageKey, Sendable {
        typealias Value = SigilIdentity
    }

    struct StoredOutcome: StorageKey, Sendable {
        typealias Value = SigilError.Code
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
