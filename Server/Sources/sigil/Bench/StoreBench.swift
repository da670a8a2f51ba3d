import ArgumentParser
import Foundation
@_spi(Sigil) import SigilCore
import SigilPostgres
import SigilRedis
import SigilSQLite
import SigilServer

/// `sigil bench store`: nonce inserts per second in each store, 1 and 64 in flight, beside the
/// server's own rate measured in the same run (redis-benchmark, pgbench) as the limit.
struct StoreBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "store",
        abstract: "Nonce inserts per second: memory, SQLite, PostgreSQL and Redis, beside pgbench and redis-benchmark.",
        discussion: """
            PostgreSQL and Redis are measured when their URLs are given (the password from \
            SIGIL_STORE_PASSWORD / SIGIL_NONCES_PASSWORD); pgbench and redis-benchmark run against the same \
            servers when they are installed.
            """
    )

    @Option(name: .long, help: "Seconds per measurement.")
    var seconds: Double = 3

    @Option(name: .long, help: "A PostgreSQL URL (postgres://user@host:port/database).")
    var postgres: String?

    @Option(name: .long, help: "A Redis URL (redis://host:port).")
    var redis: String?

    @Option(name: .long, help: "Only these stores (comma-separated: memory, sqlite, postgres, redis).")
    var only: String?

    func measures(_ store: String) -> Bool {
        only.map { $0.lowercased().split(separator: ",").contains { $0 == store } } ?? true
    }

    struct Row {
        let store: String
        let one: Double
        let many: Double
        var limit: (String, Double)?
    }

    func run() async throws {
        let environment = ProcessInfo.processInfo.environment
        var defaultRedisBenchmark: Double?
        // Each row is printed as soon as its store is measured.
        BenchOutput.line(
            "| store | inserts/s, 1 in flight | inserts/s, 64 in flight | server's own rate | 64 in flight / own rate |"
        )
        BenchOutput.line("|---|---:|---:|---:|---:|")
        func printRow(_ row: Row) {
            let limit = row.limit.map { "\(Self.format($0.1)) (\($0.0))" } ?? "—"
            let ratio = row.limit.map { String(format: "%.2f", row.many / $0.1) } ?? "—"
            BenchOutput.line(
                "| \(row.store) | \(Self.format(row.one)) | \(Self.format(row.many)) | \(limit) | \(ratio) |")
        }
        if measures("memory") {
            let memory = MemoryNonceStore()
            printRow(
                Row(
                    store: "memory", one: try await Self.rate(memory, 1, seconds),
                    many: try await Self.rate(memory, 64, seconds)))
        }
        if measures("sqlite") {
            let path = NSTemporaryDirectory() + "sigil-bench-\(UUID().uuidString).sqlite"
            let sqlite = try await SQLiteNonceStore.open(path: path)
            printRow(
                Row(
                    store: "SQLite", one: try await Self.rate(sqlite, 1, seconds),
                    many: try await Self.rate(sqlite, 64, seconds)))
            try await sqlite.close()
            try? FileManager.default.removeItem(atPath: path)
        }
        if let postgres, measures("postgres") {
            let location = try PostgresStore.Location(url: postgres, password: environment["SIGIL_STORE_PASSWORD"])
            let store = try await PostgresStore.open(location, connections: 64)
            let nonces = PostgresNonceStore(store: store)
            var row = Row(
                store: "PostgreSQL", one: try await Self.rate(nonces, 1, seconds),
                many: try await Self.rate(nonces, 64, seconds))
            row.limit = try? Self.pgbench(location, url: postgres, seconds: seconds).map {
                ("pgbench, 64 clients, same insert", $0)
            }
            printRow(row)
            store.close()
        }
        if let redis, measures("redis") {
            let location = try RedisClient.Location(url: redis, password: environment["SIGIL_NONCES_PASSWORD"])
            let nonces = try RedisNonceStore(location, connections: 4)
            try await nonces.connect()
            var row = Row(
                store: "Redis", one: try await Self.rate(nonces, 1, seconds),
                many: try await Self.rate(nonces, 64, seconds))
            // The same footing as the store's client: 4 connections, 16 commands in flight on each.
            row.limit = try? Self.redisBenchmark(location, clients: 4).map {
                ("redis-benchmark -t set -P 16 -c 4: 64 in flight", $0)
            }
            printRow(row)
            defaultRedisBenchmark = try? Self.redisBenchmark(location, clients: 50)
            nonces.client.close()
        }
        if let defaultRedisBenchmark {
            BenchOutput.line(
                "\nredis-benchmark -t set -P 16 with its default 50 connections (800 in flight): \(Self.format(defaultRedisBenchmark))/s"
            )
        }
    }

    static func format(_ value: Double) -> String {
        let formatter = NumberFormatter()
        formatter.numberStyle = .decimal
        formatter.maximumFractionDigits = 0
        return formatter.string(from: NSNumber(value: value)) ?? "\(Int(value))"
    }

    /// Inserts per second with `concurrency` tasks inserting fresh nonces for `seconds`.
    static func rate(_ store: any NonceStore, _ concurrency: Int, _ seconds: Double) async throws -> Double {
        // A store found new refuses requests dated before it was found: date these after that.
        let now = max(Int64(Date().timeIntervalSince1970), store.oldestAcceptableTimestamp ?? 0)
        let run = UUID().uuidString.prefix(8)
        let start = ContinuousClock.now
        let deadline = start + .milliseconds(Int64(seconds * 1000))
        let total = try await withThrowingTaskGroup(of: Int.self) { group in
            for task in 0..<concurrency {
                group.addTask {
                    var count = 0
                    while ContinuousClock.now < deadline {
                        _ = try await store.insert(
                            keyID: "bench-\(run)", nonce: "n-\(task)-\(count)-0000000000", timestamp: now,
                            expiresAt: now + 120, now: now)
                        count += 1
                    }
                    return count
                }
            }
            return try await group.reduce(0, +)
        }
        return Double(total) / (ContinuousClock.now - start).inSeconds
    }

    /// pgbench's rate for the same insert, 64 clients, or `nil` without pgbench.
    static func pgbench(_ location: PostgresStore.Location, url: String, seconds: Double) throws -> Double? {
        guard let pgbench = which("pgbench"), let components = URLComponents(string: url) else { return nil }
        let script = NSTemporaryDirectory() + "sigil-pgbench-\(UUID().uuidString).sql"
        try """
        \\set n random(1, 1000000000000)
        INSERT INTO sigil_nonces (key_id, nonce, expires_at) VALUES ('pgbench', 'n' || :n, 4102444800) \
        ON CONFLICT (key_id, nonce) DO UPDATE SET expires_at = EXCLUDED.expires_at \
        WHERE sigil_nonces.expires_at <= 0 RETURNING 1;
        """.write(toFile: script, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: script) }
        var arguments = ["-n", "-c", "64", "-j", "2", "-t", "300", "-f", script]
        arguments += ["-h", components.host ?? "127.0.0.1", "-p", String(components.port ?? 5432)]
        if let user = components.user { arguments += ["-U", user] }
        let database = String(components.path.drop { $0 == "/" })
        if !database.isEmpty { arguments.append(database) }
        // The password as libpq reads it, never on the command line.
        let password = ProcessInfo.processInfo.environment["SIGIL_STORE_PASSWORD"] ?? components.password
        let output = try run(pgbench, arguments, environment: password.map { ["PGPASSWORD": $0] } ?? [:])
        guard let line = output.split(separator: "\n").first(where: { $0.hasPrefix("tps = ") }) else { return nil }
        return Double(line.dropFirst(6).prefix { $0 == "." || $0.isNumber })
    }

    /// redis-benchmark's pipelined SET rate with `clients` connections, or `nil` without redis-benchmark.
    static func redisBenchmark(_ location: RedisClient.Location, clients: Int) throws -> Double? {
        guard let benchmark = which("redis-benchmark") else { return nil }
        var arguments = [
            "-h", location.host, "-p", String(location.port), "-t", "set", "-P", "16", "-c", String(clients),
            "-n", "300000", "--dbnum", String(location.database), "--csv",
        ]
        if let password = location.password { arguments += ["-a", password, "--no-auth-warning"] }
        let output = try run(benchmark, arguments)
        // "SET","54540.50",…
        guard let range = output.range(of: "\"SET\",\"") else { return nil }
        return Double(output[range.upperBound...].prefix { $0 == "." || $0.isNumber })
    }

    static func which(_ name: String) -> String? {
        let versions = (try? FileManager.default.contentsOfDirectory(atPath: "/usr/lib/postgresql")) ?? []
        let directories = ["/usr/bin", "/usr/local/bin"] + versions.map { "/usr/lib/postgresql/\($0)/bin" }
        return directories.map { $0 + "/" + name }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    static func run(_ path: String, _ arguments: [String], environment: [String: String] = [:]) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        if !environment.isEmpty {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        }
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: data, as: UTF8.self).replacingOccurrences(of: "\r", with: "\n")
    }
}
