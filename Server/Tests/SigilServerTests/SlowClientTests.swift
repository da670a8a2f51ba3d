import AsyncHTTPClient
import HTTPTypes
import MetricsTestKit
import NIOCore
import NIOEmbedded
import NIOHTTPTypes
@_spi(Sigil) import SigilCore
import SigilHummingbird
import Testing

@testable import SigilTestSupport

/// Slow clients: header, body-idle and whole-request limits, answered with 408 or a closed
/// connection and counted; on an embedded channel with virtual time, and once over real TLS.
@Suite("Slow clients")
struct SlowClientTests {
    /// An active embedded channel with the guard of `timeouts`, and its counters.
    static func guarded(_ timeouts: RequestTimeouts = RequestTimeouts()) throws -> (EmbeddedChannel, TestMetrics) {
        let metrics = TestMetrics()
        let handlers = timeouts.channelConfiguration(metricsFactory: metrics, clock: ManualUnixClock(1_000))
            .additionalChannelHandlers()
        let channel = EmbeddedChannel()
        try channel.pipeline.syncOperations.addHandlers(handlers)
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 1)).wait()
        return (channel, metrics)
    }

    static let head = HTTPRequestPart.head(
        HTTPRequest(method: .post, scheme: "https", authority: "localhost", path: "/v1/echo"))

    static func count(_ metrics: TestMetrics, _ phase: String) throws -> Int64 {
        try metrics.expectCounter("sigil_request_timeouts_total", [("phase", phase)]).totalValue
    }

    /// The response parts the guard wrote.
    static func written(_ channel: EmbeddedChannel) throws -> [HTTPResponsePart] {
        var parts: [HTTPResponsePart] = []
        while let part = try channel.readOutbound(as: HTTPResponsePart.self) { parts.append(part) }
        return parts
    }

    @Test("a request head that does not arrive in time closes the connection")
    func slowHeader() throws {
        let (channel, metrics) = try Self.guarded()
        channel.embeddedEventLoop.advanceTime(by: .seconds(9))
        #expect(channel.isActive)
        channel.embeddedEventLoop.advanceTime(by: .seconds(1))
        #expect(!channel.isActive)
        #expect(try Self.count(metrics, "header") == 1)
    }

    @Test("a stalled body gets 408 request-timeout and the request fails instead of ending")
    func stalledBody() throws {
        let (channel, metrics) = try Self.guarded()
        try channel.writeInbound(Self.head)
        try channel.writeInbound(HTTPRequestPart.body(ByteBuffer(string: "12345")))
        channel.read()  // the application asks for more
        channel.embeddedEventLoop.advanceTime(by: .seconds(30))
        #expect(throws: SigilError(.requestTimeout, "")) { try channel.throwIfErrorCaught() }
        let parts = try Self.written(channel)
        guard case .head(let response) = parts.first, case .body(let body) = parts.dropFirst().first else {
            Issue.record("no 408 written: \(parts)")
            return
        }
        #expect(response.status == .requestTimeout)
        #expect(response.headerFields[.contentType] == "application/problem+json")
        #expect(String(buffer: body).contains(#""code":"request-timeout""#))
        #expect(!channel.isActive)
        #expect(try Self.count(metrics, "body") == 1)
    }

    @Test("a handler that reads slowly is not taken for a slow client")
    func backpressureIsNotSlowness() throws {
        let (channel, metrics) = try Self.guarded()
        try channel.writeInbound(Self.head)
        channel.embeddedEventLoop.advanceTime(by: .seconds(45))  // nobody asked for the body yet
        #expect(channel.isActive)
        channel.read()
        channel.embeddedEventLoop.advanceTime(by: .seconds(14))
        #expect(channel.isActive)
        #expect(try Self.count(metrics, "body") == 0)
        channel.embeddedEventLoop.advanceTime(by: .seconds(1))  // 60 s since the head: the hard limit
        #expect(!channel.isActive)
        #expect(try Self.count(metrics, "request") == 1)
    }

    @Test("a body trickling in under the idle limit still meets the whole-request limit")
    func trickle() throws {
        let (channel, metrics) = try Self.guarded()
        try channel.writeInbound(Self.head)
        for _ in 0..<2 {
            channel.read()
            channel.embeddedEventLoop.advanceTime(by: .seconds(29))
            try channel.writeInbound(HTTPRequestPart.body(ByteBuffer(string: "x")))
        }
        #expect(channel.isActive)
        channel.read()
        channel.embeddedEventLoop.advanceTime(by: .seconds(2))
        #expect(!channel.isActive)
        #expect(try Self.count(metrics, "request") == 1)
        #expect(try Self.count(metrics, "body") == 0)
    }

    @Test("a complete request is never timed out while the server works on it")
    func complete() throws {
        let (channel, metrics) = try Self.guarded()
        try channel.writeInbound(Self.head)
        try channel.writeInbound(HTTPRequestPart.end(nil))
        channel.embeddedEventLoop.advanceTime(by: .seconds(120))
        #expect(channel.isActive)
        try channel.writeOutbound(HTTPResponsePart.head(HTTPResponse(status: .ok)))
        try channel.writeOutbound(HTTPResponsePart.end(nil))
        _ = try Self.written(channel)
        for phase in ["header", "body", "request"] { #expect(try Self.count(metrics, phase) == 0) }
    }

    @Test("a body still arriving after an early refusal is held to the limits while it is drained")
    func answeredEarly() throws {
        let (channel, metrics) = try Self.guarded()
        try channel.writeInbound(Self.head)
        try channel.writeOutbound(HTTPResponsePart.head(HTTPResponse(status: .unauthorized)))
        try channel.writeOutbound(HTTPResponsePart.end(nil))
        _ = try Self.written(channel)
        channel.read()  // the server drains what is left of the body
        channel.embeddedEventLoop.advanceTime(by: .seconds(30))
        #expect(!channel.isActive)
        #expect(try Self.written(channel).isEmpty)  // answered already: closed, no second response
        #expect(try Self.count(metrics, "body") == 1)
    }

    @Test("after an early answer, the end of the body starts the wait for the next request head")
    func nextHeadAfterAnEarlyAnswer() throws {
        let (channel, metrics) = try Self.guarded()
        try channel.writeInbound(Self.head)
        try channel.writeOutbound(HTTPResponsePart.head(HTTPResponse(status: .unauthorized)))
        try channel.writeOutbound(HTTPResponsePart.end(nil))
        try channel.writeInbound(HTTPRequestPart.end(nil))
        channel.embeddedEventLoop.advanceTime(by: .seconds(10))
        #expect(!channel.isActive)
        #expect(try Self.count(metrics, "header") == 1)
    }

    @Test("over TLS: a signed POST whose body stalls gets 408 request-timeout")
    func overTLS() async throws {
        try await TestServer.with(configure: {
            $0.timeouts = RequestTimeouts(header: .seconds(5), bodyIdle: .milliseconds(300), request: .seconds(5))
        }) { server in
            try await server.client().using { client in
                let device = try await DeviceSteps.registeredDevice(on: server, client: client)
                let (request, feed) = try StalledRequestTests.stalledEcho(
                    Array(#"{"slow":true}"#.utf8), signedBy: device, server: server)
                let response = try await client.execute(request, timeout: .seconds(10))
                let answer = try await response.body.collect(upTo: 1 << 16)
                feed.finish()
                #expect(response.status.code == 408)
                #expect(String(buffer: answer).contains("request-timeout"))
            }
        }
    }
}
