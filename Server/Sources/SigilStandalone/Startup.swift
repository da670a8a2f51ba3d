import AsyncHTTPClient
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
import SigilServer
import SigilTLS

/// `sigil serve`'s start-up, one step per feature: each reads its options and returns what the server
/// is built from. ``SigilStandalone/prepare(_:data:stores:logger:onListening:)`` calls them in order.
extension SigilStandalone {
    /// What start-up has built so far, shared by the steps after it.
    struct Startup {
        let options: Options
        let data: DataDirectory
        let stores: Stores
        let logger: Logger
        /// The Prometheus registry of `--metrics`, whose factory every counter is made from.
        let prometheus: PrometheusCollectorRegistry?
        let metricsFactory: any MetricsFactory

        var clock: any UnixClock { options.clock }
        var directory: Directory { stores.directory }
    }

    /// The TLS side of a server: its files, its keys' ring, what it serves and pins.
    struct ServedTLS {
        let files: (certificate: String, key: String, isNew: Bool)
        let serverKeys: ServerKeyRing
        let sealingFiles: SealedBodies
        /// The self-signed TLS key served from the ring, when the server makes its own certificate.
        let served: ServedTLSKey?
        let identity: TLSIdentity
        let pins: [String]
        let clientCA: [NIOSSLCertificate]?
        let configuration: TLSConfiguration
    }

    // MARK: Verification

    /// The request verifier: the options' configuration, App Attest's assertions when on, last use
    /// recorded in the store; and App Attest's enrollment.
    static func verification(_ startup: Startup) throws -> (RequestVerifier, AttestationEnrollment?) {
        var configuration = startup.options.verifier
        let attestation = try appAttest(startup, verifier: &configuration)
        configuration.usage = KeyUsageTracker(directory: startup.directory)
        let verifier = RequestVerifier(
            keys: startup.directory, nonces: startup.stores.nonces, clock: startup.clock, configuration: configuration,
            metricsFactory: startup.metricsFactory)
        return (verifier, attestation)
    }

    // MARK: App Attest

    /// App Attest enrollment (`--app-id`), its assertions set on `verifier`; `nil` when off.
    static func appAttest(_ startup: Startup, verifier: inout VerifierConfiguration) throws -> AttestationEnrollment? {
        let options = startup.options.appAttest
        guard !options.appIDs.isEmpty else { return nil }
        let appAttest = AppAttestVerifier(
            appIDs: options.appIDs, environments: options.environments,
            root: options.root ?? AppAttestVerifier.appleAppAttestationRootCA)
        // Counters and receipts with the keys (SQLite, PostgreSQL): a restart or another replica forgets none.
        let records = startup.directory
        verifier.assertions = AppAttestAssertions(verifier: appAttest, counters: records)
        var attestations: any DeviceAttestationVerifier = appAttest
        if !options.debugTokenFiles.isEmpty {
            // Secret files: refused when others may read them, as the master key is.
            let tokens = try options.debugTokenFiles.map { path in
                String(decoding: try SecureFile.readSecret(path), as: UTF8.self)
                    .trimmingCharacters(in: .whitespacesAndNewlines)
            }
            attestations = try AppAttestDebugVerifier(verifier: appAttest, tokens: tokens)
            verifier.acceptsAppAttestDebugKeys = true
            startup.logger.warning(
                "App Attest debug attestations accepted (--app-attest-debug-token): never in production, where they prove no genuine device"
            )
        }
        // Challenges are keyed from the master key, so replicas sharing it accept each other's.
        return AttestationEnrollment(
            verifier: attestations, challenges: AttestationChallenges(masterKey: try startup.data.master()),
            store: records)
    }

    // MARK: Android

    /// Android Key Attestation enrollment (`--android-app`); `nil` when off.
    static func android(_ startup: Startup) throws -> AndroidEnrollment? {
        let options = startup.options.android
        guard let policy = options.policy else { return nil }
        let statusFile = try options.statusFile.map { path in
            do {
                return try AttestationStatusFile(path: path, now: startup.clock.now())
            } catch let error as AndroidAttestationError {
                throw SigilInputError("--android-status: \(error.detail)")
            }
        }
        if statusFile == nil {
            startup.logger.warning(
                "Android Key Attestation without a status list: revoked attestation keys are not refused (--android-status FILE)"
            )
        }
        var verifier = AndroidKeyEnrollmentVerifier(
            policy: policy, roots: options.roots ?? GoogleAttestationRoots.hardware)
        verifier.statusFile = statusFile
        return AndroidEnrollment(
            verifier: verifier, challenges: AttestationChallenges(masterKey: try startup.data.master()))
    }

    // MARK: Keys and TLS

