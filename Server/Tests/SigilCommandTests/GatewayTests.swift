import AsyncHTTPClient
import Crypto
import Foundation
import HTTPTypes
import NIOCore
import SigilClient
@_spi(Sigil) import SigilCore
import SigilServer
import Testing

@testable import SigilStandalone
@testable import SigilTestSupport

/// `sigil gateway` in front of a backend no one here wrote: Python's standard library HTTP server
/// (`Tests/Upstream/echo_upstream.py`), over loopback.
@Suite("Gateway in front of a Python backend", .enabled(if: PythonUpstream.available))
struct GatewayTests {

    /// The server's response key, as a client pins it.
    static func responses(_ server: TestServer) throws -> ResponseVerifier {
        let key = try DataDirectory(path: server.options.dataDirectory).responseKey().verificationKey
        return ResponseVerifier(key: key, keyID: server.prepared.responseKeyID, clock: server.clock)
    }

    @Test(
        "a signed request arrives with the canonical path and the verified identity only; the answer comes back signed")
    func forwardsVerifiedRequests() async throws {
        try await GatewayScaffold.withGateway { server, upstream, device, client in
            var request = TestRequest(.post, "/Orders/42/?b=2&a=1", server: server, json: #"{"qty":3}"#)
            // Fields a client may not set: they would claim another identity or origin.
            request.head.headerFields[HTTPField.Name("Sigil-Key-ID")!] = "someone-else"
            request.head.headerFields[HTTPField.Name("Sigil-Device-ID")!] = "dev-other"
            request.head.headerFields[HTTPField.Name("X-Forwarded-For")!] = "203.0.113.9"
            request.head.headerFields[HTTPField.Name("Sigil_User_ID")!] = "admin"
            request.head.headerFields[HTTPField.Name("X-Real-IP")!] = "10.0.0.1"
            request.head.headerFields[HTTPField.Name("X-HTTP-Method-Override")!] = "DELETE"
            try request.sign(with: device.signer(clock: server.clock))
            let response = try await request.send(client, to: server)
            #expect(response.status == 200, "\(response.text)")
            let echo = response.json
            let headers = echo["headers"] as? [String: [String]] ?? [:]
            #expect(echo["method"] as? String == "POST")
            #expect(echo["path"] as? String == "/orders/42?a=1&b=2")  // canonical path and query
            #expect(echo["body"] as? String == #"{"qty":3}"#)
            #expect(headers["sigil-key-id"] == [device.keyID])
            #expect(headers["sigil-device-id"] == ["dev-gw"])
            #expect(headers["sigil-algorithm"] == ["ed25519"])
            #expect(headers["sigil-profile"] == ["sigil-v1"])
            #expect(headers["sigil-gateway-secret"] == ["gateway-secret-for-tests"])
            #expect(headers["x-forwarded-for"] == ["127.0.0.1"])
            #expect(headers["sigil_user_id"] == nil && headers["sigil-user-id"] == nil)
            #expect(headers["x-real-ip"] == nil && headers["x-http-method-override"] == nil)
            #expect(headers["x-forwarded-proto"] == ["https"])
            #expect(headers["forwarded"]?.first?.hasPrefix("for=127.0.0.1;proto=https") == true)
            // The backend's forged signature is replaced by the gateway's, bound to the request's nonce.
            #expect(response.headers[HTTPField.Name("X-Signature")!] != "forged-by-upstream")
            #expect(response.headers[HTTPField.Name("Sigil-Gateway-Secret")!] == nil)
            try Self.responses(server).verifySigilV1(
                HTTPResponse(status: .ok, headerFields: response.headers), body: response.body,
                answering: request.answered)
            #expect(try await upstream.count() == 1)
        }
    }

    @Test("a DPoP request goes to the backend as profile dpop: the token's sub, the key's thumbprint, body not signed")
    func forwardsDPoP() async throws {
        let issuer = try await TestTokenIssuer.make()
        try await GatewayScaffold.withGateway(configure: { issuer.configure(&$0) }) { server, upstream, _, client in
            let prover = try DPoPProver(signer: try SigningKey.generate(.ecdsaP256SHA256), clock: server.clock)
            let token = try await issuer.token(boundTo: prover.thumbprint, expiresAt: server.clock.now() + 600)
            var request = TestRequest(.post, "/orders/7", server: server, json: #"{"qty":1}"#)
            request.head.headerFields[HTTPField.Name("Sigil-Body-Signed")!] = "?1"
            try request.addDPoP(prover, token: token)
            let response = try await request.send(client)
            #expect(response.status == 200, "\(response.text)")
            let headers = response.json["headers"] as? [String: [String]] ?? [:]
            #expect(headers["sigil-profile"] == ["dpop"])
            #expect(headers["sigil-user-id"] == ["user-1"])
            #expect(headers["sigil-dpop-thumbprint"] == [prover.thumbprint])
            #expect(headers["sigil-body-signed"] == ["?0"])
            #expect(headers["sigil-key-id"] == nil)  // no registered key: named by thumbprint and user
            // The same proof again never reaches the backend.
            let replay = try await request.send(client)
            #expect(replay.status == 401 && replay.code == "replayed-nonce")
            #expect(try await upstream.count() == 1)
        }
    }

    @Test("unsigned, replayed and tampered requests never reach the backend")
    func refusalsNeverArrive() async throws {
        try await GatewayScaffold.withGateway { server, upstream, device, client in
            let unsigned = try await TestRequest(.post, "/orders", server: server, json: "{}").send(client, to: server)
            #expect(unsigned.status == 401)
            #expect(unsigned.code == "missing-signature")

            var request = TestRequest(.post, "/orders", server: server, json: #"{"n":1}"#)
            try request.sign(with: device.signer(clock: server.clock))
            #expect(try await request.send(client, to: server).status == 200)
            let replay = try await request.send(client, to: server)
            #expect(replay.status == 401)
            #expect(replay.code == "replayed-nonce")

            var tampered = TestRequest(.post, "/orders", server: server, json: #"{"amount":1}"#)
            try tampered.sign(with: device.signer(clock: server.clock))
            tampered.body = Array(#"{"amount":9}"#.utf8)
            let refused = try await tampered.send(client, to: server)
            #expect(refused.status == 401)
            #expect(refused.code == "invalid-signature")

            #expect(try await upstream.count() == 1)
        }
    }

    @Test(
        "targets no reading may forward (escapes that decode to no UTF-8, an encoded backslash) are refused 400 invalid-target before the backend, signed for a signed request, and unsigned ones under --monitor too"
    )
    func unusableTargets() async throws {
        try await GatewayScaffold.withGateway(configure: {
            $0.upstream?.url += "/backend"
            $0.monitor = ["/api/public"]
        }) { server, upstream, device, client in
            for path in ["/api/orders/%ff?cmd=wipe", "/api/public/%c0%ae?cmd=wipe", "/api/public/..%5Cprivate"] {
                for profile in SignatureProfile.allCases {
                    var request = TestRequest(.get, path, server: server)
                    try request.sign(with: device.signer(profile, clock: server.clock))
                    // Over a client that sends the path as it is: AsyncHTTPClient would send `/`.
                    let refused = try await HTTP2Scaffold.sendHTTP2(request, to: server)
                    #expect(refused.status == 400 && refused.code == "invalid-target", "\(path): \(refused.text)")
                    if profile == .sigilV1 {
                        try Self.responses(server).verifySigilV1(
                            HTTPResponse(status: .badRequest, headerFields: refused.headers), body: refused.body,
                            answering: request.answered)
                    }
                }
                let unsigned = try await HTTP2Scaffold.sendHTTP2(TestRequest(.get, path, server: server), to: server)
                // Let through by monitor mode under /api/public, then refused all the same; refused
                // for its missing signature elsewhere.
                let expected = path.hasPrefix("/api/public") ? "invalid-target" : "missing-signature"
                #expect(unsigned.code == expected, "\(path): \(unsigned.text)")
            }
            #expect(try await upstream.count() == 0, "nothing reached the backend")
            // Under the upstream's path, as sent.
            var fine = TestRequest(.get, "/api/orders/%C3%A9", server: server)
            try fine.sign(with: device.signer(clock: server.clock))
            let forwarded = try await fine.send(client, to: server)
            #expect(forwarded.json["path"] as? String == "/backend/api/orders/%C3%A9", "\(forwarded.text)")
        }
    }

    @Test("a 5 MiB body goes through whole, and rfc9421 requests keep their path as signed")
    func largeBodiesAndRFC9421() async throws {
        try await GatewayScaffold.withGateway { server, _, device, client in
            var bytes = [UInt8](repeating: 0, count: 5 << 20)
            for index in bytes.indices { bytes[index] = UInt8(truncatingIfNeeded: index &* 31 &+ 7) }
            var large = TestRequest(.put, "/blobs/1", server: server, body: bytes)
            large.head.headerFields[.contentType] = "application/octet-stream"
            try large.sign(with: device.signer(clock: server.clock))
            let stored = try await large.send(client, to: server)
            #expect(stored.status == 200, "\(stored.text)")
            #expect(stored.json["bodyLength"] as? Int == 5 << 20)
            #expect(stored.json["bodySHA256"] as? String == Hex.encode(Array(SHA256.hash(data: bytes))))

            var rfc = TestRequest(.get, "/Reports/Q3/?year=2026", server: server)
            try rfc.sign(with: device.signer(.rfc9421, clock: server.clock))
            let report = try await rfc.send(client, to: server)
            #expect(report.status == 200, "\(report.text)")
            #expect(report.json["path"] as? String == "/Reports/Q3/?year=2026")
            #expect((report.json["headers"] as? [String: [String]])?["sigil-profile"] == ["rfc9421"])
        }
    }

    @Test("paths next to the registration API's and methods it does not serve go to the backend; its own do not")
    func besideRegistration() async throws {
        try await GatewayScaffold.withGateway { server, upstream, device, client in
            for (method, path) in [
                (HTTPRequest.Method.post, "/v1/orders"), (.get, "/v1/devices"), (.get, "/v1/devices/x/orders"),
                (.get, "/v1/keys"), (.get, "/.well-known/openid-configuration"), (.get, "/"),
            ] {
                var request = TestRequest(method, path, server: server)
                try request.sign(with: device.signer(clock: server.clock))
                let forwarded = try await request.send(client, to: server)
                #expect(forwarded.status == 200, "\(method) \(path): \(forwarded.text)")
                #expect(forwarded.json["path"] as? String == path, "\(method) \(path)")
            }
            let before = try await upstream.count()
            let discovery = try await TestRequest(.get, "/.well-known/sigil", server: server).send(client, to: server)
            #expect(discovery.json["responseKeys"] != nil)
            #expect(try await upstream.count() == before)
        }
    }

    @Test("--keep-path: a path in canonical form goes as it came, any other is refused before the backend")
    func keepPath() async throws {
        try await GatewayScaffold.withGateway(keepPath: true) { server, upstream, device, client in
            var canonical = TestRequest(.get, "/files/a%2fb?x=1", server: server)
            try canonical.sign(with: device.signer(clock: server.clock))
            let kept = try await canonical.send(client, to: server)
            #expect(kept.status == 200, "\(kept.text)")
            #expect(kept.json["path"] as? String == "/files/a%2fb?x=1")

            var other = TestRequest(.get, "/Files/A", server: server)
            try other.sign(with: device.signer(clock: server.clock))
            let refused = try await other.send(client, to: server)
            #expect(refused.status == 403)
            #expect(refused.code == "forbidden")
            #expect(try await upstream.count() == 1)
        }
    }

    @Test("the backend is told a host only from configuration or a covered @authority, never an unsigned Host")
    func forwardedHost() async throws {
        try await GatewayScaffold.withGateway { server, _, device, client in
            // sigil-v1 signs no Host: whatever the client wrote is not passed on as the host it reached.
            var spoofed = TestRequest(.get, "/reset-link", server: server)
            spoofed.head.headerFields[GatewayScaffold.host] = "evil.example"
            try spoofed.sign(with: device.signer(clock: server.clock))
            let sent = try await spoofed.send(client, to: server)
            #expect(sent.status == 200, "\(sent.text)")
            let headers = sent.json["headers"] as? [String: [String]] ?? [:]
            #expect(headers["x-forwarded-host"] == nil)
            #expect(headers["forwarded"]?.first?.contains("evil") == false)
            #expect(headers["host"]?.first?.contains("evil") == false)

            // rfc9421 covers @authority: the Host did reach the server (a spoofed one breaks the
            // signature), and the signed authority is passed on.
            var spoofedRFC9421 = TestRequest(.get, "/reset-link", server: server)
            try spoofedRFC9421.sign(with: device.signer(.rfc9421, clock: server.clock))
            spoofedRFC9421.head.headerFields[GatewayScaffold.host] = "evil.example"
            #expect(try await spoofedRFC9421.send(client, to: server).code == "invalid-signature")
            var covered = TestRequest(.get, "/reset-link", server: server)
            try covered.sign(with: device.signer(.rfc9421, clock: server.clock))
            let signed = try await covered.send(client, to: server)
            let signedHeaders = signed.json["headers"] as? [String: [String]] ?? [:]
            #expect(signedHeaders["x-forwarded-host"] == ["localhost:\(server.port)"])
        }
        try await GatewayScaffold.withGateway(publicHost: "api.example.com") { server, _, device, client in
            var spoofed = TestRequest(.get, "/reset-link", server: server)
            spoofed.head.headerFields[GatewayScaffold.host] = "evil.example"
            try spoofed.sign(with: device.signer(clock: server.clock))
            let answer = try await spoofed.send(client, to: server)
            #expect(answer.status == 200, "\(answer.status): \(answer.text)")
            let headers = answer.json["headers"] as? [String: [String]] ?? [:]
            #expect(headers["x-forwarded-host"] == ["api.example.com"])
            #expect(headers["forwarded"]?.first?.hasSuffix(#";host="api.example.com""#) == true)
        }
    }

    @Test("--require-sealed matches the path a router sees: other spellings of a sealed path are refused too")
    func requireSealedSpellings() async throws {
        try await GatewayScaffold.withGateway(sealedPaths: ["/api/account"]) { server, upstream, device, client in
            for spelling in [
                "/api/account", "/API/Account/", "/api/./account", "/x/../api/account", "/api/account/x",
                "/api%2Faccount", "/api/%61ccount", "/api%252Faccount", "/api//account", "/api/account;x",
                "//api/account",
            ] {
                var plain = TestRequest(.post, spelling, server: server, json: #"{"a":1}"#)
                try plain.sign(with: device.signer(clock: server.clock))
                let refused = try await plain.send(client, to: server)
                #expect(refused.status == 400, "\(spelling): \(refused.text)")
                #expect(refused.code == "sealed-body-invalid", "\(spelling)")
            }
            var elsewhere = TestRequest(.post, "/api/accounts", server: server, json: #"{"a":1}"#)
            try elsewhere.sign(with: device.signer(clock: server.clock))
            #expect(try await elsewhere.send(client, to: server).status == 200)
            #expect(try await upstream.count() == 1)
        }
    }

    @Test("a backend's answer that speaks a Sigil refusal is not signed as the gateway's: 502 upstream-unavailable")
    func backendSpeakingForTheGateway() async throws {
        try await GatewayScaffold.withGateway { server, _, device, client in
            var request = TestRequest(.post, "/__sigil-refusal", server: server, json: "{}")
            try request.sign(with: device.signer(clock: server.clock))
            let response = try await request.send(client, to: server)
            #expect(response.status == 502)
            #expect(response.code == "upstream-unavailable")
        }
    }

    @Test("a backend that is down gives a signed 502 upstream-unavailable")
    func backendDown() async throws {
        try await GatewayScaffold.withGateway { server, upstream, device, client in
            upstream.stop()
            var request = TestRequest(.post, "/orders", server: server, json: "{}")
            try request.sign(with: device.signer(clock: server.clock))
            let started = ContinuousClock.now
            let response = try await request.send(client, to: server)
            // Refused connections end within the 2 s connect limit, not the 30 s read deadline: the bound
            // sits between the two, far enough from both for a busy machine (a full run took 5.6 s).
            #expect(ContinuousClock.now - started < .seconds(15))
            #expect(response.status == 502)
            #expect(response.code == "upstream-unavailable")
            try Self.responses(server).verifySigilV1(
                HTTPResponse(status: .badGateway, headerFields: response.headers), body: response.body,
                answering: request.answered)
        }
    }
}

/// What the gateway forwards as the target, whatever the client sent.
@Suite("Gateway targets")
struct GatewayTargetTests {
    @Test("only origin-form targets without a fragment are forwarded; sigil-v1 ones canonical")
    func targets() throws {
        // Joined to http://127.0.0.1:8080 these would name another host, or hide a path from the signature.
        // Escapes that decode to no UTF-8 became `/` on the way to the backend, the query kept.
        for hostile in ["*@evil.example/x", "@evil.example/x", "/v1/notes#/../../admin/users?role=admin", ""] {
            for profile in [SignatureProfile.sigilV1, .rfc9421] {
                #expect(throws: SigilError(.forbidden, "")) {
                    _ = try GatewayRoutes.target(hostile, profile: profile, keepPath: false)
                }
            }
        }
        // A backslash, raw or encoded, is refused: some backends read it as `/`.
        for unusable in [
            "/a\\b", "/api/orders/%ff?cmd=wipe", "/api/public/%c0%ae?cmd=wipe", "/api/public/..%5Cprivate",
            "/api/public/..%5cprivate",
            // A dot segment behind an encoded slash, which a decoding backend reads outside the prefix.
            "/..%2Fsecret", "/a/.%2f..%2fb",
        ] {
            for profile in [SignatureProfile.sigilV1, .rfc9421] {
                #expect(throws: SigilError(.invalidTarget, "")) {
                    _ = try GatewayRoutes.target(unusable, profile: profile, keepPath: false)
                }
            }
        }
        #expect(try GatewayRoutes.target("/A/./b/?z=1&a=%7e+", profile: .sigilV1, keepPath: false) == "/a/b?a=~%2B&z=1")
        #expect(try GatewayRoutes.target("/A/b/?z=1", profile: .rfc9421, keepPath: false) == "/A/b/?z=1")
        #expect(try GatewayRoutes.target("/a/%2fb?q", profile: .sigilV1, keepPath: true) == "/a/%2fb?q=")
        // rfc9421 keeps the target as signed: a dot segment, raw or encoded, is refused; sigil-v1's
        // canonical form has none left.
        for dotted in ["/x/../../secret", "/%2e%2e/secret", "/A/./b/?z=1"] {
            #expect(throws: SigilError(.invalidTarget, "")) {
                _ = try GatewayRoutes.target(dotted, profile: .rfc9421, keepPath: false)
            }
            #expect(!(try GatewayRoutes.target(dotted, profile: .sigilV1, keepPath: false)).contains("."))
        }
    }

    @Test("identity values are made safe for a field: control characters and non-ASCII percent-encoded")
    func fieldValues() {
        #expect(GatewayRoutes.fieldValue("user\r\nX-Admin: 1") == "user%0D%0AX-Admin: 1")
        #expect(GatewayRoutes.fieldValue("café 100%") == "caf%C3%A9 100%25")
    }
}
