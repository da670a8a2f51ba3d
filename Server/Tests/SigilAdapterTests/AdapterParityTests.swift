import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdAuth
import HummingbirdTesting
import NIOCore
@_spi(Generated) import OpenAPIRuntime
import SigilClient
@_spi(Sigil) import SigilCore
import SigilHummingbird
import SigilJWT
import SigilOpenAPI
import SigilServer
import SigilVapor
import Synchronization
import Testing
import Vapor
import VaporTesting

@testable import SigilTestSupport

/// One server setup every adapter is mounted on: a device key registered, a response key, a sealing
/// key, a body limit of 4 KiB.
struct ParitySetup: Sendable {
    let clock = ManualUnixClock(SystemUnixClock().now())
    let directory: Directory
    let nonces: MemoryNonceStore
    let device: SigningKey
    let deviceKeyID: String
    let responseKey: SigningKey
    let sealing: SealingPrivateKey
    /// DPoP-bound access tokens accepted beside signatures, when a test sets it.
    var dpop: DPoPVerifier?
    /// The public origin requests are checked against, when a test sets it.
    var origin: String?
    /// Monitored path prefixes, when a test sets them.
    var monitor: [String] = []

    static let bodyLimit = 4096

    init() async throws {
        directory = Directory.inMemory(clock: clock)
        nonces = MemoryNonceStore(clock: clock)
        clock.advance(by: 2)  // past the store's start
        device = try SigningKey.generate(.ed25519)
        deviceKeyID = try #require(try device.verificationKey.derivedKeyID)
        try await directory.apply(
            DirectoryChange(added: [
                RegisteredKey(keyID: deviceKeyID, key: try device.verificationKey, deviceID: "dev-parity")
            ]))
        responseKey = try SigningKey.generate(.ecdsaP256SHA256)
        sealing = try SealingPrivateKey.generate()
    }

    var verifier: RequestVerifier {
        var configuration = VerifierConfiguration()
        configuration.bodyLimit = Self.bodyLimit
        return RequestVerifier(keys: directory, nonces: nonces, clock: clock, configuration: configuration)
    }

    var responseSigner: ResponseSigner {
        ResponseSigner(signer: responseKey, keyID: responseKey.derivedKeyID ?? "", clock: clock)
    }

    var sealedBodies: SealedBodies { SealedBodies(keys: [sealing]) }

    /// The one exchange every adapter is built around (each only converts its framework's types).
    var exchange: Exchange {
        Exchange(
            verifier: verifier, responseSigner: responseSigner, sealing: sealedBodies, bodyTimeout: .seconds(10),
            dpop: dpop, origin: origin, monitor: monitor)
    }

    /// A session of the device against `transport`, answers required signed by the response key.
    func session(_ transport: any SigilTransport, profile: SignatureProfile) throws -> SigilSession {
        let clientClock = ServerClock(local: clock)
        var session = SigilSession(
            transport: transport,
            signer: RequestSigner(key: device, keyID: deviceKeyID, profile: profile, clock: clientClock),
            clock: clientClock,
            responses: ResponseVerifier(
                key: try responseKey.verificationKey, keyID: responseKey.derivedKeyID ?? "", clock: clock),
            requireSignedResponses: true)
        session.sealingKey = sealing.publicKey
        return session
    }

    /// What every adapter's `POST /api/echo` answers: who signed, the body and coding the route read.
    static func echo(keyID: String, body: [UInt8], coding: String?) -> [UInt8] {
        let object: [String: Any] = [
            "keyId": keyID, "body": String(decoding: body, as: UTF8.self), "coding": coding ?? "",
        ]
        return Array((try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data())
    }
}

/// The framework adapters, each mounted on the same setup and reached in process.
enum Adapter: String, CaseIterable, CustomStringConvertible, Sendable {
    case hummingbird, vapor, openAPI
    var description: String { rawValue }

