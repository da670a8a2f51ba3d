import AsyncHTTPClient
import Foundation
import HTTPTypes
import NIOSSL
import SigilClient
@_spi(Sigil) import SigilCore
import SigilServer
import SigilStandalone
import Testing

@testable import SigilTestSupport

/// Monitor mode (PROTOCOL.md section 15) on `sigil serve` and `sigil gateway`, over real TLS: under a
/// monitored prefix a request whose credentials are missing or fail reaches the route unverified with
/// the code it would have been refused with, and is counted; what no route could read is still refused.
@Suite("Monitor mode")
struct MonitorTests {
    /// A `sigil serve` monitoring `prefixes`, with a registered device.
    static func withServer(
        monitor prefixes: [String], _ body: (TestServer, TestDevice, HTTPClient) async throws -> Void
    ) async throws {
        try await TestServer.with(configure: {
            $0.monitor = prefixes
            $0.verifier.bodyLimit = 4_096
        }) { server in
            let device = try TestDevice(.ed25519)
            try await server.prepared.directory.apply(
                DirectoryChange(added: [
                    RegisteredKey(
                        keyID: device.keyID, key: try device.key.verificationKey, deviceID: "dev-monitor",
                        userID: "user-1")
                ]))
            try await server.client().using { client in try await body(server, device, client) }
        }
    }

    @Test(
        "sigil serve --monitor /v1: unsigned, unknown-key and replayed requests reach the route unverified with their code; verified ones as always, in both profiles; each counted"
    )
    func monitoredRoutes() async throws {
        try await Self.withServer(monitor: ["/v1"]) { server, device, client in
            let unsigned = try await TestRequest(.post, "/v1/echo", server: server, json: #"{"a":1}"#).send(client)
            #expect(unsigned.status == 200, "\(unsigned.text)")
            #expect(unsigned.json["verified"] as? Bool == false)
            #expect(unsigned.json["outcome"] as? String == "missing-signature")
            #expect(unsigned.json["keyId"] == nil && unsigned.json["body"] as? String == #"{"a":1}"#)
            #expect(
                unsigned.headers[SigilV1.signatureField] == nil
                    && unsigned.headers[MessageSignatures.signatureField] == nil,
                "an unverified request's answer is unsigned")

            var stranger = TestRequest(.post, "/v1/echo", server: server, json: "{}")
            try stranger.sign(with: TestDevice(.ed25519).signer(clock: server.clock))
            let unknown = try await stranger.send(client)
            #expect(unknown.status == 200 && unknown.json["outcome"] as? String == "unknown-key", "\(unknown.text)")

            for profile in SignatureProfile.allCases {
                var signed = TestRequest(.post, "/v1/echo", server: server, json: #"{"n":2}"#)
                try signed.sign(with: device.signer(profile, clock: server.clock))
                let verified = try await signed.send(client)
                #expect(verified.status == 200, "\(verified.text)")
                #expect(verified.json["verified"] as? Bool == true && verified.json["outcome"] == nil)
                #expect(verified.json["keyId"] as? String == device.keyID, "\(profile)")
                // The same request again: a replay, let through with no identity.
                let replayed = try await signed.send(client)
                #expect(replayed.status == 200, "\(replayed.text)")
                #expect(replayed.json["outcome"] as? String == "replayed-nonce" && replayed.json["keyId"] == nil)
            }

            // What no route could read is refused still: a body over the limit, a sealed body whose
            // signature does not verify.
            let large = try await TestRequest(
                .post, "/v1/echo", server: server, json: "\"" + String(repeating: "x", count: 5_000) + "\""
            )
            .send(client)
            #expect(large.status == 413 && large.code == "body-too-large", "\(large.text)")
            var sealed = TestRequest(.post, "/v1/echo", server: server, body: Array("sealed?".utf8))
            sealed.head.headerFields[.contentEncoding] = Sealing.contentEncoding
            try sealed.sign(with: TestDevice(.ed25519).signer(clock: server.clock))
            let refused = try await sealed.send(client)
            #expect(refused.status == 401 && refused.code == "unknown-key", "\(refused.text)")

            let counts = server.prepared.outcomes.recent(minutes: 60).reduce(into: [String: Int]()) { total, minute in
                for (outcome, count) in minute.counts["/v1"] ?? [:] { total[outcome, default: 0] += count }
            }
            #expect(
                counts == [
                    "missing-signature": 1, "unknown-key": 2, "verified": 2, "replayed-nonce": 2,
                    "body-too-large": 1,
                ], "\(counts)")
        }
    }

