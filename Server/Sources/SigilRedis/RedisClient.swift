import Foundation
import Logging
import NIOCore
import NIOPosix
import NIOSSL
@_spi(Sigil) import SigilCore
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
        /// Whether a cleartext `redis://` link to a host off loopback is accepted (a private link the
        /// operator vouches for); without it such a location is refused: nonces, and the password,
        /// would cross the network in the clear, and anyone on the path could answer as Redis.
        public var trustsCleartextLink = false
        /// Whether the host is loopback (`localhost`, `127.0.0.0/8`, `::1`).
        public var isLoopback: Bool {
            let host = host.lowercased()
            if host == "localhost" || host == "::1" || host == "[::1]" { return true }
            // An IPv4 literal in 127.0.0.0/8: four decimal numbers, not a name such as 127.evil.example.
            let parts = host.split(separator: ".", omittingEmptySubsequences: false)
            return parts.count == 4 && parts[0] == "127"
                && parts.allSatisfy { part in
                    !part.isEmpty && part.count <= 3 && part.allSatisfy(\.isASCII) && part.allSatisfy(\.isNumber)
                        && (Int(part) ?? 256) <= 255
                }
        }
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

        /// The slot's connection when it is open.
        var ready: RedisConnection? {
            state.withLock { slot in slot.connection.flatMap { $0.channel.isActive ? $0 : nil } }
        }
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
        guard location.tls || location.isLoopback || location.trustsCleartextLink else {
            throw SigilInputError(
                "redis:// to \(location.host) is cleartext off loopback: use rediss://, or say the link is trusted")
        }
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
    /// On an open connection the command is queued at once and its deadline is kept by the connection
    /// (a reply overdue closes it); only opening a connection runs under a separate deadline.
    ///
    /// - Throws: `store-unavailable` when no connection can be had, or no reply comes in time.
    public func send(_ arguments: [String]) async throws -> RESPValue {
        let index = Int(UInt(bitPattern: next.add(1, ordering: .relaxed).oldValue) % UInt(slots.count))
        do {
            if let connection = slots[index].ready {
                return try await connection.send(arguments)
            }
            let failure = SigilError(.storeUnavailable, "Redis did not answer in time")
            return try await withDeadline(timeout, failure) {
                try await self.connection(index).send(arguments)
            }
        } catch let error as SigilError {
            throw error
        } catch is CancellationError {
            throw CancellationError()
        } catch is RedisTimeout {
            // Logged once by the connection that timed out, not once per request it owed.
            throw SigilError(.storeUnavailable, "Redis did not answer in time")
        } catch {
            logger.debug("Redis failed", metadata: ["store": "\(location)", "error": "\(type(of: error))"])
            throw SigilError(.storeUnavailable, "Redis did not answer")
        }
    }

    /// The connection of slot `index`, opened if needed (at most one attempt at a time per slot,
    /// none during a backoff after a failure).
    func connection(_ index: Int) async throws -> RedisConnection {
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
        // Opened in a task of its own, bounded by its own deadlines: a caller whose deadline passes
        // first does not cancel it, so a slow server still gets its connection back.
        let opening = Task { () throws -> RedisConnection in
            do {
                let connection = try await self.open()
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
                // Once per attempt (attempts are spaced by the backoff), not once per refused request.
                self.logger.error(
                    "Redis could not be reached",
                    metadata: ["store": "\(self.location)", "error": "\(type(of: error))"])
                promise.fail(error)
                throw error
            }
        }
        return try await opening.value
    }

    /// Connects, then authenticates and selects the database.
    private func open() async throws -> RedisConnection {
        let sslContext = self.sslContext
        let host = location.host
        let replyTimeout = TimeAmount.nanoseconds(Int64(timeout / .nanoseconds(1)))
        let logger = self.logger
        let description = location.description
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
                    try channel.pipeline.syncOperations.addHandler(
                        RESPHandler(timeout: replyTimeout, logger: logger, location: description))
                }
            }
        let channel = try await bootstrap.connect(host: location.host, port: location.port).get()
        let connection: RedisConnection
        do {
            connection = try await channel.eventLoop.submit {
                RedisConnection(
                    channel: channel, handler: try channel.pipeline.syncOperations.handler(type: RESPHandler.self))
            }.get()
        } catch {
            channel.close(promise: nil)
            throw error
        }
        do {
            try await withDeadline(timeout, SigilError(.storeUnavailable, "Redis did not answer in time")) {
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
            guard reply == .simpleString("OK") else {
                throw SigilError(.storeUnavailable, "Redis refused the credentials")
            }
        }
        if location.database != 0 {
            let reply = try await connection.send(["SELECT", String(location.database)])
            guard reply == .simpleString("OK") else {
                throw SigilError(.storeUnavailable, "Redis refused the database")
            }
        }
        try await onConnect(connection)
    }
}

/// A reply that did not come within the deadline: the connection is closed.
struct RedisTimeout: Error {}

