import AsyncHTTPClient
import Foundation
import HTTPTypes
import JWTKit
import SigilClient
@_spi(Sigil) import SigilCore
import SigilJWT
import SigilServer
import SigilStandalone
import Testing

@testable import SigilTestSupport

/// `sigil serve --dpop`: OAuth clients' DPoP requests (RFC 9449) over real TLS, with tokens and proofs
/// from joserfc and from Sigil's prover; refusals with RFC 9449's challenge; server nonces; DPoP with
/// a Sigil signature.
@Suite("DPoP on sigil serve")
struct DPoPServerTests {
    static let origin = "https://api.example"

    @Test(
        "joserfc's DPoP requests are accepted once as profile dpop (sub, thumbprint, body unsigned); each bad one is refused with its challenge"
    )
    func outsideClients() async throws {
        guard
            let python = PythonHPKE.interpreter.flatMap({ python in
                (try? PythonHPKE.run(python, ["-c", "import joserfc"])) != nil ? python : nil
            })
        else {
            #expect(!ExternalServers.isCI, "no python3 with joserfc")
            return
        }
        let now = SigningSetup.start + 10
        let script = TestPaths.tests.appendingPathComponent("Interop/dpop_proofs.py").path
        let output = try PythonHPKE.run(python, [script, String(now), Self.origin + "/v1/echo", "-"])
        let made = try JSONDecoder().decode(DPoPScaffold.TokenCases.self, from: Data(output))
        let issuerFile = TestServer.temporaryDirectory() + "-issuer.pem"
        try made.issuer.write(toFile: issuerFile, atomically: true, encoding: .utf8)
        try await TestServer.with(configure: { options in
            options.jwt.keyFiles = [issuerFile]
            options.jwt.audience = TestTokenIssuer.audience
            options.jwt.issuer = TestTokenIssuer.issuer
            options.dpop.mode = .alone
            options.dpop.origin = Self.origin
        }) { server in
            try await server.client().using { client in
                func send(_ entry: DPoPScaffold.TokenCase) async throws -> TestResponse {
                    var request = TestRequest(.post, "/v1/echo", server: server, json: #"{"order":1}"#)
                    request.head.headerFields[.authorization] = "DPoP " + entry.token
                    request.head.headerFields[DPoPProver.field] = entry.proof
                    return try await request.send(client)
                }
                for (name, entry) in made.cases.sorted(by: { $0.key < $1.key }) {
                    let response = try await send(entry)
                    if entry.expect == "ok" {
                        #expect(response.status == 200, "\(name): \(response.text)")
                        #expect(response.json["profile"] as? String == "dpop", "\(name)")
                        #expect(response.json["userId"] as? String == "user-1", "\(name)")
                        #expect(response.json["bodySigned"] as? Bool == false, "\(name)")
                        #expect(response.json["keyId"] == nil, "\(name): an OAuth client's key is no registered key")
                        #expect(response.json["body"] as? String == #"{"order":1}"#)
                        // The same request again: a replayed proof.
                        let again = try await send(entry)
                        #expect(again.status == 401 && again.code == "replayed-nonce", "\(name)")
                        #expect(
                            again.headers[.wwwAuthenticate]?.hasPrefix("DPoP error=\"invalid_dpop_proof\"") == true)
                    } else {
                        #expect(response.status == 401, "\(name)")
                        let challenge = response.headers[.wwwAuthenticate] ?? ""
                        #expect(challenge.contains("error=\"\(entry.expect)\""), "\(name): \(challenge)")
                        #expect(challenge.contains("algs=\"ES256 ES384 EdDSA RS256 PS256\""), "\(name)")
                        #expect(response.code != nil, "\(name)")
                    }
                }
                // Neither a signature nor a proof: both ways in are named.
                let bare = try await TestRequest(.post, "/v1/echo", server: server, json: "{}").send(client)
                #expect(bare.status == 401 && bare.code == "missing-signature")
                #expect(bare.headers[.wwwAuthenticate]?.hasPrefix("DPoP algs=") == true)
                // A bound access token is no enrollment JWT (it would be a bearer token again).
                let es256 = try #require(made.cases["es256"])
                var enrollment = TestRequest(.post, "/v1/devices", server: server, json: "{}")
                enrollment.head.headerFields[.authorization] = "Bearer " + es256.token
                let refused = try await enrollment.send(client)
                #expect(refused.status == 401 || refused.status == 400, "\(refused.text)")
            }
        }
    }

