import HTTPTypes
import NIOCore
import SigilCore
import SigilServer
import Vapor

/// The registration API of a ``RegistrationService`` as a Vapor route collection:
/// `GET /.well-known/sigil`, `POST /v1/devices`, and, behind the ``SigilMiddleware``,
/// `POST /v1/devices/{keyId}/secret`, `POST /v1/keys/rotate`, `DELETE /v1/devices/{keyId}` and
/// `POST /v1/certificates`. Bodies are read up to the service's `bodyLimit` (64 KiB, room for an
/// ML-DSA-87 key), whatever the application's default.
///
/// ```swift
/// let sigil = SigilMiddleware(verifier: verifier, responseSigner: signer)
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
        self.middleware = SigilMiddleware(
            verifier: middleware.verifier,
            responseSigner: middleware.responseSigner,
            includeSignatureBase: middleware.includeSignatureBase,
            readsClientCertificate: middleware.readsClientCertificate,
            bodyLimit: service.configuration.bodyLimit,
            bodyTimeout: middleware.bodyTimeout,
            errorMiddleware: middleware.errorMiddleware
        )
        self.pins = pins
        self.backupPins = backupPins
    }

    public func boot(routes: any RoutesBuilder) throws {
        routes.get(Self.path(Registration.Path.discovery)) { _ in
            try Self.json(
                service.discovery(responseSigner: middleware.responseSigner, pins: pins, backupPins: backupPins))
        }
        routes.on(.POST, Self.path(Registration.Path.devices), body: .stream) { request in try await register(request) }
        routes.post(Self.path(Registration.Path.attestChallenge)) { request in
            do {
                let response = try Self.json(try service.attestationChallenge())
                response.headers.replaceOrAdd(name: .cacheControl, value: "no-store")
                return response
            } catch let error as SigilError {
                let head =
                    (try? SigilMiddleware.head(of: request))
                    ?? HTTPRequest(method: .post, scheme: nil, authority: nil, path: Registration.Path.attestChallenge)
                return middleware.refusal(error, for: head)
            }
        }
        let signed = routes.grouped(middleware)
        signed.on(.POST, "v1", "devices", ":keyId", "secret", body: .stream) { request in
            let response = try Self.json(
                try await service.issueSecret(toDeviceOf: try keyID(request), for: try request.sigil.requireIdentity()),
                status: .created)
            response.headers.replaceOrAdd(name: .cacheControl, value: "no-store")
            return response
        }
        signed.on(.POST, Self.path(Registration.Path.rotate), body: .stream) { request in
            try Self.json(
                try await service.rotate(
                    try body(of: request), for: try request.sigil.requireIdentity(),
                    serverKeyID: middleware.responseSigner?.keyID),
                status: .created)
        }
        signed.on(.DELETE, "v1", "devices", ":keyId", body: .stream) { request in
            try await service.revoke(deviceOf: try keyID(request), for: try request.sigil.requireIdentity())
            return Response(status: .noContent)
        }
        signed.on(.POST, Self.path(Registration.Path.certificates), body: .stream) { request in
            try Self.json(
                try await service.issueCertificate(try body(of: request), for: try request.sigil.requireIdentity()),
                status: .created)
        }
    }

    /// `POST /v1/devices`: not behind the middleware, since the key that signs it is the one it registers.
    func register(_ request: Request) async throws -> Response {
        var head = HTTPRequest(method: .post, scheme: nil, authority: nil, path: Registration.Path.devices)
        do {
            head = try SigilMiddleware.head(of: request)
            let body = try await CollectedBody(
                request: request, limit: service.configuration.bodyLimit, timeout: middleware.bodyTimeout
            )
            .reduce(into: [UInt8]()) { $0 += $1 }
            try BodyReader.check(body.count, limit: service.configuration.bodyLimit)
            let (registered, verified) = try await service.register(head, body: body)
            let response = try Self.json(registered, status: .created)
            guard let signer = middleware.responseSigner else { return response }
            return try await SigilMiddleware.signed(
                response, with: signer, answering: head, verified: verified, on: request)
        } catch let error as SigilError {
            return middleware.refusal(error, for: head)
        }
    }

    /// The body the middleware collected, held to the service's limit.
    func body(of request: Request) throws -> [UInt8] {
        let body = request.body.data.map { Array(buffer: $0) } ?? []
        try BodyReader.check(body.count, limit: service.configuration.bodyLimit)
        return body
    }

    func keyID(_ request: Request) throws -> String {
        guard let keyID = request.parameters.get("keyId") else {
            throw SigilError(.forbidden, "the route names no key")
        }
        return keyID
    }

    static func path(_ path: String) -> [PathComponent] {
        path.split(separator: "/").map { PathComponent(stringLiteral: String($0)) }
    }

    static func json(_ value: some Encodable, status: HTTPResponseStatus = .ok) throws -> Response {
        Response(
            status: status,
            headers: ["Content-Type": "application/json"],
            body: .init(buffer: ByteBuffer(bytes: try Registration.json(value))))
    }
}
