import Foundation
import NIOSSL
import SigilClient
@_spi(Sigil) import SigilCore
import SigilStandalone
import Testing

@testable import SigilTestSupport

/// `sigil push-secret` opens the store and the server's keys as `sigil serve` does: on SQLite and on
/// PostgreSQL, signing with the response key current in the key ring.
@Suite("sigil push-secret on every store, after a promotion", .externalServers)
struct PushSecretCommandTests {
    @Test("on the data directory's SQLite: signed by the promoted response key, not the key file's")
    func sqlite() async throws {
        try await Self.walk(store: [])
    }

    @Test("on PostgreSQL", .enabled(if: ExternalServers.runPostgres))
    func postgres() async throws {
        try await PostgresTestServer.with { server in try await Self.walk(store: ["--store", server.url]) }
    }

    /// Enrolls a device with a sealing key, rotates and promotes the response key, then pushes a
    /// secret: the payload verifies with the promoted key only, and the device takes it.
    static func walk(store: [String]) async throws {
        let directory = try SigilCommand.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let data = directory.appendingPathComponent("data").path
        let home = directory.appendingPathComponent("client-home").path
        let server = try ServerProcess(dataDirectory: data, arguments: store)
        defer { server.stop() }
        let enroll = try await server.enroll(home: home, ["--seal-secret"])
        #expect(enroll.status == 0, "\(enroll.error)")
        let device = try #require(
            enroll.text.split(whereSeparator: \.isWhitespace).first { $0.hasPrefix("device=") }
                .map { String($0.dropFirst(7)) })
        let named = ["--data-dir", data] + store
        for step in ["rotate", "promote"] {
            let run = try await SigilCommand.run(["admin", "keys", step, "response", "--as", "ops"] + named)
            #expect(run.status == 0, "\(run.error)")
        }
        let keys = try await SigilCommand.run(["admin", "keys", "--json"] + named)
        let current = try #require(
            keys.text.split(separator: "\n").compactMap {
                try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
            }.first { $0["kind"] as? String == "response" && $0["state"] as? String == "current" }?["keyId"]
                as? String)

        let push = try await SigilCommand.run(["push-secret", "--device", device, "--as", "ops"] + named)
        #expect(push.status == 0, "\(push.error)")
        // The operator who pushed it is in the audit trail, not "server".
        let audit = try await SigilCommand.run(["admin", "audit", "--device", device, "--json"] + named)
        let issued = audit.text.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }.filter { $0["action"] as? String == "secret-issued" }
        #expect(issued.last?["actor"] as? String == "operator:ops", "\(audit.text)")
        let pushed = try Registration.SecretPush(payload: Array(push.output.dropLast()))
        // The key file's key (current before the promotion) does not verify it.
        let retired = try DataDirectory(path: data).responseKey().verificationKey
        #expect(throws: (any Error).self) { _ = try pushed.issuedSecret(verifiedWith: retired) }
        // The promoted key, as discovery publishes it, does.
        let client = try TestServer.client(trusting: try NIOSSLCertificate.fromPEMFile(data + "/tls-cert.pem"))
        // The server follows the store within about a second.
        let published = try await client.using { client -> Registration.Discovery.Key? in
            for _ in 0..<200 {
                let answer = try await TestRequest(.get, Registration.Path.discovery, port: server.port).send(
                    client)
                let document = try JSONDecoder().decode(Registration.Discovery.self, from: Data(answer.body))
                if let key = document.responseKeys.first(where: { $0.keyId == current }) { return key }
                try await Task.sleep(for: .milliseconds(50))
            }
            return nil
        }
        let promoted = try #require(published)
        let key = try KeyFile.load(Array(promoted.publicKey.utf8)).verificationKey
        #expect(throws: Never.self) { _ = try pushed.issuedSecret(verifiedWith: key) }
    }
}
