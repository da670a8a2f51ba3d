import Hummingbird
import Logging
import NIOCore
@_spi(Sigil) import SigilCore
import SigilServer
import SigilTLS

/// A request context that can carry a ``SigilIdentity``, in the style of hummingbird-auth's
/// `AuthRequestContext`.
public protocol SigilRequestContext: RequestContext {
    /// The identity the ``SigilMiddleware`` put there; `nil` before it ran.
    var sigilIdentity: SigilIdentity? { get set }
    /// The connection's channel, where the TLS client certificate is read.
    var channel: (any Channel)? { get }
}

/// A ready-made ``SigilRequestContext`` over Hummingbird's application context source.
public struct SigilBasicRequestContext: SigilRequestContext {
    public var coreContext: CoreRequestContextStorage
    public var sigilIdentity: SigilIdentity?
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
}
