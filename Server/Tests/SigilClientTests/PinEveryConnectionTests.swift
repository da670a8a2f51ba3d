import AsyncHTTPClient
import Crypto
import Foundation
import HTTPTypes
import NIOCore
import NIOPosix
import NIOSSL
import NIOTLS
import SigilClient
@_spi(Sigil) import SigilCore
import SigilFiles
import SigilHTTPClient
import SigilTLS
import SwiftASN1
import Synchronization
import Testing
import X509

@testable import SigilTestSupport

/// No request travels over a connection whose chain was not checked against the pins.
@Suite("Pins on every connection")
struct PinEveryConnectionTests {
    /// A server certificate for localhost and 127.0.0.1 issued by `authority`, with its key.
    static func serverCertificate(
        from ca: (authority: CertificateAuthority, certificatePEM: String, keyPEM: String)
    ) throws -> (certificate: String, key: String) {
        let authority = ca.authority
        let key = P256.Signing.PrivateKey()
        let now = Date()
        let certificate = try Certificate(
            version: .v3,
            serialNumber: Certificate.SerialNumber(),
            publicKey: Certificate.PublicKey(key.publicKey),
            notValidBefore: now.addingTimeInterval(-300),
            notValidAfter: now.addingTimeInterval(86_400),
            issuer: authority.certificate.subject,
            subject: try DistinguishedName { CommonName("localhost") },
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.notCertificateAuthority)
                Critical(KeyUsage(digitalSignature: true))
                try ExtendedKeyUsage([.serverAuth])
                SubjectAlternativeNames([
                    .dnsName("localhost"), .ipAddress(ASN1OctetString(contentBytes: [127, 0, 0, 1])),
                ])
            },
            issuerPrivateKey: try Certificate.PrivateKey(pemEncoded: ca.keyPEM)
        )
        return (try certificate.serializeAsPEM().pemString + "\n", key.pemRepresentation + "\n")
    }

    @Test("a proxy that sends later connections to an impostor trusted by the client is refused with PinError")
    func impostorAfterTheFirstConnection() async throws {
        let ca1 = try CertificateAuthority.create(name: "CA1")
        let ca2 = try CertificateAuthority.create(name: "CA2")
        let real = try Self.serverCertificate(from: ca1)
        let fake = try Self.serverCertificate(from: ca2)
        let directory = TestServer.temporaryDirectory()
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try real.certificate.write(toFile: directory + "-cert.pem", atomically: true, encoding: .utf8)
        try SecureFile.write(real.key, to: directory + "-key.pem")
        let anchors = try [ca1.certificatePEM, ca2.certificatePEM].map {
            try NIOSSLCertificate(bytes: Array($0.utf8), format: .pem)
        }

        try await TestServer.with(configure: {
            $0.certificateFile = directory + "-cert.pem"
            $0.keyFile = directory + "-key.pem"
            $0.allowClassical = true
        }) { server in
            let impostor = try await Impostor.start(certificatePEM: fake.certificate, keyPEM: fake.key)
            var options = SigilHTTPClient.Options()
            options.pins = server.prepared.pins + [PinScaffold.otherPin]
            options.anchors = anchors

            // Every connection to the real server: requests go through.
            let honest = try await SplittingProxy.start(realPort: server.port, impostorPort: impostor.port, real: 100)
            let good = try await SigilHTTPClient.connect(host: "localhost", port: honest.port, options: options)
            let (head, _) = try await good.transport.send(
                SessionScaffold.discovery(server, port: honest.port), body: [])
            #expect(head.status == .ok)
            try await good.shutdown()

            // The pin check's connection reaches the real server, the client's own an impostor with a
            // certificate from CA2 for the same name, which the client's anchors accept.
            let splitting = try await SplittingProxy.start(realPort: server.port, impostorPort: impostor.port, real: 1)
            let client = try await SigilHTTPClient.connect(host: "localhost", port: splitting.port, options: options)
            let error = await #expect(throws: PinError.self) {
                _ = try await client.transport.send(SessionScaffold.discovery(server, port: splitting.port), body: [])
            }
            #expect(error?.description.contains(server.prepared.pins[0]) == true)
            try await client.shutdown()
            #expect(splitting.connections.count.load(ordering: .relaxed) >= 2)
            // Everything the client sent the impostor has arrived once the impostor saw the connection close.
            for _ in 0..<500 where impostor.closed.count.load(ordering: .relaxed) == 0 {
                try await Task.sleep(for: .milliseconds(10))
            }
            #expect(impostor.closed.count.load(ordering: .relaxed) >= 1)
            #expect(impostor.requestBytes.count.load(ordering: .relaxed) == 0)
            try await splitting.close()
            try await honest.close()
            try await impostor.close()
        }
    }
}

