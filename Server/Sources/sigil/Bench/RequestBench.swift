import ArgumentParser
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import NIOEmbedded
import SigilClient
@_spi(Sigil) import SigilCore
import SigilHummingbird
import SigilStandalone

/// `sigil bench request`: the whole server pipeline of `sigil serve` in process, without sockets or
/// TLS: from the request as Hummingbird hands it over (head parsed, body in a buffer) through the
/// router, the exchange, the key lookup, the nonce store and the route, to the answer signed and its
/// body written out. One task, so one core; figures are ratios within one run.
///
/// With `--mode M --count N` it runs `N` requests of one mode and prints nothing: the loop
/// `scripts/instructions` counts under callgrind (at two counts, so the set-up cancels out).
struct RequestBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "request",
        abstract: "The server pipeline in process (no sockets): unverified, each verified mode, raw crypto.",
        discussion: """
            Each mode is measured in alternating slices on one task; figures are ratios within one run. \
            scripts/instructions counts the same modes' instructions under callgrind (--mode, --count).
            """
    )

    @Option(name: .long, help: "Seconds per mode, measured in alternating slices.")
    var seconds: Double = 5

    @Flag(name: .long, help: "Print JSON instead of a table.")
    var json = false

    @Option(name: .long, help: "Only this mode (an ID from --list); with --count, run exactly that many requests.")
    var mode: String?

    @Option(name: .long, help: "With --mode: run this many requests, print nothing (for callgrind).")
    var count: Int?

    @Option(name: .long, help: "With --count: requests prepared beforehand, whatever --count is (so set-up is alike).")
    var pool = 1000

    @Flag(
        name: .long,
        help:
            "Walk 4 MiB of memory before each request, untimed: each request starts with caches another request's work filled, as over HTTP."
    )
    var cold = false

    @Flag(name: .long, help: "List the modes' IDs and names.")
    var list = false

    @Option(
        name: .long,
        help: "Also run the replica's pipeline: keys in this shared store, a postgres:// URL (password as for serve).")
    var store: String?

    @Option(name: .long, help: "With --store: the replica's nonces, store (with the keys) or a redis:// URL.")
    var nonces = "store"

    @Option(
        name: .long,
        help: "With --store: the replica's data directory, kept across runs (the store's keys are sealed to it).")
    var dataDir: String?

    func validate() throws {
        guard seconds > 0 else { throw ValidationError("--seconds > 0") }
        if let count {
            guard mode != nil, count >= 0, count <= pool else {
                throw ValidationError("--count takes --mode, and 0 to --pool requests")
            }
        }
        if let mode, !PipelineMode.all.contains(where: { $0.id == mode }) {
            throw ValidationError("no mode \(mode); --list shows them")
        }
        if let store {
            guard case .postgres = try ServerOptions.keyStore(store) else {
                throw ValidationError("--store is a postgres:// URL: the store replicas share")
            }
            guard try ServerOptions.nonceStorage(nonces) != .memory else {
                throw ValidationError("--nonces is store or redis://…: replicas share their nonces")
            }
        } else if PipelineMode.all.contains(where: { $0.id == mode && $0.server == .replica }) {
            throw ValidationError("mode \(mode ?? "") needs --store postgres://…")
        }
    }

    func run() async throws {
        if list {
            for mode in PipelineMode.all { print("\(mode.id)\t\(mode.name)") }
            return
        }
        #if DEBUG
            FileHandle.standardError.write(
                Data(
                    ("sigil: warning: a debug build; run "
                        + "`swift run -c release --package-path Server sigil bench request`\n").utf8))
        #endif
        let modes = PipelineMode.all.filter {
            (mode == nil || $0.id == mode) && ($0.server != .replica || store != nil)
        }
        let root = NSTemporaryDirectory() + "sigil-bench-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: root) }
        // The servers' clock stands still at the start, and the devices' clock a second later (a
        // server takes requests dated after its start): times repeat, so instruction counts do too.
        let start = SystemUnixClock().now()
        let clock = ManualUnixClock(start + 1)
        var servers: [PipelineServer.Kind: PipelineServer] = [:]
        for kind in Set(modes.compactMap(\.server)) {
            let shared = try store.map { (try ServerOptions.keyStore($0), try ServerOptions.nonceStorage(nonces)) }
            servers[kind] = try await PipelineServer.start(
                kind, root: root, clock: ManualUnixClock(start),
                shared: kind == .replica ? shared.map { ($0.0, $0.1, dataDir) } : nil)
        }
        defer { for server in servers.values { Task { try? await server.prepared.close() } } }
        var runners: [PipelineRunner] = []
        for mode in modes { runners.append(try await PipelineRunner(mode: mode, servers: servers, clock: clock)) }
        if let count {
            // The counted loop: 20 requests to warm up, then `pool` prepared whatever `count` is, of
            // which `count` are served.
            let runner = runners[0]
            let requests = try runner.prepare(20 + pool)
            countFromHere()
            try await runner.run(requests, count: 20)
            try await runner.run(Array(requests.dropFirst(20)), count: count)
            return
        }
        let figures = try await measure(runners)
        report(figures)
    }

    /// Microseconds per request of each runner: after a warm-up, in five alternating slices; with
    /// `--cold`, also with the caches walked over before each request (a second slice of each mode
    /// right after its first, so the two are measured alike).
    func measure(_ runners: [PipelineRunner]) async throws -> [(mode: PipelineMode, warm: Double, cold: Double?)] {
        var estimates: [Double] = []
        for runner in runners {
            let requests = try runner.prepare(200)
            let start = Stopwatch.now()
            try await runner.run(requests, count: requests.count)
            estimates.append(Double(Stopwatch.now() - start) / 1e3 / Double(requests.count))
        }
        let slices = 5
        let slice = seconds / Double(slices)
        let evictor = cold ? CacheEvictor() : nil
        var spent = [Double](repeating: 0, count: runners.count)
        var done = [Int](repeating: 0, count: runners.count)
        var coldSpent = [Double](repeating: 0, count: runners.count)
        var coldDone = [Int](repeating: 0, count: runners.count)
        BenchOutput.progress(
            "\(runners.count) modes, \(slices) slices of \(String(format: "%g", slice)) s each; "
                + "the table comes once all are measured (each is read against the first)")
        for index in 0..<slices {
            for (mode, runner) in runners.enumerated() {
                // A slice's requests are prepared (signed, sealed) beforehand, and only serving them is timed.
                let count = max(50, Int(slice * 1e6 / max(estimates[mode], 1)))
                let requests = try runner.prepare(count)
                let start = Stopwatch.now()
                try await runner.run(requests, count: requests.count)
                spent[mode] += Double(Stopwatch.now() - start) / 1e3
                done[mode] += requests.count
                if let evictor {
                    let colder = try runner.prepare(count)
                    coldSpent[mode] += Double(try await runner.runCold(colder, evictor: evictor)) / 1e3
                    coldDone[mode] += colder.count
                }
            }
            BenchOutput.progress("slice \(index + 1) of \(slices) measured")
        }
        return runners.indices.map { index in
            (
                runners[index].mode, spent[index] / Double(done[index]),
                evictor == nil ? nil : coldSpent[index] / Double(coldDone[index])
            )
        }
    }

    func report(_ measured: [(mode: PipelineMode, warm: Double, cold: Double?)]) {
        let figures = measured.map { ($0.mode, $0.warm) }
        let baseline = figures.first?.1 ?? 1
        if json {
            let rows = measured.map { mode, microseconds, cold in
                var row: [String: Any] = [
                    "mode": mode.id, "name": mode.name, "microsecondsPerRequest": microseconds,
                    "requestsPerSecond": 1e6 / microseconds, "ratio": baseline / microseconds,
                ]
                if let cold { row["coldMicrosecondsPerRequest"] = cold }
                return row
            }
            let object: [String: Any] = ["bodyBytes": BenchBody.json.count, "modes": rows]
            if let data = try? JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys]) {
                print(String(decoding: data, as: UTF8.self))
            }
            return
        }
        print("| request (1 KiB JSON, in process, one task) | µs/request | requests/s | vs unverified |")
        print("|---|---:|---:|---:|")
        for (mode, microseconds) in figures {
            print(
                "| \(mode.name) | \(String(format: "%.1f", microseconds)) | \(CoreBench.format(1e6 / microseconds)) | "
                    + "\(String(format: "%.2f", baseline / microseconds)) |")
        }
        guard let coldBaseline = measured.first?.cold else { return }
        // Beyond unverified, warm and cold: what caches another request's work filled add to each row.
        print(
            "\n| request, caches walked over before each (--cold) | µs warm | µs cold | beyond unverified, warm | beyond unverified, cold |"
        )
        print("|---|---:|---:|---:|---:|")
        for (mode, warm, cold) in measured {
            guard let cold else { continue }
            // The raw rows are cryptography alone: nothing of theirs is beyond an unverified request.
            let beyond = mode.server == nil ? [] : [warm - baseline, cold - coldBaseline]
            let row =
                ([warm, cold] + beyond).map { String(format: "%.1f", $0) } + (mode.server == nil ? ["", ""] : [])
            print("| \(mode.name) | " + row.joined(separator: " | ") + " |")
        }
    }
}

