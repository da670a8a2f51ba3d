import AsyncHTTPClient
import Foundation
import HTTPTypes
import Logging
import NIOCore
import NIOHTTP1
import NIOSSL
import ServiceLifecycle
import SigilClient
@_spi(Sigil) import SigilCore
import SigilRSA
import SigilSQLite
import SigilServer
import SigilStandalone
import Synchronization

/// A `sigil serve` started in-process on a free loopback port, with a manual clock and its own data directory.
struct TestServer: Sendable {
    let port: Int
    let prepared: SigilStandalone.Prepared
    let options: SigilStandalone.Options
    let clock: ManualUnixClock

    var baseURL: String { "https://localhost:\(port)" }
    var data: DataDirectory { get throws { try DataDirectory(path: options.dataDirectory) } }

    /// A fresh data directory under the system's temporary directory.
    static func temporaryDirectory() -> String {
        NSTemporaryDirectory() + "sigil-test-" + UUID().uuidString
    }

    /// Runs `body` against a server, then stops it gracefully.
    static func with<Result: Sendable>(
        dataDirectory: String = temporaryDirectory(),
        clock: ManualUnixClock = ManualUnixClock(SigningSetup.start),
        configure: (inout SigilStandalone.Options) -> Void = { _ in },
        logs: LogCapture? = nil,
        _ body: (TestServer) async throws -> Result
    ) async throws -> Result {
        var options = SigilStandalone.Options()
        options.dataDirectory = dataDirectory
        options.host = "127.0.0.1"
        options.port = 0
        options.enrollToken = TestServer.token
        options.clock = clock
        configure(&options)
        var logger = logs.map { capture in Logger(label: "sigil.test") { _ in capture } } ?? Logger(label: "sigil.test")
        logger.logLevel = logs == nil ? .critical : .trace
        let (ports, portContinuation) = AsyncStream.makeStream(of: Int.self)
        let prepared = try await SigilStandalone.prepare(options, logger: logger) { port in
            portContinuation.yield(port)
            portContinuation.finish()
        }
        // After a restart, requests dated up to the previous run's horizon (a couple of seconds past its
        // last request) are refused; a real restart takes longer than that.
        clock.advance(by: SQLiteNonceStore.horizonLead + 1)
        let group = ServiceGroup(services: prepared.services, gracefulShutdownSignals: [], logger: logger)
        return try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask {
                // A server that stops before it listens (a port in use) ends the wait for its port.
                defer { portContinuation.finish() }
                try await group.run()
            }
            defer { tasks.cancelAll() }
            var iterator = ports.makeAsyncIterator()
            guard let port = await iterator.next() else {
                try await tasks.waitForAll()
                throw SigilInputError("the server did not start")
            }
            let server = TestServer(port: port, prepared: prepared, options: options, clock: clock)
            let result: Result
            do {
                result = try await body(server)
            } catch {
                await group.triggerGracefulShutdown()
                try? await tasks.waitForAll()
                throw error
            }
            await group.triggerGracefulShutdown()
            try await tasks.waitForAll()
            return result
        }
    }

    static let token = "test-bootstrap-token-0123456789"

    /// The server certificate, to trust in clients.
    var certificates: [NIOSSLCertificate] {
        get throws { try NIOSSLCertificate.fromPEMFile(prepared.certificateFile) }
    }

    /// A client that trusts this server's certificate; TLS 1.3 with NIOSSL's default groups
    /// (X25519MLKEM768 first) unless `configure` changes them.
    ///
    /// A client the server should refuse gets a short connect timeout: AsyncHTTPClient retries a failed
    /// handshake until the timeout and then reports the last error.
    func client(
        refused: Bool = false,
        configure: (inout TLSConfiguration) throws -> Void = { _ in }
    ) throws -> HTTPClient {
        try Self.client(trusting: try certificates, refused: refused, configure: configure)
    }

    /// A client that trusts `certificates`.
    static func client(
        trusting certificates: [NIOSSLCertificate],
        refused: Bool = false,
        configure: (inout TLSConfiguration) throws -> Void = { _ in }
    ) throws -> HTTPClient {
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.minimumTLSVersion = .tlsv13
        tls.trustRoots = .certificates(certificates)
        try configure(&tls)
        var configuration = HTTPClient.Configuration(tlsConfiguration: tls)
        configuration.timeout = .init(connect: refused ? .milliseconds(500) : .seconds(10), read: .seconds(30))
        return HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }
}

