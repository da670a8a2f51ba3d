import Crypto
import Foundation
import Logging
import ServiceLifecycle
@_spi(Sigil) import SigilCore
import SigilFiles
import SigilPostgres
import SigilRSA
import SigilRedis
import SigilSQLite
import SigilServer

extension SigilStandalone {
    /// Where devices and keys are kept.
    public enum KeyStore: Sendable, Equatable {
        /// SQLite in the data directory: one server.
        case dataDirectory
        /// PostgreSQL, shared by replicas: `postgres://user@host:port/database`.
        case postgres(url: String)
    }

    /// Where nonces are kept.
    public enum NonceStorage: Sendable, Equatable {
        /// With the keys: SQLite in the data directory, or the PostgreSQL database.
        case withKeys
        /// In memory (restarts refuse requests dated before them): one server.
        case memory
        /// Redis, shared by replicas: `redis://host:port/db` (`rediss://` for TLS).
        case redis(url: String)
    }

    /// The opened stores and what closes them.
    public struct Stores: Sendable {
        public let directory: Directory
        public let nonces: any NonceStore
        /// What to run before the application in a `ServiceGroup`, so they close after it.
        public let services: [any Service]
        let close: @Sendable () async throws -> Void
        /// Where they are, for the start banner (never a credential).
        public let description: String
    }

    /// Opens the stores `options` name, HMAC secrets sealed under `masterKey` (`nil`: the key
    /// directory reads and revokes, and seals or opens no secret).
    ///
    /// Passwords come from `SIGIL_STORE_PASSWORD` and `SIGIL_NONCES_PASSWORD`, or from the files
    /// ``Options/storePasswordFile`` and ``Options/noncesPasswordFile``, so they need not be on the
    /// command line; they are never logged or put in an error.
    static func openStores(_ options: Options, data: DataDirectory, masterKey: SymmetricKey?, logger: Logger)
        async throws -> Stores
    {
        let clock = options.clock
        let environment = ProcessInfo.processInfo.environment
        func password(file: String?, variable: String) throws -> String? {
            if let file {
                return String(decoding: try SecureFile.readSecret(file), as: UTF8.self)
                    .trimmingCharacters(in: .whitespacesAndNewlines)
            }
            return environment[variable]
        }
        var services: [any Service] = []
        var closers: [@Sendable () async throws -> Void] = []
        var descriptions: [String] = []
        do {
            let directory: Directory
            var postgres: PostgresStore?
            switch options.keyStore {
            case .dataDirectory:
                let sqlite = try await SQLiteDirectoryBackend.open(
                    path: data.databasePath, masterKey: masterKey, keyFormats: .withRSA, logger: logger)
                directory = Directory(backend: sqlite, clock: clock, cacheCapacity: options.cacheSize)
                services.append(sqlite)
                closers.append { try await sqlite.close() }
                descriptions.append("keys: SQLite in the data directory")
            case .postgres(let url):
                let location = try PostgresStore.Location(
                    url: url, password: try password(file: options.storePasswordFile, variable: "SIGIL_STORE_PASSWORD"))
                let store = try await PostgresStore.open(location, timeout: options.storeTimeout, logger: logger)
                postgres = store
                services.append(store)
                closers.append { store.close() }
                let backend = try PostgresDirectoryBackend(store: store, masterKey: masterKey, keyFormats: .withRSA)
                directory = Directory(backend: backend, clock: clock, cacheCapacity: options.cacheSize)
                descriptions.append("keys: PostgreSQL at \(location)")
            }
            let nonces: any NonceStore
            switch options.nonceStorage {
            case .withKeys:
                if let postgres {
                    nonces = PostgresNonceStore(store: postgres, clock: clock)
                    descriptions.append("nonces: PostgreSQL")
                } else {
                    let sqlite = try await SQLiteNonceStore.open(path: data.databasePath, clock: clock, logger: logger)
                    nonces = sqlite
                    services.append(sqlite)
                    closers.append { try await sqlite.close() }
                    descriptions.append("nonces: SQLite in the data directory")
                }
            case .memory:
                nonces = MemoryNonceStore(clock: clock)
                descriptions.append("nonces: memory (one server only)")
            case .redis(let url):
                var location = try RedisClient.Location(
                    url: url,
                    password: try password(file: options.noncesPasswordFile, variable: "SIGIL_NONCES_PASSWORD"))
                location.trustsCleartextLink = options.noncesTrustedLink
                let redis = try RedisNonceStore(location, timeout: options.storeTimeout, clock: clock, logger: logger)
                try await redis.connect()
                nonces = redis
                services.append(redis)
                closers.append { redis.client.close() }
                descriptions.append("nonces: Redis at \(location)")
            }
            let closeAll = closers
            return Stores(
                directory: directory, nonces: nonces, services: services,
                close: {
                    for close in closeAll.reversed() { try? await close() }
                },
                description: descriptions.joined(separator: ", "))
        } catch {
            for close in closers.reversed() { try? await close() }
            throw error
        }
    }
}
