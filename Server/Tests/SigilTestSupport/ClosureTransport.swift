import AsyncHTTPClient
import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import SigilAppAttest
import SigilClient
@_spi(Sigil) import SigilCore
import SigilFiles
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
import X509

/// A transport made of a closure.
struct ClosureTransport: SigilTransport {
    let send: @Sendable (HTTPRequest, [UInt8]) async throws -> (HTTPResponse, [UInt8])

    init(_ send: @escaping @Sendable (HTTPRequest, [UInt8]) async throws -> (HTTPResponse, [UInt8])) {
        self.send = send
    }

    func send(_ request: HTTPRequest, body: [UInt8]) async throws -> (HTTPResponse, [UInt8]) {
        try await send(request, body)
    }
}
