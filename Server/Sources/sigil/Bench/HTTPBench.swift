import ArgumentParser
import AsyncHTTPClient
import Foundation
import HTTPTypes
import Logging
import NIOCore
import NIOSSL
import ServiceLifecycle
import SigilClient
@_spi(Sigil) import SigilCore
import SigilStandalone

/// `sigil bench http`: `sigil serve` and an AsyncHTTPClient client in one process over loopback TLS
/// (TLS 1.3, X25519MLKEM768, HTTP/2), verified requests against unverified ones.
struct HTTPBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "http",
        abstract: "Requests per second over loopback TLS: unverified, HMAC- and ECDSA-verified.",
        discussion: """
            Server and client share this machine's cores; figures are ratios within one run. With \
            --replicas N --store postgres://…: verified requests per second through N replicas sharing the \
            store, against one, and how long a revocation on one takes to reach another. With --devices N: \
            signed registrations per second with 1,000 devices enrolled and with N, then Ed25519 requests \
            from one of the N devices against devices at random.
            """
    )

    @OptionGroup var load: LoadOptions

    @Option(name: .long, help: "Replicas of `sigil serve` sharing --store, measured against one.")
    var replicas = 1

    @Option(name: .long, help: "With --replicas: the shared key store, a postgres:// URL (password as for serve).")
    var store: String?

    @Option(name: .long, help: "With --replicas: the shared nonces, store (with the keys) or a redis:// URL.")
    var nonces = "store"

    @Option(
        name: .long,
        help:
            "Also fill the signing server's store with this many Ed25519 devices and compare one of them with devices at random."
    )
    var devices: Int?

    /// One kind of request.
    struct Mode: Sendable {
        let name: String
        let path: String
        let signer: RequestSigner?
        let server: Int
        /// A signer for each request instead of ``signer`` (a device picked among many).
        var pick: (@Sendable () throws -> RequestSigner)?
        /// `http` for a server without TLS (the gateway bench's upstream).
        var scheme = "https"
        /// Seal each body to this key (PROTOCOL.md section 6): the answer comes back sealed too.
        var sealingKey: SealingPublicKey?
        /// Fields to send with each request, unsigned (a signed request's, of their sizes).
        var fields: (@Sendable () -> HTTPFields)?

        /// One request of this mode to the server on `port`: signed, and sealed when the mode seals.
        func prepare(port: Int, body: [UInt8]) throws -> (HTTPRequest, [UInt8]) {
            try HTTPBench.prepare(
                .post, path, scheme: scheme, authority: "localhost:\(port)", body: body, headers: fields?() ?? [:],
                signer: try pick?() ?? signer, sealingTo: sealingKey)
        }
    }

    func validate() throws {
        guard devices.map({ (1...10_000_000).contains($0) }) ?? true else {
            throw ValidationError("--devices is 1 to 10,000,000")
        }
        guard devices == nil || (replicas == 1 && store == nil) else {
            throw ValidationError("--devices goes without --replicas and --store")
        }
    }

    func run() async throws {
        #if DEBUG
            FileHandle.standardError.write(
                Data(
                    ("sigil: warning: a debug build; run "
                        + "`swift run -c release --package-path Server sigil bench http`\n").utf8))
        #endif
        var logger = Logger(label: "sigil.bench")
        logger.logLevel = .critical
        if replicas != 1 || store != nil {
            try await runReplicas(logger: logger)
            return
        }
        let root = NSTemporaryDirectory() + "sigil-bench-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: root) }
        // Five servers: one signs its responses (as `sigil serve` does), one does not, one signs and
        // keeps an access log, and its twin without the log: the log's cost is read between those two,
        // each serving its one row, so nothing but the log tells them apart; the fifth signs and keeps
        // its nonces in memory (`--nonces memory`), the other local nonce store.
        var servers: [(SigilStandalone.Prepared, ServiceGroup)] = []
        var ports: [Int] = []
        let kinds = [
            (true, false, false), (false, false, false), (true, true, false), (true, false, false), (true, false, true),
        ]
        for (index, (signs, logs, memoryNonces)) in kinds.enumerated() {
            var options = SigilStandalone.Options()
            options.dataDirectory = root + "/" + ["signing", "plain", "logging", "twin", "memory"][index]
            options.port = 0
            options.signsResponses = signs
            if logs { options.accessLog = root + "/access.log" }
            if memoryNonces { options.nonceStorage = .memory }
            options.benchmarkRoute = true
            let (prepared, group, port) = try await Self.start(options, logger: logger)
            servers.append((prepared, group))
            ports.append(port)
        }
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.minimumTLSVersion = .tlsv13
        tls.trustRoots = .certificates(try servers.flatMap { try NIOSSLCertificate.fromPEMFile($0.0.certificateFile) })
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: .init(tlsConfiguration: tls))
        do {
            var population: Population?
            var registrations: (few: Double, many: Double)?
            if let devices {
                // Registrations per second with 1,000 devices enrolled, then with all of them.
                let filling = Population(count: devices)
                let few = min(devices, 1_000)
                _ = try await filling.fill(servers[0].0.directory, 0..<few)
                let token = servers[0].0.enrollToken ?? ""
                let atFew = try await register(for: load.seconds, token: token, client: client, port: ports[0])
                let filled = try await filling.fill(servers[0].0.directory, few..<devices)
                BenchOutput.progress("\(devices) devices filled in \(String(format: "%.1f", filled.total)) s")
                let atMany = try await register(for: load.seconds, token: token, client: client, port: ports[0])
                (population, registrations) = (filling, (atFew, atMany))
            }
            let figures = try await measure(
                client: client, servers: servers.map(\.0), ports: ports, population: population)
            try await client.shutdown()
            report(figures)
            if let registrations, let devices, !load.json {
                print(
                    "\nsigned registrations/s (Ed25519, \(load.concurrency) in flight): "
                        + String(format: "%.0f", registrations.few) + " with 1,000 devices, "
                        + String(format: "%.0f", registrations.many) + " with \(devices) (ratio "
                        + String(format: "%.2f", registrations.many / registrations.few) + ")")
            }
        } catch {
            try? await client.shutdown()
            throw error
        }
        for (prepared, group) in servers {
            await group.triggerGracefulShutdown()
            try? await prepared.close()
        }
    }

    /// Starts `sigil serve` with `options` in this process; returns it, its group and its port.
    static func start(_ options: SigilStandalone.Options, logger: Logger) async throws
        -> (SigilStandalone.Prepared, ServiceGroup, Int)
    {
        let (stream, continuation) = AsyncStream.makeStream(of: Int.self)
        let prepared = try await SigilStandalone.prepare(options, logger: logger) { port in
            continuation.yield(port)
            continuation.finish()
        }
        let group = ServiceGroup(services: [prepared.application], gracefulShutdownSignals: [], logger: logger)
        Task { try await group.run() }
        var iterator = stream.makeAsyncIterator()
        guard let port = await iterator.next() else {
            await group.triggerGracefulShutdown()
            try? await prepared.close()
            throw SigilInputError("the server did not start")
        }
        return (prepared, group, port)
    }

    func measure(
        client: HTTPClient, servers: [SigilStandalone.Prepared], ports: [Int], population: Population? = nil
    ) async throws -> [(String, Double)] {
        var modes = [Mode(name: "unverified", path: "/bench/unverified", signer: nil, server: 0)]
        for (index, port) in ports.enumerated() {
            let suffix = [
                ", response signed", "", ", response signed, access log on", Self.twin,
                ", response signed, memory nonces",
            ][index]
            let device = try SigningKey.generate(.ecdsaP256SHA256)
            let ecdsa = RequestSigner(key: device, keyID: device.derivedKeyID ?? "", clock: AheadClock())
            try await register(device, token: servers[index].enrollToken ?? "", client: client, port: port)
            let hmac = try await secret(for: ecdsa, client: client, port: port)
            modes.append(Mode(name: "hmac-sha256 verified\(suffix)", path: "/v1/echo", signer: hmac, server: index))
            if index == 0 {
                // The same in the other profile, then what the fields of the sigil-v1 row's request and
                // answer cost to carry, with no cryptography.
                let rfc9421 = RequestSigner(key: hmac.key, keyID: hmac.keyID, profile: .rfc9421, clock: AheadClock())
                modes.append(
                    Mode(
                        name: "hmac-sha256 verified (rfc9421), response signed", path: "/v1/echo", signer: rfc9421,
                        server: index))
                var fields = Mode(name: Self.fieldsRow, path: "/bench/unverified-fields", signer: nil, server: index)
                fields.fields = { Self.signedFields(keyID: hmac.keyID) }
                modes.append(fields)
                var floor = Mode(name: Self.floorRow("hmac-sha256"), path: "/bench/floor/hmac", signer: nil, server: 0)
                floor.fields = { Self.signedFields(keyID: hmac.keyID) }
                modes.append(floor)
            }
            // The access log's cost is read off its HMAC row beside the first: one row is enough.
            guard index < 2 else { continue }
            modes.append(Mode(name: "ecdsa-p256 verified\(suffix)", path: "/v1/echo", signer: ecdsa, server: index))
            if index == 0 {
                var floor = Mode(name: Self.floorRow("ecdsa-p256"), path: "/bench/floor/ecdsa", signer: nil, server: 0)
                floor.fields = { Self.signedFields(keyID: ecdsa.keyID, signatureBytes: 64) }
                modes.append(floor)
                var sealed = Mode(
                    name: "hmac-sha256 verified, sealed (HPKE X-Wing), answer sealed and signed", path: "/v1/echo",
                    signer: hmac, server: index)
                sealed.sealingKey = try await sealingKey(client: client, port: port)
                modes.append(sealed)
            }
        }
        if let population {
            // Many devices on the server `sigil serve` configures by default (SQLite, responses signed):
            // each request signed by one device's key, derived again for every request in both rows,
            // so the client's work is the same and only the server's lookups differ.
            let signer = { @Sendable (index: Int) throws -> RequestSigner in
                RequestSigner(key: try population.key(index), keyID: population.keyID(index))
            }
            let count = population.count
            modes.append(
                Mode(
                    name: "ed25519 verified, response signed, one device of \(count)", path: "/v1/echo", signer: nil,
                    server: 0, pick: { try signer(0) }))
            modes.append(
                Mode(
                    name: "ed25519 verified, response signed, devices at random among \(count)", path: "/v1/echo",
                    signer: nil, server: 0, pick: { try signer(Int.random(in: 0..<count)) }))
        }
        return try await measure(modes, ports: ports, client: client)
    }

    /// Requests per second of each of `modes`, each sent to `ports[mode.server]`: after a warm-up,
    /// in five alternating slices, so drift in the machine's speed hits every mode alike. Each
    /// slice's requests are signed (and sealed) before it starts, as many as the mode's last slice
    /// served and half again: devices sign on their own cores, and the load generator shares these
    /// two with the server, so only sending and serving are timed.
    func measure(_ modes: [Mode], ports: [Int], client: HTTPClient) async throws -> [(String, Double)] {
        let body = load.body
        let slices = 5
        let slice = load.seconds / Double(slices)
        // Warm up connections and code paths, and learn each mode's rate.
        var rates: [Double] = []
        for mode in modes {
            rates.append(try await run(mode, port: ports[mode.server], body: body, client: client, for: 0.2) / 0.2)
        }
        var totals = [Double](repeating: 0, count: modes.count)
        BenchOutput.progress(
            "\(modes.count) modes, \(slices) slices of \(String(format: "%g", slice)) s each; "
                + "the table comes once all are measured (each is read against the first)")
        for index in 0..<slices {
            for (mode, row) in zip(modes, modes.indices) {
                let done = try await run(
                    mode, ports: [ports[mode.server]], body: body, client: client, for: slice,
                    prepared: toPrepare(rate: rates[row], for: slice))
                totals[row] += done
                rates[row] = done / slice
            }
            BenchOutput.progress("slice \(index + 1) of \(slices) measured")
        }
        return zip(modes, totals).map { ($0.name, $1 / load.seconds) }
    }

    /// How many requests to sign before a slice of `duration` seconds of a mode last served at `rate`
    /// a second: half again as many, and one for each task in flight.
    func toPrepare(rate: Double, for duration: Double) -> Int { Int(rate * duration * 1.5) + load.concurrency }

    /// Sends `mode`'s requests with `concurrency` in flight for `duration` seconds; returns how many
    /// succeeded. With several ports, the requests in flight are spread over them evenly.
    func run(_ mode: Mode, port: Int, body: [UInt8], client: HTTPClient, for duration: Double) async throws -> Double {
        try await run(mode, ports: [port], body: body, client: client, for: duration)
    }

    /// With `prepared`, that many requests are signed before the clock starts, spread over the
    /// tasks; a task that runs out signs the rest as it sends them.
    func run(
        _ mode: Mode, ports: [Int], body: [UInt8], client: HTTPClient, for duration: Double, prepared: Int = 0
    ) async throws -> Double {
        let perTask = (prepared + load.concurrency - 1) / load.concurrency
        var queues: [[(HTTPRequest, [UInt8])]] = []
        for task in 0..<load.concurrency {
            let port = ports[task % ports.count]
            queues.append(try (0..<perTask).map { _ in try mode.prepare(port: port, body: body) })
        }
        let deadline = DispatchTime.now().uptimeNanoseconds + UInt64(duration * 1e9)
        return try await withThrowingTaskGroup(of: Int.self) { group in
            for (task, queue) in queues.enumerated() {
                let port = ports[task % ports.count]
                group.addTask {
                    var done = 0
                    var queue = queue.makeIterator()
                    while DispatchTime.now().uptimeNanoseconds < deadline {
                        let (head, signed) = try queue.next() ?? mode.prepare(port: port, body: body)
                        let response = try await Self.execute(head, body: signed, port: port, client: client)
                        guard response.status == 200 else {
                            throw SigilInputError("\(mode.name): status \(response.status) \(response.text)")
                        }
                        done += 1
                    }
                    return done
                }
            }
            return Double(try await group.reduce(0, +))
        }
    }

    /// The row whose requests and answers carry a signed HMAC exchange's fields, unsigned.
    static let fieldsRow = "unverified, carrying a signed hmac-sha256 exchange's fields (no cryptography)"

    /// The row of the floor routes (`FloorRoutes`): the fields row's request and answer, plus the
    /// canonical bodies, their SHA-256, a raw check of `algorithm` and the answer's Ed25519 signature:
    /// what any server must do for the signed row, and nothing of Sigil's own work.
    static func floorRow(_ algorithm: String) -> String {
        "floor: the fields, both canonical bodies hashed, a raw \(algorithm) check, an ed25519 answer signature"
    }

    /// The fields of a sigil-v1 request signed by the key `keyID`, of their sizes, as unique as a
    /// signature and a nonce: the time, a nonce as a device makes one, `signatureBytes` random bytes in
    /// base64url (32 for HMAC-SHA256, 64 for ECDSA P-256).
    static func signedFields(keyID: String, signatureBytes: Int = 32) -> HTTPFields {
        func random(_ count: Int) -> String { Base64URL.encode((0..<count).map { _ in UInt8.random(in: 0...255) }) }
        return [
            SigilV1.timestampField: String(AheadClock().now()), SigilV1.nonceField: RandomNonceSource().next(),
            SigilV1.keyIDField: keyID, SigilV1.signatureField: random(signatureBytes),
        ]
    }

    /// The suffix of the access-log server's twin's row: read against it, not shown in the table.
    static let twin = ", response signed, access log off (twin)"

    func report(_ figures: [(String, Double)]) {
        load.report(
            load.json ? figures : figures.filter { !$0.0.hasSuffix(Self.twin) },
            header:
                "| request (\(load.bodySize) B JSON, \(load.concurrency) in flight, HTTP/2, TLS 1.3 X25519MLKEM768) | requests/s | vs unverified |"
        )
        let rate = { (name: String) in figures.first { $0.0 == name }?.1 }
        if !load.json, let devices,
            let one = rate("ed25519 verified, response signed, one device of \(devices)"),
            let random = rate("ed25519 verified, response signed, devices at random among \(devices)"), one > 0
        {
            print(
                "\ndevices at random / one device, among \(devices) (default cache of 100,000): "
                    + String(format: "%.2f", random / one))
        }
        if !load.json, let logged = rate("hmac-sha256 verified, response signed, access log on"),
            let plain = rate("hmac-sha256 verified" + Self.twin), plain > 0
        {
            print(
                "\naccess log on / off (hmac-sha256 verified, response signed; two servers alike but for the log, "
                    + "each serving this row only): " + String(format: "%.2f", logged / plain) + " ("
                    + String(format: "%.0f", logged) + " / " + String(format: "%.0f", plain) + " requests/s)")
        }
    }

    // MARK: Requests

    struct Reply {
        let status: Int
        let body: [UInt8]
        var text: String { String(decoding: body.prefix(200), as: UTF8.self) }
        var json: [String: Any] { (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any] ?? [:] }
    }

    static func send(
        _ method: HTTPRequest.Method,
        _ path: String,
        scheme: String = "https",
        port: Int,
        body: [UInt8],
        headers: HTTPFields = [:],
        signer: RequestSigner?,
        sealingTo sealingKey: SealingPublicKey? = nil,
        client: HTTPClient
    ) async throws -> Reply {
        let (head, body) = try prepare(
            method, path, scheme: scheme, authority: "localhost:\(port)", body: body, headers: headers,
            signer: signer, sealingTo: sealingKey)
        return try await execute(head, body: body, port: port, client: client)
    }

    /// Sends a request prepared by ``prepare(_:_:scheme:authority:body:headers:signer:sealingTo:)``.
    static func execute(_ head: HTTPRequest, body: [UInt8], port: Int, client: HTTPClient) async throws -> Reply {
        let scheme = head.scheme ?? "https"
        let path = head.path ?? "/"
        let method = head.method
        var request = HTTPClientRequest(url: "\(scheme)://localhost:\(port)\(path)")
        request.method = .init(rawValue: method.rawValue)
        for field in head.headerFields { request.headers.add(name: field.name.rawName, value: field.value) }
        request.body = .bytes(ByteBuffer(bytes: body))
        let response = try await client.execute(request, timeout: .seconds(30))
        let received = try await response.body.collect(upTo: 16 << 20)
        return Reply(status: Int(response.status.code), body: Array(buffer: received))
    }

    /// The head and body of a request as a device sends it: JSON, sealed to `sealingKey` when given,
    /// signed by `signer` when given.
    static func prepare(
        _ method: HTTPRequest.Method,
        _ path: String,
        scheme: String = "https",
        authority: String,
        body: [UInt8],
        headers: HTTPFields = [:],
        signer: RequestSigner?,
        sealingTo sealingKey: SealingPublicKey? = nil
    ) throws -> (HTTPRequest, [UInt8]) {
        var head = HTTPRequest(method: method, scheme: scheme, authority: authority, path: path)
        head.headerFields = headers
        if !body.isEmpty && head.headerFields[.contentType] == nil {
            head.headerFields[.contentType] = "application/json"
        }
        var body = body
        if let signer, let sealingKey {
            let nonce = signer.nonces.next()
            body = try Sealing.sealRequest(body, to: sealingKey, keyID: signer.keyID, nonce: nonce).body
            head.headerFields[.contentEncoding] = Sealing.contentEncoding
            try signer.sign(&head, body: body, nonce: nonce)
        } else {
            try signer?.sign(&head, body: body)
        }
        return (head, body)
    }

    /// A device's calls to the server on `port` through `client`, dated a second ahead: a server
    /// refuses what is dated at or before the second its nonce store started, and a bench's first
    /// registration can come within that second (the replicas start in well under one).
    static func calls(port: Int, client: HTTPClient) -> DeviceCalls {
        DeviceCalls(clock: AheadClock()) { method, path, body, headers, signer in
            try await send(method, path, port: port, body: body, headers: headers, signer: signer, client: client)
        }
    }

    /// Registrations per second: new Ed25519 devices, `load.concurrency` at once, for `duration` seconds.
    func register(for duration: Double, token: String, client: HTTPClient, port: Int) async throws -> Double {
        let calls = Self.calls(port: port, client: client)
        let deadline = DispatchTime.now().uptimeNanoseconds + UInt64(duration * 1e9)
        let start = ContinuousClock.now
        let total = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<load.concurrency {
                group.addTask {
                    var done = 0
                    while DispatchTime.now().uptimeNanoseconds < deadline {
                        try await calls.register(try SigningKey.generate(.ed25519), token: token)
                        done += 1
                    }
                    return done
                }
            }
            return try await group.reduce(0, +)
        }
        return Double(total) / (ContinuousClock.now - start).inSeconds
    }

    func register(_ key: SigningKey, token: String, client: HTTPClient, port: Int) async throws {
        try await Self.calls(port: port, client: client).register(key, token: token)
    }

    func sealingKey(client: HTTPClient, port: Int) async throws -> SealingPublicKey {
        try await Self.calls(port: port, client: client).sealingKey()
    }

    func secret(for signer: RequestSigner, client: HTTPClient, port: Int) async throws -> RequestSigner {
        try await Self.calls(port: port, client: client).secret(for: signer)
    }
}

