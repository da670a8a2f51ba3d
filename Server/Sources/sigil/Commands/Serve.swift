import ArgumentParser
import Foundation
import Logging
import NIOCore
import ServiceLifecycle
import SigilAndroidAttestation
import SigilAppAttest
@_spi(Sigil) import SigilCore
import SigilHummingbird
import SigilServer
import SigilStandalone

/// `sigil serve`: the protected server with its registration API, ready with no arguments.
struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run a protected HTTPS server: registration API, signed echo route, post-quantum TLS.",
        discussion: """
            With no arguments: data in ~/.sigil, HTTPS on 127.0.0.1:8443 with a self-signed certificate \
            (made on first start; its pin is printed), TLS 1.3 with X25519MLKEM768 only.
            """
    )

    @OptionGroup var server: ServerOptions

    func run() async throws {
        try await Self.run(try server.options(), name: "sigil serve")
    }

    /// Runs the server `options` describe until SIGTERM or SIGINT (SIGHUP does not stop it), printing
    /// the banner once it listens.
    static func run(_ options: SigilStandalone.Options, name: String) async throws {
        var logger = Logger(label: name.replacingOccurrences(of: " ", with: "."))
        logger.logLevel =
            ProcessInfo.processInfo.environment["LOG_LEVEL"].flatMap { Logger.Level(rawValue: $0) } ?? .info
        let host = options.host.contains(":") ? "[\(options.host)]" : options.host
        // Log rotation's SIGHUP never ends the server (before it listens too); the access log, when
        // there is one, reopens on it (AccessLog.reopenOnHangup).
        signal(SIGHUP, SIG_IGN)
        let banner = Banner()
        // A first start that never listens (a port in use) leaves no data directory behind: only one
        // this process's own mkdir made (not a link, not one another server made a moment before),
        // and only while no other server holds its lock.
        let made = mkdir(options.dataDirectory, 0o700) == 0
        do {
            try await serve(options, name: name, host: host, banner: banner, logger: logger)
        } catch {
            if made, await !banner.listened, !ServingLock.isHeld(DataDirectory(existing: options.dataDirectory)) {
                try? FileManager.default.removeItem(atPath: options.dataDirectory)
            }
            throw error
        }
    }

    private static func serve(
        _ options: SigilStandalone.Options, name: String, host: String, banner: Banner, logger: Logger
    ) async throws {
        let prepared = try await SigilStandalone.prepare(options, logger: logger) { port in
            await banner.print(port: port)
        }
        await banner.set { port in
            Self.banner(prepared, options: options, url: "https://\(host):\(port)", name: name)
        }
        if let adminPort = prepared.adminPort {
            let adminHost = options.admin.host.contains(":") ? "[\(options.admin.host)]" : options.admin.host
            let credential = options.admin.tokenFile.map { "bearer token in \($0)" } ?? "client certificates"
            Task {
                let port = await adminPort.value()
                FileHandle.standardOutput.write(
                    Data(
                        ("  admin API: https://\(adminHost):\(port)/admin/v1 (\(credential)); "
                            + "console: https://\(adminHost):\(port)/\n").utf8))
            }
        }
        // The stores are services too: they close when the group stops, even when it stops on an error.
        let group = ServiceGroup(
            services: prepared.services,
            gracefulShutdownSignals: [.sigterm, .sigint],
            logger: logger
        )
        try await group.run()
    }

    static func banner(
        _ prepared: SigilStandalone.Prepared, options: SigilStandalone.Options, url: String, name: String
    )
        -> String
    {
        var banner = ["\(name): listening on \(url) (TLS 1.3, HTTP/2 and HTTP/1.1)"]
        if let upstream = options.upstream {
            banner.append(
                "  upstream: \(upstream.url) (\(upstream.keepPath ? "paths kept, non-canonical refused" : "canonical paths"))"
            )
        }
        banner.append("  data directory: \(options.dataDirectory)")
        banner.append("  stores: \(prepared.stores.description)")
        banner.append("  certificate: \(prepared.certificateFile)\(prepared.madeCertificate ? " (made now)" : "")")
        for pin in prepared.pins { banner.append("  pin: \(pin)") }
        if let backup = prepared.backupPin {
            banner.append("  backup pin (tls-backup-key.pem, not in use yet): \(backup)")
        }
        banner.append(features(options))
        let clientCertificates = options.clientCAFile != nil
        banner.append(
            "  key exchange: X25519MLKEM768\(options.allowClassical ? ", X25519" : " only")"
                + (clientCertificates ? "; client certificates required" : ""))
        // Absolute, so that the lines below run from any directory.
        let dataDirectory = URL(fileURLWithPath: options.dataDirectory).standardizedFileURL.path
        let tokenFile = dataDirectory + "/enroll-token"
        let certificateFile = URL(fileURLWithPath: prepared.certificateFile).standardizedFileURL.path
        // The enroll line must paste and run: the token itself only where this start shows it anyway
        // (made now) or was handed it on its command line, else where it is kept.
        let token: String
        if let made = prepared.enrollToken, prepared.madeToken {
            banner.append("  enrollment token (made now, kept in \(tokenFile)): \(made)")
            token = Shell.quoted(made)
        } else if let given = prepared.enrollToken, options.enrollToken != nil {
            let fromEnvironment = ProcessInfo.processInfo.environment["SIGIL_ENROLL_TOKEN"] == given
            banner.append("  enrollment token: as given" + (fromEnvironment ? " in SIGIL_ENROLL_TOKEN" : ""))
            token = fromEnvironment ? #""$SIGIL_ENROLL_TOKEN""# : Shell.quoted(given)
        } else if prepared.enrollToken != nil {
            banner.append("  enrollment token: in \(tokenFile)")
            token = "\"$(cat \(Shell.quoted(tokenFile)))\""
        } else {
            banner.append(
                "  enrollment: JWTs for audience \(options.jwt.audience ?? "") from \(options.jwt.issuer ?? "") only"
                    + " (enrollment.jwt below: one of them)")
            token = "\"$(cat enrollment.jwt)\""
        }
        // A server listening on every address is reached on loopback, a name its certificate holds.
        let reachable = url.replacingOccurrences(of: "https://0.0.0.0:", with: "https://127.0.0.1:")
            .replacingOccurrences(of: "https://[::]:", with: "https://[::1]:")
        let clientFlags = clientCertificates ? " --cert client-cert.pem --key client-key.pem" : ""
        banner.append(
            "  discovery: curl --cacert \(Shell.quoted(certificateFile))\(clientFlags) "
                + "\(reachable)/.well-known/sigil")
        if !options.allowClassical {
            banner.append(
                "    (X25519MLKEM768 only: a curl on OpenSSL before 3.5 needs this server started with --allow-classical)"
            )
        }
        if let clientCA = options.clientCAFile {
            // The data directory's own CA (sigil ca init) issues here; another CA is its operator's.
            let ownCA =
                URL(fileURLWithPath: clientCA).standardizedFileURL.path == dataDirectory + "/ca-cert.pem"
            banner.append(
                ownCA
                    ? "  a client certificate: sigil keygen --alg ecdsa-p256-sha256 --out client-key.pem && sigil ca issue "
                        + "--data-dir \(Shell.quoted(dataDirectory)) --key client-key.pem --out client-cert.pem"
                    : "  a client certificate: client-cert.pem and client-key.pem from the CA in \(clientCA)")
        }
        let pins = ([prepared.pins.first] + [prepared.backupPin]).compactMap { $0 }.map { "--pin \($0)" }
        banner.append(
            "  enroll this machine: sigil enroll \(reachable) --token \(token) \(pins.joined(separator: " "))"
                + clientFlags)
        return banner.joined(separator: "\n") + "\n"
    }
}

