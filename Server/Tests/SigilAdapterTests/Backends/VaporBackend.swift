import SigilJWT
import SigilSQLite
import SigilServer
import SigilVapor
import Vapor

@testable import SigilTestSupport

/// The Vapor backend, as its team writes it: Vapor's template (`Application.make`,
/// `configure(_:)`, `execute()`), Sigil's stores in SQLite files beside the master key, mounted in
/// Vapor's authentication idiom. Swift 6 mode, from an `async` `@main` (isolated to the main actor).
enum VaporBackend {
    /// What the app's `@main enum Entrypoint { static func main() async throws }` runs. Compiled, not
    /// run: the test runs ``configure(_:dataDirectory:enrollToken:)`` the same way.
    @MainActor
    static func main() async throws {
        let app = try await Application.make(try Environment.detect())
        do {
            try await configure(app, dataDirectory: "/var/lib/app", enrollToken: "from-the-app's-secrets")
            try await app.execute()
        } catch {
            try? await app.asyncShutdown()
            throw error
        }
        try await app.asyncShutdown()
    }

    /// The app's `configure(_:)`, with Sigil: the lines the issue counts are those between the markers.
    @MainActor
    static func configure(_ app: Application, dataDirectory: String, enrollToken: String) async throws {
        // Sigil set-up: begin
        let masterKey = try MasterKey.loadOrCreate(file: dataDirectory + "/master.key")
        let directory = try await Directory.sqlite(
            path: dataDirectory + "/sigil.sqlite", masterKey: masterKey.symmetricKey)
        let nonces = try await SQLiteNonceStore.open(path: dataDirectory + "/sigil.sqlite")
        app.lifecycle.use(ClosesSigilStores(directory: directory, nonces: nonces))
        let keys = try await ServerKeyRing.open(
            directory: directory, initialResponse: { try .generate(.ed25519) }, initialSealing: { try .generate() })
        let sigil = SigilMiddleware(
            exchange: Exchange(
                verifier: RequestVerifier(keys: directory, nonces: nonces),
                responseSigner: try ResponseSigner(ring: keys)))
        let registration = RegistrationService(
            directory: directory, nonces: nonces, enrollment: EnrollmentPolicy(bootstrapToken: enrollToken))
        try app.register(collection: SigilRegistrationRoutes(service: registration, middleware: sigil))
        app.grouped("api").grouped(sigil, SigilIdentity.guardMiddleware()).get("me") { request in
            try request.auth.require(SigilIdentity.self).keyID ?? "none"
        }
        // Sigil set-up: end
    }

    /// Closes Sigil's SQLite files when the app shuts down (Vapor's lifecycle idiom).
    struct ClosesSigilStores: LifecycleHandler {
        let directory: Directory
        let nonces: SQLiteNonceStore

        func shutdownAsync(_ application: Application) async {
            try? await nonces.close()
            try? await directory.close()
        }
    }
}
