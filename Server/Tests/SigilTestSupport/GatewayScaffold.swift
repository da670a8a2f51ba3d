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

/// sigil gateway in front of a Python upstream.
enum GatewayScaffold {
    /// `Host`, set by hand: the client then sends it in place of the URL's authority.
    static let host = HTTPField.Name("Host")!

    /// A gateway in front of a fresh Python backend, with a device registered in its directory.
    static func withGateway(
        keepPath: Bool = false,
        publicHost: String? = nil,
        sealedPaths: [String] = [],
        configure more: (inout SigilStandalone.Options) -> Void = { _ in },
        _ body: (TestServer, PythonUpstream, TestDevice, HTTPClient) async throws -> Void
    ) async throws {
        let upstream = try await PythonUpstream.start()
        defer { upstream.stop() }
        try await TestServer.with(configure: { options in
            var target = SigilStandalone.Upstream(url: "http://127.0.0.1:\(upstream.port)")
            target.keepPath = keepPath
            target.secret = "gateway-secret-for-tests"
            // Generous: the suite runs these beside the store suites on two cores.
            target.timeout = .seconds(30)
            target.publicHost = publicHost
            options.upstream = target
            options.sealedPaths = sealedPaths
            options.verifier.bodyLimit = 8 << 20
            more(&options)
        }) { server in
            let device = try TestDevice(.ed25519)
            try await server.prepared.directory.apply(
                DirectoryChange(added: [
                    RegisteredKey(keyID: device.keyID, key: try device.key.verificationKey, deviceID: "dev-gw")
                ]))
            try await server.client().using { client in
                try await body(server, upstream, device, client)
            }
        }
    }
}