extension Serve {
    /// The banner's one line of the features `options` turn on or leave off, named as their flags are.
    static func features(_ options: SigilStandalone.Options) -> String {
        func list(_ values: [String]) -> String? { values.isEmpty ? nil : values.joined(separator: ",") }
        let dpop: String
        switch options.dpop.mode {
        case nil: dpop = "off"
        case .alone?: dpop = "alone"
        case .withSignature?: dpop = "with-signature"
        }
        let features = [
            "DPoP " + dpop + (options.dpop.mode != nil && options.dpop.nonces ? " (nonces required)" : ""),
            "App Attest " + (list(options.appAttest.appIDs) ?? "off")
                + (list(options.appAttest.requireAssertion).map { " (assertions required under \($0))" } ?? ""),
            "Android " + (list(options.android.policy?.apps.map(\.package) ?? []) ?? "off"),
            "monitor " + (list(options.monitor) ?? "off"),
            "access log " + (options.accessLog ?? "off"),
            "sealed paths " + (list(options.sealedPaths) ?? "off"),
            "metrics " + (options.metrics ? "on" : "off"),
        ]
        return "  features: " + features.joined(separator: "; ")
    }
}

/// The options of `sigil serve`, which `sigil gateway` takes too.
struct ServerOptions: ParsableArguments {
    @Option(name: .customLong("data-dir"), help: "The data directory (default: ~/.sigil).")
    var dataDirectory: String?

