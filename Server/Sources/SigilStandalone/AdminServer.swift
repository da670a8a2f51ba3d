import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdHTTP2
import Logging
import NIOCore
import NIOSSL
import Prometheus
import ServiceLifecycle
@_spi(Sigil) import SigilCore
import SigilFiles
import SigilHummingbird
import SigilServer
import SigilTLS
import X509

extension SigilStandalone {
    /// The admin API's listener: off unless ``port`` is set.
    public struct AdminOptions: Sendable {
        /// The listen address; loopback unless set.
        public var host = "127.0.0.1"
        /// The listen port (0 picks a free one); `nil` turns the admin API off.
        public var port: Int?
        /// A file (mode 0600) holding the bearer token operators send (`Authorization: Bearer …`, 32+ characters).
        public var tokenFile: String?
        /// Operators may present a client certificate chained to the CAs in this PEM file instead; its
        /// subject's common name is their name in the audit trail.
        public var clientCAFile: String?

        /// The defaults: off.
        public init() {}
    }

    /// How an admin call is authenticated.
    struct AdminCredentials: Sendable {
        let tokenDigest: SHA256Digest?
        let acceptsCertificates: Bool

        init(_ options: AdminOptions) throws {
            if let path = options.tokenFile {
                let token = String(decoding: try SecureFile.readSecret(path), as: UTF8.self).trimmed
                guard token.utf8.count >= 32 else {
                    throw SigilInputError("the admin token in \(path) must be 32+ characters")
                }
                tokenDigest = SHA256.hash(data: Array(token.utf8))
            } else {
                tokenDigest = nil
            }
            acceptsCertificates = options.clientCAFile != nil
            guard tokenDigest != nil || acceptsCertificates else {
                throw SigilInputError("--admin-port needs --admin-token-file or --admin-client-ca")
            }
        }

        /// The operator's name, or `nil` when the call is not authenticated: a client certificate's
        /// common name, else `token` for the right bearer token (`token:<name>` when the caller names
        /// themself in `Sigil-Operator`: a claim of the token's holder, marked as such in the trail).
        func actor(of request: Request, channel: (any Channel)?) async -> String? {
            if acceptsCertificates, let name = await Self.certificateName(channel) { return name }
            guard let tokenDigest, let header = request.headers[.authorization], header.hasPrefix("Bearer ") else {
                return nil
            }
            // Compared as digests, so the comparison's time says nothing of the token.
            let given = SHA256.hash(data: Array(header.utf8.dropFirst(7)))
            guard given == tokenDigest else { return nil }
            let named = request.headers[HTTPField.Name("Sigil-Operator")!].flatMap { name in
                KeyID.isValid(name) ? name : nil
            }
            return named.map { "token:" + $0 } ?? "token"
        }

        /// The common name of the connection's client certificate (the stream's parent for HTTP/2), in
        /// the key ID alphabet; `nil` without one, or for a device's certificate (the profile Sigil's
        /// client CA issues: organization `Sigil device`, or a `urn:sigil:key:` name), which is never
        /// an operator's, whichever CA signed it.
        static func certificateName(_ channel: (any Channel)?) async -> String? {
            var candidate = channel
            while let current = candidate {
                if let found = try? await current.nioSSL_peerCertificate().get() {
                    guard let der = try? found.toDERBytes(), let certificate = try? Certificate(derEncoded: der) else {
                        return nil
                    }
                    return operatorName(of: certificate)
                }
                candidate = current.parent
            }
            return nil
        }

        /// `certificate`'s operator name, or `nil` for a device's certificate.
        static func operatorName(of certificate: Certificate) -> String? {
            let attributes = certificate.subject.flatMap { $0 }
            let device = attributes.contains {
                $0.type == .RDNAttributeType.organizationName && String(describing: $0.value) == "Sigil device"
            }
            let names: [GeneralName] =
                ((try? certificate.extensions.subjectAlternativeNames) ?? nil).map(Array.init) ?? []
            guard !device, !names.contains(where: { "\($0)".contains("urn:sigil:key:") }) else { return nil }
            let name = attributes.first { $0.type == .RDNAttributeType.commonName }.map { String(describing: $0.value) }
            let kept = String(
                (name ?? "").unicodeScalars.prefix(128).map { KeyID.isValid(String($0)) ? Character($0) : "_" })
            return kept.isEmpty ? "certificate" : kept
        }
    }