    /// The server's keys (in the store, shared by replicas; the data directory's key files imported on
    /// the first start) and the TLS it serves: its own certificate, whose key rotates in the ring, or
    /// `--cert`'s.
    static func keysAndTLS(_ startup: Startup) async throws -> ServedTLS {
        let options = startup.options
        let data = startup.data
        var names = ["localhost", "127.0.0.1", "::1"]
        if !names.contains(options.host) && options.host != "0.0.0.0" && options.host != "::" {
            names.append(options.host)
        }
        let files = try data.tlsFiles(certificate: options.certificateFile, key: options.keyFile, names: names)
        // The key file, the data directory's or --key, is refused when others may read it (TLSIdentity).
        let fileIdentity = try TLSIdentity(certificateFile: files.certificate, keyFile: files.key)
        let selfSigned = options.certificateFile == nil
        let fileKey =
            selfSigned
            ? try KeyFile.load(Array(try SecureFile.readSecret(files.key)), algorithm: .ecdsaP256SHA256).signingKey
            : nil
        let sealingFiles = try data.sealingKeys(sealedPaths: options.sealedPaths)
        let serverKeys = try await ServerKeyRing.open(
            directory: startup.directory, overlap: options.keyOverlap, clock: startup.clock, keyFormats: .withRSA,
            initialResponse: { try data.responseKey() },
            initialSealing: {
                guard let current = sealingFiles.keys.first else { throw SigilInputError("no sealing key") }
                return current
            },
            initialTLS: fileKey.map { key in { @Sendable in key } })
        let served =
            selfSigned
            ? ServedTLSKey(
                ring: serverKeys, names: names, certificateFile: files.certificate, keyFile: files.key,
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
            identity: identity, allowClassical: options.allowClassical, clientCA: clientCA, groups: options.tlsGroups)
        return ServedTLS(
            files: files, serverKeys: serverKeys, sealingFiles: sealingFiles, served: served, identity: identity,
            pins: pins, clientCA: clientCA, configuration: served?.serving(configured) ?? configured)
    }

    // MARK: JWT and enrollment

    /// Who may enroll: the bootstrap token, enrollment JWTs (`--jwt-key`, `--jwks`, `--jwt-secret`),
    /// or anyone (`--open-enrollment`); and the JWT keys, which DPoP's access tokens are checked with too.
    static func enrollment(_ startup: Startup) async throws -> (
        policy: EnrollmentPolicy, jwtKeys: JWTKeyCollection?, token: (token: String, isNew: Bool)?
    ) {
        let options = startup.options
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
        // With JWTs, a bootstrap token would be a second way in: only an explicitly given one is on.
        let token =
            jwt == nil || options.enrollToken != nil ? try startup.data.enrollToken(given: options.enrollToken) : nil
        if options.openEnrollment {
            startup.logger.warning("open enrollment: anyone who can reach this server can register a device")
        }
        let policy = EnrollmentPolicy(
            bootstrapToken: token?.token, jwt: jwt, isOpen: options.openEnrollment, clock: startup.clock)
        return (policy, jwtKeys, token)
    }

    // MARK: Exchanges

    /// What every exchange of the server shares, and the middleware for the protected routes (DPoP,
    /// monitor mode, App Attest's assertion paths, counted) or a device's own routes (none of those).
    struct Exchanges {
        let startup: Startup
        let verifier: RequestVerifier
        let responseSigner: ResponseSigner
        let tls: ServedTLS
        let origin: String?
        let outcomes: RequestOutcomes

        func middleware(dpop: DPoPVerifier?, protected: Bool) -> SigilMiddleware<SigilBasicRequestContext> {
            let options = startup.options
            let exchange = Exchange(
                verifier: verifier,
                responseSigner: options.signsResponses ? responseSigner : nil,
                sealing: SealedBodies(
                    ring: tls.serverKeys, extraKeys: Array(tls.sealingFiles.keys.dropFirst()),
                    extraRetired: tls.sealingFiles.retired, sealedPaths: options.sealedPaths),
                includeSignatureBase: options.includeSignatureBase,
                // Hummingbird's channel enforces the body timeout (RequestTimeouts).
                bodyTimeout: nil,
                dpop: dpop,
                origin: origin,
                monitor: protected ? options.monitor : [],
                outcomes: protected ? outcomes : nil,
                requireAssertion: protected ? options.appAttest.requireAssertion : []
            )
            return SigilMiddleware(exchange: exchange, readsClientCertificate: tls.clientCA != nil, secure: true)
        }
    }

    // MARK: Registration

    /// The registration service: devices, secrets, rotation, certificates, discovery (whose pins are
    /// read at each request: the TLS key served now, the next one's, the backup key's).
    static func registration(
        _ startup: Startup, verifier: VerifierConfiguration, tls: ServedTLS, policy: EnrollmentPolicy,
        attestation: AttestationEnrollment?, android: AndroidEnrollment?
    ) throws -> RegistrationService {
        let options = startup.options
        var registration = RegistrationService.Configuration(verifier: verifier)
        registration.secretOverlap = options.secretOverlap
        registration.rotationGrace = options.rotationGrace
        registration.keyFormats = .withRSA
        registration.assertionPaths = options.appAttest.requireAssertion
        if let served = tls.served {
            let data = startup.data
            registration.publishedPins = {
                // Read each time: a TLS rotation takes the backup key and leaves a new one.
                let now = served.pins
                return (now.current, now.next + ((try? data.backupPin()).map { [$0] } ?? []))
            }
        }
        return RegistrationService(
            directory: startup.directory, nonces: startup.stores.nonces, enrollment: policy,
            certificates: try startup.data.certificateAuthority(), attestation: attestation, android: android,
            configuration: registration, clock: startup.clock, metricsFactory: startup.metricsFactory,
            logger: startup.logger)
    }

