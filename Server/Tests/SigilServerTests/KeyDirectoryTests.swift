import AsyncHTTPClient
import Foundation
import HTTPTypes
import SigilClient
@_spi(Sigil) import SigilCore
import SigilServer
import Testing

@testable import SigilTestSupport

/// `GET /.well-known/http-message-signatures-directory`: the response keys as a JWKS, signed once per key.
@Suite("Signed key directory")
struct KeyDirectoryTests {
    /// Checks every signature of a directory answer to `request` with the keys it lists.
    static func verify(_ response: TestResponse, request: HTTPRequest, now: Int64) throws -> [String] {
        let object = try #require(try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any])
        let jwks = try #require(object["keys"] as? [[String: Any]])
        var head = HTTPResponse(status: .ok)
        head.headerFields = response.headers
        let signatures = try MessageSignatures(head.headerFields)
        #expect(signatures.entries.map(\.label) == (1...jwks.count).map { "sig\($0)" })
        for entry in signatures.entries {
            let input = entry.input
            #expect(input.components.map(\.serialized) == [#""@authority";req"#, #""content-digest""#])
            #expect(try input.tag == KeyDirectoryDocument.tag)
            let created = try #require(try input.created)
            #expect(created == now)
            #expect(try input.expires == created + KeyDirectoryDocument.lifetime)
            let kid = try #require(try input.keyID)
            let listed = try #require(jwks.first { $0["kid"] as? String == kid })
            #expect(listed["use"] as? String == "sig")
            #expect(listed["d"] == nil)
            let base = try RFC9421.signatureBase(
                for: input, message: RFC9421Message(response: head, answering: request))
            let algorithm = try SignatureAlgorithm.named(try #require(try input.algorithm))
            let key = try #require(try Self.publicKey(listed, algorithm: algorithm))
            #expect(key.jwkThumbprint == kid)
            #expect(key.isValidSignature(entry.signature, for: base, profile: .rfc9421))
        }
        return jwks.compactMap { $0["kid"] as? String }
    }

    /// The public key an Ed25519 JWK names (the response keys of these tests).
    static func publicKey(_ jwk: [String: Any], algorithm: SignatureAlgorithm) throws -> VerificationKey? {
        guard jwk["kty"] as? String == "OKP", let x = (jwk["x"] as? String).flatMap(Base64URL.decode) else {
            return nil
        }
        let spki: [UInt8] = [0x30, 0x2A, 0x30, 0x05, 0x06, 0x03, 0x2B, 0x65, 0x70, 0x03, 0x21, 0x00] + x
        let pem = "-----BEGIN PUBLIC KEY-----\n\(Base64.encode(spki))\n-----END PUBLIC KEY-----\n"
        return try KeyFile.load(Array(pem.utf8), algorithm: algorithm).verificationKey
    }

    @Test("the directory lists the response keys by thumbprint, current and next, each signing the answer")
    func directory() async throws {
        try await TestServer.with { server in
            try await server.client().using { client in
                let request = TestRequest(.get, Registration.Path.keyDirectory, server: server)
                let response = try await request.send(client)
                #expect(response.status == 200)
                #expect(response.headers[.contentType] == KeyDirectoryDocument.contentType)
                let current = try #require(server.prepared.serverKeys.phase(.response)?.current.signing)
                let currentKID = try #require(try current.verificationKey.jwkThumbprint)
                let discovery = try await TestRequest(.get, Registration.Path.discovery, server: server).send(client)
                let document = try JSONDecoder().decode(Registration.Discovery.self, from: Data(discovery.body))
                #expect(document.responseKeys.first?.jwkThumbprint == currentKID)
                #expect(try Self.verify(response, request: request.head, now: server.clock.now()) == [currentKID])

                let next = try await server.prepared.serverKeys.rotate(.response, actor: "operator:test")
                let rotated = try await request.send(client)
                let kids = try Self.verify(rotated, request: request.head, now: server.clock.now())
                #expect(kids.count == 2 && kids[0] == currentKID)
                let listed = try #require(
                    (try JSONSerialization.jsonObject(with: Data(rotated.body)) as? [String: Any])?["keys"]
                        as? [[String: Any]])
                let nextKey = try #require(server.prepared.serverKeys.phase(.response)?.next.first)
                #expect(nextKey.stored.keyID == next)
                #expect(listed[1]["nbf"] as? Int == Int(nextKey.stored.activatesAt))
                #expect(listed[0]["exp"] as? Int == Int(nextKey.stored.activatesAt + 7 * 86_400))
            }
        }
    }

