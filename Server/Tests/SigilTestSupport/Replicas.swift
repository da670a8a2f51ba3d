import AsyncHTTPClient
import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import NIOHTTP1
import NIOHTTP2
import NIOHTTPTypes
import NIOHTTPTypesHTTP2
import NIOPosix
import NIOSSL
import PostgresNIO
import SQLiteNIO
import SigilAppAttest
import SigilClient
@_spi(Sigil) import SigilCore
import SigilFiles
import SigilHTTPClient
import SigilHummingbird
import SigilJWT
import SigilPostgres
import SigilSQLite
import SigilServer
import SigilStandalone
import SigilTLS
import SigilTesting
import Synchronization
import Testing

/// Three sigil serve replicas on shared stores.
enum Replicas {
    enum Nonces: String, CaseIterable, CustomStringConvertible, Sendable {
        case postgres, redis
        var description: String { rawValue }
    }

    /// Three replicas on one data directory (the master key, TLS identity and response key they
    /// share), keys in PostgreSQL, nonces in PostgreSQL or Redis, one manual clock at the real time
    /// (Redis expires keys by its own clock).
    static func withReplicas(
        nonces: Nonces,
        storeTimeout: Duration = .seconds(10),
        configure more: @escaping @Sendable (inout SigilStandalone.Options) -> Void = { _ in },
        _ body: ([TestServer], PostgresTestServer, RedisTestServer?) async throws -> Void
    ) async throws {
        try await PostgresTestServer.with { postgres in
            let redis = nonces == .redis ? try await RedisTestServer.start() : nil
            defer { if let redis { Task { await redis.destroy() } } }
            let directory = TestServer.temporaryDirectory()
            let clock = ManualUnixClock(Int64(Date().timeIntervalSince1970))
            let configure: @Sendable (inout SigilStandalone.Options) -> Void = { options in
                options.keyStore = .postgres(url: postgres.url)
                if let redis { options.nonceStorage = .redis(url: redis.url) }
                options.storeTimeout = storeTimeout
                more(&options)
            }
            try await TestServer.with(dataDirectory: directory, clock: clock, configure: configure) { a in
                try await TestServer.with(dataDirectory: directory, clock: clock, configure: configure) { b in
                    try await TestServer.with(dataDirectory: directory, clock: clock, configure: configure) { c in
                        try await body([a, b, c], postgres, redis)
                    }
                }
            }
        }
    }
}