/// What a bench's device asks of a server (registration, an HMAC secret, the sealing key), over
/// whatever carries its requests: TLS (`sigil bench http`) or the responder in process (`sigil bench request`).
struct DeviceCalls: Sendable {
    /// The clock of the signers it makes.
    let clock: any UnixClock
    /// Sends a request (method, path, body, extra headers, signer) and returns the reply.
    let send:
        @Sendable (HTTPRequest.Method, String, [UInt8], HTTPFields, RequestSigner?) async throws -> HTTPBench.Reply

    /// Registers `key`'s device with the enrollment `token`.
    func register(_ key: SigningKey, token: String) async throws {
        let signer = RequestSigner(key: key, keyID: key.derivedKeyID ?? "", clock: clock)
        let publicKey = KeyFile.publicKeyFile(for: try key.verificationKey) ?? ""
        let body = try JSONSerialization.data(withJSONObject: ["alg": key.algorithm.rawValue, "publicKey": publicKey])
        let reply = try await send(.post, "/v1/devices", Array(body), [.authorization: "Bearer \(token)"], signer)
        guard reply.status == 201 else { throw SigilInputError("registration failed: \(reply.text)") }
    }

    /// The server's current sealing key, from its discovery.
    func sealingKey() async throws -> SealingPublicKey {
        let reply = try await send(.get, "/.well-known/sigil", [], [:], nil)
        let discovery = try JSONDecoder().decode(Registration.Discovery.self, from: Data(reply.body))
        guard let key = try discovery.sealingKeys?.first?.key() else {
            throw SigilInputError("the server lists no sealing key")
        }
        return key
    }