/// One row of `sigil bench request`: a kind of request and the server that answers it, or the raw
/// cryptography a verified row spends (`server` nil).
struct PipelineMode: Sendable, Hashable {
    enum Signature: Sendable, Hashable { case none, hmac, ecdsa }
    let id: String
    let name: String
    let server: PipelineServer.Kind?
    var signature = Signature.hmac
    var profile = SignatureProfile.sigilV1
    var sealed = false
    /// A floor route's check (`hmac` or `ecdsa`, `POST /bench/floor/…`): the request carries a signed
    /// exchange's fields unsigned, the route does only the protocol's part of the work (`FloorRoutes`).
    var floor: String?

    static let all: [PipelineMode] = [
        PipelineMode(id: "unverified", name: "unverified", server: .signing, signature: .none),
        PipelineMode(id: "hmac-signed", name: "hmac-sha256 verified, response signed", server: .signing),
        PipelineMode(
            id: "hmac-signed-rfc9421", name: "hmac-sha256 verified (rfc9421), response signed", server: .signing,
            profile: .rfc9421),
        PipelineMode(
            id: "hmac-signed-memory", name: "hmac-sha256 verified, response signed, memory nonces",
            server: .memoryNonces),
        PipelineMode(
            id: "ecdsa-signed", name: "ecdsa-p256 verified, response signed", server: .signing, signature: .ecdsa),
        PipelineMode(
            id: "ecdsa-signed-rfc9421", name: "ecdsa-p256 verified (rfc9421), response signed", server: .signing,
            signature: .ecdsa, profile: .rfc9421),
        PipelineMode(
            id: "sealed", name: "hmac-sha256 verified, sealed (HPKE X-Wing), answer sealed and signed",
            server: .signing, sealed: true),
        PipelineMode(
            id: "floor-hmac", name: HTTPBench.floorRow("hmac-sha256"), server: .signing, signature: .none,
            floor: "hmac"),
        PipelineMode(
            id: "floor-ecdsa", name: HTTPBench.floorRow("ecdsa-p256"), server: .signing, signature: .none,
            floor: "ecdsa"),
        PipelineMode(id: "hmac", name: "hmac-sha256 verified", server: .plain),
        PipelineMode(id: "ecdsa", name: "ecdsa-p256 verified", server: .plain, signature: .ecdsa),
        PipelineMode(
            id: "hmac-signed-log", name: "hmac-sha256 verified, response signed, access log on", server: .logging),
        PipelineMode(
            id: "hmac-signed-replica", name: "hmac-sha256 verified, response signed, a replica's shared stores",
            server: .replica),
        PipelineMode(id: "raw-hmac", name: "raw crypto: HMAC-SHA256 check + Ed25519 answer signature", server: nil),
        PipelineMode(
            id: "raw-ecdsa", name: "raw crypto: ECDSA P-256 check + Ed25519 answer signature", server: nil,
            signature: .ecdsa),
    ]
}

