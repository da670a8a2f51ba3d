import AsyncHTTPClient
import Crypto
import Foundation
import Hummingbird
import HummingbirdHTTP2
import JWTKit
import Logging
import Metrics
import NIOCore
import NIOSSL
import Prometheus
import ServiceLifecycle
import SigilAndroidAttestation
import SigilAppAttest
@_spi(Sigil) import SigilCore
import SigilFiles
import SigilHummingbird
import SigilJWT
import SigilRSA
import SigilSQLite
import SigilServer
import SigilTLS
import X509

/// What `sigil serve` runs: the registration API and the echo route over HTTPS (TLS 1.3, hybrid
/// post-quantum key exchange, HTTP/2 and HTTP/1.1), with a SQLite key directory and a nonce store
/// that survives restarts, all kept in one data directory.
public enum SigilStandalone {
    /// The options of `sigil serve`.
    public struct Options: Sendable {
        /// The data directory.
        public var dataDirectory = DataDirectory.defaultPath
        /// The listen address.
        public var host = "127.0.0.1"
        /// The listen port; 0 picks a free one.
        public var port = 8443
        /// A PEM certificate chain and its key; without them, the self-signed pair of the data directory.
        public var certificateFile: String?
        /// The private key of ``certificateFile``.
        public var keyFile: String?
        /// Require client certificates chained to the CAs in this PEM file.
        public var clientCAFile: String?
        /// Also accept classical X25519 key exchange.
        public var allowClassical = false
        /// Replaces the key exchange groups, for interoperability tests only (a classical-only server).
        public var tlsGroups: [NIOTLSCurve]?
        /// The bootstrap enrollment token; without it, the stored or a new one, unless JWTs enroll:
        /// then the bootstrap token is off unless given here.
        public var enrollToken: String?
        /// Anyone may register a device.
        public var openEnrollment = false
        /// JWTs: enrollment JWTs, and DPoP's access tokens.
        public var jwt = JWTOptions()
        /// DPoP-bound access tokens (RFC 9449) on protected routes.
        public var dpop = DPoPOptions()
        /// Enrollment by App Attest.
        public var appAttest = AppAttestOptions()
        /// Enrollment by Android Key Attestation.
        public var android = AndroidOptions()
        /// The verifier's settings: window, body limit, profiles.
        public var verifier = VerifierConfiguration()
        /// How long a device's previous HMAC secret stays valid after a new one is issued, in seconds.
        public var secretOverlap: Int64 = 86_400
        /// How long a rotated key stays valid, in seconds.
        public var rotationGrace: Int64 = 86_400
        /// Put the server's signature base in refusals (development only).
        public var includeSignatureBase = false
        /// Serve `GET /metrics` (Prometheus text): `sigil_verifications_total{outcome=…}`. Without it,
        /// the counters go to whatever `MetricsSystem` was bootstrapped with.
        public var metrics = false
        /// Sign responses to verified requests with the data directory's response key.
        public var signsResponses = true
        /// Also serve `POST /bench/unverified`, an echo without verification, as the baseline of
        /// `sigil bench http`, `POST /bench/unverified-fields`, the same carrying a signed exchange's
        /// fields unsigned, and the floor routes `POST /bench/floor/hmac` and `/bench/floor/ecdsa`
        /// (`FloorRoutes`). Never enable it on a real server.
        public var benchmarkRoute = false
        /// How long a client may take to send its request head and body.
        public var timeouts = RequestTimeouts()
        /// The TLS handshake's deadline and the cap on open connections.
        public var connectionLimits = ConnectionLimits()
        /// The server's clock.
        public var clock: any UnixClock = SystemUnixClock()
        /// Where devices and keys are kept.
        public var keyStore = KeyStore.dataDirectory
        /// Where nonces are kept.
        public var nonceStorage = NonceStorage.withKeys
        /// A file holding the PostgreSQL password (else `SIGIL_STORE_PASSWORD`, else the URL's).
        public var storePasswordFile: String?
        /// A file holding the Redis password (else `SIGIL_NONCES_PASSWORD`, else the URL's).
        public var noncesPasswordFile: String?
        /// Accept a cleartext `redis://` nonce store off loopback (a link the operator vouches for).
        public var noncesTrustedLink = false
        /// How long a shared store may take to answer before requests are refused (`store-unavailable`).
        public var storeTimeout: Duration = .seconds(2)
        /// The most key-directory lookups cached in memory (``DirectoryCache``).
        public var cacheSize = 100_000
        /// `sigil gateway`: forward verified requests to this upstream instead of serving the echo route.
        public var upstream: Upstream?
        /// Paths under which bodies must be sealed (PROTOCOL.md section 6).
        public var sealedPaths: [String] = []
        /// Path prefixes in monitor mode (PROTOCOL.md section 15): requests whose credentials are
        /// missing or fail reach the route (or the backend) unverified, with the code they would have
        /// been refused with, and are counted.
        public var monitor: [String] = []
        /// Where one JSON line per request goes (`-` for standard output), when set; reopened on SIGHUP.
        public var accessLog: String?
        /// How long a rotated server key is published before it becomes current, and how long the
        /// previous one is still accepted after, in seconds (7 days).
        public var keyOverlap: Int64 = 7 * 86_400
        /// How long audit rows are kept, in seconds (400 days).
        public var auditRetention: Int64 = 400 * 86_400
        /// The admin API (off by default).
        public var admin = AdminOptions()

