import HTTPTypes
import Hummingbird
import HummingbirdAuth
import HummingbirdTesting
import NIOCore
import PostgresNIO
import SigilClient
@_spi(Sigil) import SigilCore
import SigilHummingbird
import SigilPostgres
import SigilServer
import SigilStandalone
import Testing

@testable import SigilTestSupport

/// The issue's Hummingbird backend (``HummingbirdBackend``), run over a PostgreSQL the test starts.
@Suite(
    "Hummingbird backend: Sigil in hummingbird-auth's idiom", .enabled(if: ExternalServers.runPostgres),
    .externalServers)
struct HummingbirdBackendTests {
    static let token = "hummingbird-backend-token-0123456789"

    @Test(
        "over the app's own PostgresClient and sigil serve's master.key, a device enrolls and reaches the route behind IsAuthenticatedMiddleware; unsigned, replayed and revoked requests are refused"
    )
    func backend() async throws {
        try await PostgresTestServer.with { server in
            // A master key file in sigil serve's format, made by sigil serve's own code.
            let data = try DataDirectory(path: TestServer.temporaryDirectory())
            let master = try data.masterKey()
            let postgres = PostgresClient(
                configuration: .init(
                    host: "127.0.0.1", port: server.port, username: "sigil", password: nil, database: "postgres",
                    tls: .disable))
            try await withThrowingDiscardingTaskGroup { group in
                group.addTask { await postgres.run() }
                let app = try await HummingbirdBackend.application(
                    postgres: postgres, masterKeyFile: data.file("master.key"), enrollToken: Self.token,
                    configuration: .init(address: .hostname("127.0.0.1", port: 0)))
                try await app.test(.live) { client in
                    try await BackendExercise.run(port: try #require(client.port), token: Self.token)
                }
                // The application stopped and closed the store; the app's client is still its own, and
                // the device's HMAC secret opens with the master key sigil serve's code made.
                let secrets = try await postgres.query(
                    "SELECT key_id FROM sigil_keys WHERE sealed_secret IS NOT NULL", logger: .init(label: "test")
                ).collect().map { try $0.decode(String.self) }
                #expect(secrets.count == 1)
                let reopened = try await PostgresStore.open(client: postgres)
                let directory = try Directory.postgres(
                    store: reopened, masterKey: master, listensForChanges: false)
                let secret = try await directory.key(for: try #require(secrets.first))
                #expect(secret?.key.algorithm == .hmacSHA256)
                #expect(secret?.state == .revoked)
                reopened.close()
                group.cancelAll()
            }
        }
    }
}

/// An application whose identity is its own user: Sigil verifies, hummingbird-auth's
/// `ClosureAuthenticator` turns the verified identity into the user, `IsAuthenticatedMiddleware` guards.
@Suite("hummingbird-auth over Sigil")
struct HummingbirdAuthTests {
    struct AppUser: Sendable {
        let name: String
    }

    struct AppContext: AuthRequestContext, SigilRequestContext {
        var coreContext: CoreRequestContextStorage
        var identity: AppUser?
        var sigilIdentity: SigilIdentity?
        let channel: (any Channel)?

        init(source: ApplicationRequestContextSource) {
            coreContext = .init(source: source)
            channel = source.channel
        }
    }

    static func application(_ setup: SigningSetup) -> some ApplicationProtocol {
        let router = Router(context: AppContext.self)
        router.group("api").add(
            middleware: SigilMiddleware(exchange: Exchange(verifier: setup.verifier, bodyTimeout: nil))
        )
        .add(
            middleware: ClosureAuthenticator { _, context in
                context.sigilIdentity.map { AppUser(name: "user of \($0.keyID ?? "none")") }
            }
        )
        .add(middleware: IsAuthenticatedMiddleware())
        .get("me") { _, context in "\(try context.requireIdentity())" }
        // Behind hummingbird-auth alone, without Sigil's middleware: nothing authenticates.
        router.group("bare").add(middleware: IsAuthenticatedMiddleware()).get("me") { _, _ in "reached" }
        return Application(router: router)
    }

    static func signed(_ setup: SigningSetup, _ path: String) throws -> HTTPFields {
        var request = HTTPRequest(method: .get, scheme: nil, authority: nil, path: path)
        try setup.signer(.sigilV1).sign(&request, body: [])
        return request.headerFields
    }

    @Test("a context of the app's own with its own identity: only a request Sigil verified is authenticated")
    func ownIdentity() async throws {
        let setup = try await SigningSetup(.ed25519)
        let app = Self.application(setup)
        try await app.test(.router) { client in
            let headers = try Self.signed(setup, "/api/me")
            try await client.execute(uri: "/api/me", method: .get, headers: headers) { response in
                #expect(response.status == .ok)
                #expect(String(buffer: response.body) == "AppUser(name: \"user of \(setup.keyID)\")")
            }
            // The same request again: a replay, refused by Sigil before any authenticator runs.
            try await client.execute(uri: "/api/me", method: .get, headers: headers) { response in
                #expect(response.status == .unauthorized)
                #expect(String(buffer: response.body).contains("replayed-nonce"))
            }
            try await client.execute(uri: "/api/me", method: .get) { response in
                #expect(response.status == .unauthorized)
                #expect(String(buffer: response.body).contains("missing-signature"))
            }
            // A signed request to a route with no Sigil middleware: hummingbird-auth alone refuses it.
            try await client.execute(uri: "/bare/me", method: .get, headers: try Self.signed(setup, "/bare/me")) {
                #expect($0.status == .unauthorized)
            }
        }
    }

    @Test("SigilBasicRequestContext is hummingbird-auth's context: its identity is the one the middleware verified")
    func basicContext() async throws {
        let setup = try await SigningSetup(.ed25519)
        let router = Router(context: SigilBasicRequestContext.self)
        router.group("api").add(
            middleware: SigilMiddleware(exchange: Exchange(verifier: setup.verifier, bodyTimeout: nil))
        )
        .add(middleware: IsAuthenticatedMiddleware())
        .get("me") { _, context in
            // One property under two names.
            #expect(context.sigilIdentity == context.identity)
            return (try context.requireIdentity().keyID ?? "none") + " "
                + (try context.requireSigilIdentity().keyID ?? "none")
        }
        router.get("open") { _, context in
            #expect(context.identity == nil)
            return context.identity == nil ? "anonymous" : "authenticated"
        }
        try await Application(router: router).test(.router) { client in
            try await client.execute(uri: "/api/me", method: .get, headers: try Self.signed(setup, "/api/me")) {
                #expect($0.status == .ok)
                #expect(String(buffer: $0.body) == "\(setup.keyID) \(setup.keyID)")
            }
            // A request that names a key in Sigil's headers but is not signed by it authenticates nothing.
            var forged = try Self.signed(setup, "/api/me")
            forged[SigilV1.signatureField] = String(repeating: "A", count: 86)
            try await client.execute(uri: "/api/me", method: .get, headers: forged) {
                #expect($0.status == .unauthorized)
            }
            try await client.execute(uri: "/open", method: .get, headers: try Self.signed(setup, "/open")) {
                #expect(String(buffer: $0.body) == "anonymous")
            }
        }
    }
}
