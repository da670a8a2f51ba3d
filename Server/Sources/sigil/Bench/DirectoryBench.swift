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
/// directory `sigil serve` uses (its cache, the last-use tracker), on SQLite and PostgreSQL.
struct DirectoryBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "directory",
        abstract:
            "Verified requests per second: one hot device vs. devices at random among many, on SQLite and PostgreSQL.",
        discussion: """
            Registers --devices Ed25519 devices (on PostgreSQL, in the database given: use a scratch one), \
            signs the requests beforehand, then verifies them with 8 in flight, as sigil serve would \
            (its key-directory cache, holding at most --cache-size lookups, and its last-use tracker). \
            The cache is warm: every device has been looked up once.
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
        guard devices > 0, cacheSize > 0, seconds > 0 else {
            throw ValidationError("--devices, --cache-size and --seconds are positive")
        }
    }

    func run() async throws {
        #if DEBUG
            FileHandle.standardError.write(
                Data("sigil: warning: a debug build; run `swift build -c release` first\n".utf8))
        #endif
        let keys = try (0..<devices).map { _ in try SigningKey.generate(.ed25519) }
        let run = Hex.random(bytes: 4)
        let registered = try keys.enumerated().map { index, key in
            RegisteredKey(
                keyID: "bench-\(run)-\(index)", key: try key.verificationKey, deviceID: "dev-bench-\(run)-\(index)")
        }
        BenchOutput.line(
            "| store | devices | cache size | one hot device, req/s | at random, req/s | random / hot | cache entries |"
        )
        BenchOutput.line("|---|---:|---:|---:|---:|---:|---:|")
        if measures("sqlite") {
            let path = NSTemporaryDirectory() + "sigil-bench-\(UUID().uuidString).sqlite"
            defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) } }
            let directory = try await Directory.sqlite(
                path: path, masterKey: SymmetricKey(size: .bits256), cacheCapacity: cacheSize)
            try await measure("SQLite", directory, cache: directory.cache, keys: keys, registered: registered)
            try await directory.close()
        }
        if let postgres, measures("postgres") {
            let location = try PostgresStore.Location(
                url: postgres, password: ProcessInfo.processInfo.environment["SIGIL_STORE_PASSWORD"])
            let store = try await PostgresStore.open(location, connections: 16)
            let directory = try Directory.postgres(
                store: store, masterKey: SymmetricKey(size: .bits256), cacheCapacity: cacheSize)
            try await measure("PostgreSQL", directory, cache: directory.cache, keys: keys, registered: registered)
            store.close()
        }
    }

    func measure(
        _ name: String, _ directory: Directory, cache: DirectoryCache, keys: [SigningKey],
        registered: [RegisteredKey]
    ) async throws {
        for start in stride(from: 0, to: registered.count, by: 1000) {
            try await directory.apply(
                DirectoryChange(added: Array(registered[start..<min(start + 1000, registered.count)])))
        }
        for key in registered { _ = try await directory.key(for: key.keyID) }
        var configuration = VerifierConfiguration()
        configuration.usage = KeyUsageTracker(directory: directory)
        let verifier = RequestVerifier(keys: directory, nonces: MemoryNonceStore(), configuration: configuration)
        // As many requests as the hot run could verify, signed beforehand.
        let count = Int(seconds * 40_000)
        var generator = SystemRandomNumberGenerator()
        let hot = try Self.signed(count: count, keys: keys, registered: registered) { 0 }
        let random = try Self.signed(count: count, keys: keys, registered: registered) {
            Int.random(in: 0..<keys.count, using: &generator)
        }
        let hotRate = try await Self.rate(verifier, hot, seconds: seconds)
        let randomRate = try await Self.rate(verifier, random, seconds: seconds)
        BenchOutput.line(
            "| \(name) | \(StoreBench.format(Double(keys.count))) | \(StoreBench.format(Double(cache.capacity))) "
                + "| \(StoreBench.format(hotRate)) | \(StoreBench.format(randomRate)) "
                + "| \(String(format: "%.2f", randomRate / hotRate)) | \(StoreBench.format(Double(cache.count))) |")
    }

    static func signed(
        count: Int, keys: [SigningKey], registered: [RegisteredKey], pick: () -> Int
    ) throws -> [HTTPRequest] {
        let ahead = ManualUnixClock(SystemUnixClock().now() + 2)
        return try (0..<count).map { _ in
            let device = pick()
            var request = HTTPRequest(method: .get, scheme: "https", authority: "api.example", path: "/v1/orders")
            // Dated a little ahead: the nonce store refuses what is dated at or before its start.
            _ = try RequestSigner(key: keys[device], keyID: registered[device].keyID, clock: ahead)
                .sign(&request, body: [])
            return request
        }
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
        let elapsed = ContinuousClock.now - start
        return Double(total) / (Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
    }
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
