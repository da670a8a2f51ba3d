import AsyncHTTPClient
import Foundation
import HTTPTypes
import SigilClient
@_spi(Sigil) import SigilCore
import SigilFiles
import SigilHTTPClient
import SigilServer
import SigilStandalone
import SigilTLS
import Testing

@testable import SigilTestSupport

/// Sealed bodies (PROTOCOL.md section 6) through `sigil serve` over loopback TLS.
@Suite("Sealed bodies over TLS")
struct SealedBodyTests {
    /// A transport that can change a request after it was sealed and signed.
    struct RequestTampering: SigilTransport {
        let inner: any SigilTransport
        let change: @Sendable (inout HTTPRequest, inout [UInt8]) -> Void

        func send(_ request: HTTPRequest, body: [UInt8]) async throws -> (HTTPResponse, [UInt8]) {
            var (request, body) = (request, body)
            change(&request, &body)
            return try await inner.send(request, body: body)
        }
    }

    static func session(
        _ server: TestServer, _ device: TestDevice, _ profile: SignatureProfile, client: HTTPClient,
        transport: (any SigilTransport)? = nil
    ) async throws -> SigilSession {
        let clock = ServerClock(local: server.clock)
        let registration = DeviceRegistration(
            transport: AsyncHTTPClientTransport(client: client), authority: "localhost:\(server.port)", clock: clock)
        var session = SigilSession(
            transport: transport ?? AsyncHTTPClientTransport(client: client),
            signer: device.signer(profile, clock: clock), clock: clock,
            responses: try SessionScaffold.responseVerifier(server, clock: clock), requireSignedResponses: true)
        session.sealingKey = try #require(try await registration.discover().sealingKeys?.first).key()
        return session
    }

    static func echoed(_ response: SigilResponse) -> String? {
        let json = try? JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any]
        return json?["body"] as? String
    }

    @Test("both profiles: the handler reads the plaintext, the answer comes back sealed and signed")
    func roundTrip() async throws {
        try await SessionScaffold.withDevice { server, device, client in
            for profile in SignatureProfile.allCases {
                let session = try await Self.session(server, device, profile, client: client)
                let secret = #"{"card":"4111 1111 1111 1111","amount":"25.00"}"#
                let answer = try await session.send(
                    SessionScaffold.echo(server), body: Array(secret.utf8), sealed: true)
                #expect(answer.head.status == .ok, "\(profile)")
                #expect(answer.signatureVerified)
                #expect(answer.answerSealed)
                #expect(answer.sealedTo == session.sealingKey?.keyID)
                #expect(Self.echoed(answer) == secret)
                #expect(answer.sentRequest.headerFields[.contentEncoding] == "sigil-hpke")
            }
        }
    }

    @Test(
        "moved to another request, another key ID, altered or truncated: sealed-body-invalid; a broken signature is checked first"
    )
    func tampering() async throws {
        try await SessionScaffold.withDevice { server, device, client in
            let session = try await Self.session(server, device, .sigilV1, client: client)
            let key = try #require(session.sealingKey)
            let plaintext = Array(#"{"a":1}"#.utf8)
            let signer = device.signer(clock: server.clock)
            let transport = AsyncHTTPClientTransport(client: client)
            // Sealed for one nonce, signed with another: the server opens with the signed one.
            // Sealed by another signer under the very nonce this request carries: the victim's body
            // in the attacker's own request (nonces are unique per key only).
            let cases: [(String, (inout [UInt8]) -> Void, Bool, String)] = [
                ("another request's", { _ in }, true, signer.keyID),
                ("another signer's", { _ in }, false, "victim-key-000001"),
                (
                    "another key ID", { $0.replaceSubrange(0..<16, with: Array("0123456789abcdef".utf8)) }, false,
                    signer.keyID
                ),
                ("a flipped bit", { $0[16 + 1120 + 2] ^= 0x04 }, false, signer.keyID),
                ("truncated", { $0.removeLast(3) }, false, signer.keyID),
            ]
            for (name, change, otherNonce, sealedFor) in cases {
                let nonce = RandomNonceSource().next()
                var (body, _) = try Sealing.sealRequest(plaintext, to: key, keyID: sealedFor, nonce: nonce)
                change(&body)
                var request = SessionScaffold.echo(server)
                request.headerFields[.contentEncoding] = Sealing.contentEncoding
                try signer.sign(&request, body: body, nonce: otherNonce ? RandomNonceSource().next() : nonce)
                let (head, answer) = try await transport.send(request, body: body)
                #expect(head.status.code == 400, "\(name)")
                #expect(String(decoding: answer, as: UTF8.self).contains("sealed-body-invalid"), "\(name)")
                // Refused after the signature verified: the refusal is signed for the request.
                #expect(head.headerFields[SigilV1.signatureField] != nil, "\(name)")
            }
            // Signed, then altered on the way: the signature fails first, nothing is opened.
            var altered = try await Self.session(
                server, device, .sigilV1, client: client,
                transport: RequestTampering(inner: transport) { _, body in body[body.count - 1] ^= 0x01 })
            // That refusal is not signed (the request did not verify): read it as it is.
            altered.requireSignedResponses = false
            let refused = try await altered.send(SessionScaffold.echo(server), body: plaintext, sealed: true)
            #expect(refused.problemCode == .invalidSignature)
        }
    }

    @Test("--require-sealed refuses a plain body under its path; a body sealed to the previous key opens")
    func requiredAndRotated() async throws {
        let dataDirectory = TestServer.temporaryDirectory()
        let previous = try SealingPrivateKey.generate()
        _ = try DataDirectory(path: dataDirectory)
        try SecureFile.write(
            try Sealing.privateKeyFile(for: previous), to: dataDirectory + "/sealing-key-previous.pem")
        let clock = ManualUnixClock(SystemUnixClock().now())
        try await TestServer.with(
            dataDirectory: dataDirectory, clock: clock, configure: { $0.sealedPaths = ["/v1/echo"] }
        ) {
            server in
            let tls = ClientTLS.configuration(anchors: try server.certificates)
            try await HTTPClient(eventLoopGroupProvider: .singleton, configuration: .init(tlsConfiguration: tls))
                .using { client in
                    let device = try await DeviceSteps.registeredDevice(on: server, client: client)
                    var session = try await Self.session(server, device, .rfc9421, client: client)
                    let plain = try await session.send(SessionScaffold.echo(server), body: Array("{}".utf8))
                    #expect(plain.problemCode == .sealedBodyInvalid)
                    #expect(
                        try await session.send(SessionScaffold.echo(server), body: Array("{}".utf8), sealed: true)
                            .head.status == .ok)
                    // The previous key is not published, but what was sealed to it still opens.
                    #expect(session.sealingKey != previous.publicKey)
                    session.sealingKey = previous.publicKey
                    let sealed = try await session.send(
                        SessionScaffold.echo(server), body: Array("{}".utf8), sealed: true)
                    #expect(sealed.head.status == .ok)
                    #expect(sealed.sealedTo == previous.keyID)
                }
        }
    }
}
