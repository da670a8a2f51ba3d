import AsyncHTTPClient
import Foundation
import HTTPTypes
import SigilClient
@_spi(Sigil) import SigilCore
import SigilServer
import Testing

@testable import SigilTestSupport

/// The whole life of a device against `sigil serve` over real TLS on loopback.
@Suite("End to end over TLS")
struct EndToEndTests {

    @Test("a rotation proof names the server it is for: one made for another server is refused")
    func rotationNamesItsServer() async throws {
        try await TestServer.with { server in
            try await server.client().using { client in
                let device = try await DeviceSteps.registeredDevice(on: server, client: client)
                let next = try TestDevice(.ed25519)
                let elsewhere = try await DeviceSteps.rotate(
                    from: device, to: next, server: server, client: client, serverKeyID: "0123456789abcdef")
                #expect(elsewhere.status == 400, "\(elsewhere.text)")
                #expect(elsewhere.code == "invalid-registration")
                #expect(
                    try await DeviceSteps.rotate(from: device, to: next, server: server, client: client).status == 201)
            }
        }
    }

    @Test("register, echo, replay, tamper, secret, rotation with overlap, revocation")
    func deviceLifecycle() async throws {
        let logs = LogCapture()
        let secrets: [String] = try await TestServer.with(logs: logs) { server in
            try await server.client().using { client in
                let clock = server.clock
                let device = try TestDevice(.ecdsaP256SHA256)

                // Register: 201 with the derived key ID, signed by the server's response key.
                let registered = try await DeviceSteps.register(device, on: server, client: client)
                #expect(registered.status == 201, "\(registered.text)")
                #expect(registered.json["keyId"] as? String == device.keyID)
                let deviceID = try #require(registered.json["deviceId"] as? String)

                // The server's response key, from discovery.
                let discovery = try await TestRequest(.get, "/.well-known/sigil", server: server).send(
                    client, to: server)
                #expect(discovery.status == 200)
                let responseKeys = try #require(discovery.json["responseKeys"] as? [[String: Any]])
                let responseKeyPEM = try #require(responseKeys.first?["publicKey"] as? String)
                let responseKeyID = try #require(responseKeys.first?["keyId"] as? String)
                let responseKey = try KeyFile.load(Array(responseKeyPEM.utf8)).verificationKey
                let responses = ResponseVerifier(key: responseKey, keyID: responseKeyID, clock: clock)
                #expect(discovery.json["pins"] as? [String] == server.prepared.pins)

                // A signed echo: the identity and the body come back, and the response signature verifies.
                let (echo, _, sent) = try await DeviceSteps.echo(
                    #"{"hello":"world"}"#, signer: device.signer(clock: clock), server: server, client: client)
                #expect(echo.status == 200, "\(echo.text)")
                #expect(echo.json["keyId"] as? String == device.keyID)
                #expect(echo.json["deviceId"] as? String == deviceID)
                #expect(echo.json["body"] as? String == #"{"hello":"world"}"#)
                #expect(echo.headers[.date] != nil)
                try responses.verifySigilV1(
                    HTTPResponse(status: .ok, headerFields: echo.headers), body: echo.body, answering: sent.answered)

                // The same request again is a replay.
                let replay = try await sent.send(client, to: server)
                #expect(replay.status == 401)
                #expect(replay.code == "replayed-nonce")

                // A body changed after signing.
                var tampered = TestRequest(.post, "/v1/echo", server: server, json: #"{"amount":1}"#)
                try tampered.sign(with: device.signer(clock: clock))
                tampered.body = Array(#"{"amount":9}"#.utf8)
                let refused = try await tampered.send(client, to: server)
                #expect(refused.status == 401)
                #expect(refused.code == "invalid-signature")
                #expect(refused.headers[.contentType] == "application/problem+json")

                // A per-device HMAC secret, used with rfc9421.
                let first = try await DeviceSteps.issueSecret(for: device, server: server, client: client)
                let firstSigner = first.signer(.rfc9421, clock: clock)
                let (hmacEcho, _, hmacRequest) = try await DeviceSteps.echo(
                    "plain text", signer: firstSigner, server: server, client: client)
                #expect(hmacEcho.status == 200, "\(hmacEcho.text)")
                #expect(hmacEcho.version == .http2)
                try responses.verifyRFC9421(
                    HTTPResponse(status: .ok, headerFields: hmacEcho.headers), body: hmacEcho.body,
                    answering: hmacRequest.head)
                #expect(hmacEcho.json["alg"] as? String == "hmac-sha256")
                #expect(hmacEcho.json["profile"] as? String == "rfc9421")
                #expect(hmacEcho.headers[MessageSignatures.signatureInputField] != nil)

                // Asking again rotates the secret: both work during the overlap, only the new one after.
                let second = try await DeviceSteps.issueSecret(for: device, server: server, client: client)
                #expect(second.keyID != first.keyID)
                for secret in [first, second] {
                    let (response, _, _) = try await DeviceSteps.echo(
                        "overlap", signer: secret.signer(clock: clock), server: server, client: client)
                    #expect(response.status == 200, "\(response.text)")
                }
                clock.advance(by: 86_400)
                let (late, _, _) = try await DeviceSteps.echo(
                    "late", signer: first.signer(clock: clock), server: server, client: client)
                #expect(late.code == "revoked-key")
                let (current, _, _) = try await DeviceSteps.echo(
                    "current", signer: second.signer(clock: clock), server: server, client: client)
                #expect(current.status == 200, "\(current.text)")

                // An HMAC secret cannot ask for secrets.
                var bySecret = TestRequest(.post, "/v1/devices/\(device.keyID)/secret", server: server)
                try bySecret.sign(with: second.signer(clock: clock))
                #expect(try await bySecret.send(client, to: server).code == "forbidden")

                // Rotation: the next key is registered; the old one lasts the grace period.
                let next = try TestDevice(.ed25519)
                let rotation = try await DeviceSteps.rotate(from: device, to: next, server: server, client: client)
                #expect(rotation.status == 201, "\(rotation.text)")
                #expect(rotation.json["keyId"] as? String == next.keyID)
                for key in [device, next] {
                    let (response, _, _) = try await DeviceSteps.echo(
                        "grace", signer: key.signer(clock: clock), server: server, client: client)
                    #expect(response.status == 200, "\(response.text)")
                }
                clock.advance(by: 86_400)
                let (old, _, _) = try await DeviceSteps.echo(
                    "old", signer: device.signer(clock: clock), server: server, client: client)
                #expect(old.code == "revoked-key")

                // Revocation, effective from the next request.
                var revoke = TestRequest(.delete, "/v1/devices/\(next.keyID)", server: server)
                try revoke.sign(with: next.signer(clock: clock))
                let revoked = try await revoke.send(client, to: server)
                #expect(revoked.status == 204, "\(revoked.text)")
                for key in [next, TestDevice(key: second.key, keyID: second.keyID)] {
                    let (response, _, _) = try await DeviceSteps.echo(
                        "after", signer: key.signer(clock: clock), server: server, client: client)
                    #expect(response.code == "revoked-key")
                }
                return try [first, second].map { device in
                    let secret = try #require(try device.key.verificationKey.hmacSecret)
                    return secret.withUnsafeBytes { Base64.encode(Array($0)) }
                }
            }
        }
        // The logs say what happened and never carry a secret or the enrollment token.
        let text = logs.text
        #expect(text.contains("secret issued"))
        #expect(text.contains("replayed-nonce"))
        for secret in secrets + [TestServer.token] { #expect(!text.contains(secret)) }
    }

}
