import HTTPTypes
@_spi(Sigil) import SigilCore

/// One route of the registration API, declared once from ``Registration/Path`` for every adapter to
/// mount: Hummingbird's and Vapor's route collections only turn ``components`` into their own path
/// type and their request into a ``RegistrationCall``.
public struct RegistrationRoute: Sendable {
    /// Who may call a route.
    public enum Access: Sendable, Hashable {
        /// Anyone: discovery, App Attest challenges.
        case open
        /// A request the route verifies itself: a registration, signed by the key it registers (not
        /// behind the exchange's admission, whose directory does not know that key yet).
        case selfSigned
        /// A request the exchange admitted first: the adapter mounts it behind its middleware and
        /// passes the admission's identity.
        case admitted
    }

    /// A piece of a route's path.
    public enum Component: Sendable, Hashable {
        /// A fixed segment.
        case literal(String)
        /// The `{keyId}` parameter.
        case keyID
    }

    /// The method.
    public let method: HTTPRequest.Method
    /// The path, segment by segment.
    public let components: [Component]
    /// Who may call it.
    public let access: Access
    /// Answers a call.
    public let handle: @Sendable (RegistrationCall) async throws -> RegistrationAnswer

    /// The path with `:keyId` for the parameter, as Hummingbird and Vapor write route parameters.
    public var colonPath: String {
        "/"
            + components.map { component in
                switch component {
                case .literal(let segment): return segment
                case .keyID: return ":keyId"
                }
            }.joined(separator: "/")
    }
}

/// What a registration route is given.
public struct RegistrationCall: Sendable {
    /// The request as signed.
    public let request: HTTPRequest
    /// Its body (the plaintext, for an admitted request whose body was sealed).
    public let body: [UInt8]
    /// The `{keyId}` path parameter, where the route has one.
    public let keyID: String?
    /// The admitted request's identity, for ``RegistrationRoute/Access/admitted`` routes.
    public let identity: SigilIdentity?
    /// The client's address, for the audit trail.
    public let clientAddress: String?

    /// Creates a call.
    public init(
        request: HTTPRequest, body: [UInt8], keyID: String?, identity: SigilIdentity?, clientAddress: String? = nil
    ) {
        self.request = request
        self.body = body
        self.keyID = keyID
        self.identity = identity
        self.clientAddress = clientAddress
    }

    func requireIdentity() throws -> VerifiedRequest {
        guard let request = identity?.request else {
            throw SigilError(.missingSignature, "the route requires a request signed with a Sigil key")
        }
        return request
    }

    func requireKeyID() throws -> String {
        guard let keyID else { throw SigilError(.forbidden, "the route names no key") }
        return keyID
    }
}

/// What a registration route answers.
public struct RegistrationAnswer: Sendable {
    /// The response head.
    public var head: HTTPResponse
    /// The response body.
    public var body: [UInt8]
    /// A ``RegistrationRoute/Access/selfSigned`` route's request as it verified it, to bind the
    /// answer to (``Exchange/admission(of:body:verified:)``).
    public var verified: VerifiedRequest?

    /// A JSON answer.
    static func json(_ value: some Encodable, status: HTTPResponse.Status = .ok, noStore: Bool = false) throws
        -> RegistrationAnswer
    {
        var head = HTTPResponse(status: status)
        head.headerFields[.contentType] = "application/json"
        if noStore { head.headerFields[.cacheControl] = "no-store" }
        return RegistrationAnswer(head: head, body: try Registration.json(value))
    }
}

