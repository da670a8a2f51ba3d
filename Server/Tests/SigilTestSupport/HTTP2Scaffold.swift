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

/// Requests sent as raw HTTP/2 frames.
enum HTTP2Scaffold {
    /// Sends `request` over HTTP/2 on TLS with the `:scheme` its head names: a client writes that
    /// pseudo-header itself (AsyncHTTPClient always writes `https`; any other client may write `http`).
    static func sendHTTP2(_ request: TestRequest, to server: TestServer) async throws -> TestResponse {
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.minimumTLSVersion = .tlsv13
        tls.trustRoots = .certificates(try server.certificates)
        tls.applicationProtocols = ["h2"]
        let context = try NIOSSLContext(configuration: tls)
        let (channel, multiplexer) = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connect(host: "127.0.0.1", port: server.port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(
                        try NIOSSLClientHandler(context: context, serverHostname: "localhost"))
                    let multiplexer = try channel.pipeline.syncOperations.configureAsyncHTTP2Pipeline(mode: .client) {
                        stream in stream.eventLoop.makeSucceededVoidFuture()
                    }
                    return (channel, multiplexer)
                }
            }
        defer { channel.close(promise: nil) }
        let stream = try await multiplexer.openStream { stream in
            stream.eventLoop.makeCompletedFuture {
                try stream.pipeline.syncOperations.addHandler(HTTP2FramePayloadToHTTPClientCodec())
                return try NIOAsyncChannel<HTTPResponsePart, HTTPRequestPart>(wrappingChannelSynchronously: stream)
            }
        }
        return try await stream.executeThenClose { inbound, outbound in
            try await outbound.write(.head(request.head))
            if !request.body.isEmpty { try await outbound.write(.body(ByteBuffer(bytes: request.body))) }
            try await outbound.write(.end(nil))
            var status = 0
            var headers = HTTPFields()
            var body: [UInt8] = []
            reading: for try await part in inbound {
                switch part {
                case .head(let head):
                    status = head.status.code
                    headers = head.headerFields
                case .body(let buffer): body += Array(buffer: buffer)
                case .end: break reading
                }
            }
            return TestResponse(status: status, headers: headers, body: body, version: .http2)
        }
    }
}