    @Option(name: .long, help: "The listen address.")
    var host = "127.0.0.1"

    @Option(name: .long, help: "The listen port (0: any free port).")
    var port = 8443

    @Option(name: .long, help: "A PEM certificate chain (default: the self-signed one of the data directory).")
    var cert: String?

    @Option(name: .long, help: "The private key of --cert.")
    var key: String?

    @Option(name: .customLong("client-ca"), help: "Require client certificates chained to the CAs in this PEM file.")
    var clientCA: String?

    @Flag(name: .customLong("allow-classical"), help: "Also accept X25519 key exchange without ML-KEM.")
    var allowClassical = false

    @Option(
        name: .customLong("enroll-token"),
        help: "The bootstrap enrollment token (default: $SIGIL_ENROLL_TOKEN, else the stored or a new one).")
    var enrollToken: String?

    @Flag(name: .customLong("open-enrollment"), help: "Let anyone register a device (logs a warning).")
    var openEnrollment = false

    @Option(name: .customLong("jwt-key"), help: "A PEM public key (P-256: ES256, RSA: RS256) for enrollment JWTs.")
    var jwtKeys: [String] = []

    @Option(name: .customLong("jwt-secret"), help: "A file with the base64 HS256 secret for enrollment JWTs.")
    var jwtSecrets: [String] = []

    @Option(name: .customLong("jwt-audience"), help: "The audience enrollment JWTs must name (required with JWT keys).")
    var jwtAudience: String?

    @Option(name: .customLong("jwt-issuer"), help: "The issuer enrollment JWTs must name (required with JWT keys).")
    var jwtIssuer: String?

    @Option(name: .long, help: "A JWKS file for enrollment JWTs.")
    var jwks: [String] = []

    @Flag(
        name: .customLong("jwt-reuse"),
        help: "Let one enrollment JWT enroll any number of devices until it expires (default: one device each).")
    var jwtReuse = false

    @Option(
        name: .customLong("dpop"),
        help: ArgumentHelp(
            "Accept DPoP-bound access tokens (RFC 9449), checked with the --jwt-* keys: alone, or with-signature.",
            valueName: "alone|with-signature"))
    var dpop: String?

    @Flag(name: .customLong("dpop-nonce"), help: "Require server-provided DPoP nonces (DPoP-Nonce, use_dpop_nonce).")
    var dpopNonce = false

    @Option(
        name: .customLong("dpop-origin"),
        help: "The origin DPoP proofs must name in htu (default: the request's own scheme and authority).")
    var dpopOrigin: String?

    @Option(name: .customLong("max-skew"), help: "Seconds a request's timestamp may be from the server's time.")
    var maxSkew: Int64 = 300

    @Option(name: .customLong("body-limit"), help: "The largest request body, in bytes.")
    var bodyLimit = 8 << 20

    @Option(name: .customLong("secret-overlap"), help: "Seconds a replaced HMAC secret stays valid.")
    var secretOverlap: Int64 = 86_400

    @Option(name: .customLong("rotation-grace"), help: "Seconds a rotated key stays valid.")
    var rotationGrace: Int64 = 86_400

    @Option(name: .customLong("header-timeout"), help: "Seconds a client may take to send a request head.")
    var headerTimeout: Int64 = 10

    @Option(name: .customLong("body-timeout"), help: "Seconds a request body may stall.")
    var bodyTimeout: Int64 = 30

    @Option(name: .customLong("request-timeout"), help: "Seconds a whole request may take to arrive.")
    var requestTimeout: Int64 = 60

    @Option(
        name: .customLong("handshake-timeout"),
        help: "Seconds a connection may take to finish its TLS handshake before it is closed.")
    var handshakeTimeout: Int64 = 10

    @Option(
        name: .customLong("max-connections"),
        help: "Connections open at once; more are closed when accepted (default 4096, or the open-file limit less 64).")
    var maxConnections: Int?

    @Option(
        name: .long,
        help: """
            Where devices and keys are kept: sqlite (the data directory, the default) or \
            postgres://user@host:port/database[?sslmode=disable] (TLS required unless disabled), shared by replicas \
            (password: SIGIL_STORE_PASSWORD or --store-password-file).
            """)
    var store = "sqlite"

