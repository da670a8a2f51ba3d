import Foundation
import Testing

@testable import SigilTestSupport

/// `sigil bench request`, the server pipeline in process that `scripts/instructions` counts under
/// callgrind: its modes, and its counted loop answering every request it is given.
@Suite("sigil bench request and bench core's counted loops")
struct BenchCommandTests {
    @Test("--list names every mode by ID, the unverified baseline first and the raw cryptography last")
    func modes() async throws {
        let result = try await SigilCommand.run(["bench", "request", "--list"])
        #expect(result.status == 0, "\(result.error)")
        let ids = result.text.split(separator: "\n").map { $0.split(separator: "\t").first.map(String.init) ?? "" }
        #expect(ids.first == "unverified")
        #expect(ids.suffix(2) == ["raw-hmac", "raw-ecdsa"])
        for id in [
            "hmac-signed", "hmac-signed-rfc9421", "hmac-signed-memory", "ecdsa-signed", "sealed", "hmac-signed-log",
        ] {
            #expect(ids.contains(id), "\(id) missing from \(ids)")
        }
    }

    @Test(
        "the counted loop serves the requests it is given through the whole pipeline, each answered 200 (a refusal fails it)",
        arguments: ["unverified", "hmac-signed", "ecdsa-signed-rfc9421", "sealed", "hmac-signed-log", "raw-ecdsa"])
    func countedLoop(mode: String) async throws {
        let result = try await SigilCommand.run(["bench", "request", "--mode", mode, "--count", "3", "--pool", "3"])
        #expect(result.status == 0, "\(result.error)")
        #expect(result.output.isEmpty)
    }

    @Test("an unknown mode, or a count beyond the pool, is refused before anything runs")
    func refusals() async throws {
        let unknown = try await SigilCommand.run(["bench", "request", "--mode", "nope", "--count", "1"])
        #expect(unknown.status != 0)
        #expect(unknown.error.contains("no mode nope"), "\(unknown.error)")
        let tooMany = try await SigilCommand.run(["bench", "request", "--mode", "hmac", "--count", "9", "--pool", "3"])
        #expect(tooMany.status != 0)
        #expect(tooMany.error.contains("--pool"), "\(tooMany.error)")
    }

    @Test(
        "bench core's counted loop verifies one algorithm's requests (full or raw) and prints nothing; a verification that fails it",
        arguments: [
            ["hmac-sha256", "sigil-v1"], ["ed25519", "rfc9421", "--raw"], ["apple-appattest", "sigil-v1"],
            ["rsa-pss-sha512", "rfc9421"],
        ])
    func coreCountedLoop(arguments: [String]) async throws {
        let result = try await SigilCommand.run(
            ["bench", "core", "--algorithms", arguments[0], "--profile", arguments[1], "--count", "3", "--pool", "3"]
                + arguments.dropFirst(2))
        #expect(result.status == 0, "\(result.error)")
        #expect(result.output.isEmpty)
    }

    @Test("bench http --devices takes 1 to 10,000,000 devices, and not with --replicas")
    func httpDevicesRefusals() async throws {
        for arguments in [["--devices", "0"], ["--devices", "10000001"], ["--devices", "10", "--replicas", "2"]] {
            let result = try await SigilCommand.run(["bench", "http"] + arguments)
            #expect(result.status != 0, "\(arguments)")
            #expect(result.error.contains("--devices"), "\(result.error)")
        }
    }

    @Test(
        "bench core --dpop --count verifies DPoP requests, the token remembered or fresh each time, and prints nothing",
        arguments: ["remembered", "fresh"])
    func dpopCountedLoop(token: String) async throws {
        let result = try await SigilCommand.run(["bench", "core", "--dpop", token, "--count", "3", "--pool", "3"])
        #expect(result.status == 0, "\(result.error)")
        #expect(result.output.isEmpty)
    }

    @Test("bench core --count takes one algorithm or --dpop, and no more than --pool")
    func coreRefusals() async throws {
        let two = try await SigilCommand.run(
            ["bench", "core", "--algorithms", "hmac-sha256,ed25519", "--count", "1", "--pool", "3"])
        #expect(two.status != 0)
        #expect(two.error.contains("--count takes one algorithm"), "\(two.error)")
        let both = try await SigilCommand.run(
            ["bench", "core", "--algorithms", "hmac-sha256", "--dpop", "fresh", "--count", "1", "--pool", "3"])
        #expect(both.status != 0)
        let uncounted = try await SigilCommand.run(["bench", "core", "--dpop", "fresh"])
        #expect(uncounted.status != 0)
        #expect(uncounted.error.contains("--dpop goes with --count"), "\(uncounted.error)")
        let tooMany = try await SigilCommand.run(
            ["bench", "core", "--algorithms", "hmac-sha256", "--count", "9", "--pool", "3"])
        #expect(tooMany.status != 0)
    }
}
