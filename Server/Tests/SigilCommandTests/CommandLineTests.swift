import Foundation
import SQLiteNIO
@_spi(Sigil) import SigilCore
import SigilSQLite
import SigilServer
import SigilStandalone
import Testing

@testable import SigilTestSupport

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
        let changelog = TestPaths.repository.appendingPathComponent("CHANGELOG.md")
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
            ["enroll", url, "--token", "a-token-0123456789", "--pin", PinScaffold.otherPin],
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

    @Test(
        "a --monitor prefix that could never match (v1, /V1) is refused before anything is made, for serve and gateway")
    func unmatchableMonitorPrefix() async throws {
        let directory = try SigilCommand.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let data = directory.appendingPathComponent("data").path
        for command in [["serve"], ["gateway", "--upstream", "http://127.0.0.1:9"]] {
            for prefix in ["v1", "/V1/legacy"] {
                let result = try await SigilCommand.run(
                    command + ["--data-dir", data, "--port", "0", "--monitor", "/v2", "--monitor", prefix],
                    environment: ["LOG_LEVEL": "error"])
                #expect(result.status == 2)
                #expect(result.error.contains("--monitor \(prefix) would never match"), "\(command): \(result.error)")
            }
        }
        #expect(!FileManager.default.fileExists(atPath: data))
    }

    @Test("a port out of range is refused before anything is made (70000 listened on 4464)")
    func portOutOfRange() async throws {
        let directory = try SigilCommand.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let data = directory.appendingPathComponent("data").path
        for arguments in [["--port", "70000"], ["--port", "0", "--admin-port", "65536"]] {
            let result = try await SigilCommand.run(
                ["serve", "--data-dir", data] + arguments, environment: ["LOG_LEVEL": "error"])
            #expect(result.status == 2)
            #expect(result.error.contains("is no port"), "\(arguments): \(result.error)")
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
        #expect(server.process.exited)
    }

    @Test("a key used once, in the minute it enrolled, shows that use: enrollment's proof notes no use of its own")
    func firstUseAfterEnrolling() async throws {
        try await TestServer.with { server in
            try await server.client().using { client in
                let device = try await DeviceSteps.registeredDevice(on: server, client: client)
                let (echoed, _, _) = try await DeviceSteps.echo(
                    "{}", signer: device.signer(clock: server.clock), server: server, client: client)
                #expect(echoed.status == 200)
                var lastUsed: Int64?
                for _ in 0..<100 where lastUsed == nil {
                    lastUsed = try await server.prepared.directory.devices(DeviceQuery(keyID: device.keyID)).first?
                        .keys.first?.lastUsed
                    if lastUsed == nil { try await Task.sleep(for: .milliseconds(50)) }
                }
                #expect(lastUsed == server.clock.now())
            }
        }
    }

    @Test(
        "a last use the store refused is written when the server stops, before its stores close, not lost with it"
    )
    func lastUseWrittenAtStop() async throws {
        let dataDirectory = TestServer.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dataDirectory) }
        let (keyID, usedAt) = try await TestServer.with(dataDirectory: dataDirectory) { server in
            try await server.client().using { client in
                let device = try await DeviceSteps.registeredDevice(on: server, client: client)
                let saboteur = try await OperatorScaffold.refusingLastUses(path: try server.data.databasePath)
                let (echoed, _, _) = try await DeviceSteps.echo(
                    "{}", signer: device.signer(clock: server.clock), server: server, client: client)
                #expect(echoed.status == 200)
                // The write fails (or has not run yet); its retry waits a second, the stop comes first.
                _ = try await saboteur.query("DROP TRIGGER no_use")
                try await saboteur.close()
                return (device.keyID, server.clock.now())
            }
        }
        let data = try DataDirectory(path: dataDirectory)
        let directory = try await Directory.sqlite(path: data.databasePath, masterKey: try data.masterKey())
        let lastUsed = try await directory.devices(DeviceQuery(keyID: keyID)).first?.keys.first?.lastUsed
        try await directory.close()
        #expect(lastUsed == usedAt)
    }

    @Test(
        "sigil admin: devices prints ISO 8601 times as audit does; a user with no device is said on stderr, with revoke --user's status"
    )
    func adminTextOutputs() async throws {
        let directory = try SigilCommand.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let (data, store) = try await ServerProcess.startedOnce(in: directory)
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

/// Issue 30: `sigil curl` reads the server's public routes, which it answers unsigned (checking the
/// signatures of their own that discovery and the key directory carry), and still refuses an unsigned
/// answer anywhere else; the start banner names the features that are on.
@Suite("The first day of an operator: public routes and the banner")
struct FirstDayPublicRouteTests {
    @Test("sigil curl reads discovery, the key directory and the challenge with no key; signed ones are checked")
    func curlReadsPublicRoutes() async throws {
        let directory = try SigilCommand.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let home = ["HOME": directory.appendingPathComponent("home").path]
        let server = try await ServeProcess.start(
            ["serve", "--data-dir", directory.appendingPathComponent("data").path, "--port", "0"])
        defer { server.stop() }
        let pins = try server.pins.flatMap { ["--pin", $0] }
        let origin = "https://127.0.0.1:\(server.port)"

        // No key, no identity: the pins alone, as on a post-quantum-only server nothing else reads it.
        let discovery = try await SigilCommand.run(
            ["curl", "-v"] + pins + [origin + "/.well-known/sigil"], environment: home)
        #expect(discovery.status == 0, "\(discovery.error)")
        let document = try #require(
            try JSONSerialization.jsonObject(with: Data(discovery.output)) as? [String: Any])
        #expect(document["responseKeys"] != nil, "\(discovery.text)")
        #expect(discovery.error.contains("a public route, sent unsigned"), "\(discovery.error)")
        #expect(discovery.error.contains("signature not checked"), "\(discovery.error)")
        let keys = try await SigilCommand.run(
            ["curl"] + pins + [origin + "/.well-known/http-message-signatures-directory"], environment: home)
        #expect(keys.status == 0, "\(keys.error)")
        #expect(keys.text.contains("\"keys\""), "\(keys.text)")
        // The challenge is a POST, taken as one; App Attest is off here: the refusal, said with its status.
        let challenge = try await SigilCommand.run(
            ["curl"] + pins + [origin + "/v1/attest/challenge"], environment: home)
        #expect(challenge.status == 1)
        #expect(challenge.error.contains("HTTP 403 Forbidden, unsigned"), "\(challenge.error)")
        #expect(!challenge.error.contains("proxy"), "\(challenge.error)")
        let sealed = try await SigilCommand.run(["curl", "--seal"] + pins + [origin + "/.well-known/sigil"])
        #expect(sealed.status == 2)

        // An identity holds the server's key: discovery and the directory are checked by their signatures.
        let enroll = try await PastedLine.run(try server.line(after: "enroll this machine: "), environment: home)
        #expect(enroll.status == 0, "\(enroll.error)")
        for (path, said) in [
            ("/.well-known/sigil?x=1", "signature verified (Sigil-Discovery-Signature)"),
            ("/.well-known/http-message-signatures-directory", "signature verified (RFC 9421)"),
        ] {
            let checked = try await SigilCommand.run(["curl", "-v", origin + path], environment: home)
            #expect(checked.status == 0, "\(path): \(checked.error)")
            #expect(checked.error.contains(said), "\(path): \(checked.error)")
            #expect(!checked.output.isEmpty)
        }
        // Anywhere else an unsigned answer is still refused, a path beside a public one too.
        let beside = try await SigilCommand.run(["curl", origin + "/.well-known/sigil/more"], environment: home)
        #expect(beside.status == 1)
        #expect(beside.text.isEmpty)
        #expect(beside.error.contains("the answer is not signed: HTTP 404 Not Found"), "\(beside.error)")

        // Another server's discovery, not signed by the key the identity holds: refused, nothing printed.
        let other = try await ServeProcess.start(
            ["serve", "--data-dir", directory.appendingPathComponent("other").path, "--port", "0"])
        defer { other.stop() }
        let stranger = try await SigilCommand.run(
            ["curl", "--identity", "default"] + (try other.pins.flatMap { ["--pin", $0] })
                + ["https://127.0.0.1:\(other.port)/.well-known/sigil"],
            environment: home)
        #expect(stranger.status == 1)
        #expect(stranger.output.isEmpty)
        #expect(stranger.error.contains("not signed by the server's key"), "\(stranger.error)")
    }

    @Test("the start banner names the features on in one line: --dpop alone, --monitor /v1, the access log")
    func bannerNamesFeatures() async throws {
        let directory = try SigilCommand.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let key = directory.appendingPathComponent("issuer.pem").path
        let publicKey = directory.appendingPathComponent("issuer.pub").path
        let made = try await SigilCommand.run(
            ["keygen", "--alg", "ecdsa-p256-sha256", "--out", key, "--public-out", publicKey])
        #expect(made.status == 0, "\(made.error)")
        let data = directory.appendingPathComponent("data").path
        let plain = try await ServeProcess.start(["serve", "--data-dir", data, "--port", "0"])
        plain.stop()
        #expect(
            try plain.line(after: "  features: ")
                == "DPoP off; App Attest off; Android off; monitor off; access log off; sealed paths off; metrics off")

        let log = directory.appendingPathComponent("access.log").path
        let server = try await ServeProcess.start([
            "serve", "--data-dir", data, "--port", "0", "--dpop", "alone", "--jwt-key", publicKey,
            "--jwt-audience", "api", "--jwt-issuer", "https://issuer.example", "--monitor", "/v1", "--monitor",
            "/v2/legacy", "--access-log", log, "--require-sealed", "/v3/pay",
        ])
        server.stop()
        let features = try server.line(after: "  features: ")
        for said in [
            "DPoP alone", "monitor /v1,/v2/legacy", "access log \(log)", "sealed paths /v3/pay", "App Attest off",
        ] {
            #expect(features.contains(said), "\(features)")
        }
    }
}
