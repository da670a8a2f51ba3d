import AsyncHTTPClient
import Foundation
import HTTPTypes
import SigilClient
@_spi(Sigil) import SigilCore
import SigilHTTPClient
import SigilStandalone
import SigilTLS
import Synchronization
import Testing
import X509

@testable import SigilTestSupport

/// The device's side of registration against `sigil serve`.
@Suite("Device registration")
struct DeviceRegistrationTests {
    @Test("discover, enroll, fetch a secret, rotate, get a client certificate")
    func lifecycle() async throws {
        let dataDirectory = TestServer.temporaryDirectory()
        _ = try DataDirectory(path: dataDirectory).createCertificateAuthority()
        let serverClock = ManualUnixClock(SystemUnixClock().now())
        try await TestServer.with(dataDirectory: dataDirectory, clock: serverClock) { server in
            let tls = ClientTLS.configuration(anchors: try server.certificates)
            try await HTTPClient(eventLoopGroupProvider: .singleton, configuration: .init(tlsConfiguration: tls))
                .using { client in
                    let clock = ServerClock(local: ManualUnixClock(serverClock.now() - 1000))
                    let registration = DeviceRegistration(
                        transport: AsyncHTTPClientTransport(client: client), authority: "localhost:\(server.port)",
                        clock: clock)
                    let discovery = try await registration.discover()
                    #expect(discovery.pins == server.prepared.pins)
                    // Discovery is not signed: its serverTime does not move the clock.
                    #expect(clock.offsetSeconds == 0)
                    let verifier = try discovery.responseVerifier(clock: clock)

                    let holder = TLSScaffold.CSRDevice()
                    let device = try holder.device
                    let enrolled = try await registration.enroll(device.key, token: TestServer.token, server: verifier)
                    #expect(enrolled.keyId == device.keyID)
                    // The enrollment's signed timestamp-out-of-window refusal set it, and the retry went through.
                    #expect(clock.now() == serverClock.now())

                    let secret = try await registration.fetchSecret(
                        key: device.key, keyID: device.keyID, server: verifier)
                    #expect(secret.keyId.hasPrefix("hmac-"))
                    let hmac = SigilSession(
                        transport: AsyncHTTPClientTransport(client: client),
                        signer: RequestSigner(key: try secret.signingKey, keyID: secret.keyId, clock: clock),
                        clock: clock, responses: verifier, requireSignedResponses: true)
                    let echo = try await hmac.send(SessionScaffold.echo(server), body: Array("{}".utf8))
                    #expect(echo.head.status == .ok)

                    let issued = try await registration.requestCertificate(
                        key: device.key, keyID: device.keyID, server: verifier)
                    let certificate = try Certificate(pemEncoded: issued.certificate)
                    #expect(certificate.subject.description.contains(device.keyID))

                    // The server's clock moves on: the rotation is refused by time (signed), and its one
                    // resend carries a new nonce with a proof made for it.
                    serverClock.advance(by: 1000)
                    let recorder = NonceRecorder(inner: AsyncHTTPClientTransport(client: client))
                    let recorded = DeviceRegistration(
                        transport: recorder, authority: "localhost:\(server.port)", clock: clock)
                    let next = try SigningKey.generate(.ed25519)
                    let rotated = try await recorded.rotate(
                        from: device.key, keyID: device.keyID, to: next, server: verifier)
                    let nonces = recorder.nonces.withLock { $0 }
                    #expect(nonces.count == 2)
                    #expect(Set(nonces).count == 2)
                    #expect(rotated.keyId == next.derivedKeyID)
                    #expect(rotated.deviceId == enrolled.deviceId)

                    // A wrong token is refused before the request's signature is checked: unsigned, so an
                    // untrusted refusal, the server's code only claimed.
                    let stranger = try SigningKey.generate(.ecdsaP256SHA256)
                    let error = await #expect(throws: SigilClientError.self) {
                        _ = try await registration.enroll(stranger, token: "not-the-token", server: verifier)
                    }
                    #expect(error?.kind == .untrustedRefusal && error?.claimedCode == .enrollmentRefused)
                }
        }
    }
}

@Suite("Enrollment")
struct EnrollmentTests {
    @Test("enroll with pins, keep key, secret and client certificate, then use them over mTLS")
    func enrollAndKeep() async throws {
        let dataDirectory = TestServer.temporaryDirectory()
        let caPath = try DataDirectory(path: dataDirectory).createCertificateAuthority()
        let store = FileDeviceStore(directory: TestServer.temporaryDirectory())
        let clock = ManualUnixClock(SystemUnixClock().now())
        let enrolled = try await TestServer.with(dataDirectory: dataDirectory, clock: clock) { server in
            var options = SigilHTTPClient.Options()
            options.pins = server.prepared.pins + [try #require(server.prepared.backupPin)]
            return try await Enrollment.enroll(
                server: "https://localhost:\(server.port)", token: TestServer.token, options: options,
                enrollment: DeviceEnrollment(requestCertificate: true), store: store)
        }
        #expect(try store.identity() == enrolled)
        // The sealing key is kept as discovery gave it under the pins, for sealed bodies later.
        #expect(try enrolled.sealingKey?.key().keyID == enrolled.sealingKey?.keyId)
        #expect(enrolled.sealingKey != nil)
        #expect(try store.privateKey()?.derivedKeyID == enrolled.keyID)
        #expect(try store.secret() != nil)
        let certificatePEM = try #require(enrolled.clientCertificate)
        for name in ["identity.json", "device-key.pem", "secret"] {
            let mode = try FileManager.default.attributesOfItem(atPath: store.directory + "/" + name)[.posixPermissions]
            #expect(mode as? Int == 0o600, "\(name)")
        }

        // The kept certificate opens the same server when it requires client certificates.
        try await TestServer.with(dataDirectory: dataDirectory, clock: clock, configure: { $0.clientCAFile = caPath }) {
            server in
            var options = SigilHTTPClient.Options()
            options.pins = enrolled.pins + [try #require(server.prepared.backupPin)]
            options.identity = try TLSIdentity(
                certificatePEM: certificatePEM,
                keyPEM: try KeyFile.privateKeyFile(for: try #require(try store.privateKey())))
            let connection = try await SigilHTTPClient.connect(host: "localhost", port: server.port, options: options)
            let serverClock = ServerClock(local: clock)
            let session = SigilSession(
                transport: connection.transport,
                signer: RequestSigner(
                    key: try #require(try store.privateKey()), keyID: enrolled.keyID, clock: serverClock),
                clock: serverClock)
            let response = try await session.send(SessionScaffold.echo(server), body: Array("{}".utf8))
            try await connection.shutdown()
            #expect(response.head.status == .ok)
            let echo = try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any]
            #expect((echo?["clientCertificate"] as? [String: Any])?["keyId"] as? String == enrolled.keyID)
        }
    }
}

/// A transport that keeps the `X-Nonce` of every request it sends.
final class NonceRecorder: SigilTransport {
    let inner: any SigilTransport
    let nonces = Mutex<[String]>([])

    init(inner: any SigilTransport) { self.inner = inner }

    func send(_ request: HTTPRequest, body: [UInt8]) async throws -> (HTTPResponse, [UInt8]) {
        nonces.withLock { $0.append(request.headerFields[SigilV1.nonceField] ?? "") }
        return try await inner.send(request, body: body)
    }
}
