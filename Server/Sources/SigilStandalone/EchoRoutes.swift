import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
@_spi(Sigil) import SigilCore
import SigilHummingbird
import SigilServer

/// The routes of `sigil serve` beyond the registration API: `POST /v1/echo`, which answers with the
/// verified identity and the body, and the baseline route of `sigil bench http`.
struct EchoRoutes: Sendable {
    let middleware: SigilMiddleware<SigilBasicRequestContext>
    let bodyLimit: Int

    func add(to router: Router<SigilBasicRequestContext>) {
        router.group().add(middleware: middleware).post("v1/echo") { request, context in
            try await echo(request, context: context)
        }
    }

    // MARK: Echo

    struct Echo: Encodable {
        struct Certificate: Encodable {
            let subject: String
            let keyId: String?
            let pin: String
        }
        let keyId: String?
        let deviceId: String?
        let userId: String?
        let alg: String
        let profile: String
        var dpopThumbprint: String? = nil
        var bodySigned = true
        let clientCertificate: Certificate?
        let body: String?
        let bodyBase64: String?
        var verified = true
        var outcome: String? = nil
        var attestation: String? = nil
    }

    /// `POST /v1/echo`: the verified identity and the body; under a monitored prefix, for a request
    /// let through unverified, `"verified": false` and the code it would have been refused with.
    func echo(_ request: Request, context: SigilBasicRequestContext) async throws -> Response {
        let body = try await body(of: request)
        let text = String(validating: body, as: UTF8.self)
        if let outcome = context.sigilOutcome {
            return try Response.json(
                Echo(
                    keyId: nil, deviceId: nil, userId: nil, alg: "", profile: "", bodySigned: false,
                    clientCertificate: nil, body: text, bodyBase64: text == nil ? Base64.encode(body) : nil,
                    verified: false, outcome: outcome.rawValue))
        }
        let identity = try context.requireSigilIdentity()
        return try Response.json(
            Echo(
                keyId: identity.keyID,
                deviceId: identity.deviceID,
                userId: identity.userID,
                alg: identity.algorithm,
                profile: identity.profile,
                dpopThumbprint: identity.dpop?.thumbprint,
                bodySigned: identity.coversBody,
                clientCertificate: identity.clientCertificate.map {
                    .init(subject: $0.subject, keyId: $0.sigilKeyID, pin: $0.pin)
                },
                body: text,
                bodyBase64: text == nil ? Base64.encode(body) : nil,
                attestation: identity.attestation
            )
        )
    }

    /// `POST /bench/unverified`: what `/v1/echo` does, without verification (the baseline of `sigil bench
    /// http`); `POST /bench/unverified-fields`: the same, its answer carrying the fields a signed answer
    /// adds, of their sizes and as unique to the request as a signature, made without cryptography (what
    /// carrying a signed exchange's fields costs over HTTP/2 and TLS, read against the baseline); and
    /// the floor routes (``FloorRoutes``).
    func addBenchmarkRoute(to router: Router<SigilBasicRequestContext>) throws {
        router.post("bench/unverified") { request, _ in try await unverifiedEcho(request) }
        let signer = middleware.exchange.responseSigner
        router.post("bench/unverified-fields") { request, _ in
            var response = try await unverifiedEcho(request)
            // The request's own 43 characters twice: as long as an Ed25519 signature's 86, and unique
            // (no more than 43 taken, whatever the client sent).
            let signature = String((request.headers[SigilV1.signatureField] ?? "").prefix(43))
            response.headers[SigilV1.timestampField] = request.headers[SigilV1.timestampField]
            response.headers[SigilV1.keyIDField] = signer?.keyID
            response.headers[SigilV1.signatureField] = signature + signature
            response.headers[ResponseSigner.keysField] = signer?.ring?.keysTag
            return response
        }
        try FloorRoutes(signer: signer).add(to: router, echo: self)
    }

    func unverifiedEcho(_ request: Request) async throws -> Response {
        try Response.json(Self.unverifiedEcho(of: try await body(of: request)))
    }

    /// What `/v1/echo` answers for `body`, with no identity: the bench routes' answer.
    static func unverifiedEcho(of body: [UInt8]) -> Echo {
        let text = String(validating: body, as: UTF8.self)
        return Echo(
            keyId: "", deviceId: nil, userId: nil, alg: "", profile: "", clientCertificate: nil, body: text,
            bodyBase64: text == nil ? Base64.encode(body) : nil)
    }

    func body(of request: Request) async throws -> [UInt8] {
        try await BodyReader.collect(
            request.body.map { $0.readableBytesView },
            declaredLength: request.headers[.contentLength].flatMap(Int.init),
            limit: bodyLimit)
    }
}
