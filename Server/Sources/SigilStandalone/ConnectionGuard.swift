import Hummingbird
import HummingbirdCore
import HummingbirdHTTP2
import Logging
import Metrics
import NIOCore
import NIOSSL
import NIOTLS
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// What a TLS listener allows a connection before it is a request: the time to finish its handshake,
/// and how many may be open at once.
///
/// Hummingbird's timeouts start once HTTP is negotiated; a connection that opens and sends nothing
/// (or half a ClientHello) is otherwise kept for ever, and enough of them exhaust the file
/// descriptors so nobody can connect. These limits apply from the moment the connection is accepted.
public struct ConnectionLimits: Sendable, Hashable {
    /// From accepting a connection to its TLS handshake's end (default 10 s); then it is closed.
    public var handshake: TimeAmount = .seconds(10)
    /// Connections open at once (default 4,096, or fewer when the process may open fewer files). At
    /// the cap, a newcomer makes room by closing the connection longest in its TLS handshake; when
    /// every open connection finished its handshake, the newcomer is closed as it is accepted.
    public var maximumConnections = ConnectionLimits.defaultMaximum

    /// The defaults.
    public init() {}

    /// Creates limits.
    public init(handshake: TimeAmount, maximumConnections: Int) {
        self.handshake = handshake
        self.maximumConnections = maximumConnections
    }

    /// 4,096, or the process's soft limit on open files less 64 (for stores, logs and the upstream).
    public static var defaultMaximum: Int {
        var limit = rlimit()
        #if canImport(Glibc)
            let resource = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
        #else
            let resource = RLIMIT_NOFILE
        #endif
        guard getrlimit(resource, &limit) == 0 else { return 4096 }
        return max(16, min(4096, Int(clamping: limit.rlim_cur) - 64))
    }
}

extension HTTPServerBuilder {
    /// Hummingbird's HTTP/1.1 and HTTP/2 over TLS (ALPN), with ``ConnectionLimits`` applied before
    /// anything else: a connection over the cap is closed at once, and one whose TLS handshake has not
    /// ended within ``ConnectionLimits/handshake`` is closed then. Counted in
    /// `sigil_connections_refused_total`, `sigil_handshake_timeouts_total`, and the gauge
    /// `sigil_connections_open`.
    public static func sigilTLS(
        tlsConfiguration: TLSConfiguration,
        configuration: HTTP2UpgradeChannel.Configuration,
        limits: ConnectionLimits,
        metricsFactory: any MetricsFactory = MetricsSystem.factory
    ) -> HTTPServerBuilder {
        let census = ConnectionCensus(limits: limits, factory: metricsFactory)
        return HTTPServerBuilder { responder in
            GuardedChannel(
                inner: try HTTP2UpgradeChannel(
                    tlsConfiguration: tlsConfiguration, configuration: configuration, responder: responder),
                census: census)
        }
    }
}

/// The open connections of one listener, the ones still in their handshake (oldest first), and the
/// counters of those it closed.
final class ConnectionCensus: Sendable {
    let limits: ConnectionLimits
    let open = Atomic<Int>(0)
    /// Connections whose handshake has not ended, in the order they were accepted.
    private let pending = Mutex<(next: UInt64, channels: [UInt64: any Channel])>((0, [:]))
    let refused: Counter
    let evicted: Counter
    let handshakeTimeouts: Counter
    let gauge: Gauge

    init(limits: ConnectionLimits, factory: any MetricsFactory) {
        self.limits = limits
        refused = Counter(label: "sigil_connections_refused_total", factory: factory)
        evicted = Counter(label: "sigil_connections_evicted_total", factory: factory)
        handshakeTimeouts = Counter(label: "sigil_handshake_timeouts_total", factory: factory)
        gauge = Gauge(label: "sigil_connections_open", factory: factory)
    }

    /// Records `channel` as in its handshake; returns its ticket.
    func startHandshake(_ channel: any Channel) -> UInt64 {
        pending.withLock { state in
            defer { state.next += 1 }
            state.channels[state.next] = channel
            return state.next
        }
    }