        /// The default options.
        public init() {}
    }

    /// A server ready to run, and what it prints at start.
    public struct Prepared: Sendable {
        /// The Hummingbird application; run it, or add it to a `ServiceGroup`.
        public let application: Application<RouterResponder<SigilBasicRequestContext>>
        /// The SPKI pins of the server certificate chain.
        public let pins: [String]
        /// The pin of the backup TLS key of the self-signed setup, for clients to pin beside ``pins``;
        /// `nil` with `--cert`, whose backup is the operator's to plan.
        public let backupPin: String?
        /// The server certificate file.
        public let certificateFile: String
        /// Whether the self-signed certificate was made by this start.
        public let madeCertificate: Bool
        /// The bootstrap enrollment token, unless it is off (JWT enrollment without a given token).
        public let enrollToken: String?
        /// Whether the token was made by this start.
        public let madeToken: Bool
        /// What to run in a `ServiceGroup`: the stores, then the last-use writer, then the application,
        /// so a graceful shutdown stops the application first, writes the last uses, and closes the
        /// stores last. (With the group's default on a service's failure, `.cancelGroup`, all of them
        /// are cancelled at once.)
        public var services: [any Service] {
            (servingLock.map { [$0] } ?? []) + stores.services
                + (upstreamClient.map { [UpstreamClientService(client: $0)] } ?? []) + background
                + (usage.map { [LastUseService(usage: $0)] } ?? []) + [application]
        }
        /// The admin API's application and the audit trail's pruning, run beside the application.
        let background: [any Service]
        /// The data directory's lock, while this server's nonces are its own; let go at ``close()``.
        var servingLock: ServingLock?
        /// The server's own keys.
        public let serverKeys: ServerKeyRing
        /// The outcome of every request to the protected routes, by monitored prefix, the last day.
        public let outcomes: RequestOutcomes
        /// The access log, when one is kept.
        public let accessLog: AccessLog?
        /// The admin API's port once it listens (waits until then); `nil` when it is off.
        public let adminPort: ListeningPort?
        /// The stores (closed by ``close()``, or as services of ``services``).
        public let stores: Stores
        /// The key directory.
        public var directory: Directory { stores.directory }
        /// The nonce store.
        public var nonces: any NonceStore { stores.nonces }
        /// The response-signing key's ID.
        public let responseKeyID: String
        /// The gateway's client to the upstream, shut down by ``close()``.
        let upstreamClient: HTTPClient?
        /// Records keys' last use; what it holds is written when the application has stopped.
        let usage: KeyUsageTracker?

