import HTTPTypes
import NIOCore
@_spi(Sigil) import SigilCore
import SigilServer
import Vapor

/// The registration API of a ``RegistrationService`` as a Vapor route collection:
/// `GET /.well-known/sigil`, `POST /v1/devices`, and, behind the ``SigilMiddleware``,
/// `POST /v1/devices/{keyId}/secret`, `POST /v1/keys/rotate`, `DELETE /v1/devices/{keyId}` and
/// `POST /v1/certificates`. Bodies are read up to the service's `bodyLimit` (64 KiB, room for an
/// ML-DSA-87 key), whatever the application's default.
///
/// ```swift
/// let sigil = SigilMiddleware(exchange: Exchange(verifier: verifier, responseSigner: signer))
/// try app.register(collection: SigilRegistrationRoutes(service: registration, middleware: sigil))
/// ```
public struct SigilRegistrationRoutes: RouteCollection, Sendable {
    /// Does the work.
    public let service: RegistrationService
    /// Verifies the signed routes and signs their answers; its response signer is the one discovery publishes.
    public let middleware: SigilMiddleware
    /// The SPKI pins of the server's TLS chain, published in discovery.
    public var pins: [String]
    /// Pins of keys the server may move to, published in discovery.
    public var backupPins: [String]

    /// Creates the routes. The middleware's body limit is raised to the service's for these routes.
    public init(
        service: RegistrationService,
        middleware: SigilMiddleware,
        pins: [String] = [],
        backupPins: [String] = []
    ) {
        self.service = service
        self.middleware = middleware.reading(upTo: service.configuration.bodyLimit)
        self.pins = pins
        self.backupPins = backupPins
    }

    /// Mounts the one table of ``RegistrationService/routes(exchange:pins:backupPins:)``, the
    /// admitted routes behind the middleware.
    public func boot(routes: any RoutesBuilder) throws {
        let signed = routes.grouped(middleware)
        let exchange = middleware.exchange
        let limit = service.configuration.bodyLimit
        for route in service.routes(exchange: exchange, pins: pins, backupPins: backupPins) {
            let method = HTTPMethod(rawValue: route.method.rawValue)
            let path = Self.path(route.colonPath)
            switch route.access {
            case .admitted:
                signed.on(method, path, body: .stream) { request in
                    // The middleware collected the body (the plaintext of a sealed one) and refuses,
                    // signed, what the route throws.
                    let answer = try await route.handle(
                        RegistrationCall(
                            request: try SigilMiddleware.head(of: request),
                            body: request.body.data.map { Array(buffer: $0) } ?? [],
                            keyID: request.parameters.get("keyId"), identity: try request.sigil.requireIdentity(),
                            clientAddress: request.remoteAddress?.ipAddress))
                    return Response(answer.head, body: answer.body)
                }
            case .open, .selfSigned:
                routes.on(method, path, body: .stream) { request in
                    var head = HTTPRequest(method: .post, scheme: nil, authority: nil, path: route.colonPath)
                    let call: RegistrationCall
                    do {
                        head = try SigilMiddleware.head(of: request)
                        call = RegistrationCall(
                            request: head,
                            body: try await exchange.readBody(
                                CollectedBody(request: request, limit: limit), declaredLength: nil, limit: limit),
                            keyID: request.parameters.get("keyId"), identity: nil,
                            clientAddress: request.remoteAddress?.ipAddress)
                    } catch let error as SigilError {
                        return middleware.refusal(error, for: head)
                    }
                    let (answeredHead, body) = await exchange.run(route, call)
                    return Response(answeredHead, body: body)
                }
            }
        }
    }

    static func path(_ path: String) -> [PathComponent] {
        path.split(separator: "/").map { PathComponent(stringLiteral: String($0)) }
    }
}
