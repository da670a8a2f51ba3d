import AsyncHTTPClient
import Foundation
import Logging
import NIOSSL
import ServiceLifecycle
import SigilClient
@_spi(Sigil) import SigilCore
import SigilServer
import SigilStandalone

/// `sigil bench http --replicas N --store postgres://…`: replicas sharing one store, in this process.
extension HTTPBench {
    func runReplicas(logger: Logger) async throws {
        guard (2...8).contains(replicas) else { throw SigilInputError("--replicas is 2 to 8") }
        guard let store, case .postgres = try ServerOptions.keyStore(store) else {
            throw SigilInputError("--replicas needs a shared key store: --store postgres://…")
        }
        let nonceStorage = try ServerOptions.nonceStorage(nonces)
        guard nonceStorage != .memory else {
            throw SigilInputError(
                "replicas with nonces in memory would each accept a replay: --nonces store or redis://…")
        }
        let root = NSTemporaryDirectory() + "sigil-bench-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: root) }
        var servers: [(SigilStandalone.Prepared, ServiceGroup)] = []
        var ports: [Int] = []
        func stopAll() async {
            for (prepared, group) in servers {
                await group.triggerGracefulShutdown()
                try? await prepared.close()
            }
        }
        // One data directory (master key, TLS identity, response key) and one store, as replicas share them.
        do {
            for _ in 0..<replicas {
                var options = SigilStandalone.Options()
                options.dataDirectory = root
                options.port = 0
                options.benchmarkRoute = true
                options.keyStore = try ServerOptions.keyStore(store)
                options.nonceStorage = nonceStorage
                let (prepared, group, port) = try await Self.start(options, logger: logger)
                servers.append((prepared, group))
                ports.append(port)
            }
        } catch {
            await stopAll()
            throw error
        }
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.minimumTLSVersion = .tlsv13
        tls.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(servers[0].0.certificateFile))
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: .init(tlsConfiguration: tls))
        do {
            let throughput = try await measureReplicas(client: client, first: servers[0].0, ports: ports)
            let propagation = try await measureRevocation(
                client: client, on: servers[0].0, seenBy: ports[1], trials: 5)
            try await client.shutdown()
            await stopAll()
            reportReplicas(throughput, propagation: propagation, stores: servers[0].0.stores.description)
        } catch {
            try? await client.shutdown()
            await stopAll()
            throw error
        }
    }

    /// HMAC-verified requests per second sent to the first replica alone, then spread over all.
    func measureReplicas(client: HTTPClient, first: SigilStandalone.Prepared, ports: [Int]) async throws -> [Double] {
        let device = try SigningKey.generate(.ecdsaP256SHA256)
        let ecdsa = RequestSigner(key: device, keyID: device.derivedKeyID ?? "", clock: AheadClock())
        try await register(device, token: first.enrollToken ?? "", client: client, port: ports[0])
        let hmac = try await secret(for: ecdsa, client: client, port: ports[0])
        let mode = Mode(name: "hmac-sha256 verified", path: "/v1/echo", signer: hmac, server: 0)
        let body = load.body
        let spreads = [[ports[0]], ports]
        // Requests signed before each slice (see measure).
        var rates: [Double] = []
        for spread in spreads {
            rates.append(try await run(mode, ports: spread, body: body, client: client, for: 0.2) / 0.2)
        }
        var totals = [0.0, 0.0]
        let slices = 5
        let duration = load.seconds / Double(slices)
        for slice in 0..<slices {
            for (index, spread) in spreads.enumerated() {
                let done = try await run(
                    mode, ports: spread, body: body, client: client, for: duration,
                    prepared: toPrepare(rate: rates[index], for: duration))
                totals[index] += done
                rates[index] = done / duration
            }
            BenchOutput.progress("throughput: slice \(slice + 1) of \(slices) measured")
        }
        return totals.map { $0 / load.seconds }
    }

    /// Milliseconds from a revocation on `prepared`'s replica to the first refusal by the replica at
    /// `port`, which had just accepted (and cached) the device's key, for each trial.
    func measureRevocation(client: HTTPClient, on prepared: SigilStandalone.Prepared, seenBy port: Int, trials: Int)
        async throws -> [Double]
    {
        var times: [Double] = []
        for trial in 0..<trials {
            let key = try SigningKey.generate(.ed25519)
            let keyID = key.derivedKeyID ?? ""
            let deviceID = "bench-revoked-\(trial)-\(UUID().uuidString.prefix(8))"
            try await prepared.directory.apply(
                DirectoryChange(added: [RegisteredKey(keyID: keyID, key: try key.verificationKey, deviceID: deviceID)]))
            let signer = RequestSigner(key: key, keyID: keyID)
            let body = Array(#"{"n":1}"#.utf8)
            let accepted = try await Self.send(
                .post, "/v1/echo", port: port, body: body, signer: signer, client: client)
            guard accepted.status == 200 else {
                throw SigilInputError("the replica refused a new device: \(accepted.text)")
            }
            try await prepared.directory.apply(DirectoryChange(revokedDevices: [deviceID]))
            let start = ContinuousClock.now
            while true {
                let reply = try await Self.send(
                    .post, "/v1/echo", port: port, body: body, signer: signer, client: client)
                if reply.status != 200 { break }
                guard ContinuousClock.now - start < .seconds(10) else {
                    throw SigilInputError("a revoked device was still accepted after 10 s")
                }
                try await Task.sleep(for: .milliseconds(2))
            }
            let elapsed = ContinuousClock.now - start
            times.append(Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds) / 1e15)
            BenchOutput.progress("revocation: trial \(trial + 1) of \(trials) measured")
        }
        return times
    }

    func reportReplicas(_ figures: [Double], propagation: [Double], stores: String) {
        let one = figures[0]
        let many = figures[1]
        let sorted = propagation.sorted()
        if load.json {
            let object: [String: Any] = [
                "replicas": replicas, "concurrency": load.concurrency, "bodyBytes": load.bodySize, "stores": stores,
                "oneReplicaRequestsPerSecond": one, "replicasRequestsPerSecond": many, "ratio": many / one,
                "revocationMilliseconds": propagation,
            ]
            if let data = try? JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys]) {
                print(String(decoding: data, as: UTF8.self))
            }
            return
        }
        print(
            "| HMAC-verified requests (\(load.bodySize) B JSON, \(load.concurrency) in flight, one process; \(stores)) | requests/s | vs one replica |"
        )
        print("|---|---:|---:|")
        print("| one replica | \(CoreBench.format(one)) | 1.00 |")
        print(
            "| \(replicas) replicas, requests spread evenly | \(CoreBench.format(many)) | \(String(format: "%.2f", many / one)) |"
        )
        print()
        print("| revocation on replica 1 → refused by replica 2 (\(sorted.count) trials) | min | median | max |")
        print("|---|---:|---:|---:|")
        let median = sorted.isEmpty ? 0 : sorted[sorted.count / 2]
        print(
            "| milliseconds | \(String(format: "%.0f", sorted.first ?? 0)) | \(String(format: "%.0f", median)) | \(String(format: "%.0f", sorted.last ?? 0)) |"
        )
    }
}