/// A `sigil serve` prepared in process, whose router is called directly.
struct PipelineServer: Sendable {
    enum Kind: Sendable, Hashable {
        /// Signs its answers, nonces in SQLite beside the keys: `sigil serve` as it starts.
        case signing
        /// Signs nothing.
        case plain
        /// Signs its answers, nonces in memory.
        case memoryNonces
        /// Signs its answers and writes an access log.
        case logging
        /// Signs its answers, keys and nonces in the stores replicas share (`--store`, `--nonces`).
        case replica
    }

    let prepared: SigilStandalone.Prepared
    let responder: RouterResponder<SigilBasicRequestContext>
    let logger: Logger
    /// Stands for the connection: the context carries one; nothing is written to it.
    let channel: NIOAsyncTestingChannel
    /// The devices' clock.
    let clock: any UnixClock

    static func start(
        _ kind: Kind, root: String, clock: any UnixClock,
        shared: (SigilStandalone.KeyStore, SigilStandalone.NonceStorage, dataDirectory: String?)? = nil
    ) async throws -> PipelineServer {
        var logger = Logger(label: "sigil.bench")
        logger.logLevel = .critical
        var options = SigilStandalone.Options()
        options.dataDirectory = root + "/\(kind)"
        options.port = 0
        options.benchmarkRoute = true
        options.clock = clock
        options.signsResponses = kind != .plain
        if kind == .memoryNonces { options.nonceStorage = .memory }
        if kind == .logging { options.accessLog = root + "/access.log" }
        if let (keyStore, nonceStorage, dataDirectory) = shared {
            options.keyStore = keyStore
            options.nonceStorage = nonceStorage
            if let dataDirectory { options.dataDirectory = dataDirectory }
        }
        let prepared = try await SigilStandalone.prepare(options, logger: logger)
        return PipelineServer(
            prepared: prepared, responder: prepared.application.responder, logger: logger,
            channel: NIOAsyncTestingChannel(), clock: ManualUnixClock(clock.now() + 1))
    }