    /// The admin API's application: every route needs the operator's credential (401 and nothing
    /// more without it) and is audited; `/metrics` too when `metrics` is given. `GET /` is the
    /// operators' console (``ConsoleAssets``), which holds no data and is served to anyone.
    ///
    /// - Parameter deviceCAs: the CAs device certificates come from (the data directory's CA,
    ///   `--client-ca`); an admin CA among them is refused, since every enrolled device could get a
    ///   certificate from it.
    static func adminApplication(
        _ options: AdminOptions,
        administration: Administration,
        identity: TLSIdentity,
        deviceCAs: [NIOSSLCertificate],
        metrics: PrometheusCollectorRegistry?,
        limits: ConnectionLimits,
        logger: Logger,
        onListening: @escaping @Sendable (Int) async -> Void
    ) throws -> some Service {
        let credentials = try AdminCredentials(options)
        let clientCA = try options.clientCAFile.map { path in
            do {
                return try NIOSSLCertificate.fromPEMFile(path)
            } catch {
                throw SigilInputError("cannot read the admin client CA file \(path)")
            }
        }
        let deviceCADER = Set(deviceCAs.compactMap { try? $0.toDERBytes() })
        if let clientCA, clientCA.contains(where: { deviceCADER.contains((try? $0.toDERBytes()) ?? []) }) {
            throw SigilInputError(
                "--admin-client-ca names a CA that issues device certificates; operators need a CA of their own")
        }
        var tls = ServerTLS.configuration(identity: identity, allowClassical: true)
        if let clientCA {
            // Asked for, not required: a token-holding operator has no certificate.
            tls.certificateVerification = .optionalVerification
            tls.trustRoots = .certificates(clientCA)
            tls.sendCANameList = true
        }
        let router = Router(context: SigilBasicRequestContext.self)
        let answer: @Sendable (Request, SigilBasicRequestContext) async throws -> Response = { request, context in
            // The console's page, script and style: no data, so no credential (a browser sends none
            // when it loads a page); everything else needs one.
            if request.method == .get, let asset = ConsoleAssets.response(for: request.uri.path) { return asset }
            // A browser sends a client certificate by itself, as it would a cookie: a call another site
            // makes it send is refused, whatever credential comes with it.
            if ConsoleAssets.isCrossSite(request) {
                let error = SigilError(.forbidden, "an admin call from another site's page is refused")
                return Response(
                    status: .forbidden, headers: [.contentType: Problem.contentType],
                    body: .init(
                        byteBuffer: ByteBuffer(
                            bytes: Problem.body(for: error, serverTime: administration.clock.now(), status: 403))))
            }
            guard let actor = await credentials.actor(of: request, channel: context.channel) else {
                logger.warning(
                    "admin call refused: no valid credential",
                    metadata: ["client": "\(OperatorText.escaped(context.channel?.remoteAddress?.ipAddress ?? "?"))"])
                // RFC 6750 §3: a challenge; `invalid_token` when a bearer token was sent and is wrong.
                let sentToken = request.headers[.authorization]?.hasPrefix("Bearer ") ?? false
                let answer = Administration.unauthorized(serverTime: administration.clock.now())
                return Response(
                    status: answer.status,
                    headers: [
                        .wwwAuthenticate: sentToken ? #"Bearer error="invalid_token""# : "Bearer",
                        .contentType: Problem.contentType, .cacheControl: "no-store",
                    ],
                    body: .init(byteBuffer: ByteBuffer(bytes: answer.body)))
            }
            // Not audited: a scraper reads the counters every few seconds (5,760 rows a day at 15 s), and
            // they say nothing of a device or a user.
            if request.uri.path == "/metrics", request.method == .get, let metrics {
                return Response(
                    status: .ok, headers: [.contentType: "text/plain; version=0.0.4"],
                    body: .init(byteBuffer: ByteBuffer(bytes: metrics.emitToBuffer())))
            }
            var query: [String: String] = [:]
            for (name, value) in request.uri.queryParameters { query[String(name)] = String(value) }
            let answer = await AuditContext.$clientAddress.withValue(context.channel?.remoteAddress?.ipAddress) {
                await administration.handle(request.method, path: request.uri.path, query: query, actor: actor)
            }
            var headers: HTTPFields = [.contentType: answer.status == .ok ? "application/json" : Problem.contentType]
            headers.append(contentsOf: answer.headers)
            return Response(
                status: answer.status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: answer.body)))
        }
        let handle: @Sendable (Request, SigilBasicRequestContext) async throws -> Response = { request, context in
            var response = try await answer(request, context)
            for field in ConsoleAssets.commonHeaders where response.headers[field.name] == nil {
                response.headers.append(field)
            }
            return response
        }
        // Every method but the console's GETs reaches the credential check first: nothing is said to a
        // caller without one.
        for method in [HTTPRequest.Method.get, .post, .put, .delete, .patch, .head, .options] {
            router.on("/**", method: method, use: handle)
            router.on("/", method: method, use: handle)
        }
        return Application(
            router: router,
            server: .sigilTLS(
                tlsConfiguration: tls,
                configuration: HTTP2UpgradeChannel.Configuration(),
                limits: limits),
            configuration: ApplicationConfiguration(address: .hostname(options.host, port: options.port ?? 0)),
            onServerRunning: { channel in await onListening(channel.localAddress?.port ?? 0) },
            logger: logger
        )
    }
}