/// One connection: commands written in order, replies matched in order.
///
/// Commands from any thread are gathered in an inbox; one event-loop task per batch encodes them
/// all into one write, so a burst of concurrent commands costs one hop to the event loop and one
/// system call, as a pipelining client's would.
public final class RedisConnection: Sendable {
    let channel: any Channel
    private let handler: NIOLoopBound<RESPHandler>
    private let inbox = Mutex(Inbox())

    struct Inbox {
        var commands: [RESPHandler.Command] = []
        var drainScheduled = false
    }

    init(channel: any Channel, handler: RESPHandler) {
        self.channel = channel
        self.handler = NIOLoopBound(handler, eventLoop: channel.eventLoop)
    }

    /// Sends a command and waits for its reply; fails when the connection closes first or the reply
    /// is late.
    public func send(_ arguments: [String]) async throws -> RESPValue {
        try await withCheckedThrowingContinuation { continuation in
            let schedule = inbox.withLock { inbox -> Bool in
                inbox.commands.append(RESPHandler.Command(arguments: arguments, reply: continuation))
                defer { inbox.drainScheduled = true }
                return !inbox.drainScheduled
            }
            if schedule { channel.eventLoop.execute { self.drain() } }
            // An event loop that has shut down drops its tasks silently, its channels closed first:
            // fail what a drain would have taken (the drain and this take each command at most once).
            if !channel.isActive { failInbox(ChannelError.ioOnClosedChannel) }
        }
    }

    private func failInbox(_ error: any Error) {
        var commands: [RESPHandler.Command] = []
        inbox.withLock { inbox in swap(&commands, &inbox.commands) }
        for command in commands { command.reply.resume(throwing: error) }
    }

    /// On the event loop: hands every command gathered so far to the handler.
    private func drain() {
        var commands: [RESPHandler.Command] = []
        inbox.withLock { inbox in
            inbox.drainScheduled = false
            swap(&commands, &inbox.commands)
        }
        handler.value.send(commands)
    }
}

/// Encodes each batch of commands into one write, keeps the replies owed in order, and closes the
/// connection when the oldest is overdue; a closed or failed connection fails them all.
final class RESPHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = RESPValue
    typealias OutboundOut = ByteBuffer

    struct Command: Sendable {
        let arguments: [String]
        let reply: CheckedContinuation<RESPValue, any Error>
    }

    private let timeout: TimeAmount
    private let logger: Logger
    private let location: String
    private var owed = CircularBuffer<(reply: CheckedContinuation<RESPValue, any Error>, deadline: NIODeadline)>()
    private var context: ChannelHandlerContext?
    private var buffer = ByteBuffer()
    private var timer: Scheduled<Void>?

    init(timeout: TimeAmount, logger: Logger, location: String) {
        self.timeout = timeout
        self.logger = logger
        self.location = location
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
        buffer = context.channel.allocator.buffer(capacity: 1024)
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
        timer?.cancel()
        failAll(ChannelError.ioOnClosedChannel)
    }

    /// Encodes the commands in order and writes them at once.
    func send(_ commands: [Command]) {
        guard let context, context.channel.isActive else {
            for command in commands { command.reply.resume(throwing: ChannelError.ioOnClosedChannel) }
            return
        }
        let deadline = NIODeadline.now() + timeout
        for command in commands {
            owed.append((command.reply, deadline))
            RESPEncoder.encode(command.arguments, into: &buffer)
        }
        if timer == nil { arm(at: deadline, context) }
        // A write that fails would leave its replies owed: close, which fails them.
        let written = context.eventLoop.makePromise(of: Void.self)
        let loopBound = NIOLoopBound(context, eventLoop: context.eventLoop)
        written.futureResult.whenFailure { _ in loopBound.value.close(promise: nil) }
        context.writeAndFlush(wrapOutboundOut(buffer), promise: written)
        buffer.clear()
    }

    /// Checks the oldest reply owed at its deadline: overdue, the connection is closed.
    private func arm(at deadline: NIODeadline, _ context: ChannelHandlerContext) {
        timer = context.eventLoop.assumeIsolated().scheduleTask(deadline: deadline) {
            self.timer = nil
            guard let oldest = self.owed.first, let context = self.context else { return }
            if oldest.deadline <= .now() {
                self.logger.error(
                    "Redis did not answer in time: connection closed",
                    metadata: ["store": "\(self.location)", "owed": "\(self.owed.count)"])
                self.failAll(RedisTimeout())
                context.close(promise: nil)
            } else {
                self.arm(at: oldest.deadline, context)
            }
        }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let value = unwrapInboundIn(data)
        guard let owed = owed.popFirst() else {
            // A reply nobody asked for: the stream cannot be trusted.
            context.close(promise: nil)
            return
        }
        owed.reply.resume(returning: value)
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
        while let owed = owed.popFirst() { owed.reply.resume(throwing: error) }
    }
}
