import Logging
import ServiceLifecycle
@_spi(Sigil) import SigilCore
import SigilServer
import Synchronization

/// A ``NonceStore`` on Redis, shared by every replica: `SET sigil:nonce:<key ID>:<nonce> 1 NX EX
/// <seconds left>`, so each pair is set once and Redis drops it when its timestamp can no longer be
/// accepted (PROTOCOL.md section 2.6). The expiry is sent relative (`EX expiresAt - now`), so a
/// Redis clock that differs from the servers' shortens no retention. Key IDs and nonces are
/// `[A-Za-z0-9._~-]`, so the `:` separator is unambiguous.
///
/// Run Redis with `maxmemory-policy noeviction` (checked at each connection, by `CONFIG GET` or, where
/// that is refused, `INFO memory`: a policy that may evict keys, or none that can be read, is refused). A marker key catches a restart that lost the data, and a process that finds no
/// marker at all treats the store as emptied; a `FLUSHALL` on live connections or a failover to a
/// replica that lagged is not caught: use persistence and `min-replicas-to-write` where it matters.
///
/// Redis keeps data in memory: run it with `appendonly yes` and `appendfsync always` so a restart
/// forgets no nonce. In case it does anyway (no persistence, `FLUSHALL`, a failover to a replica that
/// lagged), the store keeps a marker key: when a new connection finds the marker gone or replaced,
/// the data was lost, and requests dated at or before that moment are refused from then on
/// (`timestamp-out-of-window`, so clients re-sync and retry), as a restarted in-memory store does.
public final class RedisNonceStore: NonceStore {
    /// The client; close it when the server stops.
    public let client: RedisClient
    private let state: Shared

    final class Shared: Sendable {
        /// The marker value this store last saw, and the time before which requests are refused.
        let marker = Mutex<(value: String?, oldest: Int64?)>((nil, nil))
        let clock: any UnixClock
        init(clock: any UnixClock) { self.clock = clock }
    }

    static let markerKey = "sigil:epoch"

    /// Creates the store; connections open on first use.
    public init(
        _ location: RedisClient.Location,
        connections: Int = 4,
        timeout: Duration = .seconds(2),
        clock: any UnixClock = SystemUnixClock(),
        logger: Logger = Logger(label: "sigil.redis")
    ) throws {
        let state = Shared(clock: clock)
        self.state = state
        client = try RedisClient(location, connections: connections, timeout: timeout, logger: logger) { connection in
            try await Self.checkMarker(on: connection, state: state, logger: logger)
        }
    }

    /// Checks that the marker is the one seen before; sets one when there is none.
    static func checkMarker(on connection: RedisConnection, state: Shared, logger: Logger) async throws {
        let policy = try await evictionPolicy(on: connection)
        guard policy == "noeviction" else {
            throw SigilError(
                .storeUnavailable,
                policy.map { "Redis may evict nonces (maxmemory-policy is \($0.prefix(40)), not noeviction)" }
                    ?? "Redis does not say its maxmemory-policy (neither CONFIG GET nor INFO memory): it may evict nonces"
            )
        }
        let candidate = Hex.random(bytes: 16)
        // Set only where there was none: the store was new or emptied, and remembers nothing from before.
        let created = try await connection.send(["SET", markerKey, candidate, "NX"]) == .simpleString("OK")
        guard case .bulkString(let bytes?) = try await connection.send(["GET", markerKey]) else {
            throw SigilError(.storeUnavailable, "Redis did not keep the marker key")
        }
        let current = String(decoding: bytes, as: UTF8.self)
        let now = state.clock.now()
        let lost = state.marker.withLock { marker -> Bool in
            defer { marker.value = current }
            let replaced = marker.value.map { $0 != current } ?? false
            guard created || replaced else { return false }
            marker.oldest = max(marker.oldest ?? now + 1, now + 1)
            return replaced
        }
        if lost {
            logger.critical(
                "Redis lost its data (the nonce marker changed): requests dated before now are refused")
        }
    }

    /// The server's `maxmemory-policy`: from `CONFIG GET`, or, where `CONFIG` is refused (managed
    /// services rename or disable it), from the `maxmemory_policy` line of `INFO memory`; `nil` when
    /// neither says, which the caller refuses like any policy but `noeviction`.
    static func evictionPolicy(on connection: RedisConnection) async throws -> String? {
        if case .array(let pair?) = try await connection.send(["CONFIG", "GET", "maxmemory-policy"]), pair.count == 2,
            case .bulkString(let value?) = pair[1]
        {
            return String(decoding: value, as: UTF8.self)
        }
        guard case .bulkString(let info?) = try await connection.send(["INFO", "memory"]) else { return nil }
        return Self.evictionPolicy(info: String(decoding: info, as: UTF8.self))
    }

    /// The `maxmemory_policy` of an `INFO` reply.
    static func evictionPolicy(info: String) -> String? {
        for line in info.split(whereSeparator: \.isNewline) where line.hasPrefix("maxmemory_policy:") {
            return String(line.dropFirst("maxmemory_policy:".count))
        }
        return nil
    }

    /// Connects now, so the marker is checked at start: a store this process finds without a marker
    /// (new, or emptied) refuses requests dated before this moment, as a restarted in-memory store
    /// does; without this call, the first request's connection does it.
    public func connect() async throws {
        _ = try await client.send(["PING"])
    }

    /// `nil` unless Redis was found new or emptied, or to have lost its data: then the second after.
    public var oldestAcceptableTimestamp: Int64? { state.marker.withLock { $0.oldest } }

    public func insert(keyID: String, nonce: String, timestamp: Int64, expiresAt: Int64, now: Int64) async throws
        -> Bool
    {
        let reply = try await client.send([
            "SET", "sigil:nonce:\(keyID):\(nonce)", "1", "NX", "EX", String(max(1, expiresAt - now)),
        ])
        // The connection that answered may have just found the data lost: a request dated before that
        // is refused (``record(keyID:nonce:timestamp:expiresAt:now:)`` says so as the horizon), even
        // though its nonce was new to the emptied store.
        if let oldest = oldestAcceptableTimestamp, timestamp < oldest { return false }
        switch reply {
        case .simpleString("OK"): return true
        case .bulkString(nil): return false
        default: throw SigilError(.storeUnavailable, "Redis refused to record the nonce")
        }
    }
}

extension RedisNonceStore: Service {
    /// Waits for the service group's graceful shutdown (or cancellation), then closes the connections.
    public func run() async throws {
        try? await gracefulShutdown()
        client.close()
    }
}
