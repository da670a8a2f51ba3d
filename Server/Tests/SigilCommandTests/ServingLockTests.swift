import Foundation
import HTTPTypes
import NIOSSL
import Testing

@testable import SigilTestSupport

/// Two `sigil serve` processes on one data directory (PROTOCOL.md section 3): each would accept
/// every request the other did once more, unless their nonces are in a shared store.
@Suite("One server per data directory, unless nonces are shared", .externalServers)
struct ServingLockTests {
    @Test(
        "a second sigil serve on a served data directory refuses to start (exit 2), naming the first's process; once the first stops, one starts"
    )
    func secondServerRefused() async throws {
        let directory = try SigilCommand.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let data = directory.appendingPathComponent("data").path
        let first = try ServerProcess(dataDirectory: data)
        for nonces in [[], ["--nonces", "memory"]] {
            let second = try await SigilCommand.run(
                ["serve", "--data-dir", data, "--port", "0"] + nonces,
                environment: ["SIGIL_ENROLL_TOKEN": TestServer.token])
            #expect(second.status == 2, "\(second.text)")
            #expect(
                second.error.contains("served already by process \(first.process.processIdentifier)"),
                "\(second.error)")
        }
        first.stop()
        let next = try ServerProcess(dataDirectory: data)
        #expect(next.port > 0)
        next.stop()
    }

    @Test(
        "two sigil serve on one data directory with nonces in Redis both start, a third with nonces of its own or in another store does not, and a request one accepted the other refuses as replayed",
        .enabled(if: ExternalServers.runRedis))
    func sharedNonces() async throws {
        try await RedisTestServer.with { redis in
            let directory = try SigilCommand.temporaryDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let data = directory.appendingPathComponent("data").path
            let home = ["HOME": directory.appendingPathComponent("client-home").path]
            let shared = ["--nonces", redis.url]
            let first = try ServerProcess(dataDirectory: data, arguments: shared)
            defer { first.stop() }
            let second = try ServerProcess(dataDirectory: data, arguments: shared)
            defer { second.stop() }
            // A third on the same directory with nonces of its own, or in another store: refused.
            for other in [["--nonces", "memory"], ["--nonces", redis.url + "/1"], []] {
                let refused = try await SigilCommand.run(
                    ["serve", "--data-dir", data, "--port", "0"] + other,
                    environment: ["SIGIL_ENROLL_TOKEN": TestServer.token])
                #expect(
                    refused.status == 2 && refused.error.contains("served already"), "\(other): \(refused.error)")
            }
            let key = directory.appendingPathComponent("device.pem").path
            #expect(try await SigilCommand.run(["keygen", "--alg", "ed25519", "--out", key]).status == 0)
            /// Runs `arguments` until no server refuses it as dated before its start (a
            /// server on shared nonces takes requests from the second after it started).
            func ready(_ arguments: [String]) async throws -> SigilCommand.Result {
                var run = try await SigilCommand.run(arguments, environment: home)
                for _ in 0..<600 where run.error.contains("timestamp-out-of-window") {
                    try await Task.sleep(for: .milliseconds(100))
                    run = try await SigilCommand.run(arguments, environment: home)
                }
                return run
            }
            let enroll = try await ready(first.enrollArguments(["--key", key]))
            #expect(enroll.status == 0, "\(enroll.error)")
            let echo = try await ready(
                ["curl", "--identity", "default", "--json", "{}", "https://localhost:\(second.port)/v1/echo"])
            #expect(echo.status == 0, "the second server knows the device: \(echo.error)")
            // One request, signed by hand for the first server's origin, then sent to each.
            let body = Array("{}".utf8)
            let raw = Array(
                "POST /v1/echo HTTP/1.1\r\nHost: localhost:\(first.port)\r\nContent-Type: application/json\r\n\r\n"
                    .utf8)
            let signed = try await SigilCommand.run(["sign", "--key", key, "--headers-only"], input: raw + body)
            #expect(signed.status == 0, "\(signed.error)")
            var request = TestRequest(.post, "/v1/echo", port: first.port, body: body)
            request.head.headerFields[.contentType] = "application/json"
            for line in signed.text.split(separator: "\n") {
                let parts = line.split(separator: ":", maxSplits: 1)
                let name = try #require(HTTPField.Name(String(parts[0])))
                request.head.headerFields[name] = parts[1].trimmingCharacters(in: .whitespaces)
            }
            var copy = request
            copy.head.authority = "localhost:\(second.port)"
            copy.head.headerFields[GatewayScaffold.host] = "localhost:\(first.port)"
            let client = try TestServer.client(trusting: try NIOSSLCertificate.fromPEMFile(data + "/tls-cert.pem"))
            try await client.using { client in
                let accepted = try await request.send(client)
                #expect(accepted.status == 200, "\(accepted.text)")
                let replayed = try await copy.send(client)
                #expect(replayed.status == 401 && replayed.code == "replayed-nonce", "\(replayed.text)")
            }
        }
    }
}
