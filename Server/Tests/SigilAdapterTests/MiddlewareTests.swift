import AsyncHTTPClient
import Foundation
import HTTPTypes
import MetricsTestKit
import NIOCore
import NIOSSL
import SigilClient
@_spi(Sigil) import SigilCore
import SigilServer
import Synchronization
import Testing

@testable import SigilTestSupport

/// The Hummingbird middleware's behaviour at the edges: streamed bodies, refusals, HTTP versions, metrics.
@Suite("Middleware")
struct MiddlewareTests {

    @Test("the verifier stops reading a streamed body as soon as it passes the limit")
    func verifierStopsReading() async throws {
        var configuration = VerifierConfiguration()
        configuration.bodyLimit = 4096
        let setup = try await SigningSetup(.ed25519, configuration: configuration)
        var (request, _) = SigningSetup.jsonPost()
        try setup.signer(.sigilV1).sign(&request, body: [])
        let read = Tally()
        await #expect(throws: SigilError(.bodyTooLarge, "")) {
            _ = try await setup.verifier.verify(
                request, bodyChunks: CountedChunks(total: 1 << 20, tally: read).map { $0.readableBytesView })
        }
        #expect(read.count.load(ordering: .relaxed) == 5)
    }

    @Test("a body of unknown length over the limit is refused over TLS")
    func streamedBodyLimit() async throws {
        try await TestServer.with(configure: { $0.verifier.bodyLimit = 4096 }) { server in
            try await server.client().using { client in
                let device = try await DeviceSteps.registeredDevice(on: server, client: client)
                var head = TestRequest(.post, "/v1/echo", server: server).head
                try device.signer(clock: server.clock).sign(&head, body: [])
                var request = HTTPClientRequest(url: server.baseURL + "/v1/echo")
                request.method = .POST
                for field in head.headerFields { request.headers.add(name: field.name.rawName, value: field.value) }
                let produced = Tally()
                let chunks = 48
                let stream = CountedChunks(total: chunks, tally: produced)
                request.body = .stream(stream, length: .unknown)
                let response = try await client.execute(request, timeout: .seconds(30))
                let body = try await response.body.collect(upTo: 1 << 20)
                #expect(response.status.code == 413)
                #expect(String(buffer: body).contains("body-too-large"))
            }
        }
    }

    @Test("a declared Content-Length over the limit is refused")
    func declaredLength() async throws {
        try await TestServer.with(configure: { $0.verifier.bodyLimit = 4096 }) { server in
            try await server.client().using { client in
                let device = try await DeviceSteps.registeredDevice(on: server, client: client)
                var request = TestRequest(
                    .post, "/v1/echo", server: server, body: [UInt8](repeating: 0x61, count: 8192))
                try request.sign(with: device.signer(clock: server.clock))
                let response = try await request.send(client, to: server)
                #expect(response.status == 413)
                #expect(response.code == "body-too-large")
            }
        }
    }

    @Test("refusals: Accept-Signature unless sigil-v1 was used; the signature base only in debug mode")
    func refusals() async throws {
        try await TestServer.with(configure: { $0.includeSignatureBase = true }) { server in
            try await server.client().using { client in
                let unsigned = try await TestRequest(.post, "/v1/echo", server: server).send(client, to: server)
                #expect(unsigned.code == "missing-signature")
                #expect(unsigned.headers[MessageSignatures.acceptSignatureField]?.contains("content-digest") == true)
                #expect(unsigned.json["serverTime"] as? Int64 == server.clock.now())

                let device = try await DeviceSteps.registeredDevice(on: server, client: client)
                for profile in SignatureProfile.allCases {
                    var request = TestRequest(.post, "/v1/echo", server: server, json: #"{"a":1}"#)
                    try request.sign(with: device.signer(profile, clock: server.clock))
                    request.body = Array(#"{"a":2}"#.utf8)
                    if profile == .rfc9421 {
                        request.head.headerFields[MessageSignatures.contentDigestField] = ContentDigest.fieldValue(
                            for: request.body)
                    }
                    let response = try await request.send(client, to: server)
                    #expect(response.code == "invalid-signature", "\(profile)")
                    #expect(
                        (response.headers[MessageSignatures.acceptSignatureField] != nil) == (profile == .rfc9421))
                    let base = try #require(response.json["signatureBase"] as? String)
                    #expect(base.contains(profile == .sigilV1 ? "/v1/echo" : "\"@path\": /v1/echo"))
                }
            }
        }
        try await TestServer.with { server in
            try await server.client().using { client in
                let device = try await DeviceSteps.registeredDevice(on: server, client: client)
                var request = TestRequest(.post, "/v1/echo", server: server, json: #"{"a":1}"#)
                try request.sign(with: device.signer(clock: server.clock))
                request.body = Array(#"{"a":2}"#.utf8)
                #expect(try await request.send(client, to: server).json["signatureBase"] == nil)
            }
        }
    }

    @Test("HTTP/2 by default, HTTP/1.1 when the client asks for it")
    func httpVersions() async throws {
        try await TestServer.with { server in
            let device = try await server.client().using { client in
                try await DeviceSteps.registeredDevice(on: server, client: client)
            }
            let client = try server.client()
            try await client.shutdown()
            var configuration = HTTPClient.Configuration(
                tlsConfiguration: {
                    var tls = TLSConfiguration.makeClientConfiguration()
                    tls.trustRoots = .certificates(try! server.certificates)
                    return tls
                }())
            configuration.httpVersion = .http1Only
            try await HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration).using { client in
                let (echo, _, _) = try await DeviceSteps.echo(
                    "h1", signer: device.signer(clock: server.clock), server: server, client: client)
                #expect(echo.status == 200, "\(echo.text)")
                #expect(echo.version == .http1_1)
            }
        }
    }

    @Test("sigil serve --metrics serves the counters in Prometheus text")
    func prometheus() async throws {
        try await TestServer.with(configure: { $0.metrics = true }) { server in
            try await server.client().using { client in
                let device = try await DeviceSteps.registeredDevice(on: server, client: client)
                let (_, _, sent) = try await DeviceSteps.echo(
                    "counted", signer: device.signer(clock: server.clock), server: server, client: client)
                _ = try await sent.send(client, to: server)
                let metrics = try await TestRequest(.get, "/metrics", server: server).send(client, to: server)
                #expect(metrics.status == 200)
                // The registration's proof and the echo are valid; the replay is refused.
                #expect(metrics.text.contains(#"sigil_verifications_total{outcome="valid"} 2"#), "\(metrics.text)")
                #expect(metrics.text.contains(#"sigil_verifications_total{outcome="replayed-nonce"} 1"#))
            }
        }
    }

    @Test("verifications are counted by outcome")
    func metrics() async throws {
        let metrics = TestMetrics()
        let setup = try await SigningSetup(.ed25519)
        let verifier = RequestVerifier(
            keys: setup.directory, nonces: setup.store, clock: setup.clock, metricsFactory: metrics)
        var (request, body) = SigningSetup.jsonPost()
        try setup.signer(.sigilV1).sign(&request, body: body)
        _ = try await verifier.verify(request, body: body)
        await #expect(throws: SigilError(.replayedNonce, "")) { try await verifier.verify(request, body: body) }
        let label = "sigil_verifications_total"
        #expect(try metrics.expectCounter(label, [("outcome", "valid")]).totalValue == 1)
        #expect(try metrics.expectCounter(label, [("outcome", "replayed-nonce")]).totalValue == 1)
        #expect(try metrics.expectCounter(label, [("outcome", "invalid-signature")]).totalValue == 0)
    }
}

/// 1 KiB chunks, produced only as the reader asks for them, counted.
struct CountedChunks: AsyncSequence, Sendable {
    let total: Int
    let tally: Tally

    struct AsyncIterator: AsyncIteratorProtocol {
        let total: Int
        let tally: Tally

        mutating func next() async -> ByteBuffer? {
            guard tally.count.add(1, ordering: .relaxed).newValue <= total else { return nil }
            return ByteBuffer(repeating: 0x61, count: 1024)
        }
    }

    func makeAsyncIterator() -> AsyncIterator { AsyncIterator(total: total, tally: tally) }
}
