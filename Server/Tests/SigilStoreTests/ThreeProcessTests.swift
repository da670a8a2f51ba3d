import AsyncHTTPClient
import Foundation
import NIOSSL
import SigilClient
@_spi(Sigil) import SigilCore
import SigilSQLite
import SigilServer
import SigilStandalone
import Testing

@testable import SigilTestSupport

/// Three processes on one data directory: `sigil serve` running, `sigil admin` revoking from another
/// process, and this test signing requests as devices.
@Suite("sigil admin beside a running server")
struct ThreeProcessTests {
    @Test(
        "`sigil admin revoke --user` from another process: that user's devices refused within 1 s, others untouched, the audit trail says who"
    )
    func revokeUserAcrossProcesses() async throws {
        let directory = try SigilCommand.temporaryDirectory()
        let data = directory.appendingPathComponent("data").path
        let server = try ServerProcess(dataDirectory: data)
        let port = server.port
        defer { server.stop() }

        // This process registers three devices in the server's directory, as a registration would.
        let store = try await Directory.sqlite(
            path: data + "/directory.sqlite", masterKey: try DataDirectory(path: data).masterKey())
        var devices: [String: TestDevice] = [:]
        for (device, user) in [("dev-alice-1", "alice"), ("dev-alice-2", "alice"), ("dev-bob", "bob")] {
            let key = try TestDevice(.ed25519)
            devices[device] = key
            try await store.apply(
                DirectoryChange(
                    added: [
                        RegisteredKey(
                            keyID: key.keyID, key: try key.key.verificationKey, deviceID: device, userID: user)
                    ],
                    audit: [AuditEntry(time: SystemUnixClock().now(), action: .registered, actor: key.keyID)]))
        }
        try await store.close()

        let client = try TestServer.client(trusting: try NIOSSLCertificate.fromPEMFile(data + "/tls-cert.pem"))
        try await client.using { client in
            func echo(_ device: String) async throws -> TestResponse {
                var request = TestRequest(.post, "/v1/echo", port: port, json: "{}")
                try request.sign(with: try #require(devices[device]).signer(clock: SystemUnixClock()))
                return try await request.send(client)
            }
            for device in devices.keys.sorted() { #expect(try await echo(device).status == 200, "\(device)") }

            let revoke = try await SigilCommand.run(
                ["admin", "revoke", "--user", "alice", "--data-dir", data, "--as", "ops", "--reason", "stolen"])
            let revokedAt = ContinuousClock.now
            #expect(revoke.status == 0, "\(revoke.error)")
            #expect(revoke.text.contains("dev-alice-1") && revoke.text.contains("dev-alice-2"))
            #expect(!revoke.text.contains("dev-bob"))

            // Refused within a second of the other process's write (the server caches lookups for 5 s).
            var refused = false
            while !refused && revokedAt.duration(to: .now) < .seconds(1) {
                let response = try await echo("dev-alice-1")
                refused = response.status == 401 && response.code == "revoked-key"
            }
            #expect(refused, "still accepted a second after the revocation")
            #expect(try await echo("dev-alice-2").code == "revoked-key")
            #expect(try await echo("dev-bob").status == 200)
        }

        let audit = try await SigilCommand.run(["admin", "audit", "--user", "alice", "--json", "--data-dir", data])
        #expect(audit.status == 0, "\(audit.error)")
        let rows = try audit.text.split(separator: "\n").map {
            try JSONDecoder().decode(AuditEntry.self, from: Data($0.utf8))
        }
        let revocations = rows.filter { $0.action == .revoked }
        #expect(revocations.map(\.deviceID) == ["dev-alice-1", "dev-alice-2"])
        #expect(revocations.allSatisfy { $0.actor == "operator:ops" && $0.reason == "stolen" })

        let listed = try await SigilCommand.run(["admin", "devices", "--state", "active", "--data-dir", data])
        #expect(listed.text.split(separator: "\n").count == 1)
        #expect(listed.text.contains("dev-bob"))
        #expect(listed.text.contains("last used"))
        // Unknown IDs: exit 1, nothing changed.
        #expect(try await SigilCommand.run(["admin", "device", "dev-none", "--data-dir", data]).status == 1)
        // A user with no device (an OAuth client's, known by tokens alone) is revoked all the same.
        let deviceless = try await SigilCommand.run(["admin", "revoke", "--user", "nobody", "--data-dir", data])
        #expect(deviceless.status == 0, "\(deviceless.error)")
        #expect(deviceless.text.contains("revoked user nobody: no device"))
        #expect(try await SigilCommand.run(["admin", "revoke", "--data-dir", data]).status != 0)
        let keys = try await SigilCommand.run([
            "admin", "keys", "rotate", "response", "--data-dir", data, "--as", "ops",
        ])
        #expect(keys.status == 0, "\(keys.error)")
        #expect(keys.text.contains(" next "))
    }

    @Test(
        "sigil curl keeps verifying answers across `sigil admin keys rotate response` and `promote`, and keeps the new key"
    )
    func curlFollowsPromotion() async throws {
        let directory = try SigilCommand.temporaryDirectory()
        let data = directory.appendingPathComponent("data").path
        let server = try ServerProcess(dataDirectory: data)
        defer { server.stop() }
        let pins = server.banner.split(separator: "\n").filter {
            let line = $0.drop { $0 == " " }
            return line.hasPrefix("pin: ") || line.hasPrefix("backup pin")
        }.compactMap { $0.split(separator: " ").last.map(String.init) }
        #expect(pins.count == 2)
        let home = ["HOME": directory.appendingPathComponent("client-home").path]
        let url = "https://localhost:\(server.port)"
        let enroll = try await SigilCommand.run(
            ["enroll", url, "--token", TestServer.token] + pins.flatMap { ["--pin", $0] }, environment: home)
        #expect(enroll.status == 0, "\(enroll.error)")
        func curl() async throws -> SigilCommand.Result {
            try await SigilCommand.run(["curl", "-v", "--json", "{}", url + "/v1/echo"], environment: home)
        }
        #expect(try await curl().status == 0)

        for step in ["rotate", "promote"] {
            let keys = try await SigilCommand.run([
                "admin", "keys", step, "response", "--data-dir", data, "--as", "ops",
            ])
            #expect(keys.status == 0, "\(keys.error)")
        }
        let keys = try await SigilCommand.run(["admin", "keys", "--json", "--data-dir", data])
        let current = try keys.text.split(separator: "\n").map {
            try JSONDecoder().decode(ServerKeyInfo.self, from: Data($0.utf8))
        }.first { $0.kind == .response && $0.state == .current }
        let promoted = try #require(current?.keyID)
        // The running server reads the promotion within a second; curl then meets the new key (each
        // curl is a process of its own, slow to start when the whole suite runs on two cores).
        var followed = false
        let deadline = ContinuousClock.now + .seconds(15)
        while !followed && ContinuousClock.now < deadline {
            let answer = try await curl()
            #expect(answer.status == 0, "\(answer.error)")
            followed = answer.error.contains("keys moved on: now response key \(promoted)")
            if !followed { try await Task.sleep(for: .milliseconds(200)) }
        }
        #expect(followed)
        let identity = try JSONDecoder().decode(
            DeviceIdentity.self,
            from: Data(contentsOf: URL(fileURLWithPath: home["HOME"]! + "/.sigil/identities/default/identity.json")))
        #expect(identity.responseKeyID == promoted)
        let again = try await curl()
        #expect(again.status == 0, "\(again.error)")
        #expect(!again.error.contains("keys moved on"))
    }
}