    @Test(
        "a session learns the next response key from the directory its trusted key signed; a list a proxy changed, or one no trusted key signed, teaches nothing"
    )
    func sessionLearnsNextKey() async throws {
        try await TestServer.with { server in
            let (identity, connection, session, _) = try await AdminAPITests.enrolledSession(server)
            do {
                let trusted = try #require(session.responses?.trusted)
                let current = try #require(trusted.key(identity.responseKeyID))
                let next = try await server.prepared.serverKeys.rotate(.response, actor: "operator:test")
                #expect(trusted.key(next) == nil)
                let request = HTTPRequest(
                    method: .get, scheme: "https", authority: "localhost:\(server.port)",
                    path: Registration.Path.keyDirectory)
                let (head, body) = try await connection.transport.send(request, body: [])
                let now = server.clock.now()

                // A proxy lists its own key as the next one, signs for it, and fixes the digest: the
                // trusted key's signature covers the old list, so nothing is learnt.
                let attacker = try SigningKey.generate(.ed25519)
                let attackerKID = try attacker.verificationKey.jwkThumbprint ?? ""
                let forgedBody = Array(
                    ("{\"keys\":["
                        + (try JWK(current).json(extra: ["kid": "\"\(current.jwkThumbprint ?? "")\""]))
                        .replacingOccurrences(of: "}", with: ",\"alg\":\"EdDSA\",\"use\":\"sig\"}") + ","
                        + (try JWK(attacker.verificationKey).json(extra: [
                            "kid": "\"\(attackerKID)\"", "alg": "\"EdDSA\"", "use": "\"sig\"",
                        ])) + "]}").utf8)
                var forged = head
                forged.headerFields[MessageSignatures.contentDigestField] = ContentDigest.fieldValue(for: forgedBody)
                let (input, signature) = try RFC9421.sign(
                    RFC9421Message(response: forged, answering: request),
                    input: SignatureInput(
                        components: [
                            ComponentIdentifier("@authority", parameters: [("req", .bool(true))]), .contentDigest,
                        ],
                        created: now, expires: now + 300, keyID: attackerKID, algorithm: .ed25519,
                        tag: KeyDirectoryDocument.tag),
                    label: "sig2", signer: attacker)
                let served = try MessageSignatures(head.headerFields)
                #expect(served.entries.count == 2)
                let first = (head.headerFields[MessageSignatures.signatureInputField] ?? "").components(
                    separatedBy: ", sig2=")[0]
                let firstSignature = (head.headerFields[MessageSignatures.signatureField] ?? "").components(
                    separatedBy: ", sig2=")[0]
                forged.headerFields[MessageSignatures.signatureInputField] = first + ", " + input
                forged.headerFields[MessageSignatures.signatureField] = firstSignature + ", " + signature
                let victim = TrustedResponseKeys([identity.responseKeyID: current])
                #expect(victim.learn(directory: forgedBody, response: forged, request: request, now: now).isEmpty)
                // The list changed without its digest: nothing either.
                var swapped = head
                swapped.headerFields[MessageSignatures.contentDigestField] = nil
                #expect(victim.learn(directory: body, response: swapped, request: request, now: now).isEmpty)
                // A directory no trusted key signed teaches nothing.
                let stranger = TrustedResponseKeys(["other": try attacker.verificationKey])
                #expect(stranger.learn(directory: body, response: head, request: request, now: now).isEmpty)
                #expect(victim.key(next) == nil)

                // The directory as served: the session learns the next key, and keeps verifying after
                // the promotion from the first answer.
                #expect(try await session.readKeyDirectory() == [next])
                // The outgoing key is trusted until the `exp` the directory gave it (and the skew), no longer.
                let listed = try #require(
                    (try JSONSerialization.jsonObject(with: Data(body)) as? [String: Any])?["keys"] as? [[String: Any]])
                let expiry = Int64(try #require(listed.first?["exp"] as? Int))
                #expect(trusted.key(identity.responseKeyID, at: expiry + 300, maxSkew: 300) != nil)
                #expect(trusted.key(identity.responseKeyID, at: expiry + 301, maxSkew: 300) == nil)
                #expect(identity.following(trusted) == nil)
                _ = try await server.prepared.serverKeys.promote(.response, actor: "operator:test")
                let echo = try await session.send(
                    HTTPRequest(
                        method: .post, scheme: "https", authority: "localhost:\(server.port)", path: "/v1/echo"),
                    body: Array("{}".utf8))
                #expect(echo.head.status == .ok && echo.signatureVerified)
                // Its first answer shows the promotion: the identity to keep now names the new key.
                #expect(trusted.current?.keyId == next)
                #expect(identity.following(trusted)?.responseKeyID == next)
                try await connection.shutdown()
            } catch {
                try? await connection.shutdown()
                throw error
            }
        }
    }

