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

/// Bodies that stall.
enum ExchangeScaffold {
    /// A body that never ends.
    struct StalledBody: AsyncSequence, Sendable {
        struct AsyncIterator: AsyncIteratorProtocol {
            mutating func next() async throws -> [UInt8]? {
                try await Task.sleep(for: .seconds(3600))
                return nil
            }
        }
        func makeAsyncIterator() -> AsyncIterator { AsyncIterator() }
    }
}
