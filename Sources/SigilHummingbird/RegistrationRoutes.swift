import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import SigilCore
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

    /// Adds the routes to `router` (or a group of it).
    public func add(to router: some RouterMethods<Context>) {
        router.get(RouterPath(Registration.Path.discovery)) { _, _ in
            try Response.json(
                service.discovery(
                    responseSigner: middleware.responseSigner, pins: pins, backupPins: backupPins,
                    sealing: middleware.exchange.sealing))
        }
        router.post(RouterPath(Registration.Path.devices)) { request, _ in try await register(request) }
        router.post(RouterPath(Registration.Path.attestChallenge)) { request, _ in
            do {
                var response = try Response.json(try service.attestationChallenge())
                response.headers[.cacheControl] = "no-store"
                return response
            } catch let error as SigilError {
                throw middleware.refusal(error, for: request.head)
            }
        }
        let signed = router.group().add(middleware: middleware)
        signed.post("/v1/devices/:keyId/secret") { request, context in
            try await answer(request, context) { identity in
                var response = try Response.json(
                    try await service.issueSecret(toDeviceOf: try keyID(context), for: identity.request),
                    status: .created)
                response.headers[.cacheControl] = "no-store"
                return response
            }
        }
        signed.post(RouterPath(Registration.Path.rotate)) { request, context in
            try await answer(request, context) { identity in
                try Response.json(
                    try await service.rotate(
                        try await body(of: request), for: identity.request, serverKeyID: middleware.responseSigner?.keyID),
                    status: .created)
            }
        }
        signed.delete("/v1/devices/:keyId") { request, context in
            try await answer(request, context) { identity in
                try await service.revoke(deviceOf: try keyID(context), for: identity.request)
                return Response(status: .noContent)
            }
        }
        signed.post(RouterPath(Registration.Path.certificates)) { request, context in
            try await answer(request, context) { identity in
                try Response.json(
                    try await service.issueCertificate(try await body(of: request), for: identity.request),
                    status: .created)
            }
        }
    }

    /// `POST /v1/devices`: not behind the middleware, since the key that signs it is the one it registers.
    func register(_ request: Request) async throws -> Response {
        do {
            let (registered, verified) = try await service.register(request.head, body: try await body(of: request))
            let response = try Response.json(registered, status: .created)
            let admission = middleware.exchange.admission(of: request.head, verified: verified)
            return try await middleware.answer(response, for: admission)
        } catch let error as SigilError {
            throw middleware.refusal(error, for: request.head)
        }
    }

    /// Runs a signed route with its identity (the middleware refuses, signed, what it throws).
    func answer(
        _ request: Request,
        _ context: Context,
        _ route: (SigilIdentity) async throws -> Response
    ) async throws -> Response {
        try await route(try context.requireSigilIdentity())
    }

    func body(of request: Request) async throws -> [UInt8] {
        try await BodyReader.collect(
            request.body.map { $0.readableBytesView },
            declaredLength: request.headers[.contentLength].flatMap(Int.init),
            limit: service.configuration.bodyLimit)
    }

    func keyID(_ context: Context) throws -> String {
        guard let keyID = context.parameters.get("keyId") else {
            throw SigilError(.forbidden, "the route names no key")
        }
        return keyID
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
