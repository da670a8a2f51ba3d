import Foundation
import Logging
import NIOCore
import NIOPosix
import NIOSSL
import SigilCore
import SigilServer
import Synchronization

/// A small Redis client on SwiftNIO with what Sigil's nonce store needs and nothing more: RESP2,
/// a pool of pipelined connections, AUTH and SELECT, optional TLS, a deadline on every command, and
/// reconnection with backoff. A maintained client (valkey-swift) would replace it where available.
///
/// Commands on one connection are pipelined: each is written as it comes, replies are matched in
/// order, and writes made in one event-loop tick are flushed together.
public final class RedisClient: Sendable {
    /// Where the server is, and how to reach it.
    public struct Location: Sendable, CustomStringConvertible {
        public var host: String
        public var port: Int
        public var username: String?
        public var password: String?
        public var database: Int
        public var tls: Bool
        /// `host:port/database`, for logs and errors: never the password.
        public var description: String { "\(host):\(port)/\(database)" }

        /// Parses `redis://[[user]:password@]host[:port][/database]` (`rediss://` for TLS).
        ///
        /// - Parameter password: the password, when it is not in the URL (from the environment or a file).
        public init(url: String, password: String? = nil) throws {
            guard let components = URLComponents(string: url), let scheme = components.scheme,
                scheme == "redis" || scheme == "rediss", let host = components.host, !host.isEmpty
            else {
                throw SigilInputError("the Redis URL must look like redis://[:password@]host:port[/database]")
            }
            self.host = host
            self.port = components.port ?? 6379
            let user = components.user.flatMap { $0.removingPercentEncoding }
            self.username = user?.isEmpty == false ? user : nil
            self.password = password ?? components.password.flatMap { $0.removingPercentEncoding }
            let path = components.path.drop { $0 == "/" }
            guard let database = path.isEmpty ? 0 : Int(path), database >= 0 else {
                throw SigilInputError("the Redis database must be a number")
            }
            self.database = database
            self.tls = scheme == "rediss"
        }
    }

    public let location: Location
    /// The deadline of each command (and of connecting).
    public let timeout: Duration
    private let group: any EventLoopGroup
    private let slots: [SlotBox]
    private let next = Atomic<Int>(0)
    private let sslContext: NIOSSLContext?
    private let logger: Logger
    /// Called with each new connection before it is used (the nonce store's data-loss check).
    private let onConnect: @Sendable (RedisConnection) async throws -> Void

    final class SlotBox: Sendable {
        let state = Mutex(Slot())
    }

    /// One pooled connection: open, being opened, or waiting out its backoff.
    struct Slot: Sendable {
        var connection: RedisConnection?
        var connecting: EventLoopFuture<RedisConnection>?
        var retryAt: ContinuousClock.Instant?
        var failures = 0
    }

    /// Creates a client; connections open on first use.
    ///
    /// - Parameter connections: how many connections commands are spread over.
    public init(
        _ location: Location,
        connections: Int = 4,
        timeout: Duration = .seconds(2),
        group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
        logger: Logger = Logger(label: "sigil.redis"),
        onConnect: @escaping @Sendable (RedisConnection) async throws -> Void = { _ in }
    ) throws {
        self.location = location
        self.timeout = timeout
        self.group = group
        self.logger = logger
        self.onConnect = onConnect
        self.slots = (0..<max(1, connections)).map { _ in SlotBox() }
        if location.tls {
            sslContext = try NIOSSLContext(configuration: .makeClientConfiguration())
        } else {
            sslContext = nil
        }
    }

    /// Closes every connection; commands after this reconnect.
    public func close() {
        for slot in slots {
            let connection = slot.state.withLock { slot -> RedisConnection? in
                defer { slot = Slot() }
                return slot.connection
            }
            connection?.channel.close(promise: nil)
        }
    }

    /// Sends one command; a reply of type error is returned as `.error`, not thrown.
    ///
    /// - Throws: `store-unavailable` when no connection can be had, or no reply comes in time.
    public func send(_ arguments: [String]) async throws -> RESPValue {
        let failure = SigilError(.storeUnavailable, "Redis did not answer in time")
        do {
            return try await withStoreDeadline(timeout, failure) {
                try await self.connection().send(arguments).get()
            }
        } catch let error as SigilError {
            throw error
        } catch is CancellationError {
            throw CancellationError()
        } catch {
            logger.error("Redis failed", metadata: ["store": "\(location)", "error": "\(type(of: error))"])
            throw SigilError(.storeUnavailable, "Redis did not answer")
        }
    }

