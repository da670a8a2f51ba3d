import Hummingbird
import HummingbirdAuth
import PostgresNIO
import SigilHummingbird
import SigilJWT
import SigilPostgres
import SigilServer

@testable import SigilTestSupport

/// The Hummingbird backend, as its team writes it: its own PostgreSQL client, run beside the
/// server as postgres-nio runs one, with Sigil mounted in hummingbird-auth's idiom. Swift 6 mode, from
/// an `async` `@main` (whose `main` is isolated to the main actor).
enum HummingbirdBackend {
    /// What the app's `@main struct App { static func main() async throws }` runs. Compiled, not run:
    /// the test runs ``application(postgres:masterKeyFile:enrollToken:configuration:)`` the same way,
    /// over a test server.
    @MainActor
    static func main() async throws {
        let postgres = PostgresClient(
            configuration: .init(host: "db", username: "app", password: nil, database: "app", tls: .disable))
        try await withThrowingDiscardingTaskGroup { group in
            group.addTask { await postgres.run() }
            try await application(
                postgres: postgres, masterKeyFile: "/etc/app/master.key", enrollToken: "from-the-app's-secrets"
            ).runService()
            group.cancelAll()
        }
    }

    /// The app's application, with Sigil: the lines the issue counts are those between the markers.
    @MainActor
    static func application(
        postgres: PostgresClient,
        masterKeyFile: String,
        enrollToken: String,
        configuration: ApplicationConfiguration = .init()
    ) async throws -> some ApplicationProtocol {
        // Sigil set-up: begin
        let masterKey = try MasterKey(contentsOfFile: masterKeyFile)
        let store = try await PostgresStore.open(client: postgres)
        let directory = try Directory.postgres(store: store, masterKey: masterKey.symmetricKey)
        let nonces = PostgresNonceStore(store: store)
        let keys = try await ServerKeyRing.open(
            directory: directory, initialResponse: { try .generate(.ed25519) }, initialSealing: { try .generate() })
        let sigil = SigilMiddleware<SigilBasicRequestContext>(
            exchange: Exchange(
                verifier: RequestVerifier(keys: directory, nonces: nonces),
                responseSigner: try ResponseSigner(ring: keys)))
        let registration = RegistrationService(
            directory: directory, nonces: nonces, enrollment: EnrollmentPolicy(bootstrapToken: enrollToken))
        let router = Router(context: SigilBasicRequestContext.self)
        SigilRegistrationRoutes(service: registration, middleware: sigil).add(to: router)
        router.group("api").add(middleware: sigil).add(middleware: IsAuthenticatedMiddleware())
            .get("me") { _, context in try context.requireIdentity().keyID }
        // Sigil set-up: end (and the store among the application's services, so it closes after the server)
        return Application(router: router, configuration: configuration, services: [store])
    }
}
