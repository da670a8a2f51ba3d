import AsyncHTTPClient
import Crypto
import Foundation
import NIOSSL
@_spi(Sigil) import SigilCore
import SigilStandalone
import SigilTLS
import Testing
import X509

@testable import SigilTestSupport

/// TLS of `sigil serve`: post-quantum key exchange only by default, client certificates from the built-in CA.
@Suite("TLS")
struct TLSTests {
    typealias CSRDevice = TLSScaffold.CSRDevice

    @Test("a client offering only classical groups cannot connect to the default server")
    func classicalClientRefused() async throws {
        try await TestServer.with { server in
            try await server.client(refused: true) { $0.curves = [.x25519] }.using { client in
                await #expect(throws: (any Error).self) {
                    _ = try await TestRequest(.get, "/.well-known/sigil", server: server).send(client, to: server)
                }
            }
            let hybrid = try await server.client { $0.curves = [.x25519_MLKEM768] }.using { client in
                try await TestRequest(.get, "/.well-known/sigil", server: server).send(client, to: server)
            }
            #expect(hybrid.status == 200)
        }
        // With --allow-classical the same client connects.
        try await TestServer.with(configure: { $0.allowClassical = true }) { server in
            let response = try await server.client { $0.curves = [.x25519] }.using { client in
                try await TestRequest(.get, "/.well-known/sigil", server: server).send(client, to: server)
            }
            #expect(response.status == 200)
        }
    }

    @Test("TLS 1.2 clients are refused")
    func tls12Refused() async throws {
        try await TestServer.with { server in
            try await server.client(refused: true) {
                $0.minimumTLSVersion = .tlsv12
                $0.maximumTLSVersion = .tlsv12
            }.using { client in
                await #expect(throws: (any Error).self) {
                    _ = try await TestRequest(.get, "/.well-known/sigil", server: server).send(client, to: server)
                }
            }
        }
    }

    @Test("mTLS: no certificate and another CA's certificate refused, an issued certificate accepted")
    func mutualTLS() async throws {
        let dataDirectory = TestServer.temporaryDirectory()
        let caPath = try DataDirectory(path: dataDirectory).createCertificateAuthority()
        let holder = CSRDevice()
        let device = try holder.device

        // On a server without client certificates: register, then trade a CSR for a certificate.
        let certificatePEM: String = try await TestServer.with(dataDirectory: dataDirectory) { server in
            try await server.client().using { client in
                let registered = try await DeviceSteps.register(device, on: server, client: client)
                #expect(registered.status == 201, "\(registered.text)")
                let body = try JSONSerialization.data(withJSONObject: ["csr": try holder.csrPEM])
                var request = TestRequest(
                    .post, "/v1/certificates", server: server, json: String(decoding: body, as: UTF8.self))
                try request.sign(with: device.signer(clock: server.clock))
                let response = try await request.send(client, to: server)
                #expect(response.status == 201, "\(response.text)")
                return try #require(response.json["certificate"] as? String)
            }
        }
        let issued = try Certificate(pemEncoded: certificatePEM)
        #expect(issued.subject.description.contains(device.keyID))

        // A certificate from another CA, for another key.
        let stranger = CSRDevice()
        let otherCA = try CertificateAuthority.create(name: "Other CA").authority
        let strangerCSR = try CertificateAuthority.parseCSR(Array(try stranger.csrPEM.utf8))
        let strangerCertificate = try otherCA.issue(strangerCSR, keyID: try stranger.device.keyID)

        let later = ManualUnixClock(SigningSetup.start + 60)  // a restart: the clock has moved on
        try await TestServer.with(dataDirectory: dataDirectory, clock: later, configure: { $0.clientCAFile = caPath }) {
            server in
            try await server.client(refused: true).using { client in
                await #expect(throws: (any Error).self) {
                    _ = try await TestRequest(.get, "/.well-known/sigil", server: server).send(client, to: server)
                }
            }
            try await server.client(refused: true) { tls in
                tls.certificateChain = [
                    .certificate(
                        try NIOSSLCertificate(
                            bytes: Array(try strangerCertificate.serializeAsPEM().pemString.utf8), format: .pem))
                ]
                tls.privateKey = .privateKey(
                    try NIOSSLPrivateKey(bytes: Array(stranger.privateKey.pemRepresentation.utf8), format: .pem))
            }.using { client in
                await #expect(throws: (any Error).self) {
                    _ = try await TestRequest(.get, "/.well-known/sigil", server: server).send(client, to: server)
                }
            }
            try await server.client { tls in
                tls.certificateChain = [
                    .certificate(try NIOSSLCertificate(bytes: Array(certificatePEM.utf8), format: .pem))
                ]
                tls.privateKey = .privateKey(
                    try NIOSSLPrivateKey(bytes: Array(holder.privateKey.pemRepresentation.utf8), format: .pem))
            }.using { client in
                let (echo, _, _) = try await DeviceSteps.echo(
                    "over mTLS", signer: device.signer(clock: server.clock), server: server, client: client)
                #expect(echo.status == 200, "\(echo.text)")
                let certificate = try #require(echo.json["clientCertificate"] as? [String: Any])
                #expect(certificate["keyId"] as? String == device.keyID)
                #expect(
                    certificate["pin"] as? String == SPKIPin.pin(spkiDER: try Certificates.spkiDER(issued.publicKey)))

                // The same certificate with another device's signature: certificate-mismatch.
                let other = try TestDevice()
                #expect(try await DeviceSteps.register(other, on: server, client: client).status == 201)
                let (mismatch, _, _) = try await DeviceSteps.echo(
                    "not mine", signer: other.signer(clock: server.clock), server: server, client: client)
                #expect(mismatch.status == 401)
                #expect(mismatch.code == "certificate-mismatch")
            }
        }
    }

    @Test("the directory survives a restart on the same file, sealed secrets included")
    func restart() async throws {
        let dataDirectory = TestServer.temporaryDirectory()
        let device = try TestDevice(.mlDSA65)
        let secret = try await TestServer.with(dataDirectory: dataDirectory) { server in
            try await server.client().using { client in
                let registered = try await DeviceSteps.register(device, on: server, client: client)
                #expect(registered.status == 201, "\(registered.text)")
                return try await DeviceSteps.issueSecret(for: device, server: server, client: client)
            }
        }
        let master = try String(contentsOfFile: dataDirectory + "/master.key", encoding: .utf8)
        let database = try Data(contentsOf: URL(fileURLWithPath: dataDirectory + "/directory.sqlite"))
        #expect(
            database.range(of: try #require(secret.key.verificationKey.hmacSecret).withUnsafeBytes { Data($0) }) == nil)
        #expect(!master.isEmpty)
        // A master key others can read is refused, as ssh refuses such keys.
        let masterPath = dataDirectory + "/master.key"
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: masterPath)
        await #expect(throws: SigilInputError.self) { try await TestServer.with(dataDirectory: dataDirectory) { _ in } }
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: masterPath)
        try await TestServer.with(dataDirectory: dataDirectory, clock: ManualUnixClock(SigningSetup.start + 60)) {
            server in
            try await server.client().using { client in
                for key in [device, secret] {
                    let (echo, _, _) = try await DeviceSteps.echo(
                        "after restart", signer: key.signer(clock: server.clock), server: server, client: client)
                    #expect(echo.status == 200, "\(echo.text)")
                }
            }
        }
    }
}
