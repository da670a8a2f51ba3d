import AsyncHTTPClient
import Foundation
import HTTPTypes
import OpenAPIAsyncHTTPClient
@_spi(Generated) import OpenAPIRuntime
import OpenAPIVapor
import SigilClient
@_spi(Sigil) import SigilCore
import SigilOpenAPI
import SigilOpenAPIClient
import SigilServer
import Testing
import Vapor
import VaporTesting

@testable import SigilTestSupport

/// What swift-openapi-generator makes of one operation, written by hand so no generator plugin is
/// built: `POST /greet` with a JSON body `{"name": …}`, answered by `{"message": …, "keyId": …}`.
enum Greeter {
    struct Input: Codable, Sendable {
        var name: String
    }

    struct Output: Codable, Sendable {
        var message: String
        var keyId: String
    }

    protocol API: Sendable {
        func greet(_ input: Input) async throws -> Output
    }

    /// The generated `registerHandlers(on:serverURL:middlewares:)`.
    static func registerHandlers(
        _ handler: some API, on transport: any ServerTransport, serverURL: URL, middlewares: [any ServerMiddleware]
    ) throws {
        let server = UniversalServer(serverURL: serverURL, handler: handler, middlewares: middlewares)
        try transport.register(
            { request, body, metadata in
                try await server.handle(
                    request: request, requestBody: body, metadata: metadata, forOperation: "greet",
                    using: { handler in handler.greet },
                    deserializer: { _, body, _ in
                        let bytes = try await [UInt8](collecting: body ?? HTTPBody(), upTo: 1 << 20)
                        return try JSONDecoder().decode(Input.self, from: Data(bytes))
                    },
                    serializer: { output, _ in
                        var response = HTTPResponse(status: .ok)
                        response.headerFields[.contentType] = "application/json"
                        return (response, HTTPBody(Array(try JSONEncoder().encode(output))))
                    })
            }, method: .post, path: try server.apiPathComponentsWithServerPrefix("/greet"))
    }

    /// The generated `Client`.
    struct Client {
        let client: UniversalClient

        init(serverURL: URL, transport: any ClientTransport, middlewares: [any ClientMiddleware]) {
            client = UniversalClient(serverURL: serverURL, transport: transport, middlewares: middlewares)
        }

        /// The status, the decoded answer when 200, and the body.
        func greet(_ input: Input) async throws -> (status: Int, output: Output?, body: [UInt8]) {
            try await client.send(
                input: input, forOperation: "greet",
                serializer: { input in
                    var request = HTTPRequest(method: .post, scheme: nil, authority: nil, path: "/greet")
                    request.headerFields[.contentType] = "application/json"
                    return (request, HTTPBody(Array(try JSONEncoder().encode(input))))
                },
                deserializer: { response, body in
                    let bytes = try await [UInt8](collecting: body ?? HTTPBody(), upTo: 1 << 20)
                    let output = response.status == .ok ? try JSONDecoder().decode(Output.self, from: Data(bytes)) : nil
                    return (response.status.code, output, bytes)
                })
        }
    }
}

/// The handler: the identity comes from the middleware.
struct GreeterHandler: Greeter.API {
    func greet(_ input: Greeter.Input) async throws -> Greeter.Output {
        let identity = try SigilServerMiddleware.requireIdentity()
        if input.name == "nobody" { throw SigilError(.forbidden, "no greeting for nobody") }
        return Greeter.Output(message: "hello \(input.name)", keyId: identity.keyID ?? "none")
    }
}

/// Sends the signed request twice and answers with the second response: a replay.
struct Replaying: ClientMiddleware {
    func intercept(
        _ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String,
        next: @Sendable (HTTPRequest, HTTPBody?, URL) async throws -> (HTTPResponse, HTTPBody?)
    ) async throws -> (HTTPResponse, HTTPBody?) {
        let bytes = try await [UInt8](collecting: body ?? HTTPBody(), upTo: 1 << 20)
        _ = try await next(request, HTTPBody(bytes), baseURL)
        return try await next(request, HTTPBody(bytes), baseURL)
    }
}