        /// Closes the stores and the gateway's upstream connections; call it after the application stopped.
        public func close() async throws {
            defer { servingLock?.release() }
            await usage?.stop()
            accessLog?.close()
            try? await upstreamClient?.shutdown()
            try await stores.close()
        }
    }

    /// How DPoP proofs are taken.
    public enum DPoPMode: Sendable {
        /// A DPoP proof with its access token stands in for a Sigil signature.
        case alone
        /// A request must carry a Sigil signature and a DPoP proof.
        case withSignature
    }

    /// Prepares the data directory, the key directory, TLS and the routes.
    ///
    /// - Parameter onListening: called with the bound port once the server listens.
    public static func prepare(
        _ options: Options,
        logger: Logger = Logger(label: "sigil.serve"),
        onListening: @escaping @Sendable (Int) async -> Void = { _ in }
    ) async throws -> Prepared {
        let data = try DataDirectory(path: options.dataDirectory)
        let lock = try ServingLock(data, sharedNonces: options.sharedNonceStore)
        let stores = try await openStores(options, data: data, masterKey: try data.masterKey(), logger: logger)
        do {
            var prepared = try await prepare(
                options, data: data, stores: stores, logger: logger, onListening: onListening)
            prepared.servingLock = lock
            return prepared
        } catch {
            try? await stores.close()
            throw error
        }
    }

    /// The DPoP verifier `--dpop` asks for: access tokens checked with the JWT keys, audience and
    /// issuer; proofs' `jti` in the server's nonce store; server nonces keyed from the master key, so
    /// replicas accept each other's.
    static func dpopVerifier(
        _ options: Options, keys: JWTKeyCollection?, nonces: any NonceStore, clock: any UnixClock,
        masterKey: MasterKey
    ) throws -> DPoPVerifier? {
        guard let mode = options.dpop.mode else { return nil }
        guard let keys, let audience = options.jwt.audience, !audience.isEmpty, let issuer = options.jwt.issuer,
            !issuer.isEmpty
        else {
            throw SigilInputError(
                "--dpop checks access tokens with --jwt-key, --jwks or --jwt-secret, and needs --jwt-audience and --jwt-issuer"
            )
        }
        var verifier = DPoPVerifier(
            tokens: JWTAccessTokens(keys: keys, audience: audience, issuer: issuer, clock: clock), nonces: nonces,
            clock: clock)
        verifier.maxSkew = options.verifier.maxSkew
        verifier.keyFormats = .withRSA
        verifier.requiresSigilSignature = mode == .withSignature
        if options.dpop.nonces {
            verifier.serverNonces = DPoPNonces(masterKey: masterKey)
        }
        return verifier
    }

    /// The origin every request is checked against (``Exchange/origin``): `--dpop-origin`, else
    /// `https://` and the gateway's `--public-host`; `nil` for the connection's own.
    static func publicOrigin(_ options: Options) throws -> String? {
        let fromHost = options.upstream?.publicHost.map { "https://" + $0 }
        guard let origin = options.dpop.origin else { return fromHost }
        guard let parts = Exchange.parseOrigin(origin) else {
            throw SigilInputError("--dpop-origin is a scheme and authority, such as https://api.example")
        }
        if let fromHost, "\(parts.scheme)://\(parts.authority)".lowercased() != fromHost.lowercased() {
            throw SigilInputError("--dpop-origin and --public-host name different origins: give one")
        }
        return origin
    }