    @Test("a request outside every monitored prefix is refused as always, and counted under other")
    func unmonitoredRoutes() async throws {
        try await Self.withServer(monitor: ["/v2", "/v1/echo/legacy"]) { server, _, client in
            let unsigned = try await TestRequest(.post, "/v1/echo", server: server, json: "{}").send(client)
            #expect(unsigned.status == 401 && unsigned.code == "missing-signature", "\(unsigned.text)")
            let counts = server.prepared.outcomes.recent(minutes: 1).first?.counts
            #expect(counts == ["other": ["missing-signature": 1]])
        }
    }

    @Test(
        "the rollout: the last hour in 60 one-minute steps, the last day in 96 fifteen-minute steps, each request in its own step and route, older ones left out"
    )
    func rollout() {
        let start: Int64 = 1_800_000_000 - 1_800_000_000 % 900  // a fifteen-minute step begins
        let clock = ManualUnixClock(start)
        let outcomes = RequestOutcomes(clock: clock, monitored: ["/legacy"])
        outcomes.record(route: "/legacy", outcome: nil)
        clock.advance(by: 61 * 60)
        outcomes.record(route: "/legacy", outcome: .missingSignature)
        outcomes.record(route: "/legacy", outcome: .missingSignature)
        outcomes.record(route: nil, outcome: .revokedKey)

        let hour = outcomes.rollout(day: false)
        #expect(hour.step == 60 && hour.routes.map(\.steps.count) == [60, 60])
        #expect(hour.start == (clock.now() / 60 - 59) * 60)
        #expect(hour.routes.map(\.route) == ["/legacy", "other"])
        #expect(hour.routes.map(\.mode) == ["monitor", "enforce"])
        // The verified request is 61 minutes old: out of the hour.
        #expect(hour.routes[0].totals == ["missing-signature": 2])
        #expect(hour.routes[0].steps[59] == ["missing-signature": 2])
        #expect(hour.routes[1].totals == ["revoked-key": 1])

        let day = outcomes.rollout(day: true)
        #expect(day.step == 900 && day.routes[0].steps.count == 96)
        #expect(day.start % 900 == 0 && day.start + 96 * 900 > clock.now())
        #expect(day.routes[0].totals == ["verified": 1, "missing-signature": 2])
        #expect(day.routes[0].steps[91] == ["verified": 1])
        #expect(day.routes[0].steps[95] == ["missing-signature": 2])

        // A day later nothing is left.
        clock.advance(by: 86_400)
        #expect(outcomes.rollout(day: true).routes.allSatisfy { $0.totals.isEmpty })
    }

