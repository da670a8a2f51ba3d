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

/// A server with its admin API, and calls to it.
enum AdminScaffold {
    static let adminToken = "admin-token-0123456789-abcdefghijklmnop"

    /// A token file, mode 0600.
    static func tokenFile(_ token: String = adminToken) throws -> String {
        let path = TestServer.temporaryDirectory() + "-admin-token"
        #expect(
            FileManager.default.createFile(
                atPath: path, contents: Data(token.utf8), attributes: [.posixPermissions: 0o600]))
        return path
    }

    /// Sends an admin call with `token`.
    static func call(
        _ method: HTTPMethod, _ path: String, port: Int, token: String?, client: HTTPClient
    ) async throws -> (status: Int, body: [UInt8]) {
        var request = HTTPClientRequest(url: "https://localhost:\(port)\(path)")
        request.method = method
        if let token { request.headers.add(name: "Authorization", value: "Bearer \(token)") }
        request.headers.add(name: "Sigil-Operator", value: "alice-ops")
        let response = try await client.execute(request, timeout: .seconds(30))
        return (Int(response.status.code), Array(buffer: try await response.body.collect(upTo: 1 << 20)))
    }

    /// A `sigil serve` with the admin API on a free port and the test token (and what `configure`
    /// sets): `body` gets the server, the admin port and a client.
    static func withAdmin(
        configure more: (inout SigilStandalone.Options) -> Void = { _ in },
        _ body: (TestServer, Int, HTTPClient) async throws -> Void
    ) async throws {
        let tokenFile = try Self.tokenFile()
        try await TestServer.with(configure: {
            $0.admin.port = 0
            $0.admin.tokenFile = tokenFile
            more(&$0)
        }) { server in
            try await server.client().using { client in
                try await body(server, try #require(await server.prepared.adminPort?.value()), client)
            }
        }
    }
}