    /// The handshake of `ticket` ended (or its connection closed).
    func endHandshake(_ ticket: UInt64) {
        _ = pending.withLock { $0.channels.removeValue(forKey: ticket) }
    }

    /// Closes the connection longest in its handshake, to make room for a newcomer at the cap: a
    /// flood of connections that never finish a handshake then pushes out its own oldest, not the
    /// clients that do finish (theirs take milliseconds). Returns whether there was one.
    func evictOldestHandshake() -> Bool {
        let oldest = pending.withLock { state -> (any Channel)? in
            guard let ticket = state.channels.keys.min() else { return nil }
            return state.channels.removeValue(forKey: ticket)
        }
        guard let oldest else { return false }
        evicted.increment()
        oldest.close(promise: nil)
        return true
    }
}

/// A child channel that puts a ``HandshakeGuard`` right behind the TLS handler its inner channel adds.
struct GuardedChannel<Inner: ServerChildChannel>: ServerChildChannel {
    typealias Value = Inner.Value
    let inner: Inner
    let census: ConnectionCensus

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Value> {
        // Called on the channel's event loop before anything is read: the TLS handler the inner setup
        // adds synchronously is in the pipeline when the guard goes in behind it.
        let future = inner.setup(channel: channel, logger: logger)
        do {
            let handshakeGuard = HandshakeGuard(census: census)
            let tls = try channel.pipeline.syncOperations.handler(type: NIOSSLServerHandler.self)
            try channel.pipeline.syncOperations.addHandler(handshakeGuard, position: .after(tls))
        } catch {
            channel.close(promise: nil)
            return channel.eventLoop.makeFailedFuture(error)
        }
        return future
    }

    func handle(value: Value, logger: Logger) async {
        await inner.handle(value: value, logger: logger)
    }
}

/// Counts its connection against the cap (at the cap, the connection longest in its handshake is
/// closed to make room, or, when every connection finished its handshake, this one), and closes it
/// when the TLS handshake has not completed in time.
final class HandshakeGuard: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = NIOAny

    let census: ConnectionCensus
    private var counted = false
    private var admitted = false
    private var ticket: UInt64?
    private var deadline: Scheduled<Void>?

    init(census: ConnectionCensus) { self.census = census }

    func handlerAdded(context: ChannelHandlerContext) {
        // An accepted connection is active already; otherwise it is admitted when it becomes so.
        if context.channel.isActive { admit(context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        if !admitted { admit(context) }
        context.fireChannelActive()
    }

    /// Counts the connection, closes it when over the cap, and starts the handshake's deadline.
    private func admit(_ context: ChannelHandlerContext) {
        admitted = true
        let open = census.open.add(1, ordering: .relaxed).newValue
        counted = true
        census.gauge.record(open)
        // At the cap, the connection longest in its handshake makes room; with none, the newcomer goes.
        if open > census.limits.maximumConnections && !census.evictOldestHandshake() {
            census.refused.increment()
            context.close(promise: nil)
            return
        }
        ticket = census.startHandshake(context.channel)
        let census = census
        deadline = context.eventLoop.assumeIsolated().scheduleTask(in: census.limits.handshake) { [context] in
            census.handshakeTimeouts.increment()
            context.close(promise: nil)
        }
    }

    func handlerRemoved(context: ChannelHandlerContext) { release() }

    func channelInactive(context: ChannelHandlerContext) {
        release()
        context.fireChannelInactive()
    }

    private func endHandshake() {
        if let ticket { census.endHandshake(ticket) }
        ticket = nil
    }

    /// Stops the deadline and gives the connection's slot back, once.
    private func release() {
        deadline?.cancel()
        deadline = nil
        endHandshake()
        guard counted else { return }
        counted = false
        census.gauge.record(census.open.subtract(1, ordering: .relaxed).newValue)
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case .handshakeCompleted = event as? TLSUserEvent {
            deadline?.cancel()
            deadline = nil
            endHandshake()
        }
        context.fireUserInboundEventTriggered(event)
    }
}
