import Foundation
import SigilSQLite
import SigilServer
import SigilStandalone
import Testing

/// `sigil serve` as a process of its own, on a free loopback port, until `stop()` or deinit.
final class ServerProcess: @unchecked Sendable {
    let process: ChildProcess
    /// What it printed until its banner ended.
    private(set) var banner = ""
    /// The port it listens on.
    private(set) var port = 0

    /// Starts `sigil serve --data-dir DATA --port 0` plus `arguments`, with the test bootstrap token,
    /// and reads its banner.
    init(dataDirectory: String, arguments: [String] = []) throws {
        var environment = ProcessInfo.processInfo.environment
        environment["SIGIL_ENROLL_TOKEN"] = TestServer.token
        environment["LOG_LEVEL"] = "error"
        process = try ChildProcess(
            SigilCommand.executable.path, ["serve", "--data-dir", dataDirectory, "--port", "0"] + arguments,
            environment: environment, input: false, error: false)
        while !banner.contains("enroll this machine") {
            let data = process.output.availableChunk
            guard !data.isEmpty else { break }
            banner += String(decoding: data, as: UTF8.self)
        }
        let listening = try #require(banner.split(separator: "\n").first { $0.contains("listening on https://") })
        let address = try #require(listening.split(separator: "https://127.0.0.1:").last)
        port = try #require(Int(address.prefix { $0.isNumber }))
    }

    /// `directory`'s `data` as a server leaves it after its first start (its keys in its store, which
    /// `sigil admin` needs), with that store opened: close it before running a command on it.
    static func startedOnce(in directory: URL) async throws -> (data: String, store: Directory) {
        let data = directory.appendingPathComponent("data").path
        let server = try ServerProcess(dataDirectory: data)
        server.stop()
        let store = try await Directory.sqlite(
            path: data + "/directory.sqlite", masterKey: try DataDirectory(path: data).masterKey())
        return (data, store)
    }

    /// The pin and backup pin its banner prints, in that order.
    var pins: [String] {
        banner.split(separator: "\n").filter {
            let line = $0.drop { $0 == " " }
            return line.hasPrefix("pin: ") || line.hasPrefix("backup pin")
        }.compactMap { $0.split(separator: " ").last.map(String.init) }
    }

    /// The arguments of `sigil enroll` with this server at `https://localhost:PORT`, the test
    /// bootstrap token and its banner's pins, plus `extra`.
    func enrollArguments(_ extra: [String] = []) -> [String] {
        ["enroll", "https://localhost:\(port)", "--token", TestServer.token] + extra + pins.flatMap { ["--pin", $0] }
    }

    /// Runs ``enrollArguments(_:)`` with `HOME` at `home`.
    func enroll(home: String, _ extra: [String] = []) async throws -> SigilCommand.Result {
        try await SigilCommand.run(enrollArguments(extra), environment: ["HOME": home])
    }

    /// Stops it (SIGTERM) and waits.
    func stop() {
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
    }

    deinit {
        // Waited for too, or it stays a zombie until the test process ends.
        stop()
    }
}

extension FileHandle {
    /// What is there to read now (empty at the end), read again when a signal interrupts the read:
    /// Foundation's `availableData` traps on `EINTR`, which a child process's exit can cause while
    /// tests start processes of their own.
    var availableChunk: Data {
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = Foundation.read(fileDescriptor, &buffer, buffer.count)
            if count >= 0 { return Data(buffer[..<count]) }
            if errno != EINTR { return Data() }
        }
    }
}

extension FileHandle {
    /// Everything up to the end, as `readDataToEndOfFile()` reads it, read again on `EINTR`.
    var allChunks: Data {
        var data = Data()
        while true {
            let chunk = availableChunk
            if chunk.isEmpty { return data }
            data += chunk
        }
    }
}