    /// A connection from the pool, opened if needed (at most one attempt at a time per slot, none
    /// during a backoff after a failure).
    func connection() async throws -> RedisConnection {
        let index = Int(UInt(bitPattern: next.add(1, ordering: .relaxed).oldValue) % UInt(slots.count))
        let box = slots[index]
        enum Next {
            case ready(RedisConnection)
            case wait(EventLoopFuture<RedisConnection>)
            case backingOff
            case open
        }
        let now = ContinuousClock.now
        let next = box.state.withLock { slot -> Next in
            if let connection = slot.connection, connection.channel.isActive { return .ready(connection) }
            slot.connection = nil
            if let connecting = slot.connecting { return .wait(connecting) }
            if let retryAt = slot.retryAt, now < retryAt { return .backingOff }
            return .open
        }
        switch next {
        case .ready(let connection): return connection
        case .wait(let future): return try await future.get()
        case .backingOff: throw SigilError(.storeUnavailable, "Redis is unreachable; retrying shortly")
        case .open: break
        }
        let promise = group.next().makePromise(of: RedisConnection.self)
        let won = box.state.withLock { slot -> EventLoopFuture<RedisConnection>? in
            if let connecting = slot.connecting { return connecting }
            slot.connecting = promise.futureResult
            return nil
        }
        if let won {
            promise.fail(CancellationError())
            return try await won.get()
        }
        do {
            let connection = try await open()
            box.state.withLock { slot in
                slot.connection = connection
                slot.connecting = nil
                slot.retryAt = nil
                slot.failures = 0
            }
            promise.succeed(connection)
            return connection
        } catch {
            box.state.withLock { slot in
                slot.connecting = nil
                slot.failures += 1
                // 50 ms, doubling, at most 1 s: a restarted server is found again within a second.
                let delay = min(50 << min(slot.failures - 1, 5), 1000)
                slot.retryAt = ContinuousClock.now + .milliseconds(delay)
            }
            promise.fail(error)
            throw error
        }
    }

    /// Connects, then authenticates and selects the database.
    private func open() async throws -> RedisConnection {
        let sslContext = self.sslContext
        let host = location.host
        let bootstrap = ClientBootstrap(group: group)
            .connectTimeout(.milliseconds(Int64(timeout / .milliseconds(1))))
            .channelOption(.socketOption(.tcp_nodelay), value: 1)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    if let sslContext {
                        let handler = try NIOSSLClientHandler(context: sslContext, serverHostname: host)
                        try channel.pipeline.syncOperations.addHandler(handler)
                    }
                    try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(RESPDecoder()))
                    try channel.pipeline.syncOperations.addHandler(RESPHandler())
                }
            }
        let channel = try await bootstrap.connect(host: location.host, port: location.port).get()
        let connection = RedisConnection(channel: channel)
        do {
            try await withStoreDeadline(timeout, SigilError(.storeUnavailable, "Redis did not answer in time")) {
                try await self.handshake(connection)
            }
        } catch {
            channel.close(promise: nil)
            throw error
        }
        return connection
    }

    /// AUTH, SELECT and the caller's check, on a new connection.
    private func handshake(_ connection: RedisConnection) async throws {
        if let password = location.password {
            let reply = try await connection.send(["AUTH"] + (location.username.map { [$0] } ?? []) + [password])
                .get()
            guard reply == .simpleString("OK") else {
                throw SigilError(.storeUnavailable, "Redis refused the credentials")
            }
        }
        if location.database != 0 {
            let reply = try await connection.send(["SELECT", String(location.database)]).get()
            guard reply == .simpleString("OK") else {
                throw SigilError(.storeUnavailable, "Redis refused the database")
            }
        }
        try await onConnect(connection)
    }
}

/// One connection: commands written in order, replies matched in order.
public final class RedisConnection: Sendable {
    let channel: any Channel

    init(channel: any Channel) { self.channel = channel }

    /// Writes a command; the future completes with its reply, or fails when the connection closes first.
    public func send(_ arguments: [String]) -> EventLoopFuture<RESPValue> {
        let promise = channel.eventLoop.makePromise(of: RESPValue.self)
        var buffer = channel.allocator.buffer(capacity: 64)
        RESPEncoder.encode(arguments, into: &buffer)
        let written = channel.eventLoop.makePromise(of: Void.self)
        written.futureResult.whenFailure { promise.fail($0) }
        // The handler flushes once per event-loop tick, after the writes that tick.
        channel.write(RESPHandler.Request(command: buffer, reply: promise), promise: written)
        return promise.futureResult
    }
}

/// Keeps the replies owed, in order; a closed or failed connection fails them all.
final class RESPHandler: ChannelDuplexHandler {
    typealias InboundIn = RESPValue
    typealias OutboundIn = Request
    typealias OutboundOut = ByteBuffer

    struct Request {
        let command: ByteBuffer
        let reply: EventLoopPromise<RESPValue>
    }

    private var owed = CircularBuffer<EventLoopPromise<RESPValue>>()
    private var flushScheduled = false

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        let request = unwrapOutboundIn(data)
        owed.append(request.reply)
        // A write that fails would leave its reply owed and shift every later reply by one: close.
        let written = context.eventLoop.makePromise(of: Void.self)
        if let promise { written.futureResult.cascade(to: promise) }
        let loopBound = NIOLoopBound(context, eventLoop: context.eventLoop)
        written.futureResult.whenFailure { _ in loopBound.value.close(promise: nil) }
        context.write(wrapOutboundOut(request.command), promise: written)
        // Writes run in the order they were made; a flush queued now runs after every write queued
        // before it, so one flush per tick covers them all, and a later write queues its own.
        guard !flushScheduled else { return }
        flushScheduled = true
        context.eventLoop.assumeIsolated().execute {
            self.flushScheduled = false
            context.flush()
        }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let value = unwrapInboundIn(data)
        guard let reply = owed.popFirst() else {
            // A reply nobody asked for: the stream cannot be trusted.
            context.close(promise: nil)
            return
        }
        reply.succeed(value)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        failAll(error)
        context.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        failAll(ChannelError.ioOnClosedChannel)
        context.fireChannelInactive()
    }

    private func failAll(_ error: any Error) {
        while let reply = owed.popFirst() { reply.fail(error) }
    }
}
