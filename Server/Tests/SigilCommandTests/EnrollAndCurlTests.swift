import Foundation
import NIOSSL
import SigilClient
@_spi(Sigil) import SigilCore
import SigilHTTPClient
import SigilPostgres
import SigilStandalone
import SigilTLS
import Testing
import X509

@testable import SigilTestSupport

#if canImport(Glibc)
    import Glibc
#endif

/// Issue 22, "a first hour without surprises": what a new user following the README meets. The line
/// `sigil serve` prints pastes and runs, and each failure says what happened and what to change.
@Suite("A first hour with sigil")
struct FirstHourTests {
    @Test(
        "the enroll line sigil serve prints pastes into a shell and runs: a token made now, kept, or from the environment",
        arguments: ["made now", "kept", "environment"])
    func enrollLinePastes(_ token: String) async throws {
        let directory = try SigilCommand.temporaryDirectory()
        let data = directory.appendingPathComponent("data with space").path
        let home = ["HOME": directory.appendingPathComponent("home").path]
        var environment: [String: String] = [:]
        if token == "kept" {
            // Made by an earlier start (one with no requests: a restart refuses requests dated up to
            // a couple of seconds after the previous run's last one).
            _ = try DataDirectory(path: data).enrollToken(given: nil)
        } else if token == "environment" {
            environment["SIGIL_ENROLL_TOKEN"] = "-an-operator-token-0123456789"
        }
        let server = try await ServeProcess.start(
            ["serve", "--data-dir", data, "--port", "0"], environment: environment)
        defer { server.stop() }
        let line = try server.line(after: "enroll this machine: ")
        #expect(!line.contains("<") && !line.contains(">"), "\(line)")
        switch token {
        case "made now":
            #expect(server.banner.contains("enrollment token (made now"))
        case "kept":
            // Where the token is kept, never the token itself.
            let kept = try String(contentsOfFile: data + "/enroll-token", encoding: .utf8)
                .trimmingCharacters(in: .whitespacesAndNewlines)
            #expect(!server.banner.contains(kept))
            #expect(line.contains(#""$(cat '"#), "\(line)")
        default:
            #expect(!server.banner.contains("-an-operator-token-0123456789"))
            #expect(line.contains(#""$SIGIL_ENROLL_TOKEN""#), "\(line)")
        }
        let enrolled = try await PastedLine.run(line, environment: home.merging(environment) { $1 })
        #expect(enrolled.status == 0, "\(line)\n\(enrolled.error)")
        #expect(enrolled.text.hasPrefix("enrolled key-id="))
    }

    @Test("an identity is not replaced silently: enroll refuses an existing name without --force")
    func enrollKeepsAnIdentity() async throws {
        let directory = try SigilCommand.temporaryDirectory()
        let home = directory.appendingPathComponent("home").path
        let store = FileDeviceStore(directory: home + "/.sigil/identities/default")
        let key = try SigningKey.generate(.ed25519)
        let kept = DeviceIdentity(
            server: "https://127.0.0.1:8443", keyID: "kept-key", deviceID: "dev-kept", algorithm: "ed25519",
            pins: [], responseKeyID: "server", responseKey: "")
        try store.save(kept, key: key, secret: nil)
        let before = try Data(contentsOf: URL(fileURLWithPath: store.directory + "/device-key.pem"))
        let refusing = try ExternalServers.HeldPort()
        defer { refusing.close() }
        let port = refusing.port
        let pins = [PinScaffold.otherPin, "sha256/" + Base64.encode([UInt8](repeating: 2, count: 32))]
        let arguments = [
            "enroll", "https://127.0.0.1:\(port)", "--token", "a-token-0123456789", "--pin", pins[0], "--pin", pins[1],
        ]
        let refused = try await SigilCommand.run(arguments, environment: ["HOME": home])
        #expect(refused.status == 2)
        #expect(refused.error.contains("identity 'default' exists"), "\(refused.error)")
        #expect(refused.error.contains("--force") && refused.error.contains("--identity"))
        #expect(try Data(contentsOf: URL(fileURLWithPath: store.directory + "/device-key.pem")) == before)
        #expect(try store.identity() == kept)
        // --force goes past the check, to the network: the port refuses the connection.
        let forced = try await SigilCommand.run(arguments + ["--force"], environment: ["HOME": home])
        #expect(forced.status == 2)
        #expect(forced.error.contains("127.0.0.1:\(port)"), "\(forced.error)")
        #expect(!forced.error.contains("exists"), "\(forced.error)")
    }