extension PinEveryConnectionTests {
    @Test("a redirect to another origin is returned, not followed: the other origin receives nothing")
    func redirectsAreNotFollowed() async throws {
        let elsewhere = try Certificates.selfSignedServer(names: ["127.0.0.1"])
        let other = try await Impostor.start(certificatePEM: elsewhere.certificatePEM, keyPEM: elsewhere.keyPEM)
        let own = try Certificates.selfSignedServer(names: ["127.0.0.1"])
        let redirector = try await Impostor.start(
            certificatePEM: own.certificatePEM, keyPEM: own.keyPEM,
            answer: "HTTP/1.1 307 Temporary Redirect\r\nLocation: https://127.0.0.1:\(other.port)/steal\r\n"
                + "Content-Length: 0\r\n\r\n")
        var options = SigilHTTPClient.Options()
        options.pins = try Certificates.pins(certificatePEM: own.certificatePEM) + [PinScaffold.otherPin]
        let client = try await SigilHTTPClient.connect(host: "127.0.0.1", port: redirector.port, options: options)
        let request = HTTPRequest(
            method: .post, scheme: "https", authority: "127.0.0.1:\(redirector.port)", path: "/v1/transfers")
        var signed = request
        let key = try SigningKey.generate(.ed25519)
        try RequestSigner(key: key, keyID: try key.derivedKeyID ?? "").sign(&signed, body: Array("{}".utf8))
        let (head, _) = try await client.transport.send(signed, body: Array("{}".utf8))
        #expect(head.status.code == 307)
        try await client.shutdown()
        #expect(other.handshakes.count.load(ordering: .relaxed) == 0)
        #expect(other.requestBytes.count.load(ordering: .relaxed) == 0)
        try await other.close()
        try await redirector.close()
    }
}

extension PinEveryConnectionTests {
    @Test("sigil curl --cacert trusts that CA instead of the system roots")
    func curlCACert() async throws {
        let ca = try CertificateAuthority.create(name: "Curl CA")
        let leaf = try Self.serverCertificate(from: ca)
        let directory = try SigilCommand.temporaryDirectory().path
        for (name, text) in [("ca.pem", ca.certificatePEM), ("cert.pem", leaf.certificate), ("key.pem", leaf.key)] {
            try SecureFile.write(text, to: directory + "/" + name, mode: name == "key.pem" ? 0o600 : 0o644)
        }
        let key = try SigningKey.generate(.ed25519)
        try SecureFile.write(try KeyFile.privateKeyFile(for: key), to: directory + "/device.pem")
        try await TestServer.with(configure: {
            $0.certificateFile = directory + "/cert.pem"
            $0.keyFile = directory + "/key.pem"
        }) { server in
            let common = [
                "curl", "--key", directory + "/device.pem", "--pin", server.prepared.pins[0], "--pin",
                PinScaffold.otherPin, "https://localhost:\(server.port)/.well-known/sigil",
            ]
            let anchored = try await SigilCommand.run(common + ["--cacert", directory + "/ca.pem"])
            #expect(anchored.status == 0, "\(anchored.error)")
            #expect(anchored.text.contains("responseKeys"))
            let systemRoots = try await SigilCommand.run(common)
            #expect(systemRoots.status == 2)
            #expect(systemRoots.error.contains("does not validate"))
            let missing = try await SigilCommand.run(common + ["--cacert", directory + "/none.pem"])
            #expect(missing.status == 2)
        }
    }
}

/// A TLS server that completes handshakes with its certificate and counts the bytes it is then sent.
struct Impostor: Sendable {
    let channel: any Channel
    let handshakes: Tally
    let requestBytes: Tally
    let closed: Tally
    var port: Int { channel.localAddress?.port ?? 0 }

