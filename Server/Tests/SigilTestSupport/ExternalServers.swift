import Foundation
@_spi(Sigil) import SigilCore
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Runs the tests of a suite that starts PostgreSQL and Redis servers (or `sigil serve` processes
/// on them) one at a time, across every test target: together they would start a dozen database
/// servers on two cores, and deadlines meant for production would expire. `@Suite(…, .externalServers)`.
struct ExternalServersTrait: SuiteTrait, TestTrait, TestScoping {
    var isRecursive: Bool { true }

    /// A test case at a time (a test of no arguments is one case).
    func scopeProvider(for test: Test, testCase: Test.Case?) -> Self? { testCase == nil ? nil : self }

    func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        await OneAtATime.shared.acquire()
        do {
            try await function()
            await OneAtATime.shared.release()
        } catch {
            await OneAtATime.shared.release()
            throw error
        }
    }
}

extension Trait where Self == ExternalServersTrait {
    /// One test case at a time among every suite that has this trait.
    static var externalServers: Self { ExternalServersTrait() }
}

/// A lock that waits its turn, first come, first served.
actor OneAtATime {
    static let shared = OneAtATime()
    var held = false
    var waiting: [CheckedContinuation<Void, Never>] = []

    func acquire() async {
        guard held else {
            held = true
            return
        }
        await withCheckedContinuation { waiting.append($0) }
    }

    func release() {
        if waiting.isEmpty { held = false } else { waiting.removeFirst().resume() }
    }
}

/// Real PostgreSQL and Redis servers for the store tests, started on loopback in a temporary
/// directory and stopped after. Without the binaries a local run skips those tests (saying why);
/// under CI (`CI=true`) a missing server fails them.
enum ExternalServers {
    static var isCI: Bool { ProcessInfo.processInfo.environment["CI"] == "true" }

    /// The directory of PostgreSQL's server programs (Debian: /usr/lib/postgresql/<version>/bin).
    static let postgresBin: String? = {
        let root = "/usr/lib/postgresql"
        let versions = (try? FileManager.default.contentsOfDirectory(atPath: root)) ?? []
        for version in versions.sorted(by: { (Int($0) ?? 0) > (Int($1) ?? 0) }) {
            let bin = "\(root)/\(version)/bin"
            if FileManager.default.isExecutableFile(atPath: bin + "/initdb") { return bin }
        }
        return nil
    }()

    static let redisServer: String? = ["/usr/bin/redis-server", "/usr/local/bin/redis-server"].first {
        FileManager.default.isExecutableFile(atPath: $0)
    }

    /// Whether the PostgreSQL tests run: the binaries are here, or CI requires them (and fails without).
    static var runPostgres: Bool {
        if postgresBin == nil && !isCI {
            print("skipping PostgreSQL tests: no initdb under /usr/lib/postgresql/*/bin (apt-get install postgresql)")
        }
        return postgresBin != nil || isCI
    }

    /// Whether the Redis tests run.
    static var runRedis: Bool {
        if redisServer == nil && !isCI {
            print("skipping Redis tests: no redis-server (apt-get install redis-server)")
        }
        return redisServer != nil || isCI
    }

    /// A loopback port held by a socket of this test until ``close()``, bound without `SO_REUSEADDR`,
    /// so that no server can bind it meanwhile (a port ``freePort()`` found free may be taken the
    /// moment it is). Not `listening`, it refuses every connection: a server that is not running.
    /// Listening, it is a port in use, whose connections wait unanswered.
    struct HeldPort: Sendable {
        let port: Int
        private let descriptor: Int32

        init(listening: Bool = false) throws {
            let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            guard descriptor >= 0 else { throw ServerError("socket() failed") }
            guard let port = ExternalServers.bindLoopback(descriptor), !listening || listen(descriptor, 1) == 0
            else {
                _ = Glibc.close(descriptor)
                throw ServerError("cannot hold a loopback port")
            }
            self.descriptor = descriptor
            self.port = port
        }

        func close() { _ = Glibc.close(descriptor) }
    }

