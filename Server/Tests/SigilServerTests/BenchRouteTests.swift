import HTTPTypes
@_spi(Sigil) import SigilCore
import SigilServer
import SigilStandalone
import Testing

@testable import SigilTestSupport

/// The benches' unverified routes exist only on a server told to serve them (`benchmarkRoute`, which
/// only `sigil bench` sets): `sigil serve` never answers an unsigned request there.
@Suite("Bench routes")
struct BenchRouteTests {
    @Test(
        "a server as sigil serve starts it has no /bench/unverified, /bench/unverified-fields or floor route; a bench server's fields route echoes at most 43 characters of the client's signature, twice"
    )
    func onlyOnBenchServers() async throws {
        let forged = String(repeating: "A", count: 200)
        try await TestServer.with { server in
            try await server.client().using { client in
                for path in [
                    "/bench/unverified", "/bench/unverified-fields", "/bench/floor/hmac", "/bench/floor/ecdsa",
                ] {
                    var request = TestRequest(.post, path, server: server, json: #"{"a":1}"#)
                    request.head.headerFields[SigilV1.signatureField] = forged
                    let answer = try await request.send(client)
                    #expect(answer.status == 404, "\(path): \(answer.status) \(answer.text)")
                }
            }
        }
        try await TestServer.with(configure: { $0.benchmarkRoute = true }) { server in
            try await server.client().using { client in
                var request = TestRequest(.post, "/bench/unverified-fields", server: server, json: #"{"a":1}"#)
                request.head.headerFields[SigilV1.signatureField] = forged
                request.head.headerFields[SigilV1.timestampField] = "1764547200"
                let answer = try await request.send(client)
                #expect(answer.status == 200, "\(answer.text)")
                #expect(answer.headers[SigilV1.signatureField] == String(repeating: "A", count: 86))
                #expect(answer.headers[SigilV1.timestampField] == "1764547200")
                #expect(answer.headers[SigilV1.keyIDField]?.isEmpty == false)
                // The floor routes sign with a key of their own, never the server's response key.
                for path in ["/bench/floor/hmac", "/bench/floor/ecdsa"] {
                    var floor = TestRequest(.post, path, server: server, json: #"{"b":2,"a":1}"#)
                    floor.head.headerFields[SigilV1.nonceField] = "n-1"
                    let answer = try await floor.send(client)
                    #expect(answer.status == 200, "\(path): \(answer.text)")
                    #expect(answer.headers[SigilV1.signatureField]?.count == 86)
                    #expect(answer.headers[SigilV1.keyIDField] != server.prepared.responseKeyID)
                }
            }
        }
    }
}