    @Option(
        name: .long,
        help: """
            Where nonces are kept: store (with the keys, the default), memory (one server), or \
            redis://host:port[/db] (rediss:// for TLS; password: SIGIL_NONCES_PASSWORD or --nonces-password-file).
            """)
    var nonces = "store"

    @Option(name: .customLong("store-password-file"), help: "A file holding the PostgreSQL password.")
    var storePasswordFile: String?

    @Option(name: .customLong("nonces-password-file"), help: "A file holding the Redis password.")
    var noncesPasswordFile: String?

    @Flag(
        name: .customLong("nonces-trusted-link"),
        help: "Accept a cleartext redis:// nonce store off loopback (a private link you vouch for).")
    var noncesTrustedLink = false

    @Option(name: .customLong("store-timeout"), help: "Milliseconds a shared store may take to answer.")
    var storeTimeout: Int64 = 2000

    @Option(
        name: .customLong("cache-size"),
        help: "The most key-directory lookups kept in memory (about 1 KiB each; one or two per active device).")
    var cacheSize = 100_000

    @Flag(name: .customLong("debug-signature-base"), help: "Put the server's signature base in refusals.")
    var debugSignatureBase = false

    @Option(
        name: .customLong("require-sealed"),
        help:
            "Refuse bodies not sealed (Content-Encoding: sigil-hpke) under this path (/v1/pay: it and below; / for all); repeatable."
    )
    var requireSealed: [String] = []

    @Option(
        name: .customLong("monitor"),
        help:
            "Monitor, not enforce, under this path prefix (/v1/legacy: it and below; / for all): a request unsigned or failing verification reaches the route (the backend) unverified, with the code it would have been refused with, and is counted; repeatable."
    )
    var monitor: [String] = []

    @Option(
        name: .customLong("access-log"),
        help:
            "Write one JSON line per request, accepted or refused, to this file (- for standard output); reopened on SIGHUP."
    )
    var accessLog: String?

    @Flag(name: .long, help: "Serve GET /metrics (Prometheus text) with verification counters by outcome.")
    var metrics = false

    @Option(
        name: .customLong("app-id"),
        help:
            "Enroll App Attest keys of this app (TEAMID.bundle.id) by attestation and accept apple-appattest; repeatable."
    )
    var appID: [String] = []

    @Option(
        name: .customLong("app-attest-environment"),
        help: "Accept App Attest keys made in production or development (repeatable; default production).")
    var appAttestEnvironment: [String] = []

    @Option(
        name: .customLong("app-attest-debug-token"),
        help:
            "Also accept App Attest debug attestations (the simulator's AppAttestDebugProvider) made with the token in FILE (more than 128 bits: sigil keygen --alg hmac-sha256 writes one; repeatable). Never in production."
    )
    var appAttestDebugToken: [String] = []

    @Option(
        name: .customLong("require-assertion"),
        help:
            "Take only requests signed by an App Attest assertion under this path prefix (/v1/transfers: it and below); App Attest devices sign the rest with the key their attestation vouched for; repeatable."
    )
    var requireAssertion: [String] = []

    @Option(
        name: .customLong("android-app"),
        help:
            "Enroll Android Keystore keys of this app by Key Attestation: PACKAGE:SHA256 of its signing certificate (repeatable)."
    )
    var androidApp: [String] = []

    @Option(
        name: .customLong("android-status"),
        help: "Google's attestation status list (JSON from android.googleapis.com/attestation/status).")
    var androidStatus: String?

    @Option(
        name: .customLong("android-security-level"),
        help: "The lowest security level an Android attestation may have: tee (default) or strongbox.")
    var androidSecurityLevel = "tee"

    @Option(
        name: .customLong("android-min-patch-level"),
        help: "The oldest OS patch level an Android device may have, YYYYMM.")
    var androidMinPatchLevel: Int?

    @Flag(
        name: .customLong("android-accept-self-signed"),
        help: "Accept a SelfSigned verified boot (a known custom ROM on a relocked bootloader) besides Verified.")
    var androidAcceptSelfSigned = false

    @Option(
        name: .customLong("admin-port"),
        help:
            "Serve the admin API (devices, revocation, audit, server keys; /metrics with --metrics) on this port (off by default)."
    )
    var adminPort: Int?

    @Option(name: .customLong("admin-host"), help: "The admin API's listen address (default: loopback).")
    var adminHost = "127.0.0.1"

    @Option(
        name: .customLong("admin-token-file"),
        help: "A file (mode 0600) with the admin API's bearer token, 32+ characters.")
    var adminTokenFile: String?

