import Logging
import ServiceLifecycle
import SigilCore
import SigilServer
import Synchronization

/// A ``NonceStore`` on Redis, shared by every replica: `SET sigil:nonce:<key ID>:<nonce> 1 NX EXAT
/// <expiry>`, so each pair is set once and Redis drops it when its timestamp can no longer be
/// accepted (PROTOCOL.md section 2.6). Key IDs and nonces are `[A-Za-z0-9._~-]`, so the `:`
/// separator is unambiguous.
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
        let candidate = Hex.random(bytes: 16)
        _ = try await connection.send(["SET", markerKey, candidate, "NX"]).get()
        guard case .bulkString(let bytes?) = try await connection.send(["GET", markerKey]).get() else {
            throw SigilError(.storeUnavailable, "Redis did not keep the marker key")
        }
        let current = String(decoding: bytes, as: UTF8.self)
        let now = state.clock.now()
        let lost = state.marker.withLock { marker -> Bool in
            defer { marker.value = current }
            guard let seen = marker.value, seen != current else { return false }
            marker.oldest = max(marker.oldest ?? now + 1, now + 1)
            return true
        }
        if lost {
            logger.critical(
                "Redis lost its data (the nonce marker changed): requests dated before now are refused")
        }
    }

    /// `nil` unless Redis was seen to lose its data: then the second after that was noticed.
    public var oldestAcceptableTimestamp: Int64? { state.marker.withLock { $0.oldest } }

    public func insert(keyID: String, nonce: String, timestamp: Int64, expiresAt: Int64, now: Int64) async throws
        -> Bool
    {
        let reply = try await client.send([
            "SET", "sigil:nonce:\(keyID):\(nonce)", "1", "NX", "EXAT", String(expiresAt),
        ])
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
