import Foundation
import Logging
import NIOCore
import NIOPosix
import NIOSSL
import PostgresNIO
import ServiceLifecycle
@_spi(Sigil) import SigilCore
import SigilServer
import Synchronization

/// A connection pool to one PostgreSQL database and the Sigil schema in it: what
/// ``PostgresDirectoryBackend`` and ``PostgresNonceStore`` share.
///
/// ```swift
/// let store = try await PostgresStore.open(PostgresStore.Location(url: "postgres://sigil@db/sigil"))
/// let directory = try Directory.postgres(store: store, masterKey: masterKey)
/// let nonces = PostgresNonceStore(store: store)
/// ```
///
/// An application that has a `PostgresClient` of its own (postgres-nio's pool, which it runs) opens
/// the store over it instead, with ``open(client:timeout:logger:)``: Sigil's tables (all named
/// `sigil_…`) live beside the application's, and the application keeps running and closing its pool.
///
/// Every query has a deadline (``timeout``): a database that does not answer in time refuses the
/// request (`store-unavailable`) instead of holding it. The pool reconnects by itself, so the service
/// resumes when the database is back, without a restart.
public final class PostgresStore: Sendable {
    /// Where the database is.
    public struct Location: Sendable, CustomStringConvertible {
        /// The pool's configuration.
        public var configuration: PostgresClient.Configuration
        /// `host:port/database`, for logs and errors: never the user name or password.
        public var description: String
        /// What the first connection of ``PostgresStore/open(_:timeout:connections:logger:)`` uses, to
        /// say why it failed: the server's endpoint, the user, the database and the URL's `sslmode`.
        let host: String
        let port: Int
        let user: String
        let password: String?
        let database: String?
        let sslMode: String
        let sslModeIsDefault: Bool
        let tlsConfiguration: TLSConfiguration

        /// Parses `postgres://user[:password]@host[:port]/database[?sslmode=…&sslrootcert=FILE]`.
        ///
        /// `sslmode` is `require` by default, and `require` and `verify-full` both verify the server's
        /// certificate and name (against the system roots, or the CA certificates in `sslrootcert`);
        /// `disable` (loopback, a private link) and `prefer` turn TLS off or make it optional.
        ///
        /// - Parameter password: the password, when it is not in the URL (from the environment or a file).
        /// - Throws: ``SigilInputError`` naming what is wrong, never echoing the URL.
        public init(url: String, password: String? = nil) throws {
            guard let components = URLComponents(string: url),
                components.scheme == "postgres" || components.scheme == "postgresql",
                let host = components.host, !host.isEmpty
            else {
                throw SigilInputError("the PostgreSQL URL must look like postgres://user@host:port/database")
            }
            let user = components.user.flatMap { $0.removingPercentEncoding } ?? "postgres"
            let urlPassword = components.password.flatMap { $0.removingPercentEncoding }
            let database = String(components.path.drop { $0 == "/" })
            let port = components.port ?? 5432
            // TLS required unless the URL says `sslmode=disable` (loopback, a private socket): with
            // `prefer`, an on-path attacker could refuse TLS and answer as the database.
            let givenMode = components.queryItems?.first { $0.name == "sslmode" }?.value
            let mode = givenMode ?? "require"
            var tlsConfiguration = TLSConfiguration.makeClientConfiguration()
            if let rootFile = components.queryItems?.first(where: { $0.name == "sslrootcert" })?.value {
                do {
                    tlsConfiguration.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(rootFile))
                } catch {
                    throw SigilInputError("sslrootcert: cannot read the CA certificates in \(rootFile)")
                }
            }
            let tls: PostgresClient.Configuration.TLS
            switch mode {
            case "disable": tls = .disable
            case "prefer": tls = .prefer(tlsConfiguration)
            case "require", "verify-full": tls = .require(tlsConfiguration)
            default: throw SigilInputError("sslmode must be disable, prefer, require or verify-full")
            }
            configuration = PostgresClient.Configuration(
                host: host, port: port, username: user, password: password ?? urlPassword,
                database: database.isEmpty ? nil : database, tls: tls)
            description = "\(host):\(port)/\(database)"
            self.host = host
            self.port = port
            self.user = user
            self.password = password ?? urlPassword
            self.database = database.isEmpty ? nil : database
            self.sslMode = mode
            self.sslModeIsDefault = givenMode == nil
            self.tlsConfiguration = tlsConfiguration
        }

