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
        /// `sigil bench http`. Never enable it on a real server.
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
        /// What to run in a `ServiceGroup`: the stores, then the application, so the stores close after
        /// the application has stopped, whether it stopped cleanly or failed.
        public var services: [any Service] {
            (servingLock.map { [$0] } ?? []) + stores.services
                + (upstreamClient.map { [UpstreamClientService(client: $0)] } ?? []) + background + [application]
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
        public var directory: any ServedKeyRegistry { stores.directory }
        /// The nonce store.
        public var nonces: any NonceStore { stores.nonces }
        /// The response-signing key's ID.
        public let responseKeyID: String
        /// The gateway's client to the upstream, shut down by ``close()``.
        let upstreamClient: HTTPClient?

        /// Closes the stores and the gateway's upstream connections; call it after the application stopped.
        public func close() async throws {
            defer { servingLock?.release() }
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
        let lock = options.sharesNonces ? nil : try ServingLock(data)
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

    static func prepare(
        _ options: Options,
        data: DataDirectory,
        stores: Stores,
        logger: Logger,
        onListening: @escaping @Sendable (Int) async -> Void
    ) async throws -> Prepared {
        let clock = options.clock
        let directory = stores.directory
        let nonces = stores.nonces
        let registry = options.metrics ? PrometheusCollectorRegistry() : nil
        let metricsFactory: any MetricsFactory =
            registry.map { PrometheusMetricsFactory(registry: $0) }
            ?? MetricsSystem.factory
        var verifierConfiguration = options.verifier
        var attestation: AttestationEnrollment?
        if !options.appAttest.appIDs.isEmpty {
            let appAttest = AppAttestVerifier(
                appIDs: options.appAttest.appIDs, environments: options.appAttest.environments,
                root: options.appAttest.root ?? AppAttestVerifier.appleAppAttestationRootCA)
            // Counters and receipts with the keys (SQLite, PostgreSQL): a restart or another replica forgets none.
            let records = directory as? any AppAttestStore ?? MemoryAppAttestStore()
            verifierConfiguration.assertions = AppAttestAssertions(verifier: appAttest, counters: records)
            var verifier: any DeviceAttestationVerifier = appAttest
            if !options.appAttest.debugTokenFiles.isEmpty {
                // Secret files: refused when others may read them, as the master key is.
                let tokens = try options.appAttest.debugTokenFiles.map { path in
                    String(decoding: try SecureFile.readSecret(path), as: UTF8.self)
                        .trimmingCharacters(in: .whitespacesAndNewlines)
                }
                verifier = try AppAttestDebugVerifier(verifier: appAttest, tokens: tokens)
                verifierConfiguration.acceptsAppAttestDebugKeys = true
                logger.warning(
                    "App Attest debug attestations accepted (--app-attest-debug-token): never in production, where they prove no genuine device"
                )
            }
            // Challenges are keyed from the master key, so replicas sharing it accept each other's.
            attestation = AttestationEnrollment(
                verifier: verifier, challenges: AttestationChallenges(masterKey: try data.master()), store: records)
        }
        var android: AndroidEnrollment?
        if let policy = options.android.policy {
            let statusFile = try options.android.statusFile.map { path in
                do { return try AttestationStatusFile(path: path, now: clock.now()) } catch let error
                    as AndroidAttestationError
                {
                    throw SigilInputError("--android-status: \(error.detail)")
                }
            }
            if statusFile == nil {
                logger.warning(
                    "Android Key Attestation without a status list: revoked attestation keys are not refused (--android-status FILE)"
                )
            }
            android = AndroidEnrollment(
                verifier: {
                    var verifier = AndroidKeyEnrollmentVerifier(
                        policy: policy, roots: options.android.roots ?? GoogleAttestationRoots.hardware)
                    verifier.statusFile = statusFile
                    return verifier
                }(),
                challenges: AttestationChallenges(masterKey: try data.master()))
        }
        verifierConfiguration.usage = KeyUsageTracker(store: directory)
        let verifier = RequestVerifier(
            keys: directory,
            nonces: nonces,
            clock: clock,
            configuration: verifierConfiguration,
            metricsFactory: metricsFactory
        )

        var names = ["localhost", "127.0.0.1", "::1"]
        if !names.contains(options.host) && options.host != "0.0.0.0" && options.host != "::" {
            names.append(options.host)
        }
        let tlsFiles = try data.tlsFiles(certificate: options.certificateFile, key: options.keyFile, names: names)
        // The key file, the data directory's or --key, is refused when others may read it (TLSIdentity).
        let fileIdentity = try TLSIdentity(certificateFile: tlsFiles.certificate, keyFile: tlsFiles.key)
        // A server that makes its own certificate keeps its TLS key in the store, where it rotates like
        // the others; one given --cert serves that certificate, whose key is the operator's.
        let selfSigned = options.certificateFile == nil
        let fileKey =
            selfSigned
            ? try KeyFile.load(Array(try SecureFile.readSecret(tlsFiles.key)), algorithm: .ecdsaP256SHA256).signingKey
            : nil
        let initialTLS: (@Sendable () throws -> SigningKey)? = fileKey.map { key in { @Sendable in key } }

        // The server's keys live in the store (shared by replicas); a data directory's key files are
        // imported on the first start.
        let sealingFiles = try data.sealingKeys(sealedPaths: options.sealedPaths)
        let serverKeys = try await ServerKeyRing.open(
            store: directory, overlap: options.keyOverlap, clock: clock, keyFormats: .withRSA,
            initialResponse: { try data.responseKey() },
            initialSealing: {
                guard let current = sealingFiles.keys.first else { throw SigilInputError("no sealing key") }
                return current
            },
            initialTLS: initialTLS)
        let responseSigner = try ResponseSigner(ring: serverKeys, clock: clock)
        let responseKeyID = responseSigner.keyID

        let served: ServedTLSKey? =
            selfSigned
            ? ServedTLSKey(
                ring: serverKeys, names: names, certificateFile: tlsFiles.certificate, keyFile: tlsFiles.key,
                initial: try fileKey?.derivedKeyID.map { ($0, fileIdentity) })
            : nil
        let identity = try served?.current() ?? fileIdentity
        let pins =
            try served?.pins.current
            ?? identity.chain.map { SPKIPin.pin(spkiDER: try $0.extractPublicKey().toSPKIBytes()) }
        let clientCA = try options.clientCAFile.map { path in
            do {
                return try NIOSSLCertificate.fromPEMFile(path)
            } catch {
                throw SigilInputError("cannot read the client CA file \(path)")
            }
        }
        let configured = ServerTLS.configuration(
            identity: identity,
            allowClassical: options.allowClassical,
            clientCA: clientCA,
            groups: options.tlsGroups
        )
        let tls = served?.serving(configured) ?? configured

        let jwtKeys = try await EnrollmentPolicy.jwtKeys(
            pemKeys: try options.jwt.keyFiles.map { try readText($0) },
            hs256Secrets: try options.jwt.secretFiles.map { path in
                // The key that mints enrollment JWTs (and DPoP access tokens): refused when others may read it.
                let text = String(decoding: try SecureFile.readSecret(path), as: UTF8.self)
                guard let secret = Base64.decode(text.trimmed) else {
                    throw SigilInputError("\(path) is not base64")
                }
                return secret
            },
            jwks: try options.jwt.jwksFiles.map { try readText($0) }
        )
        var jwt: EnrollmentPolicy.JWTRules?
        if let jwtKeys {
            guard let audience = options.jwt.audience, !audience.isEmpty, let issuer = options.jwt.issuer,
                !issuer.isEmpty
            else {
                throw SigilInputError("enrollment JWTs need --jwt-audience and --jwt-issuer")
            }
            jwt = EnrollmentPolicy.JWTRules(keys: jwtKeys, audience: audience, issuer: issuer)
            jwt?.allowsReuse = options.jwt.reuse
        }
        let dpop = try dpopVerifier(
            options, keys: jwtKeys, nonces: nonces, clock: clock, masterKey: try data.master())
        // With JWTs, a bootstrap token would be a second way in: only an explicitly given one is on.
        let token = jwt == nil || options.enrollToken != nil ? try data.enrollToken(given: options.enrollToken) : nil
        let policy = EnrollmentPolicy(
            bootstrapToken: token?.token,
            jwt: jwt,
            isOpen: options.openEnrollment,
            clock: clock
        )
        if options.openEnrollment {
            logger.warning("open enrollment: anyone who can reach this server can register a device")
        }

        let origin = try publicOrigin(options)
        let outcomes = RequestOutcomes(clock: clock, metricsFactory: metricsFactory, monitored: options.monitor)
        func middleware(dpop: DPoPVerifier?, protected: Bool) -> SigilMiddleware<SigilBasicRequestContext> {
            let exchange = Exchange(
                verifier: verifier,
                responseSigner: options.signsResponses ? responseSigner : nil,
                sealing: SealedBodies(
                    ring: serverKeys, extraKeys: Array(sealingFiles.keys.dropFirst()),
                    extraRetired: sealingFiles.retired, sealedPaths: options.sealedPaths),
                includeSignatureBase: options.includeSignatureBase,
                bodyTimeout: nil,
                dpop: dpop,
                origin: origin,
                monitor: protected ? options.monitor : [],
                outcomes: protected ? outcomes : nil,
                requireAssertion: protected ? options.appAttest.requireAssertion : []
            )
            return SigilMiddleware(exchange: exchange, readsClientCertificate: clientCA != nil, secure: true)
        }
        // DPoP and monitor mode apply to the protected routes; a device's own routes (registration,
        // rotation, revocation) take its Sigil key's signature, always.
        let protected = middleware(dpop: dpop, protected: true)
        let backupPin = options.certificateFile == nil ? try data.backupPin() : nil
        var registration = RegistrationService.Configuration(verifier: verifierConfiguration)
        registration.secretOverlap = options.secretOverlap
        registration.rotationGrace = options.rotationGrace
        registration.keyFormats = .withRSA
        registration.assertionPaths = options.appAttest.requireAssertion
        if let served {
            // The key served now, then the next one's (published before its promotion) and the backup key's.
            registration.publishedPins = {
                // Read each time: a TLS rotation takes the backup key and leaves a new one.
                let now = served.pins
                return (now.current, now.next + ((try? data.backupPin()).map { [$0] } ?? []))
            }
        }
        let service = RegistrationService(
            registry: directory,
            nonces: nonces,
            enrollment: policy,
            certificates: try data.certificateAuthority(),
            attestation: attestation,
            android: android,
            configuration: registration,
            clock: clock,
            metricsFactory: metricsFactory,
            logger: logger
        )
        let router = Router(context: SigilBasicRequestContext.self)
        let accessLog = try options.accessLog.map { try AccessLog(path: $0) }
        if let accessLog {
            accessLog.reopenOnHangup()
            router.add(middleware: AccessLogMiddleware(log: accessLog, clock: clock))
        }
        SigilRegistrationRoutes(
            service: service, middleware: middleware(dpop: nil, protected: false), pins: pins,
            backupPins: backupPin.map { [$0] } ?? []
        ).add(to: router)
        var upstreamClient: HTTPClient?
        var gateway: GatewayRoutes?
        if let upstream = options.upstream {
            // A backend that refuses connections is a 502 within 2 s (connecting is retried until then).
            var configuration = HTTPClient.Configuration(
                redirectConfiguration: .disallow,
                timeout: .init(
                    connect: GatewayRoutes.timeAmount(min(upstream.timeout, .seconds(2))),
                    read: GatewayRoutes.timeAmount(upstream.timeout)),
                decompression: .disabled)
            configuration.httpVersion = .automatic
            configuration.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = 64
            let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
            upstreamClient = client
            do {
                gateway = try GatewayRoutes(
                    middleware: protected, upstream: upstream, client: client, bodyLimit: options.verifier.bodyLimit)
            } catch {
                try? await client.shutdown()
                throw error
            }
        } else {
            let echo = EchoRoutes(middleware: protected, bodyLimit: options.verifier.bodyLimit)
            echo.add(to: router)
            if options.benchmarkRoute { echo.addBenchmarkRoute(to: router) }
        }
        var background: [any Service] = [
            AuditRetentionService(directory: directory, retention: options.auditRetention, clock: clock, logger: logger)
        ]
        var adminPort: ListeningPort?
        if options.admin.port != nil {
            let port = ListeningPort()
            adminPort = port
            background.append(
                try adminApplication(
                    options.admin,
                    administration: {
                        var administration = Administration(
                            directory: directory, serverKeys: serverKeys, clock: clock, outcomes: outcomes,
                            metrics: metricsFactory)
                        if options.certificateFile == nil { administration.backupTLSKey = data.backupTLSKey }
                        return administration
                    }(),
                    identity: identity,
                    deviceCAs: (clientCA ?? [])
                        + (try data.certificateAuthority().map {
                            [try NIOSSLCertificate(bytes: try $0.certificate.serializeAsPEM().derBytes, format: .der)]
                        } ?? []),
                    metrics: registry, limits: options.connectionLimits, logger: logger,
                    onListening: { await port.set($0) }))
        }
        // With an admin API, /metrics is served there only, behind its credential.
        if let registry, adminPort == nil {
            router.get("metrics") { _, _ in
                Response(
                    status: .ok,
                    headers: [.contentType: "text/plain; version=0.0.4"],
                    body: .init(byteBuffer: ByteBuffer(bytes: registry.emitToBuffer()))
                )
            }
        }
        // Last, after every route: what none of them answers goes to the backend.
        gateway?.addFallback(to: router)

        let application = Application(
            router: router,
            server: .sigilTLS(
                tlsConfiguration: tls,
                configuration: HTTP2UpgradeChannel.Configuration(
                    // An HTTP/2 connection with no stream open waits as long as a request head may take.
                    idleTimeout: .nanoseconds(options.timeouts.header.nanoseconds),
                    gracefulCloseTimeout: .seconds(5),
                    streamConfiguration: options.timeouts.channelConfiguration(
                        metricsFactory: metricsFactory, clock: clock)
                ),
                limits: options.connectionLimits,
                metricsFactory: metricsFactory
            ),
            configuration: ApplicationConfiguration(address: .hostname(options.host, port: options.port)),
            onServerRunning: { channel in await onListening(channel.localAddress?.port ?? options.port) },
            logger: logger
        )
        return Prepared(
            application: application,
            pins: pins,
            backupPin: backupPin,
            certificateFile: tlsFiles.certificate,
            madeCertificate: tlsFiles.isNew,
            enrollToken: token?.token,
            madeToken: token?.isNew ?? false,
            background: background,
            serverKeys: serverKeys,
            outcomes: outcomes,
            accessLog: accessLog,
            adminPort: adminPort,
            stores: stores,
            responseKeyID: responseKeyID,
            upstreamClient: upstreamClient
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
