import Foundation
@_spi(Sigil) import SigilCore
import SigilSQLite
import SigilServer
import SigilStandalone
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Issue 30, "the first day, tried as a new operator would": a key is never replaced by accident,
/// `--version`, an http:// URL and one port for two listeners said as such, SIGHUP survived, and
/// `sigil admin`'s text outputs telling the same times the same way.
@Suite("The first day of an operator")
struct FirstDayTests {
    /// An ISO 8601 time in UTC, to the second.
    static let isoTime = #"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ"#

    @Test("keygen keeps a file that exists: refused, naming it, exit 2, nothing written; --force replaces it")
    func keygenKeepsAKey() async throws {
        let directory = try SigilCommand.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let key = directory.appendingPathComponent("device.pem").path
        let first = try await SigilCommand.run(["keygen", "--alg", "ed25519", "--out", key])
        #expect(first.status == 0, "\(first.error)")
        let kept = try Data(contentsOf: URL(fileURLWithPath: key))

        for alg in ["ed25519", "x-wing"] {
            let again = try await SigilCommand.run(["keygen", "--alg", alg, "--out", key])
            #expect(again.status == 2)
            #expect(again.error.contains("\(key) exists already"), "\(again.error)")
            #expect(again.error.contains("--force"), "\(again.error)")
            #expect(again.output.isEmpty)
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: key)) == kept)

        // A public key file that exists stops it before the private key is written.
        let publicKey = directory.appendingPathComponent("device.pub").path
        try Data("kept\n".utf8).write(to: URL(fileURLWithPath: publicKey))
        let fresh = directory.appendingPathComponent("fresh.pem").path
        let refused = try await SigilCommand.run(
            ["keygen", "--alg", "ed25519", "--out", fresh, "--public-out", publicKey])
        #expect(refused.status == 2)
        #expect(refused.error.contains("\(publicKey) exists already"), "\(refused.error)")
        #expect(!FileManager.default.fileExists(atPath: fresh))

        let forced = try await SigilCommand.run(["keygen", "--alg", "ed25519", "--out", key, "--force"])
        #expect(forced.status == 0, "\(forced.error)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: key)) != kept)
    }

    @Test("sigil --version prints the version of CHANGELOG.md's newest release")
    func version() async throws {
        let result = try await SigilCommand.run(["--version"])
        #expect(result.status == 0, "\(result.error)")
        let changelog = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("CHANGELOG.md")
        let text = try String(contentsOf: changelog, encoding: .utf8)
        let heading = try #require(text.split(separator: "\n").first { $0.hasPrefix("## ") })
        let version = heading.dropFirst(3).prefix { !$0.isWhitespace }
        #expect(!version.isEmpty)
        #expect(result.text == "\(version)\n")
    }

    @Test("enroll and curl refuse an http:// URL as such, before pins, without repeating it: exit 2")
    func httpIsRefused() async throws {
        let home = ["HOME": try SigilCommand.temporaryDirectory().path]
        let url = "http://ops:hunter2-secret@127.0.0.1:8443"
        for arguments in [
            ["enroll", url, "--token", "a-token-0123456789"],
            ["enroll", url, "--token", "a-token-0123456789", "--pin", PinningTests.otherPin],
            ["curl", url + "/v1/echo"],
        ] {
            let result = try await SigilCommand.run(arguments, environment: home)
            #expect(result.status == 2)
            #expect(result.error.contains("https is required"), "\(arguments): \(result.error)")
            #expect(!result.error.contains("pin"), "\(result.error)")
            #expect(!result.error.contains("hunter2"), "\(result.error)")
        }
    }

    @Test("--admin-port equal to --port is refused before anything is made or listens, for serve and gateway")
    func adminPortDiffers() async throws {
        let directory = try SigilCommand.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let data = directory.appendingPathComponent("data").path
        let token = directory.appendingPathComponent("admin-token").path
        for command in [["serve"], ["gateway", "--upstream", "http://127.0.0.1:9"]] {
            for host in [[], ["--host", "0.0.0.0"]] {
                let result = try await SigilCommand.run(
                    command + host + [
                        "--data-dir", data, "--port", "9443", "--admin-port", "9443", "--admin-token-file", token,
                    ],
                    environment: ["LOG_LEVEL": "error"])
                #expect(result.status == 2)
                #expect(
                    result.error.contains("--admin-port and --port must differ (both are 9443)"),
                    "\(command): \(result.error)")
                #expect(!result.error.contains("another"), "\(result.error)")
            }
        }
        #expect(!FileManager.default.fileExists(atPath: data))
    }

    @Test("SIGHUP (log rotation) leaves sigil serve running and answering; SIGTERM still stops it")
    func hangupKeepsServing() async throws {
        let directory = try SigilCommand.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let data = directory.appendingPathComponent("data").path
        let server = try await ServeProcess.start(["serve", "--data-dir", data, "--port", "0"])
        defer { server.stop() }
        for _ in 0..<2 {
            #expect(kill(server.process.processIdentifier, SIGHUP) == 0)
            try await Task.sleep(for: .milliseconds(300))
        }
        #expect(server.process.isRunning)
        let pin = try await SigilCommand.run(["pin", "127.0.0.1:\(server.port)"])
        #expect(pin.status == 0, "\(pin.error)")
        server.stop()
        #expect(server.process.terminationReason == .exit)
    }

    @Test(
        "sigil admin: devices prints ISO 8601 times as audit does; a user with no device is said on stderr, with revoke --user's status"
    )
    func adminTextOutputs() async throws {
        let directory = try SigilCommand.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let data = directory.appendingPathComponent("data").path
        // The server's first start puts its keys in the store, which `sigil admin` needs.
        let server = try ServerProcess(dataDirectory: data)
        server.stop()
        let store = try await SQLiteKeyDirectory.open(
            path: data + "/directory.sqlite", masterKey: try DataDirectory(path: data).masterKey())
        let key = try TestDevice(.ed25519)
        try await store.apply(
            DirectoryChange(
                added: [
                    RegisteredKey(
                        keyID: key.keyID, key: try key.key.verificationKey, deviceID: "dev-1", userID: "alice")
                ],
                audit: [
                    AuditEntry(
                        time: SystemUnixClock().now(), action: .registered, deviceID: "dev-1", keyID: key.keyID,
                        userID: "alice", actor: key.keyID)
                ]))
        try await store.close()

        let devices = try await SigilCommand.run(["admin", "devices", "--data-dir", data])
        #expect(devices.status == 0, "\(devices.error)")
        #expect(
            devices.text.range(
                of: "\\(ed25519,active,created \(Self.isoTime),last used never,jkt ", options: .regularExpression)
                != nil, "\(devices.text)")
        let audit = try await SigilCommand.run(["admin", "audit", "--data-dir", data])
        #expect(audit.text.range(of: "^\(Self.isoTime) registered ", options: .regularExpression) != nil)

        let revoke = try await SigilCommand.run(
            ["admin", "revoke", "--user", "nobody", "--as", "ops", "--data-dir", data])
        for (arguments, said) in [
            (["--user", "nobody"], "no device of user nobody"),
            (["--user", "alice", "--state", "revoked"], "no revoked device of user alice"),
            (["--user", "nobody", "--json"], "no device of user nobody"),
        ] {
            let unknown = try await SigilCommand.run(["admin", "devices", "--data-dir", data] + arguments)
            #expect(unknown.status == revoke.status)
            #expect(unknown.error == "sigil: \(said)\n", "\(arguments): \(unknown.error)")
            #expect(unknown.output.isEmpty)
        }
    }
}