@Suite("OpenAPI adapter")
struct OpenAPIAdapterTests {
    @Test(
        "a generated client signs with the server's clock and checks answers; the server verifies, the handler sees the identity"
    )
    func operation() async throws {
        let serverClock = ManualUnixClock(SystemUnixClock().now())
        let directory = MemoryKeyDirectory()
        let nonces = MemoryNonceStore(clock: serverClock)
        serverClock.advance(by: 2)
        let responseKey = try SigningKey.generate(.ecdsaP256SHA256)
        let responseKeyID = try #require(responseKey.derivedKeyID)
        let key = try SigningKey.generate(.ed25519)
        let keyID = try #require(key.derivedKeyID)
        try await directory.add(try key.verificationKey, keyID: keyID)
        // swift-openapi-vapor hands on neither the authority nor the Host field: the middleware is told it.
        let port = try ExternalServers.freePort()
        let sigil = SigilServerMiddleware(
            exchange: Exchange(
                verifier: RequestVerifier(keys: directory, nonces: nonces, clock: serverClock),
                responseSigner: ResponseSigner(signer: responseKey, keyID: responseKeyID, clock: serverClock)),
            authority: "127.0.0.1:\(port)")

        try await withApp { app in
            try Greeter.registerHandlers(
                GreeterHandler(), on: VaporTransport(routesBuilder: app), serverURL: try #require(URL(string: "/api")),
                middlewares: [sigil])
            try await app.server.start(address: .hostname("127.0.0.1", port: port))
            do {
                try await Self.calls(
                    port: port, key: key, keyID: keyID, serverClock: serverClock,
                    responses: try responseKey.verificationKey, responseKeyID: responseKeyID)
            } catch {
                await app.server.shutdown()
                throw error
            }
            await app.server.shutdown()
        }
    }

    static func calls(
        port: Int, key: SigningKey, keyID: String, serverClock: ManualUnixClock,
        responses: VerificationKey, responseKeyID: String
    ) async throws {
        let url = try #require(URL(string: "http://127.0.0.1:\(port)/api"))
        let transport = AsyncHTTPClientTransport()
        for profile in SignatureProfile.allCases {
            // The device's clock is 1000 s behind: the signed refusal sets it, and the request is sent again.
            let clock = ServerClock(local: ManualUnixClock(serverClock.now() - 1000))
            let verifier = ResponseVerifier(key: responses, keyID: responseKeyID, clock: clock)
            let signing = SigilClientMiddleware(
                signer: RequestSigner(key: key, keyID: keyID, profile: profile, clock: clock), clock: clock,
                responses: verifier, requireSignedResponses: true)
            let client = Greeter.Client(serverURL: url, transport: transport, middlewares: [signing])
            let greeted = try await client.greet(.init(name: "ada"))
            #expect(greeted.status == 200, "\(profile): \(String(decoding: greeted.body, as: UTF8.self))")
            #expect(greeted.output?.keyId == keyID)
            #expect(greeted.output?.message == "hello ada")
            #expect(clock.now() == serverClock.now())

            // The handler's SigilError is a refusal, signed (the client middleware checked it).
            let refused = try await client.greet(.init(name: "nobody"))
            #expect(refused.status == 403)
            #expect(String(decoding: refused.body, as: UTF8.self).contains(#""code":"forbidden""#))

            // A replay is refused, and the refusal is signed for the request's nonce.
            let replayed = try await Greeter.Client(
                serverURL: url, transport: transport, middlewares: [signing, Replaying()]
            )
            .greet(.init(name: "ada"))
            #expect(replayed.status == 401)
            #expect(String(decoding: replayed.body, as: UTF8.self).contains(#""code":"replayed-nonce""#))

            // An answer signed by another key is refused by the client middleware.
            let impostor = try SigningKey.generate(.ecdsaP256SHA256).verificationKey
            let wrongKey = Greeter.Client(
                serverURL: url, transport: transport,
                middlewares: [
                    SigilClientMiddleware(
                        signer: RequestSigner(key: key, keyID: keyID, profile: profile, clock: clock), clock: clock,
                        responses: ResponseVerifier(key: impostor, keyID: responseKeyID, clock: clock),
                        requireSignedResponses: true)
                ])
            let error = await #expect(throws: ClientError.self) { _ = try await wrongKey.greet(.init(name: "ada")) }
            // Not the server's word: an answer the client cannot trust.
            #expect((error?.underlyingError as? SigilClientError)?.kind == .untrustedAnswer)
        }

        // Without the middleware: refused before the handler, with Accept-Signature.
        let unsigned = try await Greeter.Client(serverURL: url, transport: transport, middlewares: [])
            .greet(.init(name: "ada"))
        #expect(unsigned.status == 401)
        #expect(String(decoding: unsigned.body, as: UTF8.self).contains(#""code":"missing-signature""#))
    }
}