    @Test("sigil csr makes the CSR sigil ca issue --csr takes, for the key's ID")
    func csrFromSigil() async throws {
        let directory = try SigilCommand.temporaryDirectory().path
        let key = directory + "/client-key.pem"
        let keygen = try await SigilCommand.run(["keygen", "--alg", "ecdsa-p256-sha256", "--out", key])
        let keyID = try #require(
            try JSONSerialization.jsonObject(with: Data(keygen.output)) as? [String: String])["keyId"]
        let csr = try await SigilCommand.run(["csr", "--key", key, "--out", directory + "/client.csr"])
        #expect(csr.status == 0, "\(csr.error)")
        _ = try await SigilCommand.run(["ca", "init", "--data-dir", directory + "/data"])
        let issued = try await SigilCommand.run([
            "ca", "issue", "--data-dir", directory + "/data", "--csr", directory + "/client.csr",
        ])
        #expect(issued.status == 0, "\(issued.error)")
        let certificate = try Certificate(pemEncoded: issued.text)
        #expect(certificate.subject.description.contains("CN=\(keyID ?? "-")"), "\(certificate.subject)")

        // As keygen does, a file that exists is kept unless --force: issuing again refuses before writing.
        let issue = ["ca", "issue", "--data-dir", directory + "/data", "--csr", directory + "/client.csr"]
        let out = directory + "/client-cert.pem"
        #expect(try await SigilCommand.run(issue + ["--out", out]).status == 0)
        let first = try String(contentsOfFile: out, encoding: .utf8)
        let again = try await SigilCommand.run(issue + ["--out", out])
        #expect(again.status == 2 && again.error.contains("exists already"), "\(again.error)")
        #expect(try String(contentsOfFile: out, encoding: .utf8) == first)
        #expect(try await SigilCommand.run(issue + ["--out", out, "--force"]).status == 0)
        #expect(try String(contentsOfFile: out, encoding: .utf8) != first)
        // A data directory without a CA is refused and not made.
        let none = try await SigilCommand.run([
            "ca", "issue", "--data-dir", directory + "/none", "--csr", directory + "/client.csr",
        ])
        #expect(none.status == 2 && !FileManager.default.fileExists(atPath: directory + "/none"), "\(none.error)")
    }

    @Test("a server that is not running: connection refused to HOST:PORT, at once, from curl, enroll and pin")
    func connectionRefused() async throws {
        let directory = try SigilCommand.temporaryDirectory().path
        let key = directory + "/device.pem"
        _ = try await SigilCommand.run(["keygen", "--alg", "ed25519", "--out", key])
        let refusing = try ExternalServers.HeldPort()
        defer { refusing.close() }
        let port = refusing.port
        let pins = [
            "--pin", PinScaffold.otherPin, "--pin", "sha256/" + Base64.encode([UInt8](repeating: 2, count: 32)),
        ]
        let home = ["HOME": directory]
        for arguments in [
            ["curl", "--key", key, "https://127.0.0.1:\(port)/v1/echo"],
            ["curl", "--key", key] + pins + ["https://127.0.0.1:\(port)/v1/echo"],
            ["enroll", "https://127.0.0.1:\(port)", "--token", "a-token-0123456789"] + pins,
            ["pin", "127.0.0.1:\(port)"],
        ] {
            let result = try await SigilCommand.run(arguments, environment: home)
            #expect(result.status == 2)
            #expect(result.error.contains("connection refused to 127.0.0.1:\(port)"), "\(arguments): \(result.error)")
            #expect(!result.error.contains("certificates"), "\(result.error)")
        }
        // The library says the same, as a type.
        var options = SigilHTTPClient.Options()
        options.pins = [PinScaffold.otherPin, "sha256/" + Base64.encode([UInt8](repeating: 2, count: 32))]
        await #expect(throws: ConnectionError(.refused, host: "127.0.0.1", port: port)) {
            _ = try await SigilHTTPClient.connect(host: "127.0.0.1", port: port, options: options)
        }
    }

    @Test("a single pin names --allow-single-pin")
    func singlePin() async throws {
        let home = ["HOME": try SigilCommand.temporaryDirectory().path]
        let refusing = try ExternalServers.HeldPort()
        defer { refusing.close() }
        let port = refusing.port
        for arguments in [
            ["enroll", "https://127.0.0.1:\(port)", "--token", "a-token-0123456789", "--pin", PinScaffold.otherPin],
            ["curl", "--key", "unused.pem", "--pin", PinScaffold.otherPin, "https://127.0.0.1:\(port)/"],
        ] {
            let result = try await SigilCommand.run(arguments, environment: home)
            #expect(result.status == 2)
            #expect(result.error.contains("--allow-single-pin"), "\(arguments): \(result.error)")
        }
    }

    @Test(
        "a port in use names the port and --port, for serve and gateway, and a first start that never listened leaves no data directory"
    )
    func portInUse() async throws {
        let listener = try ExternalServers.HeldPort(listening: true)
        defer { listener.close() }
        let data = try SigilCommand.temporaryDirectory().appendingPathComponent("data").path
        for command in [["serve"], ["gateway", "--upstream", "http://127.0.0.1:9"]] {
            let result = try await SigilCommand.run(
                command + ["--data-dir", data, "--port", "\(listener.port)"], environment: ["LOG_LEVEL": "error"])
            #expect(result.status == 2)
            #expect(result.error.contains("port \(listener.port)"), "\(command): \(result.error)")
            #expect(result.error.contains("--port"), "\(result.error)")
            #expect(!FileManager.default.fileExists(atPath: data), "\(command) left \(data)")
        }
    }

    @Test("a server that requires a client certificate says so, and enroll gets in with --cert and --key")
    func clientCertificates() async throws {
        let directory = try SigilCommand.temporaryDirectory()
        let data = directory.appendingPathComponent("data").path
        let work = directory.appendingPathComponent("work")
        try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
        let home = ["HOME": directory.appendingPathComponent("home").path]
        let caFile = try DataDirectory(path: data).createCertificateAuthority()
        let server = try await ServeProcess.start(["serve", "--data-dir", data, "--port", "0", "--client-ca", caFile])
        defer { server.stop() }
        let line = try server.line(after: "enroll this machine: ")
        let bare = line.replacingOccurrences(of: " --cert client-cert.pem --key client-key.pem", with: "")
        let refused = try await PastedLine.run(bare, environment: home, in: work)
        #expect(refused.status == 2)
        #expect(refused.error.contains("requires a client certificate"), "\(refused.error)")
        #expect(refused.error.contains("--cert FILE --key FILE"), "\(refused.error)")

        // The banner's two lines, as printed: a certificate from the data directory's CA, then enroll.
        let issue = try await PastedLine.run(
            try server.line(after: "a client certificate: "), environment: home, in: work)
        #expect(issue.status == 0, "\(issue.error)")
        let enrolled = try await PastedLine.run(line, environment: home, in: work)
        #expect(enrolled.status == 0, "\(enrolled.error)")
        let curl = try await SigilCommand.run(
            ["curl", "--json", #"{"hello":"world"}"#, "https://127.0.0.1:\(server.port)/v1/echo"], environment: home)
        #expect(curl.status == 0, "\(curl.error)")
        #expect(curl.text.contains(#""clientCertificate""#), "\(curl.text)")
        // A certificate for another key than the one enrolled is refused before anything is sent.
        let other = work.appendingPathComponent("other.pem").path
        _ = try await SigilCommand.run(["keygen", "--alg", "ecdsa-p256-sha256", "--out", other])
        let mismatched = try await PastedLine.run(
            line.replacingOccurrences(of: "--key client-key.pem", with: "--key other.pem") + " --identity other",
            environment: home, in: work)
        #expect(mismatched.status == 2)
        #expect(mismatched.error.contains("not a certificate for the key"), "\(mismatched.error)")
    }

    @Test("the library names a required client certificate (TLS 1.3 refuses it after the handshake)")
    func clientCertificateRequiredInLibrary() async throws {
        let dataDirectory = TestServer.temporaryDirectory()
        let caFile = try DataDirectory(path: dataDirectory).createCertificateAuthority()
        try await TestServer.with(dataDirectory: dataDirectory, configure: { $0.clientCAFile = caFile }) { server in
            var options = SigilHTTPClient.Options()
            options.pins = [server.prepared.pins[0], try #require(server.prepared.backupPin)]
            let connection = try await SigilHTTPClient.connect(host: "localhost", port: server.port, options: options)
            let request = TestRequest(.get, "/.well-known/sigil", server: server)
            await #expect(throws: ConnectionError(.clientCertificateRequired, host: "localhost", port: server.port)) {
                _ = try await connection.transport.send(request.head, body: [])
            }
            try await connection.shutdown()
        }
    }

    @Test("curl of an unsigned 404 says the answer is unsigned and its status")
    func unsignedNotFound() async throws {
        let directory = try SigilCommand.temporaryDirectory()
        let home = ["HOME": directory.appendingPathComponent("home").path]
        let server = try await ServeProcess.start(
            ["serve", "--data-dir", directory.appendingPathComponent("data").path, "--port", "0"])
        defer { server.stop() }
        let pins = try server.pins
        let key = directory.appendingPathComponent("stranger.pem").path
        _ = try await SigilCommand.run(["keygen", "--alg", "ed25519", "--out", key])
        // No identity holds the server's key: the answer is printed (empty), and the status said.
        let plain = try await SigilCommand.run(
            ["curl", "--key", key, "--pin", pins[0], "--pin", pins[1], "https://127.0.0.1:\(server.port)/nothing"],
            environment: home)
        #expect(plain.status == 1)
        #expect(plain.error.contains("HTTP 404 Not Found, unsigned"), "\(plain.error)")

        // An identity enrolled with this server holds its key: answers are checked, with --key too.
        let enroll = try await PastedLine.run(try server.line(after: "enroll this machine: "), environment: home)
        #expect(enroll.status == 0, "\(enroll.error)")
        for arguments in [
            ["curl", "https://127.0.0.1:\(server.port)/nothing"],
            ["curl", "--key", key, "https://127.0.0.1:\(server.port)/nothing"],
        ] {
            let checked = try await SigilCommand.run(arguments, environment: home)
            #expect(checked.status == 1)
            #expect(checked.text.isEmpty)
            #expect(checked.error.contains("the answer is not signed: HTTP 404 Not Found"), "\(checked.error)")
        }
        // A signed answer still goes through, and -v says it was verified.
        let echo = try await SigilCommand.run(
            ["curl", "-v", "-d", "x", "https://127.0.0.1:\(server.port)/v1/echo"], environment: home)
        #expect(echo.status == 0, "\(echo.error)")
        #expect(echo.error.contains("signature verified"))

        // Another server now on the identity's origin (the README's DPoP walkthrough on 8443): a key
        // and a server given by hand borrow neither the identity's pins nor its server key.
        let otherData = directory.appendingPathComponent("other").path
        let other = try await ServeProcess.start(["serve", "--data-dir", otherData, "--port", "0"])
        defer { other.stop() }
        let identityFile = home["HOME"]! + "/.sigil/identities/default/identity.json"
        var identity = try JSONDecoder().decode(
            DeviceIdentity.self, from: Data(contentsOf: URL(fileURLWithPath: identityFile)))
        identity.server = "https://127.0.0.1:\(other.port)"
        try FileDeviceStore(directory: home["HOME"]! + "/.sigil/identities/default").saveIdentity(identity)
        let byHand = try await SigilCommand.run(
            [
                "curl", "--key", key, "--cacert", otherData + "/tls-cert.pem", "-d", "x",
                "https://127.0.0.1:\(other.port)/v1/echo",
            ],
            environment: home)
        #expect(!byHand.error.contains("pin mismatch") && !byHand.error.contains("not signed"), "\(byHand.error)")
        #expect(byHand.error.contains("401"), "the stranger's key is unknown there: \(byHand.error)")
    }
}

@Suite("PostgreSQL errors at start", .externalServers)
struct PostgresStartErrorTests {
    @Test("a PostgreSQL that refuses the connection says so at once, not after the migration's deadline")
    func refused() async throws {
        let refusing = try ExternalServers.HeldPort()
        defer { refusing.close() }
        let port = refusing.port
        let location = try PostgresStore.Location(url: "postgres://sigil@127.0.0.1:\(port)/sigil?sslmode=disable")
        do {
            _ = try await PostgresStore.open(location, timeout: .seconds(2))
            Issue.record("opened a store with no server")
        } catch let error as SigilError {
            #expect(error.code == .storeUnavailable)
            #expect(error.detail.contains("127.0.0.1:\(port) refused the connection"), "\(error.detail)")
        }
    }

    @Test(
        "a PostgreSQL without TLS, asked for it by the default sslmode, names sslmode",
        .enabled(if: ExternalServers.runPostgres))
    func tlsRequiredNotOffered() async throws {
        try await PostgresTestServer.with { server in
            let url = server.url.replacingOccurrences(of: "?sslmode=disable", with: "")
            do {
                _ = try await PostgresStore.open(try PostgresStore.Location(url: url, password: "not-printed"))
                Issue.record("opened a store over TLS with a server that offers none")
            } catch let error as SigilError {
                #expect(error.detail.contains("sslmode=disable"), "\(error.detail)")
                #expect(error.detail.contains("does not offer TLS"), "\(error.detail)")
                #expect(!error.detail.contains("not-printed"))
            }
        }
    }
}

/// A `sigil serve` process, its banner read up to the enroll line.
struct ServeProcess {
    let process: ChildProcess
    let banner: String
    let port: Int

    static func start(_ arguments: [String], environment: [String: String] = [:]) async throws -> ServeProcess {
        var merged = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        merged["LOG_LEVEL"] = "error"
        merged["SIGIL_ENROLL_TOKEN"] = environment["SIGIL_ENROLL_TOKEN"]
        let process = try ChildProcess(
            SigilCommand.executable.path, arguments, environment: merged, input: false, error: false)
        // Read on a thread of its own: a blocking read must not hold one of the few pool threads.
        let banner = await withCheckedContinuation { continuation in
            Thread {
                var text = ""
                while !text.contains("enroll this machine") {
                    let data = process.output.availableChunk
                    guard !data.isEmpty else { break }
                    text += String(decoding: data, as: UTF8.self)
                }
                continuation.resume(returning: text)
            }.start()
        }
        guard let listening = banner.split(separator: "\n").first(where: { $0.contains("listening on https://") }),
            let port = listening.split(separator: ":").last.flatMap({ Int($0.prefix { $0.isNumber }) })
        else {
            process.terminate()
            process.waitUntilExit()
            throw SigilInputError("sigil serve did not start: \(banner)")
        }
        return ServeProcess(process: process, banner: banner, port: port)
    }

    /// The rest of the banner line that starts with `prefix` (after its indentation).
    func line(after prefix: String) throws -> String {
        let line = try #require(banner.split(separator: "\n").first { $0.contains(prefix) })
        return String(line[line.range(of: prefix)!.upperBound...])
    }

    /// The pin and the backup pin.
    var pins: [String] {
        get throws {
            let pin = try line(after: "  pin: ")
            let backup = try #require(try line(after: "backup pin").split(separator: " ").last.map(String.init))
            return [pin, backup]
        }
    }

    func stop() {
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
    }
}

/// Runs a line as a person pastes it into a shell, `sigil` being the built command.
enum PastedLine {
    static func run(_ line: String, environment: [String: String] = [:], in directory: URL? = nil) async throws
        -> SigilCommand.Result
    {
        let script = "sigil() { \"$SIGIL\" \"$@\"; }\n" + (directory.map { "cd '\($0.path)' || exit 3\n" } ?? "") + line
        var variables = environment
        variables["SIGIL"] = SigilCommand.executable.path
        let merged = ProcessInfo.processInfo.environment.merging(variables) { $1 }
        return try await withCheckedThrowingContinuation { continuation in
            Thread {
                continuation.resume(
                    with: Result {
                        let process = try ChildProcess("/bin/sh", ["-c", script], environment: merged, input: false)
                        let (output, error, status) = process.finish()
                        return SigilCommand.Result(
                            status: status, output: Array(output), error: String(decoding: error, as: UTF8.self))
                    })
            }.start()
        }
    }
}