    /// Runs `body` with a transport to the adapter's routes: `POST /api/echo`, `GET`/`HEAD /api/hello`
    /// and `POST /api/forbidden` (a route throwing `SigilError(.forbidden)`).
    func withTransport(_ setup: ParitySetup, _ body: @escaping @Sendable (any SigilTransport) async throws -> Void)
        async throws
    {
        switch self {
        case .hummingbird: try await Self.hummingbird(setup, body)
        case .vapor: try await Self.vapor(setup, body)
        case .openAPI: try await Self.openAPI(setup, body)
        }
    }

    /// The identity a route reads through Sigil's accessor, which must be the one the framework's own
    /// authentication (hummingbird-auth's `requireIdentity()`, Vapor's `req.auth`) holds.
    static func same(_ sigil: SigilIdentity, _ framework: SigilIdentity) throws -> SigilIdentity {
        guard sigil.keyID == framework.keyID, sigil.deviceID == framework.deviceID else { throw ParityFailure() }
        return sigil
    }

    static func hummingbird(_ setup: ParitySetup, _ body: @escaping @Sendable (any SigilTransport) async throws -> Void)
        async throws
    {
        let middleware = SigilHummingbird.SigilMiddleware<SigilBasicRequestContext>(exchange: setup.exchange)
        let router = Router(context: SigilBasicRequestContext.self)
        let api = router.group("api").add(middleware: middleware)
        api.post("echo") { request, context in
            let bytes = try await request.body.collect(upTo: 1 << 20)
            return Response(
                status: .ok, headers: [.contentType: "application/json"],
                body: .init(
                    byteBuffer: ByteBuffer(
                        bytes: ParitySetup.echo(
                            keyID: try context.sigilOutcome.map { "unverified:\($0.rawValue)" }
                                ?? Self.same(context.requireSigilIdentity(), context.requireIdentity()).keyID
                                ?? "none",
                            body: Array(buffer: bytes),
                            coding: request.headers[.contentEncoding]))))
        }
        for method in [HTTPRequest.Method.get, .head] {
            api.on("hello", method: method) { _, _ in "hello" }
        }
        api.post("forbidden") { _, _ -> String in throw SigilError(.forbidden, "not for this key") }
        api.post("boom") { _, _ -> String in throw ParityFailure() }
        let app = Hummingbird.Application(router: router)
        try await app.test(.router) { client in
            try await body(
                ClosureTransport { request, bytes in
                    let response = try await client.execute(
                        uri: request.path ?? "/", method: request.method, headers: request.headerFields,
                        body: ByteBuffer(bytes: bytes))
                    return (response.head, Array(buffer: response.body))
                })
        }
    }

    static func vapor(_ setup: ParitySetup, _ body: @escaping @Sendable (any SigilTransport) async throws -> Void)
        async throws
    {
        let app = try await Vapor.Application.make(.testing)
        do {
            let sigil = SigilVapor.SigilMiddleware(exchange: setup.exchange, bodyLimit: ParitySetup.bodyLimit)
            let api = app.grouped("api").grouped(sigil)
            api.on(.POST, "echo", body: .collect(maxSize: "1mb")) { request in
                Vapor.Response(
                    status: .ok, headers: ["Content-Type": "application/json"],
                    body: .init(
                        buffer: ByteBuffer(
                            bytes: ParitySetup.echo(
                                keyID: try request.sigil.outcome.map { "unverified:\($0.rawValue)" }
                                    ?? Self.same(
                                        request.sigil.requireIdentity(), request.auth.require(SigilIdentity.self)
                                    ).keyID ?? "none",
                                body: request.body.data.map { Array(buffer: $0) } ?? [],
                                coding: request.headers.first(name: .contentEncoding)))))
            }
            api.on(.GET, "hello") { _ in "hello" }
            api.on(.HEAD, "hello") { _ in "hello" }
            api.on(.POST, "forbidden") { _ -> String in throw SigilError(.forbidden, "not for this key") }
            api.on(.POST, "boom") { _ -> String in throw ParityFailure() }
            let tester = try app.testing()
            try await body(
                ClosureTransport { request, bytes in
                    var headers = HTTPHeaders()
                    for field in request.headerFields { headers.add(name: field.name.rawName, value: field.value) }
                    headers.replaceOrAdd(name: .host, value: request.authority ?? "localhost")
                    let response = try await tester.sendRequest(
                        HTTPMethod(rawValue: request.method.rawValue), request.path ?? "/", headers: headers,
                        body: ByteBuffer(bytes: bytes))
                    var head = HTTPResponse(status: .init(code: Int(response.status.code)))
                    for (name, value) in response.headers {
                        if let name = HTTPField.Name(name) {
                            head.headerFields.append(HTTPField(name: name, value: value))
                        }
                    }
                    return (head, Array(buffer: response.body))
                })
            try await app.asyncShutdown()
        } catch {
            try? await app.asyncShutdown()
            throw error
        }
    }

