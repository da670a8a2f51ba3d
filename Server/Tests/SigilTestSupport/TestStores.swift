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

/// Directories on every backend, with a clock, closed after use.
enum TestStores {
    /// The registries that share these semantics: PostgreSQL's runs against a real server.
    enum Store: String, CaseIterable, CustomStringConvertible {
        case memory, sqlite, postgres
        var description: String { rawValue }
        static var available: [Store] { ExternalServers.runPostgres ? allCases : [.memory, .sqlite] }
    }

    /// Sets a key's own row back to active, behind the registry's back (a stored registry only).
    typealias RowEditor = @Sendable (_ keyID: String) async throws -> Void

    /// A registry of `store`'s kind, with a clock, closed after `body`.
    static func withRegistry<Result>(
        _ store: Store,
        _ body: (Directory, ManualUnixClock, RowEditor?) async throws -> Result
    ) async throws -> Result {
        let clock = ManualUnixClock(SigningSetup.start)
        switch store {
        case .memory:
            return try await body(Directory.inMemory(clock: clock), clock, nil)
        case .sqlite:
            let path = TestServer.temporaryDirectory() + ".sqlite"
            let directory = try await Directory.sqlite(
                path: path, masterKey: SymmetricKey(size: .bits256), clock: clock)
            let editor: RowEditor = { keyID in
                let connection = try await SQLiteConnection.open(storage: .file(path: path))
                _ = try await connection.query(
                    "UPDATE sigil_keys SET state = 'active' WHERE key_id = ?", [.text(keyID)])
                try await connection.close()
            }
            do {
                let result = try await body(directory, clock, editor)
                try await directory.close()
                return result
            } catch {
                try? await directory.close()
                throw error
            }
        case .postgres:
            return try await PostgresTestServer.with { server in
                let store = try await PostgresStore.open(
                    try PostgresStore.Location(url: server.url), timeout: .seconds(10))
                defer { store.close() }
                let directory = try Directory.postgres(
                    store: store, masterKey: SymmetricKey(size: .bits256), clock: clock, cacheLifetime: 0)
                let editor: RowEditor = { keyID in
                    try await store.client.query("UPDATE sigil_keys SET state = 'active' WHERE key_id = \(keyID)")
                }
                return try await body(directory, clock, editor)
            }
        }
    }

    static func key(_ device: String, _ algorithm: SigilCore.SignatureAlgorithm = .ed25519) throws -> RegisteredKey {
        let verification = try SigningKey.generate(algorithm).verificationKey
        return RegisteredKey(
            keyID: verification.derivedKeyID ?? "", key: verification, deviceID: device, createdAt: SigningSetup.start)
    }
}