    /// Builds the server, one step per feature (Startup.swift): App Attest, Android, the verifier, the
    /// keys and TLS, enrollment and JWTs, DPoP, the exchanges, the access log, registration, the
    /// gateway or echo routes, the admin API and metrics, the application.
    static func prepare(
        _ options: Options,
        data: DataDirectory,
        stores: Stores,
        logger: Logger,
        onListening: @escaping @Sendable (Int) async -> Void
    ) async throws -> Prepared {
        let prometheus = options.metrics ? PrometheusCollectorRegistry() : nil
        let startup = Startup(
            options: options, data: data, stores: stores, logger: logger, prometheus: prometheus,
            metricsFactory: prometheus.map { PrometheusMetricsFactory(registry: $0) } ?? MetricsSystem.factory)
        let (verifier, attestation) = try verification(startup)
        let android = try android(startup)
        let tls = try await keysAndTLS(startup)
        let responseSigner = try ResponseSigner(ring: tls.serverKeys, clock: options.clock)
        let enrollment = try await enrollment(startup)
        let dpop = try dpopVerifier(
            options, keys: enrollment.jwtKeys, nonces: stores.nonces, clock: options.clock, masterKey: try data.master()
        )
        let origin = try publicOrigin(options)
        let outcomes = RequestOutcomes(
            clock: options.clock, metricsFactory: startup.metricsFactory, monitored: options.monitor)
        let exchanges = Exchanges(
            startup: startup, verifier: verifier, responseSigner: responseSigner, tls: tls, origin: origin,
            outcomes: outcomes)
        // DPoP and monitor mode apply to the protected routes; a device's own routes (registration,
        // rotation, revocation) take its Sigil key's signature, always.
        let protected = exchanges.middleware(dpop: dpop, protected: true)
        let router = Router(context: SigilBasicRequestContext.self)
        let accessLog = try accessLog(startup, router: router)
        let backupPin = options.certificateFile == nil ? try data.backupPin() : nil
        SigilRegistrationRoutes(
            service: try registration(
                startup, verifier: verifier.configuration, tls: tls, policy: enrollment.policy,
                attestation: attestation, android: android),
            middleware: exchanges.middleware(dpop: nil, protected: false), pins: tls.pins,
            backupPins: backupPin.map { [$0] } ?? []
        ).add(to: router)
        let backend = try await backend(startup, protected: protected, router: router)
        let admin = try admin(startup, tls: tls, outcomes: outcomes, router: router)
        // Last, after every route: what none of them answers goes to the backend.
        backend.gateway?.addFallback(to: router)
        return Prepared(
            application: application(startup, router: router, tls: tls.configuration, onListening: onListening),
            pins: tls.pins,
            backupPin: backupPin,
            certificateFile: tls.files.certificate,
            madeCertificate: tls.files.isNew,
            enrollToken: enrollment.token?.token,
            madeToken: enrollment.token?.isNew ?? false,
            background: admin.background,
            serverKeys: tls.serverKeys,
            outcomes: outcomes,
            accessLog: accessLog,
            adminPort: admin.port,
            stores: stores,
            responseKeyID: responseSigner.keyID,
            upstreamClient: backend.client,
            usage: verifier.configuration.usage
        )
    }

    /// A port a listener reports once it is bound.
    public actor ListeningPort {
        var port: Int?
        var waiters: [CheckedContinuation<Int, Never>] = []

        func set(_ port: Int) {
            self.port = port
            for waiter in waiters { waiter.resume(returning: port) }
            waiters = []
        }

        /// The port, once bound.
        public func value() async -> Int {
            if let port { return port }
            return await withCheckedContinuation { waiters.append($0) }
        }
    }

    /// Writes the last uses a stopping server has not written yet (a write under way, or a batch the
    /// store refused, waiting for its retry), once the application has stopped and before the stores
    /// close: a key used just before a stop does not read as unused.
    struct LastUseService: Service {
        let usage: KeyUsageTracker

        func run() async throws {
            try? await gracefulShutdown()
            await usage.stop()
        }
    }

    /// Shuts the gateway's upstream client down once the application has stopped.
    struct UpstreamClientService: Service {
        let client: HTTPClient

        func run() async throws {
            try? await gracefulShutdown()
            try? await client.shutdown()
        }
    }

    static func readText(_ path: String) throws -> String {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw SigilInputError("cannot read \(path)")
        }
        return String(decoding: data, as: UTF8.self)
    }
}
