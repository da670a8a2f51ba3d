import AsyncHTTPClient
import Foundation
import HTTPTypes
import NIOSSL
import SigilClient
@_spi(Sigil) import SigilCore
import SigilFiles
import SigilHTTPClient
import SigilServer
import SigilStandalone
import SigilTLS
import Synchronization
import Testing
import X509

@testable import SigilTestSupport

/// SigilSession over AsyncHTTPClient against `sigil serve` on loopback TLS.
@Suite("Client session")
struct SessionTests {
    /// A transport that counts what it sends and can change what comes back.
    struct Tampering: SigilTransport {
        let inner: any SigilTransport
        let sent = Tally()
        var change: @Sendable (inout HTTPResponse, inout [UInt8]) -> Void = { _, _ in }

        func send(_ request: HTTPRequest, body: [UInt8]) async throws -> (HTTPResponse, [UInt8]) {
            sent.count.add(1, ordering: .relaxed)
            var (head, responseBody) = try await inner.send(request, body: body)
            change(&head, &responseBody)
            return (head, responseBody)
        }
    }

    @Test("a client clock an hour fast is corrected by exactly one retry")
    func clockFast() async throws {
        try await SessionScaffold.withDevice { server, device, client in
            let local = ManualUnixClock(server.clock.now() + 3600)
            let clock = ServerClock(local: local)
            let transport = Tampering(inner: AsyncHTTPClientTransport(client: client))
            let session = SigilSession(
                transport: transport, signer: RequestSigner(key: device.key, keyID: device.keyID, clock: clock),
                clock: clock, responses: try SessionScaffold.responseVerifier(server, clock: clock),
                requireSignedResponses: true)
            let first = try await session.send(SessionScaffold.echo(server), body: Array(#"{"n":1}"#.utf8))
            #expect(first.head.status == .ok)
            #expect(first.attempts == 2)
            #expect(first.signatureVerified)
            // Corrected to the time the server signed.
            #expect(clock.now() == server.clock.now())
            let second = try await session.send(SessionScaffold.echo(server), body: Array(#"{"n":2}"#.utf8))
            #expect(second.attempts == 1)
            #expect(transport.sent.count.load(ordering: .relaxed) == 3)

            // A client whose signer ignores the corrected clock gets one retry, never more.
            let stubborn = Tampering(inner: AsyncHTTPClientTransport(client: client))
            let alwaysFast = ManualUnixClock(server.clock.now() + 7200)
            let refusing = SigilSession(
                transport: stubborn,
                signer: RequestSigner(key: device.key, keyID: device.keyID, clock: alwaysFast),
                clock: ServerClock(local: alwaysFast),
                responses: try SessionScaffold.responseVerifier(server, clock: clock))
            let refused = try await refusing.send(SessionScaffold.echo(server), body: [])
            #expect(refused.problemCode == .timestampOutOfWindow)
            #expect(refused.signatureVerified)
            #expect(stubborn.sent.count.load(ordering: .relaxed) == 2)

            // Without the server's key, a refusal cannot be trusted: no resend.
            let unverified = Tampering(inner: AsyncHTTPClientTransport(client: client))
            let blind = SigilSession(
                transport: unverified, signer: RequestSigner(key: device.key, keyID: device.keyID, clock: alwaysFast),
                clock: ServerClock(local: alwaysFast))
            #expect(try await blind.send(SessionScaffold.echo(server), body: []).problemCode == .timestampOutOfWindow)
            #expect(unverified.sent.count.load(ordering: .relaxed) == 1)
        }
    }

    @Test("forged time moves nothing: an unsigned refusal, a Date header, another key's signature")
    func forgedTime() async throws {
        try await SessionScaffold.withDevice { server, device, client in
            let clock = ServerClock(local: server.clock)
            let tomorrow = server.clock.now() + 86_400
            let forgedRefusal = Tampering(inner: AsyncHTTPClientTransport(client: client)) { head, body in
                head = HTTPResponse(status: .unauthorized)
                head.headerFields[.contentType] = "application/problem+json"
                head.headerFields[.date] = "Tue, 01 Jan 2036 00:00:00 GMT"
                body = Array(#"{"code":"timestamp-out-of-window","status":401,"serverTime":\#(tomorrow)}"#.utf8)
            }
            let session = SigilSession(
                transport: forgedRefusal, signer: RequestSigner(key: device.key, keyID: device.keyID, clock: clock),
                clock: clock, responses: try SessionScaffold.responseVerifier(server, clock: clock))
            let answer = try await session.send(SessionScaffold.echo(server), body: Array("{}".utf8))
            #expect(answer.problemCode == .timestampOutOfWindow)
            #expect(!answer.signatureVerified)
            #expect(forgedRefusal.sent.count.load(ordering: .relaxed) == 1)
            #expect(clock.offsetSeconds == 0)

            // A genuine signed answer with a forged Date: the clock follows the signature only.
            let forgedDate = Tampering(inner: AsyncHTTPClientTransport(client: client)) { head, _ in
                head.headerFields[.date] = "Tue, 01 Jan 2036 00:00:00 GMT"
            }
            let dated = SigilSession(
                transport: forgedDate, signer: RequestSigner(key: device.key, keyID: device.keyID, clock: clock),
                clock: clock, responses: try SessionScaffold.responseVerifier(server, clock: clock))
            #expect(try await dated.send(SessionScaffold.echo(server), body: Array("{}".utf8)).signatureVerified)
            #expect(clock.offsetSeconds == 0)

            // A refusal signed by a key the client does not trust is an error, not a reason to resend.
            let otherKey = try SigningKey.generate(.ecdsaP256SHA256)
            let impostor = ResponseSigner(signer: otherKey, keyID: server.prepared.responseKeyID, clock: server.clock)
            let signedByOther = Tampering(inner: AsyncHTTPClientTransport(client: client)) { head, body in
                head = HTTPResponse(status: .unauthorized)
                head.headerFields[.contentType] = "application/problem+json"
                body = Array(#"{"code":"timestamp-out-of-window","status":401,"serverTime":\#(tomorrow)}"#.utf8)
                head.headerFields.append(
                    contentsOf: (try? impostor.sigilV1Fields(
                        for: head, body: body,
                        answering: SigilV1.AnsweredRequest(keyID: "unknown", nonce: "unknown", signature: "x"))) ?? [:])
            }
            let impostorSession = SigilSession(
                transport: signedByOther, signer: RequestSigner(key: device.key, keyID: device.keyID, clock: clock),
                clock: clock, responses: try SessionScaffold.responseVerifier(server, clock: clock))
            // Not the server's word: an untrusted refusal, its code only claimed.
            let forged = await #expect(throws: SigilClientError.self) {
                _ = try await impostorSession.send(SessionScaffold.echo(server), body: Array("{}".utf8))
            }
            #expect(forged?.kind == .untrustedRefusal && forged?.claimedCode == .timestampOutOfWindow)
            #expect(signedByOther.sent.count.load(ordering: .relaxed) == 1)
            #expect(clock.offsetSeconds == 0)
        }
    }

    @Test("a response whose status or body was changed is refused", arguments: SignatureProfile.allCases)
    func tamperedResponse(_ profile: SignatureProfile) async throws {
        try await SessionScaffold.withDevice { server, device, client in
            let clock = ServerClock(local: server.clock)
            let signer = RequestSigner(key: device.key, keyID: device.keyID, profile: profile, clock: clock)
            let verifier = try SessionScaffold.responseVerifier(server, clock: clock)
            let honest = SigilSession(
                transport: AsyncHTTPClientTransport(client: client), signer: signer, clock: clock,
                responses: verifier)
            let fine = try await honest.send(SessionScaffold.echo(server), body: Array(#"{"n":1}"#.utf8))
            #expect(fine.signatureVerified)

            let changes: [@Sendable (inout HTTPResponse, inout [UInt8]) -> Void] = [
                { head, _ in head.status = .created },
                { _, body in body = Array(String(decoding: body, as: UTF8.self).replacing("1", with: "2").utf8) },
            ]
            for change in changes {
                var transport = Tampering(inner: AsyncHTTPClientTransport(client: client))
                transport.change = change
                let session = SigilSession(transport: transport, signer: signer, clock: clock, responses: verifier)
                let error = await #expect(throws: SigilClientError.self) {
                    _ = try await session.send(SessionScaffold.echo(server), body: Array(#"{"n":1}"#.utf8))
                }
                #expect(error?.kind == .untrustedAnswer && error?.status != nil)
            }

            // An unsigned response is refused when signatures are required.
            let strict = SigilSession(
                transport: AsyncHTTPClientTransport(client: client), signer: signer, clock: clock,
                responses: verifier, requireSignedResponses: true)
            let unsigned = await #expect(throws: SigilClientError.self) {
                _ = try await strict.send(SessionScaffold.discovery(server))
            }
            #expect(unsigned?.kind == .untrustedAnswer && unsigned?.status == 200)
        }
    }

    @Test("pqOnly fails against a classical-only server; the default client connects to the default server")
    func postQuantum() async throws {
        try await TestServer.with(configure: { $0.tlsGroups = [.x25519] }) { server in
            var configuration = HTTPClient.Configuration(
                tlsConfiguration: ClientTLS.configuration(pqOnly: true, anchors: try server.certificates))
            configuration.timeout = .init(connect: .milliseconds(500))
            try await HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration).using { client in
                await #expect(throws: (any Error).self) {
                    _ = try await AsyncHTTPClientTransport(client: client).send(
                        SessionScaffold.discovery(server), body: [])
                }
            }
        }
        // The default server takes X25519MLKEM768 only, so connecting proves the hybrid group was used.
        try await TestServer.with { server in
            let tls = ClientTLS.configuration(anchors: try server.certificates)
            try await HTTPClient(eventLoopGroupProvider: .singleton, configuration: .init(tlsConfiguration: tls))
                .using { client in
                    let (head, _) = try await AsyncHTTPClientTransport(client: client).send(
                        SessionScaffold.discovery(server), body: [])
                    #expect(head.status == .ok)
                }
        }
    }
}

/// Client certificates through ClientTLS: PEM files and a PKCS#12 bundle.
@Suite("Client certificates")
struct ClientCertificateTests {
    @Test("mTLS with a PEM certificate and key, and with a PKCS#12 bundle")
    func pemAndPKCS12() async throws {
        let dataDirectory = TestServer.temporaryDirectory()
        let data = try DataDirectory(path: dataDirectory)
        let caPath = try data.createCertificateAuthority()
        let authority = try #require(try data.certificateAuthority())
        let holder = TLSScaffold.CSRDevice()
        let (csr, keyDER) = try CertificateAuthority.csr(privateKeyPEM: holder.privateKey.pemRepresentation)
        let certificate = try authority.issue(csr, keyID: try holder.device.keyID)
        let files = TestServer.temporaryDirectory()
        try SecureFile.createDirectory(files)
        try SecureFile.write(try certificate.serializeAsPEM().pemString, to: files + "/client.pem")
        try SecureFile.write(holder.privateKey.pemRepresentation, to: files + "/client-key.pem")
        let bundle = try PKCS12.bundle(
            privateKeyDER: keyDER, certificatesDER: [try Certificates.der(certificate)], password: "p12 password",
            iterations: 2048)
        try SecureFile.write(bundle, to: files + "/client.p12")

        let later = ManualUnixClock(SigningSetup.start + 60)  // a restart: the clock has moved on
        try await TestServer.with(dataDirectory: dataDirectory, clock: later, configure: { $0.clientCAFile = caPath }) {
            server in
            let identities = [
                try TLSIdentity(certificateFile: files + "/client.pem", keyFile: files + "/client-key.pem"),
                try TLSIdentity(pkcs12File: files + "/client.p12", password: "p12 password"),
            ]
            for identity in identities {
                let tls = ClientTLS.configuration(anchors: try server.certificates, identity: identity)
                try await HTTPClient(eventLoopGroupProvider: .singleton, configuration: .init(tlsConfiguration: tls))
                    .using { client in
                        let (head, _) = try await AsyncHTTPClientTransport(client: client).send(
                            SessionScaffold.discovery(server), body: [])
                        #expect(head.status == .ok)
                    }
            }
        }
        #expect(throws: SigilInputError.self) {
            _ = try TLSIdentity(pkcs12File: files + "/client.p12", password: "wrong")
        }
    }
}