        /// The configuration of one connection, as the pool makes them.
        func connectionConfiguration(timeout: Duration) throws -> PostgresConnection.Configuration {
            let tls: PostgresConnection.Configuration.TLS
            switch sslMode {
            case "disable": tls = .disable
            case "prefer": tls = .prefer(try NIOSSLContext(configuration: tlsConfiguration))
            default: tls = .require(try NIOSSLContext(configuration: tlsConfiguration))
            }
            var configuration = PostgresConnection.Configuration(
                host: host, port: port, username: user, password: password, database: database, tls: tls)
            configuration.options.connectTimeout = .init(timeout)
            return configuration
        }
    }

    /// The pool.
    public let client: PostgresClient
    /// How long a query may take before the store counts as down.
    public let timeout: Duration
    /// Where the database is, for logs.
    public let location: String
    /// Whether the store runs its pool (opened from a ``Location``) rather than using an application's.
    public var ownsClient: Bool { runner != nil }
    let logger: Logger
    /// Runs the pool the store opened; `nil` over an application's pool, which the application runs.
    private let runner: Task<Void, Never>?
    private let closed = Atomic<Bool>(false)
    /// What stops when the store closes: the directories' listeners, the nonce stores' purges.
    private let closeHandlers = Mutex<[@Sendable () -> Void]>([])
    /// Whether the schema is created or migrated when the store's service runs (``service(client:timeout:logger:)``)
    /// rather than before the store is returned.
    private let migratesWhenRun: Bool

    private init(
        client: PostgresClient, runsClient: Bool, timeout: Duration, location: String, logger: Logger,
        migratesWhenRun: Bool = false
    ) {
        self.client = client
        self.timeout = timeout
        self.location = location
        self.migratesWhenRun = migratesWhenRun
        self.logger = logger
        runner = runsClient ? Task { await client.run() } : nil
    }

    /// The schema version this code writes; a database at a later version is refused.
    public static var schemaVersion: Int { developmentVersions + migrations.count }

    /// The versions development builds of 0.9 wrote (1 to 11): none is 0.9.0's, and a database at one of
    /// them is refused rather than taken for one it is not.
    static let developmentVersions = 11

    /// Connects, then creates or migrates the schema (under an advisory lock, so replicas starting
    /// together migrate once).
    ///
    /// - Parameters:
    ///   - timeout: the deadline of each query.
    ///   - connections: the pool's maximum number of connections.
    /// - Throws: `store-unavailable` when the database cannot be reached or migrated in time, saying
    ///   why when the first connection tells: refused, no TLS where `sslmode` requires it (or TLS
    ///   where the server's rules require it and `sslmode=disable` turned it off), an untrusted
    ///   certificate, a refused user or password, a missing database.
    public static func open(
        _ location: Location,
        timeout: Duration = .seconds(2),
        connections: Int = 20,
        logger: Logger = Logger(label: "sigil.postgres")
    ) async throws -> PostgresStore {
        // One connection first, whose error says what is wrong: the pool would retry for as long as
        // the migration may take, logging each attempt, and then say only that no answer came.
        try await probe(location, timeout: timeout, logger: logger)
        var configuration = location.configuration
        configuration.options.maximumConnections = connections
        configuration.options.connectTimeout = timeout
        let client = PostgresClient(configuration: configuration, backgroundLogger: logger)
        let store = PostgresStore(
            client: client, runsClient: true, timeout: timeout, location: location.description, logger: logger)
        do {
            try await store.migrate()
        } catch {
            store.close()
            throw error
        }
        return store
    }

    /// Opens the store over `client`, a pool the application made, runs and shuts down itself, then
    /// creates or migrates the Sigil schema in its database (under an advisory lock, as
    /// ``open(_:timeout:connections:logger:)`` does).
    ///
    /// ```swift
    /// let postgres = PostgresClient(configuration: configuration)  // the application's own
    /// // running: in the application's ServiceGroup, or `group.addTask { await postgres.run() }`
    /// let store = try await PostgresStore.open(client: postgres)
    /// let directory = try Directory.postgres(store: store, masterKey: masterKey.symmetricKey)
    /// ```
    ///
    /// The store never runs or shuts down `client`: ``close()`` (or the end of the store's service)
    /// only stops Sigil's use of it. A ``PostgresDirectoryBackend`` keeps one of its connections
    /// listening for other replicas' changes (unless made with `listensForChanges: false`): count it
    /// in the pool's `maximumConnections`.
    ///
    /// - Parameters:
    ///   - timeout: the deadline of each query.
    /// - Throws: `store-unavailable` when the schema cannot be created in time; `client` must be
    ///   running (postgres-nio queues the queries of a client whose `run()` has not started, and the
    ///   deadline then passes).
    public static func open(
        client: PostgresClient,
        timeout: Duration = .seconds(2),
        logger: Logger = Logger(label: "sigil.postgres")
    ) async throws -> PostgresStore {
        let store = PostgresStore(
            client: client, runsClient: false, timeout: timeout, location: "the application's PostgresClient",
            logger: logger)
        do {
            try await store.migrate()
        } catch {
            store.close()
            throw error
        }
        return store
    }

    /// The store over `client` for a service group that runs `client` itself (Hummingbird's, a
    /// `ServiceGroup` of your own): returned at once, before `client` runs, with nothing queried; its
    /// service, placed after `client` and before the application, creates or migrates the schema when
    /// it starts (under the advisory lock), then waits for the group's shutdown. ``open(client:timeout:logger:)``
    /// needs `client` running already, which a service group does only once everything is built.
    ///
    /// ```swift
    /// let postgres = PostgresClient(configuration: configuration)
    /// let store = PostgresStore.service(client: postgres)
    /// let directory = try Directory.postgres(store: store, masterKey: masterKey.symmetricKey)
    /// // … the router and its Sigil middleware over `directory` …
    /// let app = Application(router: router, services: [postgres, store])
    /// try await app.runService()
    /// ```
    ///
    /// Until the schema is ready (a first start's migration, a moment), requests that reach the store
    /// are refused `store-unavailable`, as in any outage: nothing is admitted unchecked.
    public static func service(
        client: PostgresClient, timeout: Duration = .seconds(2), logger: Logger = Logger(label: "sigil.postgres")
    ) -> PostgresStore {
        PostgresStore(
            client: client, runsClient: false, timeout: timeout, location: "the application's PostgresClient",
            logger: logger, migratesWhenRun: true)
    }

    /// Stops the store: further queries fail with `store-unavailable`, the directories stop listening
    /// and the nonce stores stop purging. A pool the store opened stops too; an application's keeps
    /// running.
    public func close() {
        guard !closed.exchange(true, ordering: .acquiringAndReleasing) else { return }
        runner?.cancel()
        let handlers = closeHandlers.withLock { handlers in
            let taken = handlers
            handlers = []
            return taken
        }
        for handler in handlers { handler() }
    }

    /// Whether ``close()`` was called.
    public var isClosed: Bool { closed.load(ordering: .relaxed) }

    /// Calls `handler` when the store closes (at once when it is closed already).
    func onClose(_ handler: @escaping @Sendable () -> Void) {
        let closedAlready = closeHandlers.withLock { handlers in
            // Checked under the lock close() takes after setting the flag: no handler is missed.
            guard !isClosed else { return true }
            handlers.append(handler)
            return false
        }
        if closedAlready { handler() }
    }

    /// The rows of `statement`, prepared once per connection. The driver keeps a failed preparation
    /// for the connection's life (a lock or statement timeout during a migration, a pooler that
    /// refuses named statements): then the same statement, `unprepared`. A statement that failed
    /// changed nothing, so running it again is safe.
    static func execute<Statement: PostgresPreparedStatement>(
        _ statement: Statement, unprepared: PostgresQuery, on client: PostgresClient, logger: Logger
    ) async throws -> [Statement.Row] {
        do {
            var rows: [Statement.Row] = []
            for try await row in try await client.execute(statement, logger: logger) { rows.append(row) }
            return rows
        } catch let error as PSQLError where error.code == .server {
            return try await client.query(unprepared, logger: logger).collect().map(statement.decodeRow)
        }
    }

    /// Runs `body` against the pool with the deadline; any failure is `store-unavailable`.
    func run<Result: Sendable>(
        _ what: String,
        timeout: Duration? = nil,
        _ body: @escaping @Sendable (PostgresClient) async throws -> Result
    ) async throws -> Result {
        let deadline = timeout ?? self.timeout
        guard !isClosed else { throw SigilError(.storeUnavailable, "\(what): the store is closed") }
        do {
            return try await withDeadline(deadline, SigilError(.storeUnavailable, "\(what): no answer in time")) {
                try await body(self.client)
            }
        } catch let error as SigilError {
            throw error
        } catch is CancellationError {
            throw CancellationError()
        } catch {
            // A rule of a change refused inside a transaction (rolled back): the refusal, not an outage.
            if let transaction = error as? PostgresTransactionError {
                if let refusal = transaction.closureError as? SigilError { throw refusal }
                // A secret that cannot be sealed (a store opened without the master key): said as such.
                if let input = transaction.closureError as? SigilInputError { throw input }
            }
            logger.error("PostgreSQL failed", metadata: ["store": "\(location)", "error": "\(Self.describe(error))"])
            throw SigilError(.storeUnavailable, "\(what): the database did not answer")
        }
    }

    /// Connects once and closes; throws why the database cannot be used.
    static func probe(_ location: Location, timeout: Duration, logger: Logger) async throws {
        let configuration = try location.connectionConfiguration(timeout: timeout)
        let startup = max(timeout, .seconds(5))
        do {
            let connection = try await withDeadline(
                startup, SigilError(.storeUnavailable, "PostgreSQL at \(location) did not answer within \(startup)")
            ) {
                try await PostgresConnection.connect(configuration: configuration, id: 0, logger: logger)
            }
            try? await connection.close()
        } catch let error as SigilError {
            throw error
        } catch is CancellationError {
            throw CancellationError()
        } catch {
            throw SigilError(.storeUnavailable, startFailure(error, location: location))
        }
    }

    /// Why a first connection failed, said with what to change (never the password).
    static func startFailure(_ error: any Error, location: Location) -> String {
        let server = "PostgreSQL at \(location.host):\(location.port)"
        guard let error = error as? PSQLError else { return "cannot connect to \(server): \(describe(error))" }
        switch error.code {
        case .sslUnsupported:
            return "\(server) does not offer TLS, which sslmode=\(location.sslMode)"
                + (location.sslModeIsDefault ? " (the default)" : "")
                + " requires: turn ssl on in its postgresql.conf, "
                + "or add ?sslmode=disable to the URL for a loopback or private link"
        case .authMechanismRequiresPassword:
            return "\(server) asks for a password and none was given "
                + "(sigil serve reads it from SIGIL_STORE_PASSWORD or --store-password-file)"
        case .server:
            let state = error.serverInfo?[.sqlState] ?? ""
            let message = String((error.serverInfo?[.message] ?? "").prefix(300))
            if state == "28000" && message.contains("no encryption") {
                return "\(server) takes no connection without TLS from here (\(message)), and the URL says "
                    + "sslmode=disable: where its pg_hba.conf has hostssl lines, remove sslmode=disable "
                    + "(sslmode=require is the default)"
            }
            if state == "28P01" {
                return "\(server) refused the password: \(message) "
                    + "(sigil serve reads it from SIGIL_STORE_PASSWORD or --store-password-file)"
            }
            return "\(server) refused the connection: \(message) (SQLSTATE \(state))"
        case .connectionError:
            let underlying = error.underlying.map { connectionFailure($0, server: server, location: location) }
            return underlying ?? "cannot connect to \(server)"
        default:
            return "cannot connect to \(server): \(describe(error))"
        }
    }

    /// A failure to open the connection itself: refused, no answer, TLS.
    static func connectionFailure(_ error: any Error, server: String, location: Location) -> String {
        if let error = error as? NIOConnectionError {
            if error.connectionErrors.isEmpty && (error.dnsAError != nil || error.dnsAAAAError != nil) {
                return "the PostgreSQL host \(location.host) does not resolve to an address"
            }
            if let failure = error.connectionErrors.first {
                return connectionFailure(failure.error, server: server, location: location)
            }
        }
        if let error = error as? IOError, error.errnoCode == ECONNREFUSED {
            return "\(server) refused the connection: is PostgreSQL running, listening on that address and port "
                + "(listen_addresses and port in postgresql.conf)?"
        }
        if case ChannelError.connectTimeout = error {
            return "\(server) did not answer the connection in time (a wrong address, or a firewall)"
        }
        if case NIOSSLError.handshakeFailed(let reason) = error {
            if "\(reason)".contains("CERTIFICATE_VERIFY_FAILED") {
                return "the TLS certificate of \(server) does not validate (sslmode=\(location.sslMode) verifies it "
                    + "and its name, as libpq's verify-full does): give its CA with sslrootcert=FILE in the URL, "
                    + "or use sslmode=disable on a loopback or private link"
            }
            return "the TLS handshake with \(server) failed (sslmode=\(location.sslMode)): \(reason)"
        }
        return "cannot connect to \(server): \(describe(error))"
    }

    /// A query's error without its bound values (a secret may be among them).
    static func describe(_ error: any Error) -> String {
        if let error = error as? PSQLError { return "\(error.code) \(error.serverInfo?[.sqlState] ?? "")" }
        return "\(type(of: error))"
    }

    private func migrate() async throws {
        // At start, not on a request's path: a server just started (or busy migrating) gets longer.
        try await run("the schema could not be created", timeout: max(timeout, .seconds(15))) { client in
            try await client.withTransaction(logger: self.logger) { connection in
                try await connection.query("SELECT pg_advisory_xact_lock(\(Self.migrationLock))", logger: self.logger)
                try await connection.query(
                    "CREATE TABLE IF NOT EXISTS sigil_schema (id INT PRIMARY KEY CHECK (id = 1), version INT NOT NULL)",
                    logger: self.logger)
                var current = 0
                for try await version in try await connection.query(
                    "SELECT version FROM sigil_schema WHERE id = 1", logger: self.logger
                ).decode(Int.self) {
                    current = version
                }
                guard current == 0 || current > Self.developmentVersions else {
                    throw SigilError(
                        .storeUnavailable,
                        "the database's Sigil schema is version \(current), which a development build of 0.9 made: make a new database for 0.9.0"
                    )
                }
                guard current <= Self.schemaVersion else {
                    throw SigilError(
                        .storeUnavailable,
                        "the database's Sigil schema is version \(current), newer than this build's \(Self.schemaVersion)"
                    )
                }
                for (index, steps) in Self.migrations.enumerated()
                where Self.developmentVersions + index + 1 > current {
                    for step in steps {
                        try await connection.query(PostgresQuery(unsafeSQL: step), logger: self.logger)
                    }
                }
                try await connection.query(
                    """
                    INSERT INTO sigil_schema (id, version) VALUES (1, \(Self.schemaVersion))
                    ON CONFLICT (id) DO UPDATE SET version = EXCLUDED.version
                    """,
                    logger: self.logger)
            }
        }
    }

    /// An arbitrary constant naming Sigil's migration lock.
    static let migrationLock: Int64 = 0x5167_696C_0001

    /// The migrations, in order: the steps of version 12 (the first after ``developmentVersions``),
    /// then of 13… Sigil 0.9.0 is the first release, so its one version is the whole schema.
    static let migrations: [[String]] = [
        [
            """
            CREATE TABLE sigil_devices (
                device_id TEXT PRIMARY KEY,
                user_id TEXT,
                created_at BIGINT NOT NULL,
                revoked_at BIGINT,
                sealing_key TEXT,
                attestation TEXT
            )
            """,
            """
            CREATE TABLE sigil_keys (
                key_id TEXT PRIMARY KEY,
                device_id TEXT NOT NULL REFERENCES sigil_devices(device_id),
                alg TEXT NOT NULL,
                public_key TEXT,
                sealed_secret BYTEA,
                state TEXT NOT NULL CHECK (state IN ('active', 'rotating', 'revoked')),
                created_at BIGINT NOT NULL,
                valid_until BIGINT,
                last_used_at BIGINT,
                jwk_thumbprint TEXT,
                CHECK ((public_key IS NULL) <> (sealed_secret IS NULL))
            )
            """,
            "CREATE INDEX sigil_keys_device ON sigil_keys(device_id)",
            "CREATE INDEX sigil_keys_thumbprint ON sigil_keys(jwk_thumbprint)",
            // Operators' lists page through devices by ID in byte order, whatever the database's
            // collation (PageRule): a page reads its rows from these indexes, and its certificates
            // by device, instead of sorting or scanning the whole directory.
            #"CREATE INDEX sigil_devices_page ON sigil_devices (device_id COLLATE "C")"#,
            #"CREATE INDEX sigil_devices_user_page ON sigil_devices (user_id, device_id COLLATE "C")"#,
            """
            CREATE TABLE sigil_certificates (
                serial TEXT PRIMARY KEY,
                key_id TEXT NOT NULL,
                device_id TEXT NOT NULL REFERENCES sigil_devices(device_id),
                not_after BIGINT NOT NULL,
                created_at BIGINT NOT NULL
            )
            """,
            "CREATE INDEX sigil_certificates_device ON sigil_certificates (device_id)",
            """
            CREATE TABLE sigil_nonces (
                key_id TEXT NOT NULL,
                nonce TEXT NOT NULL,
                expires_at BIGINT NOT NULL,
                PRIMARY KEY (key_id, nonce)
            )
            """,
            "CREATE INDEX sigil_nonces_expiry ON sigil_nonces(expires_at)",
            "CREATE TABLE sigil_appattest (key_id TEXT PRIMARY KEY, counter BIGINT NOT NULL, receipt BYTEA)",
            """
            CREATE TABLE sigil_audit (
                id BIGSERIAL PRIMARY KEY,
                at BIGINT NOT NULL,
                action TEXT NOT NULL,
                device_id TEXT,
                key_id TEXT,
                user_id TEXT,
                actor TEXT NOT NULL,
                client TEXT,
                reason TEXT
            )
            """,
            "CREATE INDEX sigil_audit_at ON sigil_audit(at)",
            "CREATE INDEX sigil_audit_device ON sigil_audit(device_id)",
            "CREATE INDEX sigil_audit_user ON sigil_audit(user_id)",
            """
            CREATE TABLE sigil_server_keys (
                key_id TEXT PRIMARY KEY,
                kind TEXT NOT NULL CHECK (kind IN ('response', 'sealing', 'tls')),
                sealed_key BYTEA NOT NULL,
                activates_at BIGINT NOT NULL,
                created_at BIGINT NOT NULL
            )
            """,
            "CREATE TABLE sigil_users (user_id TEXT PRIMARY KEY, revoked_at BIGINT NOT NULL)",
            "CREATE TABLE sigil_spent (id TEXT PRIMARY KEY, expires_at BIGINT NOT NULL)",
            // What key lookups read bumps the change counter replicas check before they trust their
            // caches: in the database itself, so a change made by any writer (another replica, an
            // operator's SQL) counts, and a key's last use does not.
            "CREATE TABLE sigil_changes (id INT PRIMARY KEY CHECK (id = 1), counter BIGINT NOT NULL)",
            "INSERT INTO sigil_changes (id, counter) VALUES (1, 0)",
            """
            CREATE FUNCTION sigil_count_change() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
                UPDATE sigil_changes SET counter = counter + 1 WHERE id = 1;
                RETURN NULL;
            END
            $$
            """,
            """
            CREATE TRIGGER sigil_keys_changed
            AFTER INSERT OR DELETE OR TRUNCATE OR UPDATE OF key_id, device_id, alg, public_key, sealed_secret, state,
                valid_until, jwk_thumbprint ON sigil_keys
            FOR EACH STATEMENT EXECUTE FUNCTION sigil_count_change()
            """,
            """
            CREATE TRIGGER sigil_devices_changed
            AFTER INSERT OR DELETE OR TRUNCATE OR UPDATE OF device_id, user_id, revoked_at, sealing_key, attestation
                ON sigil_devices
            FOR EACH STATEMENT EXECUTE FUNCTION sigil_count_change()
            """,
            """
            CREATE TRIGGER sigil_users_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON sigil_users
            FOR EACH STATEMENT EXECUTE FUNCTION sigil_count_change()
            """,
        ]
    ]
}

extension PostgresStore: Service {
    /// Waits for the service group's graceful shutdown (or cancellation), then stops the pool: put the
    /// stores before the application in a `ServiceGroup`, so they close after it has stopped.
    public func run() async throws {
        if migratesWhenRun {
            do {
                try await migrate()
            } catch {
                close()
                throw error
            }
        }
        try? await gracefulShutdown()
        close()
    }
}