    @Option(
        name: .customLong("admin-client-ca"),
        help: "Admit operators with a client certificate chained to these CAs (their name: the certificate's CN).")
    var adminClientCA: String?

    @Option(
        name: .customLong("key-overlap"),
        help: "Seconds a rotated server key is published before it signs, and the previous one still accepted after.")
    var keyOverlap: Int64 = 7 * 86_400

    @Option(name: .customLong("audit-retention"), help: "Days audit rows are kept.")
    var auditRetention: Int64 = 400

    func validate() throws {
        // A port number is 16 bits: 70000 listened on 70000 - 65536 = 4464.
        for (flag, value) in [("--port", port), ("--admin-port", adminPort ?? 0)] where !(0...65_535).contains(value) {
            throw ValidationError("\(flag) \(value) is no port (0 to 65535)")
        }
        for prefix in requireAssertion where !prefix.hasPrefix("/") {
            throw ValidationError(
                "--require-assertion \(OperatorText.escaped(prefix)) is a path prefix: it starts with /")
        }
        for prefix in monitor where !PathPrefixes.isMonitorable(prefix) {
            throw ValidationError(
                "--monitor \(OperatorText.escaped(prefix)) would never match: a prefix starts with / and is written as routes are, lowercase, without dot segments or encoded characters"
            )
        }
        // One port cannot take both listeners (unless each is on an address of its own).
        let everywhere = ["0.0.0.0", "::"]
        if let adminPort, adminPort == port, port != 0,
            adminHost == host || everywhere.contains(adminHost) || everywhere.contains(host)
        {
            throw ValidationError("--admin-port and --port must differ (both are \(port))")
        }
        if adminPort != nil && adminTokenFile == nil && adminClientCA == nil {
            throw ValidationError("--admin-port needs --admin-token-file or --admin-client-ca")
        }
        guard keyOverlap > 0, auditRetention > 0 else {
            throw ValidationError("--key-overlap and --audit-retention are positive")
        }
        guard headerTimeout > 0, bodyTimeout > 0, requestTimeout > 0, handshakeTimeout > 0 else {
            throw ValidationError("timeouts are positive numbers of seconds")
        }
        if let maxConnections, maxConnections < 1 { throw ValidationError("--max-connections is at least 1") }
        guard storeTimeout > 0 else { throw ValidationError("--store-timeout is a positive number of milliseconds") }
        guard cacheSize > 0 else { throw ValidationError("--cache-size is a positive number of lookups") }
        _ = try Self.keyStore(store)
        _ = try Self.nonceStorage(nonces)
    }

    /// `--store`: the URL is checked here, but never echoed (it may carry a password).
    static func keyStore(_ value: String) throws -> SigilStandalone.KeyStore {
        if value == "sqlite" { return .dataDirectory }
        if value.hasPrefix("postgres://") || value.hasPrefix("postgresql://") { return .postgres(url: value) }
        throw ValidationError("--store is sqlite or a postgres:// URL")
    }

    /// `--nonces`.
    static func nonceStorage(_ value: String) throws -> SigilStandalone.NonceStorage {
        switch value {
        case "store": return .withKeys
        case "memory": return .memory
        case _ where value.hasPrefix("redis://") || value.hasPrefix("rediss://"): return .redis(url: value)
        default: throw ValidationError("--nonces is store, memory or a redis:// URL")
        }
    }