    static func openAPI(_ setup: ParitySetup, _ body: @escaping @Sendable (any SigilTransport) async throws -> Void)
        async throws
    {
        let middleware = SigilServerMiddleware(exchange: setup.exchange)
        // The generated server's handlers, called through the middleware as swift-openapi-runtime does.
        let handlers: [String: @Sendable (HTTPRequest, HTTPBody?) async throws -> (HTTPResponse, HTTPBody?)] = [
            "POST /api/echo": { request, body in
                let bytes = try await [UInt8](collecting: body ?? HTTPBody(), upTo: 1 << 20)
                var response = HTTPResponse(status: .ok)
                response.headerFields[.contentType] = "application/json"
                return (
                    response,
                    HTTPBody(
                        ParitySetup.echo(
                            keyID: try SigilServerMiddleware.outcome.map { "unverified:\($0.rawValue)" }
                                ?? SigilServerMiddleware.requireIdentity().keyID ?? "none", body: bytes,
                            coding: request.headerFields[.contentEncoding]))
                )
            },
            "GET /api/hello": { _, _ in (HTTPResponse(status: .ok), HTTPBody("hello")) },
            "HEAD /api/hello": { _, _ in (HTTPResponse(status: .ok), HTTPBody("hello")) },
            "POST /api/forbidden": { _, _ in throw SigilError(.forbidden, "not for this key") },
            "POST /api/boom": { _, _ in throw ParityFailure() },
        ]
        try await body(
            ClosureTransport { request, bytes in
                guard let handler = handlers["\(request.method.rawValue) \(request.path ?? "/")"] else {
                    return (HTTPResponse(status: .notFound), [])
                }
                let (head, answer) = try await middleware.intercept(
                    request, body: HTTPBody(bytes), metadata: ServerRequestMetadata(), operationID: "op",
                    next: { request, body, _ in try await handler(request, body) })
                return (head, try await [UInt8](collecting: answer ?? HTTPBody(), upTo: 1 << 20))
            })
    }
}

/// What a route throws that is no SigilError.
struct ParityFailure: Error {}

/// The same behaviour from every adapter, since each is only a conversion over the one `Exchange`:
/// identity, sealed request and answer, route errors signed, HEAD, the body limit, refusals signed
/// exactly when the request's own signature verified, DPoP and its challenges.
@Suite("Adapter parity")
struct AdapterParityTests {
    static func echo(_ path: String = "/api/echo") -> HTTPRequest {
        var request = HTTPRequest(method: .post, scheme: "http", authority: "localhost", path: path)
        request.headerFields[.contentType] = "application/json"
        return request
    }

    static func json(_ body: [UInt8]) -> [String: String] {
        (try? JSONSerialization.jsonObject(with: Data(body)) as? [String: String]) ?? [:]
    }