    /// Binds `descriptor` to a port the system picks on 127.0.0.1 and returns the port.
    private static func bindLoopback(_ descriptor: Int32) -> Int? {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { raw in
                bind(descriptor, raw, length) == 0 && getsockname(descriptor, raw, &length) == 0
            }
        }
        return bound ? Int(UInt16(bigEndian: address.sin_port)) : nil
    }

    /// A free TCP port on loopback.
    static func freePort() throws -> Int {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw ServerError("socket() failed") }
        defer { close(descriptor) }
        guard let port = bindLoopback(descriptor) else { throw ServerError("bind() failed") }
        return port
    }

    /// Waits until something accepts connections on `port`.
    static func waitForPort(_ port: Int, timeout: TimeInterval = 20) async throws {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            address.sin_port = UInt16(port).bigEndian
            let connected = withUnsafePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
                }
            }
            close(descriptor)
            if connected { return }
            try await Task.sleep(for: .milliseconds(50))
        }
        throw ServerError("nothing listens on port \(port) after \(Int(timeout)) s")
    }

    struct ServerError: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }

    /// Starts a program (as `user` through runuser when running as root), its output appended to
    /// `log`. posix_spawn and waitpid on a thread of their own: Foundation's `Process` would block a
    /// thread of the cooperative pool, of which a 2-core machine has two.
    static func spawn(_ path: String, _ arguments: [String], asUser user: String? = nil, log: String) throws -> pid_t {
        let argv = (user != nil && getuid() == 0 ? ["/usr/sbin/runuser", "-u", user!, "--", path] : [path]) + arguments
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, log, O_WRONLY | O_CREAT | O_APPEND, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        ChildProcess.closeOthers(&actions)
        let cArguments = argv.map { strdup($0) } + [nil]
        defer { for argument in cArguments { free(argument) } }
        var attributes = ChildProcess.attributes()
        defer { posix_spawnattr_destroy(&attributes) }
        var pid: pid_t = 0
        let status = posix_spawn(&pid, argv[0], &actions, &attributes, cArguments, environ)
        guard status == 0 else { throw ServerError("cannot start \(path): error \(status)") }
        return pid
    }

    /// Waits for a started program to exit, on a thread of its own; returns its exit status.
    static func wait(_ pid: pid_t) async -> Int32 {
        await withCheckedContinuation { continuation in
            Thread {
                var status: Int32 = 0
                while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
                continuation.resume(returning: ChildProcess.exitStatus(status))
            }.start()
        }
    }

    /// Runs a program to its end; throws with the end of its output when it fails.
    static func run(_ path: String, _ arguments: [String], asUser user: String? = nil, log: String) async throws {
        let pid = try spawn(path, arguments, asUser: user, log: log)
        let status = await wait(pid)
        guard status == 0 else {
            let output = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
            throw ServerError("\((path as NSString).lastPathComponent) failed (\(status)): \(output.suffix(500))")
        }
    }

    /// Asks a program to stop and waits for it, killing it after 10 s.
    static func stop(_ pid: pid_t, signal: Int32 = SIGTERM) async {
        kill(pid, signal)
        let exited = Task { await wait(pid) }
        let killer = Task {
            try await Task.sleep(for: .seconds(10))
            kill(pid, SIGKILL)
        }
        _ = await exited.value
        killer.cancel()
    }
}

/// A PostgreSQL server of its own: `initdb` in a temporary directory, `postgres` on a free loopback
/// port, trust authentication for the user `sigil`.
final class PostgresTestServer: @unchecked Sendable {
    let directory: String
    let port: Int
    private var running = false

    /// The URL `sigil serve --store` and `PostgresStore.Location` take.
    var url: String { "postgres://sigil@127.0.0.1:\(port)/postgres?sslmode=disable" }

    private init(directory: String, port: Int) {
        self.directory = directory
        self.port = port
    }

    /// Creates and starts a server; stop it with ``stop()``.
    static func start() async throws -> PostgresTestServer {
        guard let bin = ExternalServers.postgresBin else {
            throw ExternalServers.ServerError("PostgreSQL is not installed (CI installs it with apt-get)")
        }
        let directory = NSTemporaryDirectory() + "sigil-pg-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        // initdb refuses to run as root: the data directory belongs to the postgres user then.
        let user = getuid() == 0 ? "postgres" : nil
        if user != nil { try await ExternalServers.run("/bin/chown", ["postgres", directory], log: "/dev/null") }
        try await ExternalServers.run(
            bin + "/initdb", ["-D", directory + "/data", "-U", "sigil", "-A", "trust", "-N", "-E", "UTF8"],
            asUser: user,
            log: directory + "/initdb.log")
        // A free port may be taken by another test before the server binds it: then another port.
        for attempt in 1...3 {
            let server = PostgresTestServer(directory: directory, port: try ExternalServers.freePort())
            do {
                try await server.resume()
                return server
            } catch  where attempt < 3 {
                let log = (try? String(contentsOfFile: directory + "/log", encoding: .utf8)) ?? ""
                guard log.contains("Address already in use") else { throw error }
                try? FileManager.default.removeItem(atPath: directory + "/log")
            }
        }
        throw SigilInputError("PostgreSQL did not start")
    }

    /// Starts the server again after ``stop()``, on the same port with the same data.
    func resume() async throws {
        guard let bin = ExternalServers.postgresBin else { return }
        let options =
            "-p \(port) -c listen_addresses=127.0.0.1 -c unix_socket_directories=\(directory)"
            + " -c fsync=off -c max_connections=200"
        try await ExternalServers.run(
            bin + "/pg_ctl", ["-D", directory + "/data", "-o", options, "-l", directory + "/log", "-w", "start"],
            asUser: getuid() == 0 ? "postgres" : nil, log: directory + "/pg_ctl.log")
        running = true
        try await ExternalServers.waitForPort(port)
    }

    /// Stops the server (a fast shutdown: connections are cut) and waits for it to exit.
    func stop() async {
        guard running, let bin = ExternalServers.postgresBin else { return }
        running = false
        try? await ExternalServers.run(
            bin + "/pg_ctl", ["-D", directory + "/data", "-m", "fast", "-w", "stop"],
            asUser: getuid() == 0 ? "postgres" : nil, log: directory + "/pg_ctl.log")
    }

