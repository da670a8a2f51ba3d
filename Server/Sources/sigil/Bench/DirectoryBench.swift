import ArgumentParser
import Crypto
import Foundation
import HTTPTypes
import SigilClient
@_spi(Sigil) import SigilCore
import SigilPostgres
import SigilSQLite
import SigilServer
import Synchronization

/// `sigil bench directory`: signed requests verified per second when every one comes from the same
/// device, and when each comes from a device picked at random among many, through the key
/// directory `sigil serve` uses (its cache, the last-use tracker), on SQLite and PostgreSQL; and
/// what a million devices cost beside: filling the store, the process's memory, the first page of
/// devices the console and `sigil admin devices` read.
struct DirectoryBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "directory",
        abstract:
            "Verified requests per second: one hot device vs. devices at random among many, on SQLite and PostgreSQL.",
        discussion: """
            Fills the store with --devices Ed25519 devices in changes of 2,000 (the store's own statements, \
            one transaction a change; on PostgreSQL in the database given: use a scratch one), each key \
            derived from a secret of the run and the device's number, so nothing is held per device. Then \
            verifies signed requests with 8 in flight, as sigil serve would (its key-directory cache, \
            holding at most --cache-size lookups, and its last-use tracker), in slices alternating one hot \
            device and devices at random, each slice signed beforehand. The cache is warmed by a slice of \
            random requests first.
            """
    )

    @Option(name: .long, help: "Seconds per measurement.")
    var seconds: Double = 3

    @Option(name: .long, help: "Devices enrolled.")
    var devices = 50_000

    @Option(name: .customLong("cache-size"), help: "The most key-directory lookups cached.")
    var cacheSize = 100_000

    @Option(
        name: .long, help: "A PostgreSQL URL (postgres://user@host:port/database), password from SIGIL_STORE_PASSWORD.")
    var postgres: String?

    @Option(name: .long, help: "Only these stores (comma-separated: sqlite, postgres).")
    var only: String?

    func measures(_ store: String) -> Bool {
        only.map { $0.lowercased().split(separator: ",").contains { $0 == store } } ?? true
    }

    func validate() throws {
        guard devices > 0, devices <= 10_000_000, cacheSize > 0, seconds > 0 else {
            throw ValidationError("--devices (at most 10,000,000), --cache-size and --seconds are positive")
        }
    }

    func run() async throws {
        #if DEBUG
            FileHandle.standardError.write(
                Data("sigil: warning: a debug build; run `swift build -c release` first\n".utf8))
        #endif
        let population = Population(count: devices)
        BenchOutput.line(
            "| store | devices | cache size | filled in | one hot device, req/s | at random, req/s | random / hot "
                + "| cache entries | memory (RSS) | first page of 100 devices |")
        BenchOutput.line("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        if measures("sqlite") {
            let path = NSTemporaryDirectory() + "sigil-bench-\(UUID().uuidString).sqlite"
            defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) } }
            let directory = try await Directory.sqlite(
                path: path, masterKey: SymmetricKey(size: .bits256), cacheCapacity: cacheSize)
            try await measure("SQLite", directory, population)
            try await directory.close()
        }
        if let postgres, measures("postgres") {
            let location = try PostgresStore.Location(
                url: postgres, password: ProcessInfo.processInfo.environment["SIGIL_STORE_PASSWORD"])
            let store = try await PostgresStore.open(location, connections: 16)
            let directory = try Directory.postgres(
                store: store, masterKey: SymmetricKey(size: .bits256), cacheCapacity: cacheSize)
            try await measure("PostgreSQL", directory, population)
            store.close()
        }
    }

    func measure(_ name: String, _ directory: Directory, _ population: Population) async throws {
        let filled = try await population.fill(directory)
        BenchOutput.progress(
            "\(name): \(population.count) devices filled in \(String(format: "%.1f", filled.total)) s "
                + "(\(String(format: "%.1f", filled.writing)) s writing)")
        var configuration = VerifierConfiguration()
        let usage = KeyUsageTracker(directory: directory)
        configuration.usage = usage
        let verifier = RequestVerifier(keys: directory, nonces: MemoryNonceStore(), configuration: configuration)
        var generator = SystemRandomNumberGenerator()
        let random = { Int.random(in: 0..<population.count, using: &generator) }
        // Warm: a slice of random requests, as a server that has run a while has seen.
        _ = try await Self.rate(verifier, try population.requests(20_000, pick: random), seconds: seconds)
        var hot = (requests: 0.0, seconds: 0.0)
        var atRandom = (requests: 0.0, seconds: 0.0)
        let slice = 10_000
        while hot.seconds < seconds || atRandom.seconds < seconds {
            let hotRate = try await Self.rate(verifier, try population.requests(slice, pick: { 0 }), seconds: seconds)
            hot = (hot.requests + Double(slice), hot.seconds + Double(slice) / hotRate)
            let randomRate = try await Self.rate(
                verifier, try population.requests(slice, pick: random), seconds: seconds)
            atRandom = (atRandom.requests + Double(slice), atRandom.seconds + Double(slice) / randomRate)
        }
        let hotRate = hot.requests / hot.seconds
        let randomRate = atRandom.requests / atRandom.seconds
        await usage.flush()  // before the store closes
        // The query the console's first page and `sigil admin devices` make (one more than the page).
        let start = ContinuousClock.now
        let page = try await directory.devices(DeviceQuery(limit: PageRule.defaultLimit + 1))
        let pageTime = ContinuousClock.now - start
        precondition(page.count == min(population.count, PageRule.defaultLimit + 1))
        BenchOutput.line(
            "| \(name) | \(StoreBench.format(Double(population.count))) | \(StoreBench.format(Double(directory.cache.capacity))) "
                + "| \(String(format: "%.1f", filled.total)) s | \(StoreBench.format(hotRate)) | \(StoreBench.format(randomRate)) "
                + "| \(String(format: "%.2f", randomRate / hotRate)) | \(StoreBench.format(Double(directory.cache.count))) "
                + "| \(ResidentMemory.text) | \(String(format: "%.1f", pageTime.inSeconds * 1000)) ms |")
    }

    /// Requests verified per second, 8 in flight, until `requests` run out or `seconds` pass.
    static func rate(_ verifier: RequestVerifier, _ requests: [HTTPRequest], seconds: Double) async throws -> Double {
        let next = Counter()
        let start = ContinuousClock.now
        let deadline = start + .milliseconds(Int64(seconds * 1000))
        let total = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<8 {
                group.addTask {
                    var verified = 0
                    while ContinuousClock.now < deadline, let index = next.take(below: requests.count) {
                        _ = try await verifier.verify(requests[index], body: [])
                        verified += 1
                    }
                    return verified
                }
            }
            return try await group.reduce(0, +)
        }
        return Double(total) / (ContinuousClock.now - start).inSeconds
    }
}

