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

/// A SigilDevice against a test server.
enum DeviceScaffold {
    static func echo(_ device: SigilDevice, _ server: TestServer) async throws -> SigilResponse {
        try await device.send(SessionScaffold.echo(server), body: Array(#"{"hello":"world"}"#.utf8))
    }

    static func store() -> FileDeviceStore { FileDeviceStore(directory: TestServer.temporaryDirectory()) }

    static func url(_ server: TestServer) -> String { "https://localhost:\(server.port)" }

    /// A server, an HTTP client trusting it, and a transport factory recording the pins it was given.
    static func withServer(
        configure: (inout SigilStandalone.Options) -> Void = { _ in },
        _ body: (TestServer, @escaping @Sendable (String, [String]) throws -> any SigilTransport, PinsSeen) async throws
            -> Void
    ) async throws {
        try await TestServer.with(dataDirectory: TestServer.temporaryDirectory(), configure: configure) { server in
            let tls = ClientTLS.configuration(anchors: try server.certificates)
            try await HTTPClient(eventLoopGroupProvider: .singleton, configuration: .init(tlsConfiguration: tls))
                .using { client in
                    let pins = PinsSeen()
                    let transport: @Sendable (String, [String]) throws -> any SigilTransport = { host, given in
                        #expect(host == "localhost")
                        pins.seen.withLock { $0.append(given) }
                        return AsyncHTTPClientTransport(client: client)
                    }
                    try await body(server, transport, pins)
                }
        }
    }
}

/// The app's lifecycle through ``SigilDevice`` against `sigil serve` over TLS, with the identity in a
/// real store (files, as the Keychain store keeps the same things on Apple platforms).
/// The pins each transport was made for.
final class PinsSeen: Sendable {
    let seen = Mutex<[[String]]>([])
}

/// A device store in memory that keeps any key, as the Keychain store keeps an enclave key by reference.
final class MemoryDeviceStore: DeviceStore {
    private let saved = Mutex<(DeviceIdentity, any SignatureProvider, [UInt8]?)?>(nil)

    func identity() throws -> DeviceIdentity? { saved.withLock { $0?.0 } }
    func deviceKey() throws -> (any SignatureProvider)? { saved.withLock { $0?.1 } }
    func secret() throws -> SigningKey? { try saved.withLock { $0?.2 }.map { try SigningKey(hmacSecret: $0) } }
    func save(_ identity: DeviceIdentity, key: any SignatureProvider, secret: [UInt8]?) throws {
        saved.withLock { $0 = (identity, key, secret) }
    }
    func saveIdentity(_ identity: DeviceIdentity) throws { saved.withLock { $0?.0 = identity } }
    func reset() throws { saved.withLock { $0 = nil } }
}