    /// The answer to `head` and `body`, as Hummingbird's server makes it: a context for the request,
    /// the router's response, its body written out.
    func respond(_ head: HTTPRequest, body: [UInt8]) async throws -> HTTPBench.Reply {
        var logger = self.logger
        logger[metadataKey: "hb.request.id"] = .stringConvertible(RequestID())
        let context = SigilBasicRequestContext(source: .init(channel: channel, logger: logger))
        let request = Request(head: head, body: RequestBody(buffer: ByteBuffer(bytes: body)))
        let response = try await responder.respond(to: request, context: context)
        let written = BodyCollector()
        try await response.body.write(written.writer)
        return HTTPBench.Reply(status: Int(response.status.code), body: written.bytes)
    }

    /// A device's calls to this server.
    var calls: DeviceCalls {
        DeviceCalls(clock: clock) { method, path, body, headers, signer in
            let (head, body) = try HTTPBench.prepare(
                method, path, authority: "api.example", body: body, headers: headers, signer: signer)
            return try await respond(head, body: body)
        }
    }
}

/// Prepares and serves one mode's requests.
struct PipelineRunner: Sendable {
    let mode: PipelineMode
    let server: PipelineServer?
    let signer: RequestSigner?
    let sealingKey: SealingPublicKey?
    /// The raw rows' keys: the request's verification key, and a response key like the server's.
    let raw: (device: SigningKey, responseKey: SigningKey)?

    init(mode: PipelineMode, servers: [PipelineServer.Kind: PipelineServer], clock: any UnixClock) async throws {
        self.mode = mode
        let device = try SigningKey.generate(.ecdsaP256SHA256)
        guard let kind = mode.server, let server = servers[kind] else {
            self.server = nil
            signer = nil
            sealingKey = nil
            raw = (
                mode.signature == .ecdsa ? device : try SigningKey(hmacSecret: Array(repeating: 7, count: 32)),
                try SigningKey.generate(.ed25519)
            )
            return
        }
        self.server = server
        raw = nil
        switch mode.signature {
        case .none:
            signer = nil
        case .ecdsa, .hmac:
            try await server.calls.register(device, token: server.prepared.enrollToken ?? "")
            let ecdsa = RequestSigner(
                key: device, keyID: device.derivedKeyID ?? "", profile: mode.profile, clock: clock)
            if mode.signature == .ecdsa {
                signer = ecdsa
            } else {
                let hmac = try await server.calls.secret(for: ecdsa)
                signer = RequestSigner(key: hmac.key, keyID: hmac.keyID, profile: mode.profile, clock: clock)
            }
        }
        sealingKey = mode.sealed ? try await server.calls.sealingKey() : nil
    }

