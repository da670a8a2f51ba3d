import AsyncHTTPClient
import Foundation
import HTTPTypes
import SigilClient
@_spi(Sigil) import SigilCore
import SigilServer
import SigilStandalone
import Testing

@testable import SigilTestSupport

/// What an attacker's review of issue 29 (one identity for every credential) found open after the
/// first fix, each now refused.
@Suite("One identity, attacked (issue 29 review)")
struct IdentityAttackTests {
    // MARK: A. The self-signed registration route skips the connection's scheme and the public origin

    /// `POST /v1/devices` with the bootstrap token, signed with rfc9421 covering `@scheme` and
    /// `@authority` as `scheme` and `authority` say.
    static func register(
        _ device: TestDevice, scheme: String, authority: String? = nil, server: TestServer
    ) throws -> TestRequest {
        var request = TestRequest(.post, "/v1/devices", server: server, body: try device.registration)
        request.head.headerFields[.contentType] = "application/json"
        request.head.headerFields[.authorization] = "Bearer \(TestServer.token)"
        var signer = device.signer(.rfc9421, clock: server.clock)
        signer.components = [.method, .scheme, .authority, .path, .query]
        var signed = request
        signed.head.scheme = scheme
        if let authority { signed.head.authority = authority }
        try signed.sign(with: signer)
        request.head.headerFields = signed.head.headerFields
        return request
    }

    @Test(
        "on sigil serve over TLS, a registration whose rfc9421 signature covers \"@scheme\": https is registered and one covering http refused; over HTTP/1.1 and HTTP/2",
        arguments: IdentityTests.Version.allCases)
    func registrationSchemeOverTLS(_ version: IdentityTests.Version) async throws {
        try await TestServer.with { server in
            try await IdentityTests.client(server, version).using { client in
                let honest = try TestDevice(.ed25519)
                let https = try await Self.register(honest, scheme: "https", server: server).send(client)
                #expect(https.version == version.wire)
                #expect(https.status == 201, "\(https.status) \(https.text)")

                let downgraded = try TestDevice(.ed25519)
                let http = try await Self.register(downgraded, scheme: "http", server: server).send(client)
                #expect(http.version == version.wire)
                #expect(http.status == 401 && http.code == "invalid-signature", "\(http.status) \(http.text)")
            }
        }
    }