    @Test("with-signature: a DPoP proof alone is refused; a Sigil-signed request with its proof is accepted")
    func withSignature() async throws {
        let issuer = try await TestTokenIssuer.make()
        try await TestServer.with(configure: { issuer.configure(&$0, mode: .withSignature) }) { server in
            try await server.client().using { client in
                let device = try TestDevice(.ed25519)
                try await server.prepared.directory.apply(
                    DirectoryChange(added: [
                        RegisteredKey(
                            keyID: device.keyID, key: try device.key.verificationKey, deviceID: "dev-dpop",
                            userID: "user-1")
                    ]))
                let prover = try DPoPProver(signer: try SigningKey.generate(.ecdsaP256SHA256), clock: server.clock)
                let token = try await issuer.token(boundTo: prover.thumbprint, expiresAt: server.clock.now() + 600)

                var alone = TestRequest(.post, "/v1/echo", server: server, json: "{}")
                try alone.addDPoP(prover, token: token)
                let refused = try await alone.send(client)
                #expect(refused.status == 401 && refused.code == "missing-signature", "\(refused.text)")

                var signedOnly = TestRequest(.post, "/v1/echo", server: server, json: "{}")
                try signedOnly.sign(with: device.signer(clock: server.clock))
                let noProof = try await signedOnly.send(client)
                #expect(noProof.status == 401 && noProof.code == "missing-signature", "\(noProof.text)")
                // No proof at all is no invalid one: the bare challenge (RFC 6750 §3.1), refused before
                // anything is verified.
                #expect(noProof.headers[.wwwAuthenticate]?.hasPrefix("DPoP algs=") == true)
                #expect(noProof.headers[.wwwAuthenticate]?.contains("error=") == false)

                var both = TestRequest(.post, "/v1/echo", server: server, json: #"{"n":1}"#)
                try both.addDPoP(prover, token: token)
                try both.sign(with: device.signer(clock: server.clock))
                let accepted = try await both.send(client)
                #expect(accepted.status == 200, "\(accepted.text)")
                #expect(accepted.json["keyId"] as? String == device.keyID)
                #expect(accepted.json["dpopThumbprint"] as? String == prover.thumbprint)
                #expect(accepted.json["bodySigned"] as? Bool == true)

                // Another user's device signing beside user-1's token and proof: two people in one
                // request, refused (and the token's challenge says the token is what is refused).
                let other = try TestDevice(.ed25519)
                try await server.prepared.directory.apply(
                    DirectoryChange(added: [
                        RegisteredKey(
                            keyID: other.keyID, key: try other.key.verificationKey, deviceID: "dev-other",
                            userID: "user-2")
                    ]))
                var mixed = TestRequest(.post, "/v1/echo", server: server, json: #"{"n":2}"#)
                try mixed.addDPoP(prover, token: token)
                try mixed.sign(with: other.signer(clock: server.clock))
                let refusedMix = try await mixed.send(client)
                #expect(refusedMix.status == 401 && refusedMix.code == "credential-mismatch", "\(refusedMix.text)")
                #expect(refusedMix.headers[.wwwAuthenticate]?.contains("invalid_token") == true)
                // user-2's own token with the same device: accepted, as user-2.
                let own = try await issuer.token(
                    subject: "user-2", boundTo: prover.thumbprint, expiresAt: server.clock.now() + 600)
                var matched = TestRequest(.post, "/v1/echo", server: server, json: #"{"n":3}"#)
                try matched.addDPoP(prover, token: own)
                try matched.sign(with: other.signer(clock: server.clock))
                let acceptedOwn = try await matched.send(client)
                #expect(acceptedOwn.status == 200 && acceptedOwn.json["userId"] as? String == "user-2")

                // A device registered without a user lends its signature to no one's token, unless the
                // token is bound to the device's own key (then its issuer tied them).
                let userless = try TestDevice(.ecdsaP256SHA256)
                try await server.prepared.directory.apply(
                    DirectoryChange(added: [
                        RegisteredKey(
                            keyID: userless.keyID, key: try userless.key.verificationKey, deviceID: "dev-free")
                    ]))
                var lent = TestRequest(.post, "/v1/echo", server: server, json: #"{"n":4}"#)
                try lent.addDPoP(prover, token: token)
                try lent.sign(with: userless.signer(clock: server.clock))
                let refusedLent = try await lent.send(client)
                #expect(refusedLent.status == 401 && refusedLent.code == "credential-mismatch", "\(refusedLent.text)")
                let ownProver = try DPoPProver(signer: userless.key, clock: server.clock)
                let bound = try await issuer.token(boundTo: ownProver.thumbprint, expiresAt: server.clock.now() + 600)
                var ownKey = TestRequest(.post, "/v1/echo", server: server, json: #"{"n":5}"#)
                try ownKey.addDPoP(ownProver, token: bound)
                try ownKey.sign(with: userless.signer(clock: server.clock))
                let acceptedBound = try await ownKey.send(client)
                #expect(acceptedBound.status == 200, "\(acceptedBound.text)")
                #expect(acceptedBound.json["userId"] as? String == "user-1")
                #expect(acceptedBound.json["deviceId"] as? String == "dev-free")
            }
        }
    }

    @Test("--dpop-nonce: a proof without the server's nonce gets use_dpop_nonce and a DPoP-Nonce; with it, accepted")
    func serverNonces() async throws {
        let issuer = try await TestTokenIssuer.make()
        try await TestServer.with(configure: { options in
            issuer.configure(&options)
            options.dpop.nonces = true
        }) { server in
            try await server.client().using { client in
                let prover = try DPoPProver(signer: try SigningKey.generate(.ed25519), clock: server.clock)
                let token = try await issuer.token(boundTo: prover.thumbprint, expiresAt: server.clock.now() + 600)
                var first = TestRequest(.post, "/v1/echo", server: server, json: "{}")
                try first.addDPoP(prover, token: token)
                let asked = try await first.send(client)
                #expect(asked.status == 401 && asked.code == "missing-component", "\(asked.text)")
                #expect(asked.headers[.wwwAuthenticate]?.hasPrefix("DPoP error=\"use_dpop_nonce\"") == true)
                let nonce = try #require(asked.headers[DPoPNonces.field])

                var second = TestRequest(.post, "/v1/echo", server: server, json: "{}")
                try second.addDPoP(prover, token: token, nonce: nonce)
                let accepted = try await second.send(client)
                #expect(accepted.status == 200, "\(accepted.text)")
                #expect(accepted.headers[DPoPNonces.field] != nil)

                // Two slots later the nonce is stale.
                server.clock.advance(by: 601)
                let fresh = try await issuer.token(boundTo: prover.thumbprint, expiresAt: server.clock.now() + 600)
                var late = TestRequest(.post, "/v1/echo", server: server, json: "{}")
                try late.addDPoP(prover, token: fresh, nonce: nonce)
                let stale = try await late.send(client)
                #expect(stale.status == 401 && stale.headers[.wwwAuthenticate]?.contains("use_dpop_nonce") == true)
            }
        }
    }

    @Test("--dpop needs the access tokens' keys, audience and issuer")
    func needsKeys() async throws {
        await #expect(throws: SigilInputError.self) {
            try await TestServer.with(configure: { $0.dpop.mode = .alone }) { _ in }
        }
    }
}

extension DPoPServerTests {
    @Test(
        "sigil curl --dpop --token --no-signature: a proof from the key file, the server's nonce learnt and resent once"
    )
    func curl() async throws {
        let issuer = try await TestTokenIssuer.make()
        let now = Int64(Date().timeIntervalSince1970)
        try await TestServer.with(
            clock: ManualUnixClock(now),
            configure: { options in
                issuer.configure(&options)
                options.dpop.nonces = true
            }
        ) { server in
            let keyPath = TestServer.temporaryDirectory() + "-dpop.pem"
            let keygen = try await SigilCommand.run(["keygen", "--alg", "ecdsa-p256-sha256", "--out", keyPath])
            #expect(keygen.status == 0, "\(keygen.error)")
            let key = try KeyFile.load(Array(try String(contentsOfFile: keyPath, encoding: .utf8).utf8))
            let thumbprint = try JWK(key.verificationKey).thumbprint
            let token = try await issuer.token(boundTo: thumbprint, expiresAt: server.clock.now() + 600)
            let url = "https://localhost:\(server.port)/v1/echo"
            let curl = try await SigilCommand.run([
                "curl", "-v", "--key", keyPath, "--cacert", server.prepared.certificateFile, "--dpop", "--token", token,
                "--no-signature", "--json", #"{"a":1}"#, url,
            ])
            #expect(curl.status == 0, "\(curl.error)")
            #expect(curl.text.contains(#""profile":"dpop""#), "\(curl.text)")
            #expect(curl.error.contains("nonce"), "\(curl.error)")
            // Without a token: refused before anything is sent.
            let missing = try await SigilCommand.run(["curl", "--key", keyPath, "--dpop", url])
            #expect(missing.status != 0)
        }
    }
}

extension DPoPServerTests {
    @Test(
        "SigilSession with dpop on a with-signature server: the signed use_dpop_nonce refusal is answered once with the nonce"
    )
    func session() async throws {
        let issuer = try await TestTokenIssuer.make()
        try await TestServer.with(configure: { options in
            issuer.configure(&options, mode: .withSignature)
            options.dpop.nonces = true
        }) { server in
            let (_, connection, enrolled, _) = try await AdminAPITests.enrolledSession(server)
            do {
                var session = enrolled
                // The device enrolled without a user: its token is bound to its own key.
                let prover = try DPoPProver(signer: session.signer.key, clock: session.clock)
                let token = try await issuer.token(boundTo: prover.thumbprint, expiresAt: server.clock.now() + 600)
                session.dpop = DPoPAuthorization(prover: prover, accessToken: token)
                let request = HTTPRequest(
                    method: .post, scheme: "https", authority: "localhost:\(server.port)", path: "/v1/echo")
                let response = try await session.send(request, body: Array(#"{"n":1}"#.utf8))
                #expect(response.head.status == .ok, "\(String(decoding: response.body, as: UTF8.self))")
                #expect(response.attempts == 2)
                #expect(response.signatureVerified)
                #expect(session.dpop?.nonce != nil)
                // The nonce is kept: the next request goes through at once.
                let next = try await session.send(request, body: Array(#"{"n":2}"#.utf8))
                #expect(next.head.status == .ok && next.attempts == 1)
                try await connection.shutdown()
            } catch {
                try? await connection.shutdown()
                throw error
            }
        }
    }
}
