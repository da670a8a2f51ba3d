import Foundation
import Testing

@testable import SigilTestSupport

/// Issue 30, the first day: `sigil admin` works on the store alone and creates nothing. On
/// PostgreSQL, the commands that read or revoke need no data directory; those that open the server's
/// keys name the flag that gives the master key. A data directory holding no store is refused.
@Suite("sigil admin on PostgreSQL with the store alone", .enabled(if: ExternalServers.runPostgres), .externalServers)
struct AdminStoreAloneTests {
    /// A device's keys in `sigil admin device --json`: each key ID with its `field`.
    static func keys(_ result: SigilCommand.Result, field: String = "alg") throws -> [String: String] {
        let record = try JSONSerialization.jsonObject(with: Data(result.output)) as? [String: Any]
        let keys = record?["keys"] as? [[String: Any]] ?? []
        var found: [String: String] = [:]
        for key in keys {
            if let keyID = key["keyId"] as? String { found[keyID] = key[field] as? String }
        }
        return found
    }

    @Test(
        "devices, device, audit and revoke need the store alone and create nothing under HOME; keys without a master key exits 2 naming --data-dir"
    )
    func storeAlone() async throws {
        try await PostgresTestServer.with { try await Self.storeAlone(on: $0) }
    }

    static func storeAlone(on postgres: PostgresTestServer) async throws {
        let directory = try SigilCommand.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let data = directory.appendingPathComponent("data").path
        let server = try ServerProcess(dataDirectory: data, arguments: ["--store", postgres.url])
        defer { server.stop() }
        let pins = server.pins
        let enroll = try await SigilCommand.run(
            ["enroll", "https://localhost:\(server.port)", "--token", TestServer.token]
                + pins.flatMap { ["--pin", $0] },
            environment: ["HOME": directory.appendingPathComponent("client-home").path])
        #expect(enroll.status == 0, "\(enroll.error)")
        let keyID = try #require(
            enroll.text.split(whereSeparator: \.isWhitespace).first { $0.hasPrefix("key-id=") }
                .map { String($0.dropFirst(7)) })

        // The operator's machine: an empty HOME, no data directory.
        let home = directory.appendingPathComponent("operator-home").path
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: false)
        func admin(_ arguments: [String]) async throws -> SigilCommand.Result {
            try await SigilCommand.run(
                ["admin"] + arguments + ["--store", postgres.url], environment: ["HOME": home])
        }
        let devices = try await admin(["devices", "--json"])
        #expect(devices.status == 0, "\(devices.error)")
        let listed = devices.text.split(separator: "\n")
        #expect(listed.count == 1 && listed[0].contains(keyID), "\(devices.text)")
        let device = try await admin(["device", keyID])
        #expect(device.status == 0, "\(device.error)")
        #expect(device.text.contains(keyID) && device.text.contains(" active "), "\(device.text)")
        // The device's HMAC key, revoked by its ID: its sealed secret is never opened.
        let before: [String: String] = try Self.keys(try await admin(["device", keyID, "--json"]))
        let hmacID = try #require(before.first { $0.value == "hmac-sha256" }?.key)
        let revoke = try await admin(["revoke", "--key", hmacID, "--as", "ops", "--reason", "lost"])
        #expect(revoke.status == 0, "\(revoke.error)")
        #expect(revoke.text.hasPrefix("revoked:\n"), "\(revoke.text)")
        let after: [String: String] = try Self.keys(
            try await admin(["device", keyID, "--json"]), field: "state")
        #expect(after == [keyID: "active", hmacID: "revoked"])
        let audit = try await admin(["audit"])
        #expect(audit.status == 0, "\(audit.error)")
        let row = audit.text.split(separator: "\n").first { $0.contains(" revoked actor=operator:ops ") }
        #expect(row?.contains("key=\(hmacID)") == true, "\(audit.text)")

        for arguments in [["keys"], ["keys", "rotate", "response", "--as", "ops"]] {
            let refused = try await admin(arguments)
            #expect(refused.status == 2, "\(arguments): \(refused.error)")
            #expect(
                refused.error.contains("--data-dir") && refused.error.contains("master.key"), "\(refused.error)"
            )
            #expect(!refused.error.contains("postgres://"), "the store URL is not repeated")
            #expect(refused.output.isEmpty)
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: home).isEmpty)

        // Given a replica's data directory, keys work on the same store.
        let rotate = try await SigilCommand.run(
            [
                "admin", "keys", "rotate", "response", "--as", "ops", "--store", postgres.url, "--data-dir",
                data,
            ],
            environment: ["HOME": home])
        #expect(rotate.status == 0, "\(rotate.error)")
        #expect(rotate.text.contains(" next "), "\(rotate.text)")
    }
}

@Suite("sigil admin on a data directory holding no store")
struct AdminNoStoreTests {
    @Test("every admin command on an empty or missing --data-dir exits 2 saying so, and creates nothing")
    func emptyDataDirectory() async throws {
        let directory = try SigilCommand.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let empty = directory.appendingPathComponent("empty").path
        try FileManager.default.createDirectory(atPath: empty, withIntermediateDirectories: false)
        let missing = directory.appendingPathComponent("missing").path
        let home = directory.appendingPathComponent("home").path
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: false)
        for data in [empty, missing] {
            for arguments in [
                ["devices"], ["device", "dev-1"], ["revoke", "--device", "dev-1", "--as", "ops"], ["audit"], ["keys"],
                ["keys", "rotate", "response", "--as", "ops"],
            ] {
                let result = try await SigilCommand.run(
                    ["admin"] + arguments + ["--data-dir", data], environment: ["HOME": home])
                #expect(result.status == 2, "\(arguments): \(result.error)")
                #expect(
                    result.error == "sigil: \(data) holds no Sigil store (no directory.sqlite): give --data-dir "
                        + "a server's data directory, or --store postgres://… for PostgreSQL\n",
                    "\(arguments): \(result.error)")
                #expect(result.output.isEmpty)
            }
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: empty).isEmpty)
        #expect(!FileManager.default.fileExists(atPath: missing))
        #expect(try FileManager.default.contentsOfDirectory(atPath: home).isEmpty)
    }
}