/// A response as the tests read it.
struct TestResponse: Sendable {
    let status: Int
    let headers: HTTPFields
    let body: [UInt8]
    var version = HTTPVersion.http1_1

    var text: String { String(decoding: body, as: UTF8.self) }

    /// The JSON body as a dictionary.
    var json: [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any] ?? [:]
    }

    /// The problem+json `code`, if any.
    var code: String? { json["code"] as? String }
}

/// A device: a key, its key ID, and how it signs.
struct TestDevice: Sendable {
    let key: SigningKey
    let keyID: String

    init(_ algorithm: SigilCore.SignatureAlgorithm = .ecdsaP256SHA256) throws {
        key = try SigningKey.generate(algorithm, formats: .withRSA)
        keyID = try key.verificationKey.derivedKeyID ?? ""
    }

    init(key: SigningKey, keyID: String) {
        self.key = key
        self.keyID = keyID
    }

    var publicKeyPEM: String { get throws { KeyFile.publicKeyFile(for: try key.verificationKey) ?? "" } }

    func signer(_ profile: SignatureProfile = .sigilV1, clock: any UnixClock) -> RequestSigner {
        RequestSigner(key: key, keyID: keyID, profile: profile, clock: clock)
    }

    /// The registration body for this device's key.
    var registration: [UInt8] {
        get throws {
            let object: [String: String] = ["alg": key.algorithm.rawValue, "publicKey": try publicKeyPEM]
            return Array(try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]))
        }
    }
}

/// A request before it is sent: the HTTPTypes head (what is signed) and the body.
struct TestRequest: Sendable {
    var head: HTTPRequest
    var body: [UInt8]

    init(_ method: HTTPRequest.Method, _ path: String, server: TestServer, json: String? = nil, body: [UInt8] = []) {
        self.init(method, path, port: server.port, json: json, body: body)
    }

    init(_ method: HTTPRequest.Method, _ path: String, port: Int, json: String? = nil, body: [UInt8] = []) {
        head = HTTPRequest(method: method, scheme: "https", authority: "localhost:\(port)", path: path)
        self.body = json.map { Array($0.utf8) } ?? body
        if json != nil { head.headerFields[.contentType] = "application/json" }
    }

    /// What a sigil-v1 answer to this signed request names of it (PROTOCOL.md section 2.7).
    var answered: SigilV1.AnsweredRequest { SigilV1.AnsweredRequest(head.headerFields)! }

    /// Signs the request; returns the nonce.
    @discardableResult
    mutating func sign(with signer: RequestSigner) throws -> String {
        try signer.sign(&head, body: body)
    }

    /// Sends it with `client` to `server`.
    func send(_ client: HTTPClient, to server: TestServer) async throws -> TestResponse {
        try await send(client)
    }

    /// Sends it with `client` to the authority it names, waiting `timeout` for the whole answer.
    func send(_ client: HTTPClient, timeout: TimeAmount = .seconds(30)) async throws -> TestResponse {
        var request = HTTPClientRequest(url: "https://\(head.authority ?? "localhost")" + (head.path ?? "/"))
        request.method = HTTPMethod(rawValue: head.method.rawValue)
        for field in head.headerFields { request.headers.add(name: field.name.rawName, value: field.value) }
        if !body.isEmpty || head.method == .post {
            request.body = .bytes(ByteBuffer(bytes: body))
        }
        let response = try await client.execute(request, timeout: timeout)
        var headers = HTTPFields()
        for (name, value) in response.headers {
            if let name = HTTPField.Name(name) { headers.append(HTTPField(name: name, value: value)) }
        }
        let body = try await response.body.collect(upTo: 16 << 20)
        return TestResponse(
            status: Int(response.status.code), headers: headers, body: Array(buffer: body), version: response.version)
    }
}

extension HTTPClient {
    /// Shuts the client down after `body`, whatever happens.
    func using<Result>(_ body: (HTTPClient) async throws -> Result) async throws -> Result {
        do {
            let result = try await body(self)
            try await shutdown()
            return result
        } catch {
            try? await shutdown()
            throw error
        }
    }
}

/// Collects every log line (message and metadata), to check what a server writes.
final class LogCapture: LogHandler, @unchecked Sendable {
    private let lines = Mutex<[String]>([])
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        let merged = metadata.merging(event.metadata ?? [:]) { $1 }
        lines.withLock { $0.append("\(event.level) \(event.message) \(merged)") }
    }

    var text: String { lines.withLock { $0.joined(separator: "\n") } }
}