    @Test(
        "signed in either profile: the route sees the identity, the answer is signed for the request",
        arguments: Adapter.allCases, [SignatureProfile.sigilV1, .rfc9421])
    func identity(_ adapter: Adapter, _ profile: SignatureProfile) async throws {
        let setup = try await ParitySetup()
        try await adapter.withTransport(setup) { transport in
            let session = try setup.session(transport, profile: profile)
            let answer = try await session.send(Self.echo(), body: Array(#"{"a":1}"#.utf8))
            #expect(answer.head.status == .ok, "\(adapter)")
            #expect(answer.signatureVerified, "\(adapter)")
            #expect(Self.json(answer.body)["keyId"] == setup.deviceKeyID, "\(adapter)")
        }
    }

    @Test(
        "a sealed body: the route reads the plaintext without the coding; the answer comes back sealed and signed",
        arguments: Adapter.allCases, [SignatureProfile.sigilV1, .rfc9421])
    func sealed(_ adapter: Adapter, _ profile: SignatureProfile) async throws {
        let setup = try await ParitySetup()
        try await adapter.withTransport(setup) { transport in
            let session = try setup.session(transport, profile: profile)
            let secret = #"{"card":"4111 1111 1111 1111"}"#
            let answer = try await session.send(Self.echo(), body: Array(secret.utf8), sealed: true)
            #expect(answer.head.status == .ok, "\(adapter): \(String(decoding: answer.body, as: UTF8.self))")
            #expect(answer.answerSealed, "\(adapter)")
            #expect(answer.sealedTo == setup.sealing.keyID, "\(adapter)")
            let echoed = Self.json(answer.body)
            #expect(echoed["body"] == secret, "\(adapter)")
            #expect(echoed["coding"] == "", "\(adapter)")
        }
    }

    @Test("a SigilError a route throws is a refusal signed for the request", arguments: Adapter.allCases)
    func routeErrors(_ adapter: Adapter) async throws {
        let setup = try await ParitySetup()
        try await adapter.withTransport(setup) { transport in
            let session = try setup.session(transport, profile: .sigilV1)
            let refused = try await session.send(Self.echo("/api/forbidden"), body: Array("{}".utf8))
            #expect(refused.head.status.code == 403, "\(adapter)")
            #expect(refused.problemCode == .forbidden, "\(adapter)")
            #expect(refused.signatureVerified, "\(adapter)")
        }
    }

    @Test("a route's refusal of a sealed request comes back sealed and signed", arguments: Adapter.allCases)
    func sealedRefusal(_ adapter: Adapter) async throws {
        let setup = try await ParitySetup()
        try await adapter.withTransport(setup) { transport in
            let session = try setup.session(transport, profile: .sigilV1)
            let refused = try await session.send(Self.echo("/api/forbidden"), body: Array("{}".utf8), sealed: true)
            #expect(refused.head.status.code == 403, "\(adapter)")
            #expect(refused.answerSealed, "\(adapter)")
            #expect(refused.problemCode == .forbidden, "\(adapter)")
            #expect(refused.signatureVerified, "\(adapter)")
        }
    }

    @Test("any other error a route throws is a 500 signed for the request", arguments: Adapter.allCases)
    func otherRouteErrors(_ adapter: Adapter) async throws {
        let setup = try await ParitySetup()
        try await adapter.withTransport(setup) { transport in
            let session = try setup.session(transport, profile: .sigilV1)
            let failed = try await session.send(Self.echo("/api/boom"), body: Array("{}".utf8))
            #expect(failed.head.status.code == 500, "\(adapter)")
            #expect(failed.signatureVerified, "\(adapter)")
        }
    }

    @Test("HEAD is answered with no body, signed over none", arguments: Adapter.allCases)
    func head(_ adapter: Adapter) async throws {
        let setup = try await ParitySetup()
        try await adapter.withTransport(setup) { transport in
            let session = try setup.session(transport, profile: .sigilV1)
            let request = HTTPRequest(method: .head, scheme: "http", authority: "localhost", path: "/api/hello")
            let answer = try await session.send(request)
            #expect(answer.head.status == .ok, "\(adapter)")
            #expect(answer.body.isEmpty, "\(adapter)")
            #expect(answer.signatureVerified, "\(adapter)")
        }
    }

    @Test(
        "over the body limit: body-too-large; a tampered body: invalid-signature, unsigned; a replay: signed",
        arguments: Adapter.allCases)
    func refusals(_ adapter: Adapter) async throws {
        let setup = try await ParitySetup()
        try await adapter.withTransport(setup) { transport in
            var lenient = try setup.session(transport, profile: .sigilV1)
            lenient.requireSignedResponses = false
            let large = try await lenient.send(
                Self.echo(), body: Array(repeating: UInt8(ascii: "a"), count: ParitySetup.bodyLimit + 1))
            #expect(large.head.status.code == 413, "\(adapter)")
            #expect(large.problemCode == .bodyTooLarge, "\(adapter)")

            // Signed for one body, sent with another: unsigned (a signed refusal would be a forgery's).
            let signer = lenient.signer
            var tampered = Self.echo()
            try signer.sign(&tampered, body: Array(#"{"amount":1}"#.utf8))
            let (forgedHead, _) = try await transport.send(tampered, body: Array(#"{"amount":9}"#.utf8))
            #expect(forgedHead.status.code == 401, "\(adapter)")
            #expect(forgedHead.headerFields[SigilV1.signatureField] == nil, "\(adapter)")

            // The same request twice: the second is refused, signed for that very request.
            var once = Self.echo()
            try signer.sign(&once, body: Array("{}".utf8))
            let (first, _) = try await transport.send(once, body: Array("{}".utf8))
            #expect(first.status == .ok, "\(adapter)")
            let (replayHead, replayBody) = try await transport.send(once, body: Array("{}".utf8))
            #expect(replayHead.status.code == 401, "\(adapter)")
            let answered = try #require(SigilV1.AnsweredRequest(once.headerFields))
            let verifier = ResponseVerifier(
                key: try setup.responseKey.verificationKey, keyID: setup.responseKey.derivedKeyID ?? "",
                clock: setup.clock)
            try verifier.verifySigilV1(replayHead, body: replayBody, answering: answered)
            #expect(String(decoding: replayBody, as: UTF8.self).contains("replayed-nonce"), "\(adapter)")
        }
    }

    @Test(
        "monitor mode: an unsigned or forged request reaches the route unverified with its code through every adapter, a verified one with its identity, an unmonitored one is refused",
        arguments: Adapter.allCases)
    func monitorMode(_ adapter: Adapter) async throws {
        var configured = try await ParitySetup()
        configured.monitor = ["/api/echo"]
        let setup = configured
        try await adapter.withTransport(setup) { transport in
            let body = Array(#"{"n":1}"#.utf8)
            func keyID(of answer: [UInt8]) -> String? {
                ((try? JSONSerialization.jsonObject(with: Data(answer))) as? [String: Any])?["keyId"] as? String
            }
            let (unsigned, unsignedBody) = try await transport.send(Self.echo(), body: body)
            #expect(unsigned.status == .ok && keyID(of: unsignedBody) == "unverified:missing-signature", "\(adapter)")

            for profile in SignatureProfile.allCases {
                var forged = Self.echo()
                try RequestSigner(key: setup.device, keyID: setup.deviceKeyID, profile: profile, clock: setup.clock)
                    .sign(&forged, body: body)
                let (tampered, tamperedBody) = try await transport.send(forged, body: Array(#"{"n":2}"#.utf8))
                #expect(tampered.status == .ok, "\(adapter) \(profile)")
                #expect(
                    keyID(of: tamperedBody) == "unverified:digest-mismatch"
                        || keyID(of: tamperedBody) == "unverified:invalid-signature", "\(adapter) \(profile)")
                let (verified, verifiedBody) = try await transport.send(forged, body: body)
                #expect(verified.status == .ok && keyID(of: verifiedBody) == setup.deviceKeyID, "\(adapter) \(profile)")
            }
            let (refused, _) = try await transport.send(Self.echo("/api/forbidden"), body: body)
            #expect(refused.status.code == 401, "\(adapter): /api/forbidden is not monitored")
        }
    }

    @Test(
        "with a public origin, an rfc9421 signature covering the origin's @scheme and @authority is admitted; one made for the Host the client sent, or for http, is refused",
        arguments: Adapter.allCases)
    func publicOrigin(_ adapter: Adapter) async throws {
        var configured = try await ParitySetup()
        configured.origin = "https://api.example"
        let setup = configured
        try await adapter.withTransport(setup) { transport in
            let body = Array("{}".utf8)
            func signed(scheme: String, authority: String) throws -> HTTPRequest {
                var named = Self.echo()
                named.scheme = scheme
                named.authority = authority
                var signer = RequestSigner(
                    key: setup.device, keyID: setup.deviceKeyID, profile: .rfc9421, clock: setup.clock)
                signer.components = [.method, .scheme, .authority, .path, .query]
                try signer.sign(&named, body: body)
                var request = Self.echo()
                request.headerFields = named.headerFields
                return request
            }
            let (admitted, _) = try await transport.send(
                try signed(scheme: "https", authority: "api.example"), body: body)
            #expect(admitted.status == .ok, "\(adapter)")
            for (scheme, authority) in [("https", "localhost"), ("http", "api.example")] {
                let (refused, answer) = try await transport.send(
                    try signed(scheme: scheme, authority: authority), body: body)
                #expect(refused.status.code == 401, "\(adapter) \(scheme)://\(authority)")
                #expect(String(decoding: answer, as: UTF8.self).contains("invalid-signature"), "\(adapter)")
            }
        }
    }

    @Test(
        "DPoP alone: admitted as dpop, answered unsigned with the next nonce; no nonce, a replayed proof, no proof and a sealed body refused with RFC 9449's challenge",
        arguments: Adapter.allCases)
    func dpop(_ adapter: Adapter) async throws {
        var configured = try await ParitySetup()
        let issuer = try await TestTokenIssuer.make()
        var verifier = DPoPVerifier(
            tokens: JWTAccessTokens(
                keys: issuer.keys, audience: TestTokenIssuer.audience, issuer: TestTokenIssuer.issuer,
                clock: configured.clock),
            nonces: configured.nonces, clock: configured.clock)
        verifier.origin = "https://api.example"
        let nonces = DPoPNonces(key: SymmetricKey(size: .bits256))
        verifier.serverNonces = nonces
        configured.dpop = verifier
        let setup = configured
        let prover = try DPoPProver(signer: try SigningKey.generate(.ecdsaP256SHA256), clock: setup.clock)
        let token = try await issuer.token(boundTo: prover.thumbprint, expiresAt: setup.clock.now() + 600)
        try await adapter.withTransport(setup) { transport in
            // Proved for the URI the server is configured to be reached at.
            func proved(nonce: String?) throws -> HTTPRequest {
                var request = Self.echo()
                request.headerFields[.authorization] = "DPoP " + token
                let named = HTTPRequest(method: .post, scheme: "https", authority: "api.example", path: "/api/echo")
                request.headerFields[DPoPProver.field] = try prover.proof(for: named, accessToken: token, nonce: nonce)
                return request
            }
            let body = Array("{}".utf8)
            let (first, _) = try await transport.send(try proved(nonce: nil), body: body)
            #expect(first.status.code == 401, "\(adapter)")
            #expect(first.headerFields[.wwwAuthenticate]?.contains(#"error="use_dpop_nonce""#) == true, "\(adapter)")
            let nonce = try #require(first.headerFields[DPoPNonces.field], "\(adapter)")
            #expect(nonce == nonces.current(at: setup.clock.now()), "\(adapter)")

            let request = try proved(nonce: nonce)
            let (answer, echoed) = try await transport.send(request, body: body)
            #expect(answer.status == .ok, "\(adapter): \(String(decoding: echoed, as: UTF8.self))")
            #expect(Self.json(echoed)["keyId"] == "none", "\(adapter): an OAuth client's key names no registered key")
            // No Sigil signature to bind an answer to: it goes unsigned, with the next nonce.
            #expect(answer.headerFields[SigilV1.signatureField] == nil, "\(adapter)")
            #expect(answer.headerFields[MessageSignatures.signatureField] == nil, "\(adapter)")
            #expect(answer.headerFields[DPoPNonces.field] == nonce, "\(adapter)")

            let (replay, replayBody) = try await transport.send(request, body: body)
            #expect(replay.status.code == 401, "\(adapter)")
            #expect(
                replay.headerFields[.wwwAuthenticate]?.contains(#"error="invalid_dpop_proof""#) == true, "\(adapter)")
            #expect(String(decoding: replayBody, as: UTF8.self).contains("replayed-nonce"), "\(adapter)")

            let (bare, _) = try await transport.send(Self.echo(), body: body)
            #expect(bare.status.code == 401, "\(adapter)")
            #expect(bare.headerFields[.wwwAuthenticate]?.hasPrefix("DPoP algs=") == true, "\(adapter)")

            var sealed = try proved(nonce: nonce)
            sealed.headerFields[.contentEncoding] = Sealing.contentEncoding
            let (refused, refusedBody) = try await transport.send(sealed, body: body)
            #expect(refused.status.code == 400, "\(adapter)")
            #expect(String(decoding: refusedBody, as: UTF8.self).contains("sealed-body-invalid"), "\(adapter)")

            // Signatures still admit as before, beside DPoP.
            let session = try setup.session(transport, profile: .rfc9421)
            let signed = try await session.send(Self.echo(), body: body)
            #expect(signed.head.status == .ok && signed.signatureVerified, "\(adapter)")
        }
    }
}

/// What the exchange decides that no adapter can see from outside: the body deadline and the
/// client certificate's binding to the signer's device.
@Suite("Exchange")
struct ExchangeTests {
    typealias StalledBody = ExchangeScaffold.StalledBody

    static func signed(_ setup: ParitySetup, body: [UInt8]) throws -> HTTPRequest {
        var request = AdapterParityTests.echo()
        try RequestSigner(key: setup.device, keyID: setup.deviceKeyID, clock: setup.clock).sign(&request, body: body)
        return request
    }

    @Test("a coding respelled within what the signature covers (case, spaces) still reads as sealed")
    func respelledCoding() async throws {
        let setup = try await ParitySetup()
        let exchange = Exchange(verifier: setup.verifier, sealing: setup.sealedBodies)
        let plaintext = Array(#"{"secret":1}"#.utf8)
        let signer = RequestSigner(key: setup.device, keyID: setup.deviceKeyID, clock: setup.clock)
        let nonce = signer.nonces.next()
        let sealed = try Sealing.sealRequest(
            plaintext, to: setup.sealing.publicKey, keyID: setup.deviceKeyID, nonce: nonce
        ).body
        var request = AdapterParityTests.echo()
        request.headerFields[.contentEncoding] = Sealing.contentEncoding
        try signer.sign(&request, body: sealed, nonce: nonce)
        request.headerFields[.contentEncoding] = "Sigil-H PKE"  // the same coding to the signature
        let admission = try await exchange.admit(request, body: sealed)
        #expect(admission.body == plaintext)
        #expect(admission.identity?.sealedTo == setup.sealing.keyID)
        #expect(admission.request.headerFields[.contentEncoding] == nil)
    }

    @Test("an origin that is no http(s)://host[:port] refuses every request, saying why, and does not crash")
    func badOrigin() async throws {
        let setup = try await ParitySetup()
        for origin in ["api.example", "https://api.example/path", "https://user@api.example", "ftp://api.example"] {
            let exchange = Exchange(verifier: setup.verifier, origin: origin)
            let body = Array("{}".utf8)
            await #expect(throws: SigilError(.forbidden, ""), "\(origin)") {
                _ = try await exchange.admit(try Self.signed(setup, body: body), body: body)
            }
        }
    }

    @Test("a request naming two hosts, or a Host field other than its authority, is refused")
    func hosts() async throws {
        let setup = try await ParitySetup()
        let exchange = Exchange(verifier: setup.verifier)
        let body = Array("{}".utf8)
        var two = try Self.signed(setup, body: body)
        two.headerFields.append(HTTPField(name: GatewayScaffold.host, value: "localhost"))
        two.headerFields.append(HTTPField(name: GatewayScaffold.host, value: "evil.example"))
        await #expect(throws: SigilError(.forbidden, "")) { _ = try await exchange.admit(two, body: body) }
        var other = try Self.signed(setup, body: body)
        other.headerFields.append(HTTPField(name: GatewayScaffold.host, value: "evil.example"))
        await #expect(throws: SigilError(.forbidden, "")) { _ = try await exchange.admit(other, body: body) }
        var same = try Self.signed(setup, body: body)
        same.headerFields.append(HTTPField(name: GatewayScaffold.host, value: "localhost"))
        _ = try await exchange.admit(same, body: body)
    }

    @Test("a body that stalls is request-timeout once the deadline passes")
    func bodyDeadline() async throws {
        let setup = try await ParitySetup()
        let exchange = Exchange(verifier: setup.verifier, bodyTimeout: .milliseconds(200))
        let request = try Self.signed(setup, body: Array("{}".utf8))
        await #expect(throws: SigilError(.requestTimeout, "")) {
            _ = try await exchange.admit(request, bodyChunks: StalledBody())
        }
    }

    @Test("a client certificate naming another device's key is certificate-mismatch, signed; the signer's own passes")
    func clientCertificate() async throws {
        let setup = try await ParitySetup()
        let other = try SigningKey.generate(.ed25519)
        let otherKeyID = try #require(try other.verificationKey.derivedKeyID)
        try await setup.directory.apply(
            DirectoryChange(added: [RegisteredKey(keyID: otherKeyID, key: try other.verificationKey, deviceID: "dev-b")]
            ))
        let exchange = Exchange(verifier: setup.verifier, responseSigner: setup.responseSigner)
        @Sendable func certificate(naming keyID: String?) -> ClientCertificateIdentity {
            ClientCertificateIdentity(
                commonName: keyID, subject: "CN=\(keyID ?? "x")", sigilKeyID: keyID, pin: "sha256/x")
        }
        let body = Array("{}".utf8)
        let mine = try await exchange.admit(
            try Self.signed(setup, body: body), body: body,
            clientCertificate: { certificate(naming: setup.deviceKeyID) })
        #expect(mine.identity?.clientCertificate?.sigilKeyID == setup.deviceKeyID)
        let request = try Self.signed(setup, body: body)
        do {
            _ = try await exchange.admit(request, body: body, clientCertificate: { certificate(naming: otherKeyID) })
            Issue.record("a certificate of another device was accepted")
        } catch let error as SigilError {
            #expect(error.code == .certificateMismatch)
            let (head, _) = exchange.refuse(error, for: request)
            #expect(head.headerFields[SigilV1.signatureField] != nil)  // the request's own signature verified
        }
        let unreadable = try Self.signed(setup, body: body)
        await #expect(throws: SigilError(.certificateMismatch, "")) {
            _ = try await exchange.admit(
                unreadable, body: body,
                clientCertificate: { throw SigilError(.certificateMismatch, "the client certificate cannot be read") })
        }
    }
}