    @Test("a path is monitored only when every reading a router could make of it falls under the prefix")
    func everyReading() {
        let monitor = PathPrefixes(["/public", "/public/v2"])
        #expect(monitor.everyReading(of: "/public") == "/public")
        #expect(monitor.everyReading(of: "/public/x/?q=1") == "/public")
        #expect(monitor.everyReading(of: "/public/v2/x") == "/public/v2")
        #expect(monitor.everyReading(of: "/publicity") == nil)
        // A prefix that could never match is said so (sigil serve refuses it).
        for prefix in ["/", "/v1", "/v1/legacy", "/v1/legacy/", "/a-b_c.d~e"] {
            #expect(PathPrefixes.isMonitorable(prefix), "\(prefix)")
        }
        for prefix in ["v1", "/V1", "/v1/../legacy", "/v1/%6cegacy", ""] {
            #expect(!PathPrefixes.isMonitorable(prefix), "\(prefix)")
        }
        // Read decoded, these leave the prefix: the safe side is to enforce.
        #expect(monitor.everyReading(of: "/public/..%2Fadmin") == nil)
        #expect(monitor.everyReading(of: "/public/%2e%2e/admin") == nil)
        #expect(monitor.anyReading(of: "/x/..%2Fpublic/y") == "/public")
        #expect(monitor.everyReading(of: "/x/..%2Fpublic/y") == nil)
        // Routers that route on the raw segments (Hummingbird's, Vapor's) keep `..`, `;` parameters,
        // empty segments and case: a path whose raw form leaves the prefix is enforced.
        #expect(monitor.everyReading(of: "/admin/../public") == nil)
        #expect(monitor.everyReading(of: "/admin/%2e%2e/public") == nil)
        #expect(monitor.everyReading(of: "/x/y/../../public/z") == nil)
        #expect(monitor.everyReading(of: "/public;x") == nil)
        #expect(monitor.everyReading(of: "//public") == nil)
        #expect(monitor.everyReading(of: "/PUBLIC/x") == nil)
        #expect(monitor.everyReading(of: "/public/x;y") == "/public")
    }

    @Test(
        "sigil gateway --monitor /: the backend gets Sigil-Verified ?0 and Sigil-Outcome for an unverified request, never the client's own, and ?1 with the identity for a verified one",
        .enabled(if: PythonUpstream.available))
    func gatewayHeaders() async throws {
        try await GatewayScaffold.withGateway(configure: { $0.monitor = ["/"] }) { server, _, device, client in
            var forged = TestRequest(.post, "/orders", server: server, json: "{}")
            forged.head.headerFields[HTTPField.Name("Sigil-Verified")!] = "?1"
            forged.head.headerFields[HTTPField.Name("Sigil-Outcome")!] = "verified"
            forged.head.headerFields[HTTPField.Name("Sigil-Key-ID")!] = device.keyID
            let unverified = try await forged.send(client)
            #expect(unverified.status == 200, "\(unverified.text)")
            let seen = unverified.json["headers"] as? [String: [String]] ?? [:]
            #expect(seen["sigil-verified"] == ["?0"])
            #expect(seen["sigil-outcome"] == ["missing-signature"])
            #expect(seen["sigil-key-id"] == nil && seen["sigil-device-id"] == nil)

            var signed = TestRequest(.post, "/orders", server: server, json: "{}")
            try signed.sign(with: device.signer(clock: server.clock))
            let verified = try await signed.send(client)
            let headers = verified.json["headers"] as? [String: [String]] ?? [:]
            #expect(headers["sigil-verified"] == ["?1"] && headers["sigil-outcome"] == nil)
            #expect(headers["sigil-key-id"] == [device.keyID])
        }
    }
}

/// Monitor mode's unsigned bodies on a `sigil serve` process of its own, whose memory is read
/// from `/proc`.
@Suite("Monitor mode: unsigned bodies under one budget", .externalServers)
struct MonitorBodyBudgetTests {
    /// The most memory, in KiB, the process has held (`VmHWM`).
    static func peakKiB(of process: ChildProcess) throws -> Int {
        let status = try String(contentsOfFile: "/proc/\(process.processIdentifier)/status", encoding: .utf8)
        let line = try #require(status.split(separator: "\n").first { $0.hasPrefix("VmHWM:") })
        return try #require(Int(line.split(separator: " ", omittingEmptySubsequences: true)[1]))
    }

