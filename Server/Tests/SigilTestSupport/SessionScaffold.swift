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

/// A SigilSession against a test server.
enum SessionScaffold {
    static func discovery(_ server: TestServer, port: Int? = nil) -> HTTPRequest {
        HTTPRequest(
            method: .get, scheme: "https", authority: "localhost:\(port ?? server.port)", path: "/.well-known/sigil")
    }

    static func echo(_ server: TestServer) -> HTTPRequest {
        var request = HTTPRequest(
            method: .post, scheme: "https", authority: "localhost:\(server.port)", path: "/v1/echo")
        request.headerFields[.contentType] = "application/json"
        return request
    }

    static func responseVerifier(_ server: TestServer, clock: any UnixClock) throws -> ResponseVerifier {
        let key = try DataDirectory(path: server.options.dataDirectory).responseKey().verificationKey
        return ResponseVerifier(key: key, keyID: server.prepared.responseKeyID, clock: clock)
    }

    /// A server whose clock is the real one (its `Date` headers agree with it), a registered device,
    /// and a client trusting the server.
    static func withDevice(
        configure: (inout SigilStandalone.Options) -> Void = { _ in },
        _ body: (TestServer, TestDevice, HTTPClient) async throws -> Void
    ) async throws {
        let clock = ManualUnixClock(SystemUnixClock().now())
        try await TestServer.with(clock: clock, configure: configure) { server in
            let tls = ClientTLS.configuration(anchors: try server.certificates)
            try await HTTPClient(eventLoopGroupProvider: .singleton, configuration: .init(tlsConfiguration: tls))
                .using { client in
                    let device = try await DeviceSteps.registeredDevice(on: server, client: client)
                    try await body(server, device, client)
                }
        }
    }
}
