import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
@_spi(Sigil) import SigilCore
import SigilServer

/// The registration API of a ``RegistrationService``, mounted on any Hummingbird router:
/// `GET /.well-known/sigil`, `POST /v1/devices`, and, behind the ``SigilMiddleware``,
/// `POST /v1/devices/{keyId}/secret`, `POST /v1/keys/rotate`, `DELETE /v1/devices/{keyId}` and
/// `POST /v1/certificates`.
///
/// ```swift
/// let router = Router(context: SigilBasicRequestContext.self)
/// SigilRegistrationRoutes(service: registration, middleware: sigil).add(to: router)
/// router.group("api").add(middleware: sigil).get("me") { _, context in
///     try context.requireSigilIdentity().keyID
/// }
/// ```
public struct SigilRegistrationRoutes<Context: SigilRequestContext>: Sendable {
    /// Does the work.
    public let service: RegistrationService
    /// Verifies the signed routes and signs their answers; its response signer is the one discovery publishes.
    public let middleware: SigilMiddleware<Context>
    /// The SPKI pins of the server's TLS chain, published in discovery.
    public var pins: [String]
    /// Pins of keys the server may move to, published in discovery.
    public var backupPins: [String]

    /// Creates the routes.
    public init(
        service: RegistrationService,
        middleware: SigilMiddleware<Context>,
        pins: [String] = [],
        backupPins: [String] = []
    ) {
        self.service = service
        self.middleware = middleware
        self.pins = pins
        self.backupPins = backupPins
    }

    /// Adds the routes to `router` (or a group of it): the one table of
    /// ``RegistrationService/routes(exchange:pins:backupPins:)``, the admitted ones behind the middleware.
    public func add(to router: some RouterMethods<Context>) {
        let signed = router.group().add(middleware: middleware)
        for route in service.routes(exchange: middleware.exchange, pins: pins, backupPins: backupPins) {
            let path = RouterPath(route.colonPath)
            let method = route.method
            switch route.access {
            case .admitted:
                signed.on(path, method: method) { request, context in
                    let identity = try context.requireSigilIdentity()
                    // The middleware read the body (the plaintext of a sealed one) and refuses, signed,
                    // what the route throws.
                    let answer = try await route.handle(
                        RegistrationCall(
                            request: request.head, body: try await body(of: request, limit: Int.max),
                            keyID: context.parameters.get("keyId"), identity: identity,
                            clientAddress: context.clientAddress))
                    return Response(
                        status: answer.head.status, headers: answer.head.headerFields,
                        body: .init(byteBuffer: ByteBuffer(bytes: answer.body)))
                }
            case .open, .selfSigned:
                router.on(path, method: method) { request, context in
                    let call: RegistrationCall
                    do {
                        call = RegistrationCall(
                            request: await middleware.head(of: request, context: context),
                            body: try await body(of: request, limit: service.configuration.bodyLimit),
                            keyID: context.parameters.get("keyId"), identity: nil, clientAddress: context.clientAddress)
                    } catch let error as SigilError {
                        throw middleware.refusal(error, for: request.head)
                    }
                    let (head, body) = await middleware.exchange.run(route, call)
                    return Response(
                        status: head.status, headers: head.headerFields,
                        body: .init(byteBuffer: ByteBuffer(bytes: body)))
                }
            }
        }
    }

    func body(of request: Request, limit: Int) async throws -> [UInt8] {
        try await middleware.exchange.readBody(
            BodyChunks(body: request.body), declaredLength: request.headers[.contentLength].flatMap(Int.init),
            limit: limit)
    }
}

extension Response {
    /// A JSON response with sorted keys.
    package static func json(_ value: some Encodable, status: HTTPResponse.Status = .ok) throws -> Response {
        Response(
            status: status,
            headers: [.contentType: "application/json"],
            body: .init(byteBuffer: ByteBuffer(bytes: try Registration.json(value)))
        )
    }
}

extension SigilRequestContext {
    /// The client's IP address, for the audit trail.
    var clientAddress: String? { channel?.remoteAddress?.ipAddress }
}