    func options() throws -> SigilStandalone.Options {
        var options = SigilStandalone.Options()
        options.dataDirectory = dataDirectory ?? DataDirectory.defaultPath
        options.host = host
        options.port = port
        options.certificateFile = cert
        options.keyFile = key
        options.clientCAFile = clientCA
        options.allowClassical = allowClassical
        options.enrollToken = enrollToken ?? ProcessInfo.processInfo.environment["SIGIL_ENROLL_TOKEN"]
        options.openEnrollment = openEnrollment
        options.jwt.keyFiles = jwtKeys
        options.jwt.secretFiles = jwtSecrets
        options.timeouts = RequestTimeouts(
            header: .seconds(headerTimeout), bodyIdle: .seconds(bodyTimeout), request: .seconds(requestTimeout))
        options.connectionLimits = ConnectionLimits(
            handshake: .seconds(handshakeTimeout), maximumConnections: maxConnections ?? ConnectionLimits.defaultMaximum
        )
        options.jwt.audience = jwtAudience
        options.jwt.issuer = jwtIssuer
        options.jwt.reuse = jwtReuse
        options.jwt.jwksFiles = jwks
        options.verifier.maxSkew = maxSkew
        switch dpop {
        case nil: options.dpop.mode = nil
        case "alone"?: options.dpop.mode = .alone
        case "with-signature"?: options.dpop.mode = .withSignature
        default: throw ValidationError("--dpop is alone or with-signature")
        }
        guard dpop != nil || !dpopNonce && dpopOrigin == nil else {
            throw ValidationError("--dpop-nonce and --dpop-origin go with --dpop")
        }
        options.dpop.nonces = dpopNonce
        options.dpop.origin = dpopOrigin
        options.verifier.bodyLimit = bodyLimit
        options.secretOverlap = secretOverlap
        options.rotationGrace = rotationGrace
        options.includeSignatureBase = debugSignatureBase
        options.sealedPaths = requireSealed
        options.monitor = monitor
        options.accessLog = accessLog
        options.appAttest.appIDs = appID
        options.appAttest.debugTokenFiles = appAttestDebugToken
        options.appAttest.requireAssertion = requireAssertion
        if !appAttestDebugToken.isEmpty && appID.isEmpty {
            throw ValidationError("--app-attest-debug-token goes with --app-id")
        }
        if !requireAssertion.isEmpty && appID.isEmpty {
            throw ValidationError("--require-assertion goes with --app-id")
        }
        if !appAttestEnvironment.isEmpty {
            options.appAttest.environments = Set(
                try appAttestEnvironment.map { name in
                    guard let environment = AppAttestVerifier.Environment(rawValue: name) else {
                        throw ValidationError("--app-attest-environment is production or development")
                    }
                    return environment
                })
        }
        options.android.policy = try androidPolicy()
        if let androidStatus {
            // The file itself is read (and a bad one refused) as the server prepares, before it listens.
            guard options.android.policy != nil else {
                throw ValidationError("--android-status goes with --android-app")
            }
            options.android.statusFile = androidStatus
        }
        options.metrics = metrics
        options.keyStore = try Self.keyStore(store)
        options.nonceStorage = try Self.nonceStorage(nonces)
        options.storePasswordFile = storePasswordFile
        options.noncesPasswordFile = noncesPasswordFile
        options.noncesTrustedLink = noncesTrustedLink
        options.storeTimeout = .milliseconds(storeTimeout)
        options.cacheSize = cacheSize
        options.admin.port = adminPort
        options.admin.host = adminHost
        options.admin.tokenFile = adminTokenFile
        options.admin.clientCAFile = adminClientCA
        options.keyOverlap = keyOverlap
        options.auditRetention = auditRetention * 86_400
        return options
    }
}

/// Prints the start banner once the server listens and the banner's contents are known.
actor Banner {
    private var make: (@Sendable (Int) -> String)?
    private var port: Int?
    /// Whether the server listened.
    var listened: Bool { port != nil }

    func set(_ make: @escaping @Sendable (Int) -> String) {
        self.make = make
        flush()
    }

    func print(port: Int) {
        self.port = port
        flush()
    }

    private func flush() {
        guard let make, let port else { return }
        FileHandle.standardOutput.write(Data(make(port).utf8))
        self.make = nil
    }
}

extension ServerOptions {
    /// The Android Key Attestation policy the flags describe, `nil` without `--android-app`.
    func androidPolicy() throws -> AndroidAttestationPolicy? {
        guard !androidApp.isEmpty else {
            guard androidMinPatchLevel == nil, !androidAcceptSelfSigned, androidSecurityLevel == "tee" else {
                throw ValidationError("the --android-* options go with --android-app")
            }
            return nil
        }
        var policy = AndroidAttestationPolicy(
            apps: try androidApp.map { text in
                guard let app = AndroidAttestationPolicy.App(text) else {
                    throw ValidationError("--android-app is PACKAGE:SHA256 (64 hex digits, colons allowed)")
                }
                return app
            })
        guard let level = KeyDescription.SecurityLevel(flag: androidSecurityLevel) else {
            throw ValidationError("--android-security-level is tee or strongbox")
        }
        policy.minimumSecurityLevel = level
        if let level = androidMinPatchLevel {
            guard (200_001...999_912).contains(level), (1...12).contains(level % 100) else {
                throw ValidationError("--android-min-patch-level is YYYYMM")
            }
            policy.minimumPatchLevel = level
        }
        if androidAcceptSelfSigned { policy.acceptedBootStates = [.verified, .selfSigned] }
        return policy
    }
}
