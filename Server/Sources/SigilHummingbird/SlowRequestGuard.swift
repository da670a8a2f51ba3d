import HTTPTypes
import Hummingbird
import HummingbirdCore
import Metrics
import NIOCore
import NIOHTTPTypes
@_spi(Sigil) import SigilCore
import SigilServer

/// How long a client may take to send a request (a slow client ties up a connection, and a request
/// that stalls must not be trusted when it finally ends).
public struct RequestTimeouts: Sendable, Hashable {
    /// From the connection opening, or the previous response ending, to a complete request head; an
    /// idle keep-alive connection is closed by it too (default 10 s).
    public var header: TimeAmount = .seconds(10)
    /// The longest silence while the application waits for more of the body (default 30 s).
    public var bodyIdle: TimeAmount = .seconds(30)
    /// From the request head to the end of its body (default 60 s).
    public var request: TimeAmount = .seconds(60)

    /// The defaults: 10 s, 30 s, 60 s.
    public init() {}

    /// Creates limits.
    public init(header: TimeAmount, bodyIdle: TimeAmount, request: TimeAmount) {
        self.header = header
        self.bodyIdle = bodyIdle
        self.request = request
    }

    /// A Hummingbird HTTP/1.1 (and HTTP/2 stream) configuration that enforces these limits, counting
    /// each expiry in `sigil_request_timeouts_total{phase="header"|"body"|"request"}`.
    public func channelConfiguration(
        metricsFactory: any MetricsFactory = MetricsSystem.factory,
        clock: any UnixClock = SystemUnixClock()
    ) -> HTTP1Channel.Configuration {
        let counters = SlowRequestGuard.Counters(factory: metricsFactory)
        let timeouts = self
        return HTTP1Channel.Configuration(
            additionalChannelHandlers: [SlowRequestGuard(timeouts: timeouts, counters: counters, clock: clock)]
        )
    }
}

/// Enforces ``RequestTimeouts`` on one HTTP/1.1 connection or HTTP/2 stream, after HTTP decoding.
///
/// When the body is too slow and no response has started, it answers `408` with problem+json
/// (`request-timeout`), then closes; the request being read fails with that error, so its handler
/// never sees a truncated body as complete. A body still arriving after an early answer (a refusal
/// before the body ended) is held to the same limits while the server drains it, and the
/// connection is closed when it is too slow. A slow request head just closes the connection. Body
/// silence counts only while the application is asking for more, so a handler that reads slowly is
/// not taken for a slow client.
final class SlowRequestGuard: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    /// The phases a request can be too slow in.
    enum Phase: String, CaseIterable {
        case header, body, request
    }

    /// The expiry counters, made once per server.
    struct Counters: Sendable {
        let counters: [String: Counter]

        init(factory: any MetricsFactory) {
            var counters: [String: Counter] = [:]
            for phase in Phase.allCases {
                counters[phase.rawValue] = Counter(
                    label: "sigil_request_timeouts_total", dimensions: [("phase", phase.rawValue)], factory: factory)
            }
            self.counters = counters
        }

        func record(_ phase: Phase) { counters[phase.rawValue]?.increment() }
    }

    let timeouts: RequestTimeouts
    let counters: Counters
    let clock: any UnixClock
    private var headerTimer: Scheduled<Void>?
    private var bodyTimer: Scheduled<Void>?
    private var requestTimer: Scheduled<Void>?
    private var receivingBody = false
    private var responseStarted = false
    /// The whole answer went out before the request's body ended.
    private var answeredEarly = false
    private var readOutstanding = false
    private var expired = false

    init(timeouts: RequestTimeouts, counters: Counters, clock: any UnixClock) {
        self.timeouts = timeouts
        self.counters = counters
        self.clock = clock
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { armHeader(context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        armHeader(context)
        context.fireChannelActive()
    }

    func handlerRemoved(context: ChannelHandlerContext) { cancelAll() }

    func channelInactive(context: ChannelHandlerContext) {
        cancelAll()
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !expired else { return }
        readOutstanding = false
        switch Self.unwrapInboundIn(data) {
        case .head:
            headerTimer?.cancel()
            headerTimer = nil
            receivingBody = true
            responseStarted = false
            requestTimer = schedule(context, in: timeouts.request, .request)
            armBody(context)
        case .body:
            if receivingBody { armBody(context) }
        case .end:
            receivingBody = false
            cancelBody()
            if answeredEarly {
                // The exchange is over: the next request head is due.
                answeredEarly = false
                responseStarted = false
                armHeader(context)
            }
        }
        context.fireChannelRead(data)
    }

    func read(context: ChannelHandlerContext) {
        readOutstanding = true
        context.read()
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        guard !expired else {
            promise?.fail(ChannelError.ioOnClosedChannel)
            return
        }
        switch Self.unwrapOutboundIn(data) {
        case .head(let head) where head.status.kind != .informational:
            // Answered early (a refusal before the body ended): the rest of the body is still drained,
            // and still held to the limits.
            responseStarted = true
        case .end:
            context.write(data, promise: promise)
            // A request whose body is still arriving has its answer: an expiry now only closes.
            if receivingBody {
                answeredEarly = true
            } else {
                responseStarted = false
                armHeader(context)
            }
            return
        default:
            break
        }
        context.write(data, promise: promise)
    }

    // MARK: Timers

    private func armHeader(_ context: ChannelHandlerContext) {
        headerTimer?.cancel()
        headerTimer = schedule(context, in: timeouts.header, .header)
    }

    private func armBody(_ context: ChannelHandlerContext) {
        bodyTimer?.cancel()
        bodyTimer = schedule(context, in: timeouts.bodyIdle, .body)
    }

    private func cancelBody() {
        bodyTimer?.cancel()
        requestTimer?.cancel()
        bodyTimer = nil
        requestTimer = nil
    }

    private func cancelAll() {
        headerTimer?.cancel()
        headerTimer = nil
        cancelBody()
    }

    private func schedule(_ context: ChannelHandlerContext, in delay: TimeAmount, _ phase: Phase) -> Scheduled<Void> {
        context.eventLoop.assumeIsolatedUnsafeUnchecked().scheduleTask(in: delay) {
            self.expire(context, phase)
        }
    }

    private func expire(_ context: ChannelHandlerContext, _ phase: Phase) {
        guard !expired, context.channel.isActive else { return }
        if phase == .body && !readOutstanding {
            // The application is not asking for more: the client is not the slow one.
            armBody(context)
            return
        }
        expired = true
        cancelAll()
        counters.record(phase)
        guard phase != .header else {
            context.close(promise: nil)
            return
        }
        let error = SigilError(.requestTimeout, "the request \(phase == .body ? "body stalled" : "took too long")")
        // The request being read fails with the error instead of ending as if complete.
        context.fireErrorCaught(error)
        guard !responseStarted else {
            context.close(promise: nil)
            return
        }
        let body = Problem.body(for: error, serverTime: clock.now())
        var head = HTTPResponse(status: .requestTimeout)
        head.headerFields[.contentType] = Problem.contentType
        head.headerFields[.contentLength] = String(body.count)
        head.headerFields[.cacheControl] = "no-store"
        context.write(Self.wrapOutboundOut(.head(head)), promise: nil)
        context.write(Self.wrapOutboundOut(.body(ByteBuffer(bytes: body))), promise: nil)
        context.writeAndFlush(Self.wrapOutboundOut(.end(nil))).assumeIsolatedUnsafeUnchecked().whenComplete { _ in
            context.close(promise: nil)
        }
    }
}