extension RegistrationService {
    /// The registration API as a table: `GET /.well-known/sigil`, `POST /v1/attest/challenge`,
    /// `POST /v1/devices`, and, admitted first, `POST /v1/devices/{keyId}/secret`,
    /// `POST /v1/keys/rotate`, `DELETE /v1/devices/{keyId}` and `POST /v1/certificates`.
    ///
    /// - Parameters:
    ///   - exchange: the exchange the admitted routes are behind; its response key is published in
    ///     discovery and named by rotations, its sealing keys published.
    ///   - pins: the SPKI pins of the server's TLS chain, published in discovery.
    ///   - backupPins: pins of keys the server may move to.
    public func routes(exchange: Exchange, pins: [String] = [], backupPins: [String] = []) -> [RegistrationRoute] {
        let service = self
        func route(
            _ method: HTTPRequest.Method, _ path: String, _ access: RegistrationRoute.Access,
            _ handle: @escaping @Sendable (RegistrationCall) async throws -> RegistrationAnswer
        ) -> RegistrationRoute {
            let components = path.split(separator: "/").map { segment -> RegistrationRoute.Component in
                segment == "{keyId}" ? .keyID : .literal(String(segment))
            }
            return RegistrationRoute(method: method, components: components, access: access) { call in
                // The changes a route makes are audited with the client's address.
                try await AuditContext.$clientAddress.withValue(call.clientAddress) { try await handle(call) }
            }
        }
        return [
            route(.get, Registration.Path.discovery, .open) { _ in
                let published = service.configuration.publishedPins?() ?? (pins: pins, backupPins: backupPins)
                var answer = try RegistrationAnswer.json(
                    service.discovery(
                        responseSigner: exchange.responseSigner, pins: published.pins,
                        backupPins: published.backupPins, sealing: exchange.sealing))
                if let signer = exchange.responseSigner,
                    let field = HTTPField.Name(Registration.DiscoverySignature.field)
                {
                    answer.head.headerFields[field] = try Registration.DiscoverySignature.value(
                        body: answer.body, signers: signer.discoverySigners)
                }
                return answer
            },
            route(.get, Registration.Path.keyDirectory, .open) { call in
                guard let signer = exchange.responseSigner else {
                    throw SigilError(.forbidden, "this server signs no answers, so it lists no keys")
                }
                let (head, body) = try KeyDirectoryDocument.answer(
                    to: call.request, signer: signer, now: service.clock.now())
                return RegistrationAnswer(head: head, body: body)
            },
            route(.post, Registration.Path.attestChallenge, .open) { _ in
                try .json(try service.attestationChallenge(), noStore: true)
            },
            route(.post, Registration.Path.devices, .selfSigned) { call in
                let (registered, verified) = try await service.register(call.request, body: call.body)
                var answer = try RegistrationAnswer.json(registered, status: .created)
                answer.verified = verified
                return answer
            },
            route(.post, Registration.Path.secret(keyID: "{keyId}"), .admitted) { call in
                try .json(
                    try await service.issueSecret(toDeviceOf: try call.requireKeyID(), for: try call.requireIdentity()),
                    status: .created, noStore: true)
            },
            route(.post, Registration.Path.rotate, .admitted) { call in
                try BodyReader.check(call.body.count, limit: service.configuration.bodyLimit)
                return try .json(
                    try await service.rotate(
                        call.body, for: try call.requireIdentity(),
                        serverKeyIDs: exchange.responseSigner?.acceptedKeyIDs ?? []),
                    status: .created)
            },
            route(.delete, Registration.Path.device(keyID: "{keyId}"), .admitted) { call in
                try await service.revoke(deviceOf: try call.requireKeyID(), for: try call.requireIdentity())
                return RegistrationAnswer(head: HTTPResponse(status: .noContent), body: [])
            },
            route(.post, Registration.Path.certificates, .admitted) { call in
                try BodyReader.check(call.body.count, limit: service.configuration.bodyLimit)
                return try .json(
                    try await service.issueCertificate(call.body, for: try call.requireIdentity()), status: .created)
            },
        ]
    }
}

extension Exchange {
    /// Runs a registration route that is not admitted by the exchange (``RegistrationRoute/Access/open``
    /// or ``RegistrationRoute/Access/selfSigned``) on a request whose body was read: a self-signed
    /// route's answer is bound to the request it verified, and a refusal is signed exactly when that
    /// request's signature verified.
    public func run(_ route: RegistrationRoute, _ call: RegistrationCall) async -> (head: HTTPResponse, body: [UInt8]) {
        do {
            // Addressed like every admitted request: the Host checked, the public origin applied.
            let call = RegistrationCall(
                request: try addressed(call.request), body: call.body, keyID: call.keyID, identity: call.identity,
                clientAddress: call.clientAddress)
            let answer = try await route.handle(call)
            guard let verified = answer.verified else { return (answer.head, answer.body) }
            return try self.answer(
                answer.head, body: answer.body, for: admission(of: call.request, body: call.body, verified: verified))
        } catch let error as SigilError {
            return refuse(error, for: call.request)
        } catch {
            return refuse(SigilError(.invalidRegistration, "the request could not be answered"), for: call.request)
        }
    }

    /// A body read up to `limit` within ``bodyTimeout``, for a route the exchange does not admit.
    ///
    /// - Throws: `body-too-large`, `request-timeout`.
    public func readBody<Chunks: AsyncSequence & Sendable>(_ chunks: Chunks, declaredLength: Int?, limit: Int)
        async throws -> [UInt8] where Chunks.Element: Collection<UInt8>
    {
        guard let bodyTimeout else {
            return try await BodyReader.collect(chunks, declaredLength: declaredLength, limit: limit)
        }
        return try await withDeadline(bodyTimeout, SigilError(.requestTimeout, "the body did not arrive in time")) {
            try await BodyReader.collect(chunks, declaredLength: declaredLength, limit: limit)
        }
    }
}
