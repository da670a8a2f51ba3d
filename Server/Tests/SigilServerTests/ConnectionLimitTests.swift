import MetricsTestKit
import NIOCore
import NIOEmbedded
import NIOPosix
import NIOTLS
import Testing

@testable import SigilStandalone
@testable import SigilTestSupport

/// Connections that never finish a TLS handshake, and more connections than the cap: closed and
/// counted before Hummingbird's own timeouts (which start at HTTP) could apply.
@Suite("Connection limits")
struct ConnectionLimitTests {
    /// An active embedded channel with the guard of `census`.
    static func guarded(_ census: ConnectionCensus) throws -> EmbeddedChannel {
        let channel = EmbeddedChannel()
        try channel.pipeline.syncOperations.addHandler(HandshakeGuard(census: census))
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 1)).wait()
        return channel
    }

    @Test("a connection whose handshake has not ended in time is closed; one that finished is left alone")
    func handshakeDeadline() throws {
        let metrics = TestMetrics()
        let census = ConnectionCensus(
            limits: ConnectionLimits(handshake: .seconds(10), maximumConnections: 10), factory: metrics)
        let silent = try Self.guarded(census)
        let finished = try Self.guarded(census)
        finished.pipeline.fireUserInboundEventTriggered(TLSUserEvent.handshakeCompleted(negotiatedProtocol: "h2"))
        silent.embeddedEventLoop.advanceTime(by: .seconds(9))
        #expect(silent.isActive)
        silent.embeddedEventLoop.advanceTime(by: .seconds(1))
        #expect(!silent.isActive)
        finished.embeddedEventLoop.advanceTime(by: .seconds(60))
        #expect(finished.isActive)
        #expect(try metrics.expectCounter("sigil_handshake_timeouts_total").totalValue == 1)
        #expect(census.open.load(ordering: .relaxed) == 1)
        _ = try finished.finish()
        #expect(census.open.load(ordering: .relaxed) == 0)
    }

    @Test(
        "at the cap the connection longest in its handshake makes room; with every handshake finished, the newcomer is closed"
    )
    func cap() throws {
        let metrics = TestMetrics()
        let census = ConnectionCensus(
            limits: ConnectionLimits(handshake: .seconds(10), maximumConnections: 2), factory: metrics)
        // A flood that never finishes its handshake pushes out its own oldest, not the newcomer.
        let stalled = try Self.guarded(census)
        let client = try Self.guarded(census)
        let newcomer = try Self.guarded(census)
        #expect(!stalled.isActive)
        #expect(client.isActive && newcomer.isActive)
        #expect(try metrics.expectCounter("sigil_connections_evicted_total").totalValue == 1)
        #expect(census.open.load(ordering: .relaxed) == 2)
        // Every open connection finished its handshake: one more is closed as it is accepted.
        for channel in [client, newcomer] {
            channel.pipeline.fireUserInboundEventTriggered(TLSUserEvent.handshakeCompleted(negotiatedProtocol: "h2"))
        }
        let refused = try Self.guarded(census)
        #expect(!refused.isActive)
        #expect(client.isActive && newcomer.isActive)
        #expect(try metrics.expectCounter("sigil_connections_refused_total").totalValue == 1)
        #expect(census.open.load(ordering: .relaxed) == 2)
        _ = try client.finish()
        let next = try Self.guarded(census)
        #expect(next.isActive)
        #expect(census.open.load(ordering: .relaxed) == 2)
    }

    @Test("over real TLS: a TCP connection that sends nothing is closed at the deadline; TLS clients still connect")
    func silentConnectionOverTLS() async throws {
        try await TestServer.with(configure: {
            $0.connectionLimits = ConnectionLimits(handshake: .milliseconds(300), maximumConnections: 64)
        }) { server in
            let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                .connect(host: "127.0.0.1", port: server.port).get()
            // The server closes it: waiting on the close, bounded by a deadline of its own.
            let closed = try await withThrowingTaskGroup(of: Bool.self) { group in
                group.addTask {
                    try await channel.closeFuture.get()
                    return true
                }
                group.addTask {
                    try await Task.sleep(for: .seconds(10))
                    return false
                }
                let first = try await group.next() ?? false
                group.cancelAll()
                return first
            }
            if !closed { try await channel.close() }
            #expect(closed)
            try await server.client().using { client in
                let discovery = try await TestRequest(.get, "/.well-known/sigil", server: server).send(
                    client, to: server)
                #expect(discovery.status == 200)
            }
        }
    }
}