    @Test(
        "over HTTP/2: a client writing :scheme http cannot register a key whose rfc9421 signature covers \"@scheme\": http"
    )
    func registrationSchemeOverHTTP2() async throws {
        try await TestServer.with { server in
            let device = try TestDevice(.ed25519)
            var request = try Self.register(device, scheme: "http", server: server)
            request.head.scheme = "http"  // the :scheme the client writes
            let response = try await HTTP2Scaffold.sendHTTP2(request, to: server)
            #expect(
                response.status == 401 && response.code == "invalid-signature", "\(response.status) \(response.text)")
        }
    }

    @Test(
        "with --dpop-origin https://api.example: a registration signed for @authority api.example is registered, one signed for the Host the client sent refused; over HTTP/1.1 and HTTP/2",
        arguments: IdentityTests.Version.allCases)
    func registrationIgnoresPublicOrigin(_ version: IdentityTests.Version) async throws {
        let issuer = try await TestTokenIssuer.make()
        try await TestServer.with(configure: { options in
            issuer.configure(&options)
            options.dpop.origin = "https://api.example"
        }) { server in
            try await IdentityTests.client(server, version).using { client in
                let honest = try TestDevice(.ed25519)
                let toPublic = try await Self.register(
                    honest, scheme: "https", authority: "api.example", server: server
                ).send(client)
                #expect(toPublic.version == version.wire)
                #expect(toPublic.status == 201, "\(toPublic.status) \(toPublic.text)")
                let other = try TestDevice(.ed25519)
                let toHost = try await Self.register(other, scheme: "https", server: server).send(client)
                #expect(toHost.status == 401 && toHost.code == "invalid-signature", "\(toHost.text)")
            }
        }
    }

    // MARK: A user with no device is revoked all the same

    @Test(
        "user-9 reaches the server only with an OAuth client's DPoP key (no device): revoke --user records it, and user-9's token is refused from then on; over HTTP/1.1 and HTTP/2",
        arguments: IdentityTests.Version.allCases)
    func devicelessUserIsRevoked(_ version: IdentityTests.Version) async throws {
        try await IdentityTests.withAdminServer(version) { server, client, issuer, adminPort in
            let oauthClient = try DPoPProver(signer: try SigningKey.generate(.ecdsaP256SHA256), clock: server.clock)
            let token = try await IdentityTests.token(
                issuer, subject: "user-9", boundTo: oauthClient.thumbprint,
                expiresAt: server.clock.now() + 3600, issuedAt: Double(server.clock.now() - 60))
            let before = try await IdentityTests.dpopEcho(server, client, prover: oauthClient, token: token)
            #expect(before.version == version.wire)
            #expect(before.status == 200 && before.json["userId"] as? String == "user-9", "\(before.text)")

            let revoked = try await AdminScaffold.call(
                .POST, "/admin/v1/users/user-9/revoke?reason=stolen", port: adminPort,
                token: AdminScaffold.adminToken, client: client)
            #expect(revoked.status == 200, "\(String(decoding: revoked.body, as: UTF8.self))")
            server.clock.advance(by: 2)
            let after = try await IdentityTests.dpopEcho(server, client, prover: oauthClient, token: token)
            #expect(after.version == version.wire)
            #expect(after.status == 401 && after.code == "revoked-key", "\(after.status) \(after.text)")
            // In the library too, and the audit trail says so.
            try await server.prepared.directory.apply(
                DirectoryChange(
                    revokedUsers: ["user-10"],
                    audit: [AuditEntry(time: server.clock.now(), action: .revoked, userID: "user-10", actor: "ops")]
                ))
            let rows = try await server.prepared.directory.auditTrail(AuditQuery(userID: "user-10"))
            #expect(rows.count == 1 && rows.first?.action == .revoked)
        }
    }

    // MARK: A KeyDirectory must look DPoP keys up (key(forThumbprint:) has no default any more)

    /// A directory as a library user writes one, passing every lookup on.
    struct PlainDirectory: KeyDirectory {
        let inner: Directory
        func key(for keyID: String) async throws -> RegisteredKey? { try await inner.key(for: keyID) }
        func key(forThumbprint thumbprint: String) async throws -> RegisteredKey? {
            try await inner.key(forThumbprint: thumbprint)
        }
        func revocationOfUser(_ userID: String) async throws -> Int64? { try await inner.revocationOfUser(userID) }
    }

    struct FixedTokens: AccessTokenVerifier {
        let token: AccessToken
        func verify(_ token: String) async throws -> AccessToken { self.token }
    }

    @Test(
        "a revoked device's own key proving DPoP is refused through the memory directory and through a directory of a library user's"
    )
    func customDirectoryRevokedDeviceKey() async throws {
        let clock = ManualUnixClock(SigningSetup.start)
        let device = try TestDevice(.ecdsaP256SHA256)
        let memory = Directory.inMemory(
            [
                RegisteredKey(
                    keyID: device.keyID, key: try device.key.verificationKey, deviceID: "dev-lost", userID: "user-1")
            ], clock: clock)
        try await memory.apply(DirectoryChange(revokedDevices: ["dev-lost"]))
        let prover = try DPoPProver(signer: device.key, clock: clock)
        let tokens = FixedTokens(
            token: AccessToken(
                subject: "user-1", boundThumbprint: prover.thumbprint, expiresAt: clock.now() + 600,
                issuedAt: clock.now() - 10))

        func admit(_ keys: any KeyDirectory) async throws -> SigilIdentity {
            let nonces = MemoryNonceStore(clock: clock)
            clock.advance(by: 2)
            let exchange = Exchange(
                verifier: RequestVerifier(keys: keys, nonces: nonces, clock: clock),
                dpop: DPoPVerifier(tokens: tokens, nonces: nonces, clock: clock))
            var head = HTTPRequest(method: .get, scheme: "https", authority: "api.example", path: "/v1/orders")
            head.headerFields[.authorization] = "DPoP token"
            head.headerFields[DPoPProver.field] = try prover.proof(for: head, accessToken: "token")
            return try #require(try await exchange.admit(head, body: []).identity)
        }
        await #expect(throws: SigilError(.revokedKey, "")) { _ = try await admit(memory) }
        await #expect(throws: SigilError(.revokedKey, "")) { _ = try await admit(PlainDirectory(inner: memory)) }
    }

    // MARK: with-signature: a user-less device carries no one's token

    @Test(
        "--dpop with-signature: a device enrolled with the bootstrap token (no user) signing beside user-1's stolen token and proof is credential-mismatch; the token and proof alone are refused; over HTTP/1.1 and HTTP/2",
        arguments: IdentityTests.Version.allCases)
    func userlessDeviceCarriesNoOnesToken(_ version: IdentityTests.Version) async throws {
        let issuer = try await TestTokenIssuer.make()
        try await TestServer.with(configure: { issuer.configure(&$0, mode: .withSignature) }) { server in
            try await IdentityTests.client(server, version).using { client in
                let attacker = try TestDevice(.ed25519)
                let registered = try await DeviceSteps.register(attacker, on: server, client: client)
                #expect(registered.version == version.wire)
                #expect(registered.status == 201, "\(registered.text)")
                #expect(registered.json["userId"] == nil, "the bootstrap token names no user")

                // user-1's stolen token and OAuth-client key.
                let victimKey = try DPoPProver(signer: try SigningKey.generate(.ecdsaP256SHA256), clock: server.clock)
                let token = try await issuer.token(
                    subject: "user-1", boundTo: victimKey.thumbprint, expiresAt: server.clock.now() + 600)
                var alone = TestRequest(.post, "/v1/echo", server: server, json: "{}")
                try alone.addDPoP(victimKey, token: token)
                #expect(try await alone.send(client).status == 401)

                var both = TestRequest(.post, "/v1/echo", server: server, json: #"{"n":1}"#)
                try both.addDPoP(victimKey, token: token)
                try both.sign(with: attacker.signer(clock: server.clock))
                let refused = try await both.send(client)
                #expect(refused.version == version.wire)
                #expect(refused.status == 401 && refused.code == "credential-mismatch", "\(refused.text)")
            }
        }
    }
}
