import AsyncHTTPClient
import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import NIOHTTP1
import NIOHTTP2
import NIOHTTPTypes
import NIOHTTPTypesHTTP2
import NIOPosix
import NIOSSL
import PostgresNIO
import SQLiteNIO
import SigilAppAttest
import SigilClient
@_spi(Sigil) import SigilCore
import SigilFiles
import SigilHTTPClient
import SigilHummingbird
import SigilJWT
import SigilPostgres
import SigilSQLite
import SigilServer
import SigilStandalone
import SigilTLS
import SigilTesting
import Synchronization
import Testing

/// Python with `cryptography` 48 or later, running `Tests/Interop/hpke_seal.py`.
enum PythonHPKE {
    static let script = TestPaths.tests.appendingPathComponent("Interop/hpke_seal.py").path

    /// The first python3 (on PATH, then Debian's) that has HPKE with X-Wing.
    static let interpreter: String? = {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
        let candidates = path.split(separator: ":").map { "\($0)/python3" } + ["/usr/bin/python3"]
        return candidates.first { candidate in
            guard FileManager.default.isExecutableFile(atPath: candidate) else { return false }
            return
                (try? run(
                    candidate, ["-c", "from cryptography.hazmat.primitives.hpke import KEM; KEM.MLKEM768_X25519"]))
                != nil
        }
    }()

    /// Whether the test runs: such a Python is here, or CI requires it (and fails without).
    static var available: Bool {
        if interpreter == nil && ProcessInfo.processInfo.environment["CI"] != "true" {
            print("skipping the Python HPKE test: no python3 with cryptography >= 48")
        }
        return interpreter != nil || ProcessInfo.processInfo.environment["CI"] == "true"
    }

    static func seal(_ plaintext: [UInt8], to key: SealingPublicKey, keyID: String, nonce: String) throws -> [UInt8] {
        guard let interpreter else { throw SigilInputError("no python3 with cryptography >= 48") }
        let output = try run(
            interpreter, [script, Data(key.rawRepresentation).base64EncodedString(), keyID, nonce], input: plaintext)
        guard
            let sealed = Data(
                base64Encoded: String(decoding: output, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
        else { throw SigilInputError("the script printed no base64") }
        return Array(sealed)
    }

    /// Runs `executable` with `arguments`, `input` on its standard input; its standard output.
    static func run(_ executable: String, _ arguments: [String], input: [UInt8] = []) throws -> [UInt8] {
        let process = try ChildProcess(executable, arguments, error: false)
        process.send(input)
        let output = process.output.allChunks
        guard process.waitUntilExit() == 0 else { throw SigilInputError("\(executable) failed") }
        return Array(output)
    }
}

/// `Tests/Upstream/echo_upstream.py` on a free loopback port.
final class PythonUpstream: @unchecked Sendable {
    let port: Int
    private var pid: pid_t?

    static let python: String? = ["/usr/bin/python3", "/usr/local/bin/python3"].first {
        FileManager.default.isExecutableFile(atPath: $0)
    }

    /// Whether the gateway tests run: python3 is here, or CI requires it (and fails without).
    static var available: Bool {
        if python == nil && !ExternalServers.isCI { print("skipping gateway tests: no python3") }
        return python != nil || ExternalServers.isCI
    }

    static let script = TestPaths.tests.appendingPathComponent("Upstream/echo_upstream.py").path

    private init(port: Int, pid: pid_t) {
        self.port = port
        self.pid = pid
    }

    /// `Tests/Upstream/impostor.py`: answers given paths with given statuses, fields and bodies over TLS.
    static let impostorScript = URL(fileURLWithPath: script).deletingLastPathComponent()
        .appendingPathComponent("impostor.py").path

    /// `script` (the echo backend unless told) run with `arguments` and port 0, once its banner names
    /// the port the system gave it: no port found free and then taken by another test's server.
    static func start(script: String = script, arguments: [String] = []) async throws -> PythonUpstream {
        guard let python else { throw ExternalServers.ServerError("python3 is not installed") }
        let log = NSTemporaryDirectory() + "sigil-upstream-\(UUID().uuidString).log"
        let pid = try ExternalServers.spawn(python, [script] + arguments + ["0"], log: log)
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline {
            let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
            if let line = text.split(separator: "\n").first(where: { $0.hasPrefix("listening on ") }),
                let port = Int(line.dropFirst("listening on ".count))
            {
                return PythonUpstream(port: port, pid: pid)
            }
            if waitpid(pid, nil, WNOHANG) == pid { throw ExternalServers.ServerError("\(script) exited: \(log)") }
            try await Task.sleep(for: .milliseconds(20))
        }
        PythonUpstream(port: 0, pid: pid).stop()
        throw ExternalServers.ServerError("\(script) did not say it listens in 20 s: \(log)")
    }

    /// How many requests reached the backend (asked directly, not through the gateway).
    func count() async throws -> Int {
        let request = HTTPClientRequest(url: "http://127.0.0.1:\(port)/__count")
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(10))
        let body = try await response.body.collect(upTo: 1 << 16)
        let json = try JSONSerialization.jsonObject(with: Data(buffer: body)) as? [String: Any]
        return json?["count"] as? Int ?? -1
    }

    func stop() {
        guard let pid else { return }
        self.pid = nil
        kill(pid, SIGKILL)
        var status: Int32 = 0
        waitpid(pid, &status, 0)
    }
}
