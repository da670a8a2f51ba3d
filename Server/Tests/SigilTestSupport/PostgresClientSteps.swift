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

/// The app's client against a server on PostgreSQL.
enum PostgresClientSteps {
    /// An application's own pool on `server`, not running yet.
    static func client(of server: PostgresTestServer) -> PostgresClient {
        var configuration = PostgresClient.Configuration(
            host: "127.0.0.1", port: server.port, username: "sigil", password: nil, database: "postgres",
            tls: .disable)
        configuration.options.maximumConnections = 4
        return PostgresClient(configuration: configuration, backgroundLogger: Logger(label: "app"))
    }

    /// A device of one new key registered in `directory` as soon as its schema is there (a store's
    /// service makes it once its group runs), read again every 50 ms for at most 10 s.
    static func deviceOnceReady(in directory: Directory, deviceID: String) async throws
        -> (SigningKey, String)
    {
        let key = try SigningKey.generate(.ed25519)
        let keyID = try #require(try key.verificationKey.derivedKeyID)
        let change = DirectoryChange(
            added: [RegisteredKey(keyID: keyID, key: try key.verificationKey, deviceID: deviceID)])
        var applied = false
        for _ in 0..<200 where !applied {
            applied = (try? await directory.apply(change)) != nil
            if !applied { try await Task.sleep(for: .milliseconds(50)) }
        }
        try #require(applied)
        return (key, keyID)
    }
}