    @Test("outside code (http-message-signatures, joserfc) verifies every signature and every kid")
    func outsidePeer() async throws {
        let script = TestPaths.tests.appendingPathComponent("Interop/verify_directory.py").path
        let interpreter = PythonHPKE.interpreter.flatMap { python in
            (try? PythonHPKE.run(python, ["-c", "import http_message_signatures, joserfc"])) != nil ? python : nil
        }
        guard let interpreter else {
            // Under CI the peer is installed by .ci/run; missing there, the test fails.
            #expect(!ExternalServers.isCI, "no python3 with http-message-signatures and joserfc")
            if !ExternalServers.isCI {
                print("skipping the directory's outside check: pip install http-message-signatures joserfc")
            }
            return
        }
        try await TestServer.with(clock: ManualUnixClock(SystemUnixClock().now())) { server in
            try await server.client().using { client in
                _ = try await server.prepared.serverKeys.rotate(.response, actor: "operator:test")
                let response = try await TestRequest(.get, Registration.Path.keyDirectory, server: server).send(client)
                let input: [String: Any] = [
                    "url": "https://localhost:\(server.port)\(Registration.Path.keyDirectory)",
                    "headers": response.headers.map { [$0.name.rawName, $0.value] },
                    "body": response.text,
                ]
                let output = String(
                    decoding: try PythonHPKE.run(
                        interpreter, [script], input: Array(try JSONSerialization.data(withJSONObject: input))),
                    as: UTF8.self)
                #expect(output.contains("verified 2"), "\(output)")
            }
        }
    }

    @Test(
        "an rfc9421 request whose keyid is the key's JWK thumbprint verifies as the key; a replay under the other name is a replay"
    )
    func thumbprintKeyID() async throws {
        try await TestServer.with { server in
            try await server.client().using { client in
                let device = try await DeviceSteps.registeredDevice(on: server, client: client)
                let thumbprint = try #require(try device.key.verificationKey.jwkThumbprint)
                let byThumbprint = TestDevice(key: device.key, keyID: thumbprint)
                let nonce = "thumbprint-nonce-0123456789"
                func echo(_ signer: TestDevice, _ profile: SignatureProfile) async throws -> TestResponse {
                    var request = TestRequest(.post, "/v1/echo", server: server, json: "{}")
                    let requestSigner = RequestSigner(
                        key: signer.key, keyID: signer.keyID, profile: profile, clock: server.clock,
                        nonces: FixedNonce(value: nonce))
                    try request.sign(with: requestSigner)
                    return try await request.send(client)
                }
                let first = try await echo(byThumbprint, .rfc9421)
                #expect(first.status == 200, "\(first.text)")
                // The identity names the key by its Sigil key ID.
                #expect(first.text.contains(device.keyID))
                // The same nonce under the Sigil key ID: the same key's nonce space.
                #expect(try await echo(device, .rfc9421).code == "replayed-nonce")
                // sigil-v1 names keys by Sigil key ID only.
                #expect(try await echo(byThumbprint, .sigilV1).code == "unknown-key")
                let records = try await server.prepared.directory.key(forThumbprint: thumbprint)
                #expect(records?.keyID == device.keyID)
            }
        }
    }
}