/// Drops audit rows older than the retention, at start and then daily.
struct AuditRetentionService: Service {
    let directory: Directory
    let retention: Int64
    let clock: any UnixClock
    let logger: Logger

    func run() async throws {
        while !Task.isCancelled && !Task.isShuttingDownGracefully {
            do {
                let dropped = try await directory.pruneAudit(before: clock.now() - retention)
                if dropped > 0 { logger.info("audit rows past retention dropped", metadata: ["count": "\(dropped)"]) }
            } catch {
                logger.warning("the audit trail could not be pruned; trying again later")
            }
            try? await sleepUnlessShuttingDown(for: .seconds(86_400))
        }
    }
}

extension Service {
    /// Waits `duration`, or less when a graceful shutdown starts.
    func sleepUnlessShuttingDown(for duration: Duration) async throws {
        try await cancelWhenGracefulShutdown { try await Task.sleep(for: duration) }
    }
}

extension SigilStandalone {
    /// The operators' service on the store `options` names (the data directory's SQLite file, or
    /// PostgreSQL), opened beside any server running on it; call `close` when done. It creates
    /// nothing: no data directory, no master key, no store.
    ///
    /// - Parameter serverKeys: open the server's keys too (to list, rotate or promote them), which
    ///   needs the master key the servers share: `master.key` in the data directory (a replica's, or
    ///   any directory holding a copy of it). Without, the store alone: devices, revocation, the audit
    ///   trail.
    /// - Throws: ``SigilInputError`` when the data directory holds no SQLite store (with
    ///   ``KeyStore/dataDirectory``), or no master key when `serverKeys` is set.
    public static func openAdministration(
        _ options: Options, serverKeys: Bool = true, logger: Logger = Logger(label: "sigil.admin")
    ) async throws -> (administration: Administration, close: @Sendable () async -> Void) {
        var options = options
        options.nonceStorage = .memory  // operators touch no nonce
        let data = DataDirectory(existing: options.dataDirectory)
        if options.keyStore == .dataDirectory, !data.holdsStore {
            throw SigilInputError(
                "\(data.path) holds no Sigil store (no directory.sqlite): give --data-dir a server's data directory, "
                    + "or --store postgres://… for PostgreSQL")
        }
        var masterKey: SymmetricKey?
        if serverKeys {
            guard let key = try data.existingMasterKey() else {
                throw SigilInputError(
                    "the server's keys are sealed under the servers' master key, and \(data.path) holds none: "
                        + "give --data-dir a replica's data directory (or a directory holding a copy of its master.key)"
                )
            }
            masterKey = key
        }
        let stores = try await openStores(options, data: data, masterKey: masterKey, logger: logger)
        guard serverKeys else {
            return (
                Administration(directory: stores.directory, serverKeys: nil, clock: options.clock),
                { try? await stores.close() }
            )
        }
        do {
            // Only a server puts its keys in a store: an operator's tool never makes or imports one.
            let none = SigilInputError("this store holds no server keys yet: start `sigil serve` on it once")
            let ring = try await ServerKeyRing.open(
                directory: stores.directory, overlap: options.keyOverlap, clock: options.clock, keyFormats: .withRSA,
                initialResponse: { throw none }, initialSealing: { throw none })
            return (
                {
                    var administration = Administration(
                        directory: stores.directory, serverKeys: ring, clock: options.clock)
                    // A self-signed server's data directory: its backup key is the next TLS key.
                    if options.keyStore == .dataDirectory { administration.backupTLSKey = data.backupTLSKey }
                    return administration
                }(),
                { try? await stores.close() }
            )
        } catch {
            try? await stores.close()
            throw error
        }
    }
}