    /// The access log (`--access-log`), its middleware first on `router`; `nil` when off.
    static func accessLog(_ startup: Startup, router: Router<SigilBasicRequestContext>) throws -> AccessLog? {
        guard let path = startup.options.accessLog else { return nil }
        let log = try AccessLog(path: path)
        log.reopenOnHangup()
        router.add(middleware: AccessLogMiddleware(log: log, clock: startup.clock))
        return log
    }

    // MARK: Gateway or echo

    /// `--upstream`'s gateway and its HTTP client, or, without one, the echo routes added to `router`.
    static func backend(
        _ startup: Startup, protected: SigilMiddleware<SigilBasicRequestContext>,
        router: Router<SigilBasicRequestContext>
    ) async throws -> (client: HTTPClient?, gateway: GatewayRoutes?) {
        let options = startup.options
        guard let upstream = options.upstream else {
            let echo = EchoRoutes(middleware: protected, bodyLimit: options.verifier.bodyLimit)
            echo.add(to: router)
            if options.benchmarkRoute { try echo.addBenchmarkRoute(to: router) }
            return (nil, nil)
        }
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
        do {
            let gateway = try GatewayRoutes(
                middleware: protected, upstream: upstream, client: client, bodyLimit: options.verifier.bodyLimit)
            return (client, gateway)
        } catch {
            try? await client.shutdown()
            throw error
        }
    }

    // MARK: Admin and metrics

    /// What runs beside the application for operators: the audit trail's pruning and the admin API's
    /// application on `--admin-port`, when set, with the port it listens on; `/metrics` on the public
    /// port when there is no admin API to serve it behind a credential.
    static func admin(
        _ startup: Startup, tls: ServedTLS, outcomes: RequestOutcomes, router: Router<SigilBasicRequestContext>
    ) throws -> (background: [any Service], port: ListeningPort?) {
        let options = startup.options
        let pruning = AuditRetentionService(
            directory: startup.directory, retention: options.auditRetention, clock: startup.clock,
            logger: startup.logger)
        guard options.admin.port != nil else {
            if let prometheus = startup.prometheus {
                router.get("metrics") { _, _ in
                    Response(
                        status: .ok, headers: [.contentType: "text/plain; version=0.0.4"],
                        body: .init(byteBuffer: ByteBuffer(bytes: prometheus.emitToBuffer())))
                }
            }
            return ([pruning], nil)
        }
        let port = ListeningPort()
        var administration = Administration(
            directory: startup.directory, serverKeys: tls.serverKeys, clock: startup.clock, outcomes: outcomes,
            metrics: startup.metricsFactory)
        if options.certificateFile == nil { administration.backupTLSKey = startup.data.backupTLSKey }
        let deviceCA = try startup.data.certificateAuthority().map {
            [try NIOSSLCertificate(bytes: try $0.certificate.serializeAsPEM().derBytes, format: .der)]
        }
        let service = try adminApplication(
            options.admin, administration: administration, identity: tls.identity,
            deviceCAs: (tls.clientCA ?? []) + (deviceCA ?? []), metrics: startup.prometheus,
            limits: options.connectionLimits, logger: startup.logger, onListening: { await port.set($0) })
        return ([pruning, service], port)
    }

    // MARK: The application

    /// The public application: `router` over TLS, HTTP/2 and HTTP/1.1, with the connection limits and
    /// the head and body timeouts.
    static func application(
        _ startup: Startup, router: Router<SigilBasicRequestContext>, tls: TLSConfiguration,
        onListening: @escaping @Sendable (Int) async -> Void
    ) -> Application<RouterResponder<SigilBasicRequestContext>> {
        let options = startup.options
        return Application(
            router: router,
            server: .sigilTLS(
                tlsConfiguration: tls,
                configuration: HTTP2UpgradeChannel.Configuration(
                    // An HTTP/2 connection with no stream open waits as long as a request head may take.
                    idleTimeout: .nanoseconds(options.timeouts.header.nanoseconds),
                    gracefulCloseTimeout: .seconds(5),
                    streamConfiguration: options.timeouts.channelConfiguration(
                        metricsFactory: startup.metricsFactory, clock: startup.clock)
                ),
                limits: options.connectionLimits,
                metricsFactory: startup.metricsFactory
            ),
            configuration: ApplicationConfiguration(address: .hostname(options.host, port: options.port)),
            onServerRunning: { channel in await onListening(channel.localAddress?.port ?? options.port) },
            logger: startup.logger
        )
    }
}
