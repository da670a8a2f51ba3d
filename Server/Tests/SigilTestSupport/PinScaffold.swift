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

/// Pins of no server.
enum PinScaffold {
    static let otherPin = "sha256/" + Base64.encode([UInt8](repeating: 7, count: 32))
}
