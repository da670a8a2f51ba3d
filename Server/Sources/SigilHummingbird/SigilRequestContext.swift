import Hummingbird
import HummingbirdAuth
import Logging
import NIOCore
@_spi(Sigil) import SigilCore
import SigilServer
import SigilTLS

/// A request context that can carry a ``SigilIdentity``, in the style of hummingbird-auth's
/// `AuthRequestContext`.
///
/// A context that is also an `AuthRequestContext` whose `Identity` is ``SigilIdentity`` (as
/// ``SigilBasicRequestContext`` is) needs no property of its own: ``sigilIdentity`` is then its
/// `identity`, so hummingbird-auth's `IsAuthenticatedMiddleware` and `requireIdentity()` see what the
/// ``SigilMiddleware`` verified, and nothing else sets it. An application whose identity is a type of
/// its own (its user) keeps a stored `sigilIdentity` and turns it into that type with
/// hummingbird-auth's `ClosureAuthenticator`, behind the ``SigilMiddleware``:
///
/// ```swift
/// router.group("api").add(middleware: sigil)
///     .add(middleware: ClosureAuthenticator { _, context in try await users.find(context.sigilIdentity?.userID) })
///     .add(middleware: IsAuthenticatedMiddleware())
/// ```
public protocol SigilRequestContext: RequestContext {
    /// The identity the ``SigilMiddleware`` put there; `nil` before it ran.
    var sigilIdentity: SigilIdentity? { get set }
    /// The connection's channel, where the TLS client certificate is read.
    var channel: (any Channel)? { get }
    /// The code a request monitor mode let through unverified would have been refused with
    /// (``SigilServer/Admission/outcome``); `nil` when it verified. A context without a stored
    /// property of its own keeps none.
    var sigilOutcome: SigilError.Code? { get set }
}

extension SigilRequestContext {
    /// Kept nowhere: declare a stored `sigilOutcome` to read what monitor mode held back.
    public var sigilOutcome: SigilError.Code? {
        get { nil }
        set {}
    }
}

extension SigilRequestContext where Self: AuthRequestContext, Self.Identity == SigilIdentity {
    /// hummingbird-auth's `identity` under its Sigil name: one property, set by the ``SigilMiddleware``
    /// once it verified the request, so `IsAuthenticatedMiddleware` and `requireIdentity()` accept only
    /// what Sigil verified.
    public var sigilIdentity: SigilIdentity? {
        get { identity }
        set { identity = newValue }
    }
}

/// A ready-made ``SigilRequestContext`` over Hummingbird's application context source, and
/// hummingbird-auth's `AuthRequestContext` whose `identity` is the ``SigilIdentity`` the
/// ``SigilMiddleware`` verified.
///
/// ```swift
/// let router = Router(context: SigilBasicRequestContext.self)
/// router.group("api").add(middleware: sigil).add(middleware: IsAuthenticatedMiddleware())
///     .get("me") { _, context in try context.requireIdentity().keyID }
/// ```
public struct SigilBasicRequestContext: SigilRequestContext, AuthRequestContext {
    public var coreContext: CoreRequestContextStorage
    /// The identity the ``SigilMiddleware`` verified (``sigilIdentity`` is the same property); `nil`
    /// before it ran, and on a route not behind it.
    public var identity: SigilIdentity?
    /// The code a request monitor mode let through unverified would have been refused with.
    public var sigilOutcome: SigilError.Code?
    public let channel: (any Channel)?

    public init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        channel = source.channel
    }

    /// The most a route reads when it decodes a body: the verifier's default body limit (8 MiB).
    /// ``SigilMiddleware`` reads at most the smaller of this and its verifier's `bodyLimit`, so a body
    /// that verifies also decodes; to accept larger bodies, raise both.
    public var maxUploadSize: Int { VerifierConfiguration().bodyLimit }
}

extension SigilRequestContext {
    /// The identity, or a `missing-signature` error when the route was reached without the middleware.
    public func requireSigilIdentity() throws -> SigilIdentity {
        guard let identity = sigilIdentity else {
            throw SigilHTTPError(SigilError(.missingSignature, "the route requires a signed request"))
        }
        return identity
    }

    /// The user of the request's device (``SigilIdentity/requireUser()``): a route that serves users
    /// reads a `String`, never an optional.
    ///
    /// ```swift
    /// router.get("me") { _, context in try context.requireSigilUser() }
    /// ```
    public func requireSigilUser() throws -> String {
        do {
            return try requireSigilIdentity().requireUser()
        } catch let error as SigilError {
            throw SigilHTTPError(error)
        }
    }
}