    /// One prepared request: for the server, its head and body; for the raw rows, a signature and
    /// the base it signs.
    struct Prepared: Sendable {
        var head = HTTPRequest(method: .post, scheme: "https", authority: "api.example", path: "/")
        let body: [UInt8]
        var signature: [UInt8] = []
    }

    func prepare(_ count: Int) throws -> [Prepared] {
        if let raw {
            // Bases as long as the sigil-v1 base of the bench's request.
            return try (0..<count).map { index in
                let base = Array("POST\napi.example\n/v1/echo\n\(index)\n".utf8) + Array(repeating: 0x61, count: 120)
                return Prepared(body: base, signature: try raw.device.signature(for: base, profile: .sigilV1))
            }
        }
        let path =
            mode.floor.map { "/bench/floor/\($0)" } ?? (mode.signature == .none ? "/bench/unverified" : "/v1/echo")
        let floor = mode.floor
        return try (0..<count).map { _ in
            let fields = floor.map {
                HTTPBench.signedFields(keyID: "bench-floor-key", signatureBytes: $0 == "ecdsa" ? 64 : 32)
            }
            let (head, body) = try HTTPBench.prepare(
                .post, path, authority: "api.example", body: BenchBody.json, headers: fields ?? [:], signer: signer,
                sealingTo: sealingKey)
            return Prepared(head: head, body: body)
        }
    }

    /// Serves the first `count` of `requests`, each of which must be answered 200 (or, for the raw
    /// rows, verify).
    func run(_ requests: [Prepared], count: Int) async throws {
        if let raw {
            let verificationKey = try raw.device.verificationKey
            let answer = Array(repeating: UInt8(0x62), count: 150)
            for request in requests.prefix(count) {
                guard verificationKey.isValidSignature(request.signature, for: request.body, profile: .sigilV1) else {
                    throw SigilInputError("\(mode.name): a signature did not verify")
                }
                _ = try raw.responseKey.signature(for: answer, profile: .sigilV1)
            }
            return
        }
        guard let server else { return }
        for request in requests.prefix(count) {
            let reply = try await server.respond(request.head, body: request.body)
            guard reply.status == 200 else {
                throw SigilInputError("\(mode.name): status \(reply.status) \(reply.text)")
            }
        }
    }

    /// Serves `requests` one at a time, `evictor` walking its memory before each, untimed; returns the
    /// nanoseconds the requests alone took.
    func runCold(_ requests: [Prepared], evictor: CacheEvictor) async throws -> UInt64 {
        var spent: UInt64 = 0
        for index in requests.indices {
            evictor.walk()
            let start = Stopwatch.now()
            try await run(Array(requests[index...index]), count: 1)
            spent += Stopwatch.now() - start
        }
        return spent
    }
}

/// Fills the caches with other data: a walk over 4 MiB, a write to each cache line, before a cold
/// request (`sigil bench request --cold`), as TLS, HTTP/2 and other requests' work does over HTTP.
final class CacheEvictor: @unchecked Sendable {
    private var memory = [UInt8](repeating: 0, count: 4 << 20)
    /// What the walks wrote, so no walk can be left out.
    private(set) var sum: UInt8 = 0

    func walk() {
        memory.withUnsafeMutableBufferPointer { bytes in
            var sum = self.sum
            for line in stride(from: 0, to: bytes.count, by: 64) {
                bytes[line] &+= 1
                sum &+= bytes[line]
            }
            self.sum = sum
        }
    }
}