    @Test(
        "64 unsigned 8 MiB bodies at once under --monitor: the server's peak memory is that of the two bodies the shared budget holds (it grew by 300 MB for twelve), the others are refused body-too-large, and the budget is whole again after"
    )
    func flatMemory() async throws {
        let directory = try SigilCommand.temporaryDirectory()
        let data = directory.appendingPathComponent("data").path
        let server = try ServerProcess(dataDirectory: data, arguments: ["--monitor", "/v1"])
        defer { server.stop() }
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(data + "/tls-cert.pem"))
        var configuration = HTTPClient.Configuration(tlsConfiguration: tls)
        configuration.timeout = .init(connect: .seconds(60), read: .seconds(600))
        try await HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration).using { client in
            let body = [UInt8](repeating: UInt8(ascii: "x"), count: (8 << 20) - 64)
            /// Sends `count` bodies at once; their statuses and codes.
            func send(_ count: Int) async throws -> [(status: Int, code: String?)] {
                try await withThrowingTaskGroup(of: (Int, String?).self) { group in
                    for _ in 0..<count {
                        group.addTask {
                            // Far from any production deadline: 512 MiB through a debug build's TLS.
                            // A path no route takes: the body is held while the request is
                            // admitted and routed, and no route copies it.
                            let answer = try await TestRequest(.post, "/v1/none", port: server.port, body: body)
                                .send(client, timeout: .seconds(600))
                            return (answer.status, answer.code)
                        }
                    }
                    return try await group.reduce(into: []) { $0.append($1) }
                }
            }
            // Two bodies fit the budget (twice the body limit): the peak they make is the reference.
            let two = try await send(2)
            #expect(two.allSatisfy { $0.status == 404 }, "\(two)")
            let reference = try Self.peakKiB(of: server.process)

            let statuses = try await send(64)
            let grown = try Self.peakKiB(of: server.process) - reference
            #expect(grown < 24 << 10, "64 bodies grew the peak by \(grown) KiB over two's")
            #expect(statuses.contains { $0.status == 404 }, "some get through to the router")
            #expect(
                statuses.allSatisfy { $0.status == 404 || ($0.status == 413 && $0.code == "body-too-large") },
                "\(statuses.filter { $0.status != 404 })")
            // Every hold given back: two whole bodies fit again.
            let after = try await send(2)
            #expect(after.allSatisfy { $0.status == 404 }, "\(after)")
        }
    }
}

/// The unsigned-body budget, on the exchange itself.
@Suite("Monitor mode: the body budget covers every body not yet verified")
struct MonitorBudgetExchangeTests {
    @Test(
        "a forged signature naming a registered key draws on the budget like an unsigned body (it was read whole, outside it); a request that verifies gives its share back"
    )
    func forgedSignatureDrawsOnTheBudget() async throws {
        let clock = ManualUnixClock(SigningSetup.start)
        let device = try TestDevice(.ed25519)
        let directory = MemoryKeyDirectory(
            [RegisteredKey(keyID: device.keyID, key: try device.key.verificationKey, deviceID: "dev-1")])
        let exchange = Exchange(
            verifier: RequestVerifier(keys: directory, nonces: MemoryNonceStore(clock: clock), clock: clock),
            bodyTimeout: nil, monitor: ["/v1"], unverifiedBodyBudget: 300)
        clock.advance(by: 2)  // past the nonce store's start, which only later timestamps may follow
        func request(_ size: Int, forged: Bool) throws -> TestRequest {
            var request = TestRequest(.post, "/v1/echo", port: 443, body: [UInt8](repeating: 0x61, count: size))
            try request.sign(with: device.signer(clock: clock))
            if forged { request.body[0] = 0x62 }
            return request
        }
        func admit(_ request: TestRequest) async throws -> Admission {
            try await exchange.admit(request.head, bodyChunks: [request.body].async)
        }
        // Past the budget: refused, as an unsigned body of that size is.
        await #expect(throws: SigilError(.bodyTooLarge, "")) { _ = try await admit(try request(400, forged: true)) }
        // Within it: let through unverified, holding its bytes while the route has it.
        let forged = try await admit(try request(200, forged: true))
        #expect(
            forged.outcome == .invalidSignature && exchange.unverifiedBodies.inUse == 200,
            "\(String(describing: forged.outcome)) \(exchange.unverifiedBodies.inUse)")
        // A request that verifies holds nothing once admitted.
        let verified = try await admit(try request(50, forged: false))
        #expect(
            verified.identity != nil && exchange.unverifiedBodies.inUse == 200,
            "\(String(describing: verified.outcome))")
        withExtendedLifetime(forged) {}
    }
}
