import ArgumentParser
import AsyncHTTPClient
import Foundation
import Hummingbird
import HummingbirdHTTP2
import Logging
import NIOCore
import NIOSSL
import ServiceLifecycle
import SigilClient
@_spi(Sigil) import SigilCore
import SigilStandalone
import SigilTLS

/// `sigil bench gateway`: the same client straight to an upstream, and through `sigil gateway` in
/// front of it (TLS 1.3 with X25519MLKEM768 and HTTP/2 in, verified, forwarded over HTTP/1.1, the
/// answer signed), in one process over loopback.
struct GatewayBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "gateway",
        abstract: "Requests per second straight to an upstream and through `sigil gateway` (HMAC, ECDSA).",
        discussion: """
            Client, gateway and upstream share this machine's cores; figures are ratios within one run. The \
            upstream is a minimal HTTP server in this process (it reads the body and answers 20 bytes of \
            JSON), the most the gateway can cost; --upstream measures a real backend instead. The baseline \
            is the upstream facing clients itself, over the same TLS 1.3 (X25519MLKEM768) and HTTP/2 as the \
            gateway; its plain HTTP/1.1 rate, which only a backend on the client's own machine could offer, \
            is shown too.
            """
    )

    @OptionGroup var load: LoadOptions

    @Option(name: .long, help: "An upstream to measure, http://host:port (it must answer POST /v1/echo with 200).")
    var upstream: String?

    func run() async throws {
        #if DEBUG
            FileHandle.standardError.write(
                Data(
                    ("sigil: warning: a debug build; run "
                        + "`swift run -c release --package-path Server sigil bench gateway`\n").utf8))
        #endif
        var logger = Logger(label: "sigil.bench")
        logger.logLevel = .critical
        let root = NSTemporaryDirectory() + "sigil-bench-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: root) }

        var services: [ServiceGroup] = []
        defer { for group in services { Task { await group.triggerGracefulShutdown() } } }
        // The gateway's TLS identity, made before either server starts, serves the upstream's TLS baseline.
        let tlsFiles = try DataDirectory(path: root).tlsFiles(
            certificate: nil, key: nil, names: ["localhost", "127.0.0.1", "::1"])
        let identity = try TLSIdentity(certificateFile: tlsFiles.certificate, keyFile: tlsFiles.key)
        let upstreamURL: String
        var upstreamTLSPort: Int?
        if let upstream {
            upstreamURL = upstream
        } else {
            let (plain, plainPort) = try await Self.startUpstream(tls: nil, logger: logger)
            services.append(plain)
            let (secure, securePort) = try await Self.startUpstream(
                tls: ServerTLS.configuration(identity: identity), logger: logger)
            services.append(secure)
            upstreamURL = "http://127.0.0.1:\(plainPort)"
            upstreamTLSPort = securePort
        }
        guard let upstreamPort = URLComponents(string: upstreamURL)?.port, upstreamURL.hasPrefix("http://") else {
            throw SigilInputError("--upstream must be http://host:port")
        }
        var options = SigilStandalone.Options()
        options.dataDirectory = root
        options.port = 0
        options.upstream = SigilStandalone.Upstream(url: upstreamURL)
        let (gateway, group, gatewayPort) = try await HTTPBench.start(options, logger: logger)
        services.append(group)

        var tls = TLSConfiguration.makeClientConfiguration()
        tls.minimumTLSVersion = .tlsv13
        tls.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(gateway.certificateFile))
        var configuration = HTTPClient.Configuration(tlsConfiguration: tls)
        // As many HTTP/1.1 connections to the upstream as requests in flight, as the gateway has.
        configuration.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = load.concurrency
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        do {
            let figures = try await measure(
                client: client, gateway: gateway, gatewayPort: gatewayPort, upstreamPort: upstreamPort,
                upstreamTLSPort: upstreamTLSPort)
            try await client.shutdown()
            report(figures)
        } catch {
            try? await client.shutdown()
            throw error
        }
        try? await gateway.close()
    }

    func measure(
        client: HTTPClient, gateway: SigilStandalone.Prepared, gatewayPort: Int, upstreamPort: Int,
        upstreamTLSPort: Int?
    ) async throws -> [(String, Double)] {
        var bench = HTTPBench()
        bench.load = load
        let device = try SigningKey.generate(.ecdsaP256SHA256)
        let ecdsa = RequestSigner(key: device, keyID: device.derivedKeyID ?? "", clock: AheadClock())
        try await bench.register(device, token: gateway.enrollToken ?? "", client: client, port: gatewayPort)
        let hmac = try await bench.secret(for: ecdsa, client: client, port: gatewayPort)
        let ports = [gatewayPort, upstreamPort, upstreamTLSPort ?? upstreamPort]
        var modes = [
            HTTPBench.Mode(
                name: "gateway, hmac-sha256 verified, response signed", path: "/v1/echo", signer: hmac, server: 0),
            HTTPBench.Mode(
                name: "gateway, ecdsa-p256 verified, response signed", path: "/v1/echo", signer: ecdsa, server: 0),
            HTTPBench.Mode(
                name: "straight to the upstream, plain HTTP/1.1", path: "/v1/echo", signer: nil, server: 1,
                scheme: "http"),
        ]
        if upstreamTLSPort != nil {
            modes.insert(
                HTTPBench.Mode(
                    name: "straight to the upstream, TLS 1.3 + HTTP/2", path: "/v1/echo", signer: nil, server: 2), at: 0
            )
        } else {
            modes.insert(modes.removeLast(), at: 0)
        }
        return try await bench.measure(modes, ports: ports, client: client)
    }

    /// A minimal upstream: reads the body, answers `{"received":N}`; over TLS and HTTP/2 with `tls`.
    static func startUpstream(tls: TLSConfiguration?, logger: Logger) async throws -> (ServiceGroup, Int) {
        let router = Router()
        router.post("**") { request, _ -> Response in
            var received = 0
            for try await chunk in request.body { received += chunk.readableBytes }
            return Response(
                status: .ok, headers: [.contentType: "application/json"],
                body: .init(byteBuffer: ByteBuffer(string: "{\"received\":\(received)}")))
        }
        let (stream, continuation) = AsyncStream.makeStream(of: Int.self)
        let configuration = ApplicationConfiguration(address: .hostname("127.0.0.1", port: 0))
        let running: @Sendable (any Channel) async -> Void = { channel in
            continuation.yield(channel.localAddress?.port ?? 0)
            continuation.finish()
        }
        let service: any Service =
            if let tls {
                Application(
                    router: router, server: try .http2Upgrade(tlsConfiguration: tls), configuration: configuration,
                    onServerRunning: running, logger: logger)
            } else {
                Application(router: router, configuration: configuration, onServerRunning: running, logger: logger)
            }
        let group = ServiceGroup(services: [service], gracefulShutdownSignals: [], logger: logger)
        Task { try await group.run() }
        var iterator = stream.makeAsyncIterator()
        guard let port = await iterator.next(), port > 0 else {
            await group.triggerGracefulShutdown()
            throw SigilInputError("the upstream did not start")
        }
        return (group, port)
    }

    func report(_ figures: [(String, Double)]) {
        load.report(
            figures,
            header: "| request (\(load.bodySize) B JSON, \(load.concurrency) in flight) | requests/s | vs straight |")
    }
}