/// The bench's devices: device `n`'s Ed25519 key derived from a secret of the run and `n`, so a
/// million devices cost nothing to hold, and any one can sign again.
struct Population: Sendable {
    let count: Int
    let secret = SymmetricKey(size: .bits256)
    let run = Hex.random(bytes: 4)

    func keyID(_ index: Int) -> String { "bench-\(run)-\(index)" }

    func key(_ index: Int) throws -> SigningKey {
        var number = UInt64(index).bigEndian
        let seed = withUnsafeBytes(of: &number) { HMAC<SHA256>.authenticationCode(for: $0, using: secret) }
        return try SigningKey(
            material: .ed25519(try Curve25519.Signing.PrivateKey(rawRepresentation: Array(seed))), algorithm: .ed25519)
    }

    /// The devices in `range`, derived on every core.
    func registered(_ range: Range<Int>) async throws -> [RegisteredKey] {
        let parts = max(ProcessInfo.processInfo.activeProcessorCount, 1)
        let size = (range.count + parts - 1) / parts
        return try await withThrowingTaskGroup(of: (Int, [RegisteredKey]).self) { group in
            for part in 0..<parts {
                let lower = range.lowerBound + part * size
                let upper = min(lower + size, range.upperBound)
                guard lower < upper else { continue }
                group.addTask {
                    let keys = try (lower..<upper).map { index in
                        RegisteredKey(
                            keyID: keyID(index), key: try key(index).verificationKey,
                            deviceID: "dev-bench-\(run)-\(index)")
                    }
                    return (part, keys)
                }
            }
            var parts: [(Int, [RegisteredKey])] = []
            for try await part in group { parts.append(part) }
            return parts.sorted { $0.0 < $1.0 }.flatMap(\.1)
        }
    }

    /// Adds every device in changes (transactions) of 2,000, keys derived 20,000 at a time: the
    /// seconds it took in all, and those spent writing. A change stays well inside the store's
    /// deadline even where the tables have outgrown the database's memory.
    func fill(_ directory: Directory, _ range: Range<Int>? = nil) async throws -> (total: Double, writing: Double) {
        let range = range ?? 0..<count
        let start = ContinuousClock.now
        var writing = Duration.zero
        for lower in stride(from: range.lowerBound, to: range.upperBound, by: 20_000) {
            let derived = try await registered(lower..<min(lower + 20_000, range.upperBound))
            let written = ContinuousClock.now
            for part in stride(from: 0, to: derived.count, by: 2_000) {
                try await directory.apply(
                    DirectoryChange(added: Array(derived[part..<min(part + 2_000, derived.count)])))
            }
            writing += ContinuousClock.now - written
            if lower % 100_000 == 0, lower > 0 { BenchOutput.progress("\(lower) devices filled") }
        }
        return ((ContinuousClock.now - start).inSeconds, writing.inSeconds)
    }

    /// `count` signed requests, each from the device `pick` gives.
    func requests(_ count: Int, pick: () -> Int) throws -> [HTTPRequest] {
        let ahead = ManualUnixClock(SystemUnixClock().now() + 2)
        return try (0..<count).map { _ in
            let device = pick()
            var request = HTTPRequest(method: .get, scheme: "https", authority: "api.example", path: "/v1/orders")
            // Dated a little ahead: the nonce store refuses what is dated at or before its start.
            _ = try RequestSigner(key: try key(device), keyID: keyID(device), clock: ahead).sign(&request, body: [])
            return request
        }
    }
}

/// The process's resident memory, from `/proc/self/status` (Linux).
enum ResidentMemory {
    static var bytes: Int? {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") })
        else { return nil }
        return line.split(separator: " ").dropFirst().first.flatMap { Int($0) }.map { $0 * 1024 }
    }

    static var text: String { bytes.map { "\($0 / 1_048_576) MB" } ?? "n/a" }
}

/// Hands out indices once each.
private final class Counter: Sendable {
    let value = Mutex(0)

    func take(below limit: Int) -> Int? {
        value.withLock { value in
            guard value < limit else { return nil }
            defer { value += 1 }
            return value
        }
    }
}