    /// Freezes (`SIGSTOP`) or thaws (`SIGCONT`) the server and its backends (its child processes):
    /// connections stay open, nothing answers.
    func freeze(_ frozen: Bool) {
        guard let text = try? String(contentsOfFile: directory + "/data/postmaster.pid", encoding: .utf8),
            let line = text.split(separator: "\n").first, let postmaster = pid_t(line)
        else { return }
        let processes = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        let children = processes.compactMap { name -> pid_t? in
            // /proc/<pid>/stat: "pid (name) state ppid …"; the name may hold spaces, not ")".
            guard let pid = pid_t(name),
                let stat = try? String(contentsOfFile: "/proc/\(name)/stat", encoding: .utf8),
                let end = stat.lastIndex(of: ")")
            else { return nil }
            let fields = stat[stat.index(after: end)...].split(separator: " ")
            return fields.count > 1 && pid_t(fields[1]) == postmaster ? pid : nil
        }
        for pid in [postmaster] + children { kill(pid, frozen ? SIGSTOP : SIGCONT) }
    }

    /// Stops the server and removes its files.
    func destroy() async {
        freeze(false)
        await stop()
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// Runs `body` with a fresh server, destroyed after.
    static func with<Result>(_ body: (PostgresTestServer) async throws -> Result) async throws -> Result {
        let server = try await start()
        do {
            let result = try await body(server)
            await server.destroy()
            return result
        } catch {
            await server.destroy()
            throw error
        }
    }
}

/// A Redis server of its own on a free loopback port, appending every write to its log.
final class RedisTestServer: @unchecked Sendable {
    let directory: String
    let port: Int
    private var pid: pid_t?
    /// More `redis-server` arguments (a managed service's: `--rename-command CONFIG ""`).
    let arguments: [String]

    var url: String { "redis://127.0.0.1:\(port)" }

    private init(directory: String, port: Int, arguments: [String]) {
        self.directory = directory
        self.port = port
        self.arguments = arguments
    }

    static func start(persistent: Bool = true, arguments: [String] = []) async throws -> RedisTestServer {
        guard ExternalServers.redisServer != nil else {
            throw ExternalServers.ServerError("redis-server is not installed (CI installs it with apt-get)")
        }
        let directory = NSTemporaryDirectory() + "sigil-redis-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        // A free port may be taken by another test before the server binds it: then another port.
        for attempt in 1...3 {
            let server = RedisTestServer(
                directory: directory, port: try ExternalServers.freePort(), arguments: arguments)
            do {
                try await server.resume(persistent: persistent)
                return server
            } catch let error as ExternalServers.ServerError where attempt < 3 && error.description == portTaken {
                await server.stop()
            }
        }
        throw SigilInputError("Redis did not start")
    }

    private static let portTaken = "Redis found its port taken"

    /// Starts the server again after ``stop()``, with the same data directory (and log, if persistent),
    /// and waits for its banner: something else listening on the port is not this server.
    func resume(persistent: Bool = true) async throws {
        guard let path = ExternalServers.redisServer else { return }
        let log = directory + "/redis.log"
        let written = (try? Data(contentsOf: URL(fileURLWithPath: log)).count) ?? 0
        pid = try ExternalServers.spawn(
            path,
            [
                "--port", String(port), "--bind", "127.0.0.1", "--dir", directory, "--save", "",
                "--appendonly", persistent ? "yes" : "no", "--appendfsync", "always", "--protected-mode", "no",
            ] + arguments,
            log: log)
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline {
            // What this start wrote: the log of a persistent server goes on from its last start.
            let bytes = (try? Data(contentsOf: URL(fileURLWithPath: log))) ?? Data()
            let text = String(decoding: bytes.dropFirst(written), as: UTF8.self)
            if text.contains("Ready to accept connections") { return }
            if text.contains("Address already in use") { throw ExternalServers.ServerError(Self.portTaken) }
            try await Task.sleep(for: .milliseconds(20))
        }
        throw ExternalServers.ServerError("Redis did not say it was ready in 20 s: \(log)")
    }

    func stop() async {
        guard let pid else { return }
        self.pid = nil
        await ExternalServers.stop(pid)
    }

    /// Freezes (`SIGSTOP`) or thaws (`SIGCONT`) the server: connections stay open, nothing answers.
    func freeze(_ frozen: Bool) {
        if let pid { kill(pid, frozen ? SIGSTOP : SIGCONT) }
    }

    func destroy() async {
        freeze(false)
        await stop()
        try? FileManager.default.removeItem(atPath: directory)
    }

    static func with<Result>(
        persistent: Bool = true, arguments: [String] = [], _ body: (RedisTestServer) async throws -> Result
    ) async throws -> Result {
        let server = try await start(persistent: persistent, arguments: arguments)
        do {
            let result = try await body(server)
            await server.destroy()
            return result
        } catch {
            await server.destroy()
            throw error
        }
    }
}