    /// An HMAC secret for `signer`'s device, as a signer.
    func secret(for signer: RequestSigner) async throws -> RequestSigner {
        let reply = try await send(.post, "/v1/devices/\(signer.keyID)/secret", [], [:], signer)
        guard reply.status == 201, let keyID = reply.json["keyId"] as? String,
            let secret = (reply.json["secret"] as? String).flatMap(Base64.decode)
        else { throw SigilInputError("no secret issued: status \(reply.status)") }
        return RequestSigner(key: try SigningKey(hmacSecret: secret), keyID: keyID, clock: clock)
    }
}

/// The load the HTTP benches put on a server, and how they print what it gave.
struct LoadOptions: ParsableArguments {
    @Option(name: .long, help: "Seconds per mode, measured in alternating slices.")
    var seconds: Double = 5

    @Option(name: .long, help: "Requests in flight at once.")
    var concurrency = 32

    @Option(name: .long, help: "Request body bytes (JSON).")
    var bodySize = 1024

    @Flag(name: .long, help: "Print JSON instead of a table.")
    var json = false

    func validate() throws {
        guard seconds > 0, (1...1024).contains(concurrency), (2...(1 << 20)).contains(bodySize) else {
            throw ValidationError("--seconds > 0, --concurrency 1 to 1024, --body-size 2 to 1 MiB")
        }
    }

    /// A JSON body of `bodySize` bytes.
    var body: [UInt8] { Array(("{\"data\":\"" + String(repeating: "x", count: bodySize - 11) + "\"}").utf8) }

    /// Prints `figures` as a table under `header`, each against the first, or as JSON.
    func report(_ figures: [(String, Double)], header: String) {
        let baseline = figures.first?.1 ?? 1
        if json {
            let rows = figures.map {
                ["mode": $0.0, "requestsPerSecond": $0.1, "ratio": $0.1 / baseline] as [String: Any]
            }
            let object: [String: Any] = ["concurrency": concurrency, "bodyBytes": bodySize, "modes": rows]
            if let data = try? JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys]) {
                print(String(decoding: data, as: UTF8.self))
            }
            return
        }
        print(header)
        print("|---|---:|---:|")
        for (name, rate) in figures {
            print("| \(name) | \(CoreBench.format(rate)) | \(String(format: "%.2f", rate / baseline)) |")
        }
    }
}

/// The system's clock, a second ahead.
struct AheadClock: UnixClock {
    func now() -> Int64 { SystemUnixClock().now() + 1 }
}