    final class Counting: ChannelInboundHandler, Sendable {
        typealias InboundIn = ByteBuffer
        let handshakes: Tally
        let bytes: Tally
        let closed: Tally

        init(handshakes: Tally, bytes: Tally, closed: Tally, answer: String?) {
            self.handshakes = handshakes
            self.bytes = bytes
            self.closed = closed
            self.answer = answer
        }

        func channelInactive(context: ChannelHandlerContext) {
            closed.count.add(1, ordering: .relaxed)
            context.fireChannelInactive()
        }

        let answer: String?

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            bytes.count.add(Self.unwrapInboundIn(data).readableBytes, ordering: .relaxed)
            if let answer {
                context.writeAndFlush(NIOAny(ByteBuffer(string: answer)), promise: nil)
            }
        }

        func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
            if case .handshakeCompleted = event as? TLSUserEvent { handshakes.count.add(1, ordering: .relaxed) }
            context.fireUserInboundEventTriggered(event)
        }
    }

    /// Starts the server; with `answer`, it writes that (raw HTTP/1.1) whenever it reads something.
    static func start(certificatePEM: String, keyPEM: String, answer: String? = nil) async throws -> Impostor {
        var tls = TLSConfiguration.makeServerConfiguration(
            certificateChain: [.certificate(try NIOSSLCertificate(bytes: Array(certificatePEM.utf8), format: .pem))],
            privateKey: .privateKey(try NIOSSLPrivateKey(bytes: Array(keyPEM.utf8), format: .pem))
        )
        tls.minimumTLSVersion = .tlsv13
        let context = try NIOSSLContext(configuration: tls)
        let handshakes = Tally()
        let bytes = Tally()
        let closed = Tally()
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .childChannelInitializer { child in
                child.eventLoop.makeCompletedFuture {
                    try child.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: context))
                    try child.pipeline.syncOperations.addHandler(
                        Counting(handshakes: handshakes, bytes: bytes, closed: closed, answer: answer))
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        return Impostor(channel: channel, handshakes: handshakes, requestBytes: bytes, closed: closed)
    }

    func close() async throws { try await channel.close() }
}

/// A TCP proxy on loopback: its first `real` connections go to the real server, the rest to the impostor.
struct SplittingProxy: Sendable {
    let channel: any Channel
    let connections: Tally
    var port: Int { channel.localAddress?.port ?? 0 }

    static func start(realPort: Int, impostorPort: Int, real: Int) async throws -> SplittingProxy {
        let connections = Tally()
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .childChannelInitializer { child in
                let index = connections.count.add(1, ordering: .relaxed).oldValue
                let target = index < real ? realPort : impostorPort
                return ClientBootstrap(group: child.eventLoop).connect(host: "127.0.0.1", port: target).flatMap {
                    peer in
                    let (inbound, outbound) = Glue.pair()
                    return child.eventLoop.makeCompletedFuture {
                        try child.pipeline.syncOperations.addHandler(inbound)
                        try peer.pipeline.syncOperations.addHandler(outbound)
                    }
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
        return SplittingProxy(channel: channel, connections: connections)
    }

    func close() async throws { try await channel.close() }
}

/// Forwards bytes between two channels on one event loop.
final class Glue: ChannelDuplexHandler, @unchecked Sendable {
    typealias InboundIn = NIOAny
    typealias OutboundIn = NIOAny
    typealias OutboundOut = NIOAny

    private var partner: Glue?
    private var context: ChannelHandlerContext?

    static func pair() -> (Glue, Glue) {
        let first = Glue()
        let second = Glue()
        first.partner = second
        second.partner = first
        return (first, second)
    }

    func handlerAdded(context: ChannelHandlerContext) { self.context = context }
    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
        partner = nil
    }
    func channelRead(context: ChannelHandlerContext, data: NIOAny) { partner?.context?.write(data, promise: nil) }
    func channelReadComplete(context: ChannelHandlerContext) { partner?.context?.flush() }
    func channelInactive(context: ChannelHandlerContext) { partner?.context?.close(promise: nil) }
    func errorCaught(context: ChannelHandlerContext, error: any Error) { context.close(promise: nil) }
}
