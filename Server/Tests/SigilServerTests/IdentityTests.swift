import AsyncHTTPClient
import Crypto
import Foundation
import HTTPTypes
import JWTKit
import NIOCore
import NIOHTTP1
// Transitive modules (HTTP/2 of Hummingbird and AsyncHTTPClient), for a client that writes its own `:scheme`.
import NIOHTTP2
import NIOHTTPTypes
import NIOHTTPTypesHTTP2
import NIOPosix
import NIOSSL
import SigilClient
@_spi(Sigil) import SigilCore
import SigilFiles
import SigilServer
import SigilStandalone
import SigilTLS
import Testing
import X509

@testable import SigilTestSupport

/// Issue 29: every credential a request carries (a Sigil signature, a DPoP proof key and its access
/// token, a TLS client certificate) resolves through the key directory to one device and one user,
/// and revocation reaches each of them. Each test here is a hole the review found, shown closed over
/// real TLS (`sigil serve` in this process) with the server's clock injected.
@Suite("One identity for every credential (issue 29)")
struct IdentityTests {
    // MARK: Helpers

    /// Access token claims written by hand, so a test can give any `aud`, `iss`, `exp` and `iat`
    /// (a fraction of a second included, as RFC 7519's NumericDate allows) or leave `iat` out.
    struct TokenClaims: JWTPayload {
        struct Confirmation: Codable, Sendable { let jkt: String }
        var sub: String
        var aud: [String] = [TestTokenIssuer.audience]
        var iss: String = TestTokenIssuer.issuer
        var exp: Double
        var iat: Double?
        var cnf: Confirmation?
        func verify(using algorithm: some JWTAlgorithm) throws {}
    }

    /// A token signed by `issuer`'s key.
    static func token(
        _ issuer: TestTokenIssuer, subject: String = "user-1", boundTo jkt: String, expiresAt: Int64,
        issuedAt: Double?, audience: String = TestTokenIssuer.audience, issuerName: String = TestTokenIssuer.issuer
    ) async throws -> String {
        try await issuer.keys.sign(
            TokenClaims(
                sub: subject, aud: [audience], iss: issuerName, exp: Double(expiresAt), iat: issuedAt,
                cnf: .init(jkt: jkt)))
    }

    /// Registers `device`'s key in the running server's directory as device `deviceID` of `userID`.
    static func register(_ device: TestDevice, as deviceID: String, user: String?, on server: TestServer) async throws {
        try await server.prepared.directory.apply(
            DirectoryChange(added: [
                RegisteredKey(
                    keyID: device.keyID, key: try device.key.verificationKey, deviceID: deviceID, userID: user)
            ]))
    }

    /// `POST /v1/echo` proved by `prover` and `token` alone (no Sigil signature), its proof's `htu`
    /// naming `origin` (else the URI the request is sent to).
    static func dpopEcho(
        _ server: TestServer, _ client: HTTPClient, prover: DPoPProver, token: String, origin: String? = nil,
        path: String = "/v1/echo"
    ) async throws -> TestResponse {
        var request = TestRequest(.post, path, server: server, json: #"{"n":1}"#)
        try request.addDPoP(prover, token: token, origin: origin)
        return try await request.send(client)
    }

    /// Whether `response` is a 401 with `code` and RFC 9449's `invalid_token` challenge.
    static func refusedToken(_ response: TestResponse, _ code: String) -> Bool {
        response.status == 401 && response.code == code
            && response.headers[.wwwAuthenticate]?.hasPrefix(#"DPoP error="invalid_token""#) == true
    }

    /// The HTTP version a client speaks to the server.
    enum Version: String, CaseIterable, CustomTestStringConvertible, Sendable {
        case http1, http2
        var testDescription: String { self == .http1 ? "HTTP/1.1" : "HTTP/2" }
        var wire: HTTPVersion { self == .http1 ? .http1_1 : .http2 }
    }

    /// A client trusting `server` that speaks `version` only (HTTP/2 is negotiated by ALPN), its TLS
    /// configuration changed by `configure` (a client certificate, say).
    /// `sigil serve` accepting DPoP alone with the test issuer's tokens and an admin API on a port of its
    /// own, and a client of `version` to it (closed after `body`).
    static func withAdminServer(
        _ version: Version,
        _ body: (TestServer, HTTPClient, TestTokenIssuer, Int) async throws -> Void
    ) async throws {
        let issuer = try await TestTokenIssuer.make()
        let adminToken = try AdminScaffold.tokenFile()
        try await TestServer.with(configure: { options in
            issuer.configure(&options)
            options.admin.port = 0
            options.admin.tokenFile = adminToken
        }) { server in
            try await Self.client(server, version).using { client in
                let adminPort = try #require(await server.prepared.adminPort?.value())
                try await body(server, client, issuer, adminPort)
            }
        }
    }

    static func client(
        _ server: TestServer, _ version: Version, configure: (inout TLSConfiguration) throws -> Void = { _ in }
    ) throws -> HTTPClient {
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.minimumTLSVersion = .tlsv13
        tls.trustRoots = .certificates(try server.certificates)
        try configure(&tls)
        var configuration = HTTPClient.Configuration(tlsConfiguration: tls)
        configuration.httpVersion = version == .http1 ? .http1Only : .automatic
        configuration.timeout = .init(connect: .seconds(10), read: .seconds(30))
        return HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }

    // MARK: Hole 1: a device's DPoP key is that device

    @Test(
        "hole 1: a device's own P-256 key proving DPoP is that device (its key ID, device and user); once revoked, by the admin API or `sigil admin revoke --device`, its next DPoP request is revoked-key with invalid_token; another user's device key with user-1's token is credential-mismatch; over HTTP/1.1 and HTTP/2",
        arguments: Version.allCases)
    func deviceKeyIsTheDevice(_ version: Version) async throws {
        try await Self.withAdminServer(version) { server, client, issuer, adminPort in
            let byAPI = try TestDevice(.ecdsaP256SHA256)
            let byCLI = try TestDevice(.ecdsaP256SHA256)
            let otherUser = try TestDevice(.ed25519)
            try await Self.register(byAPI, as: "dev-api", user: "user-1", on: server)
            try await Self.register(byCLI, as: "dev-cli", user: "user-1", on: server)
            try await Self.register(otherUser, as: "dev-user-2", user: "user-2", on: server)

            // The device's key proves the request, with a token of its user bound to that key.
            for (device, deviceID) in [(byAPI, "dev-api"), (byCLI, "dev-cli")] {
                let prover = try DPoPProver(signer: device.key, clock: server.clock)
                let token = try await issuer.token(boundTo: prover.thumbprint, expiresAt: server.clock.now() + 600)
                let accepted = try await Self.dpopEcho(server, client, prover: prover, token: token)
                #expect(accepted.version == version.wire)
                #expect(accepted.status == 200, "\(accepted.text)")
                #expect(accepted.json["profile"] as? String == "dpop")
                #expect(accepted.json["keyId"] as? String == device.keyID, "the device's key, not a made-up ID")
                #expect(accepted.json["deviceId"] as? String == deviceID)
                #expect(accepted.json["userId"] as? String == "user-1")
                #expect(accepted.json["dpopThumbprint"] as? String == prover.thumbprint)
            }

            // user-2's device key making the proof for a token of user-1: two people in one request.
            let otherProver = try DPoPProver(signer: otherUser.key, clock: server.clock)
            let someoneElse = try await issuer.token(
                subject: "user-1", boundTo: otherProver.thumbprint, expiresAt: server.clock.now() + 600)
            let mixed = try await Self.dpopEcho(server, client, prover: otherProver, token: someoneElse)
            #expect(Self.refusedToken(mixed, "credential-mismatch"), "\(mixed.text)")
            let own = try await issuer.token(
                subject: "user-2", boundTo: otherProver.thumbprint, expiresAt: server.clock.now() + 600)
            let matched = try await Self.dpopEcho(server, client, prover: otherProver, token: own)
            #expect(matched.status == 200 && matched.json["deviceId"] as? String == "dev-user-2", "\(matched.text)")

            // Revoked through the admin API of the running server: the next DPoP request is refused.
            let revoked = try await AdminScaffold.call(
                .POST, "/admin/v1/devices/dev-api/revoke?reason=lost", port: adminPort,
                token: AdminScaffold.adminToken, client: client)
            #expect(revoked.status == 200, "\(String(decoding: revoked.body, as: UTF8.self))")
            let apiProver = try DPoPProver(signer: byAPI.key, clock: server.clock)
            let apiToken = try await issuer.token(
                boundTo: apiProver.thumbprint, expiresAt: server.clock.now() + 600)
            let afterAPI = try await Self.dpopEcho(server, client, prover: apiProver, token: apiToken)
            #expect(afterAPI.version == version.wire)
            #expect(Self.refusedToken(afterAPI, "revoked-key"), "\(afterAPI.status) \(afterAPI.text)")

            // Revoked by `sigil admin revoke --device` from another process on the data directory:
            // refused once the server notices the file changed (a quarter second).
            let cli = try await SigilCommand.run([
                "admin", "revoke", "--device", "dev-cli", "--as", "ops", "--reason", "stolen",
                "--data-dir", server.options.dataDirectory,
            ])
            #expect(cli.status == 0, "\(cli.error)")
            let cliProver = try DPoPProver(signer: byCLI.key, clock: server.clock)
            let cliToken = try await issuer.token(
                boundTo: cliProver.thumbprint, expiresAt: server.clock.now() + 600)
            let deadline = ContinuousClock.now + .seconds(3)
            var afterCLI = try await Self.dpopEcho(server, client, prover: cliProver, token: cliToken)
            while afterCLI.status == 200 && ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(50))
                afterCLI = try await Self.dpopEcho(server, client, prover: cliProver, token: cliToken)
            }
            #expect(Self.refusedToken(afterCLI, "revoked-key"), "\(afterCLI.status) \(afterCLI.text)")
        }
    }

    @Test(
        "a token whose sub differs from the device's user only by canonical equivalence (U+212A, the Kelvin sign, for K) is credential-mismatch: users are compared by their bytes, as the stores compare them"
    )
    func usersComparedByBytes() async throws {
        try await Self.withAdminServer(.http2) { server, client, issuer, _ in
            let device = try TestDevice(.ecdsaP256SHA256)
            try await Self.register(device, as: "dev-k", user: "Kate", on: server)
            let prover = try DPoPProver(signer: device.key, clock: server.clock)
            let kelvin = try await issuer.token(
                subject: "\u{212A}ate", boundTo: prover.thumbprint, expiresAt: server.clock.now() + 600)
            let refused = try await Self.dpopEcho(server, client, prover: prover, token: kelvin)
            #expect(Self.refusedToken(refused, "credential-mismatch"), "\(refused.status) \(refused.text)")
            let own = try await issuer.token(
                subject: "Kate", boundTo: prover.thumbprint, expiresAt: server.clock.now() + 600)
            let accepted = try await Self.dpopEcho(server, client, prover: prover, token: own)
            #expect(accepted.status == 200 && accepted.json["userId"] as? String == "Kate", "\(accepted.text)")
        }
    }

    // MARK: Revoking a user reaches tokens issued before

    @Test(
        "revoke --user: a token of user-1 issued before the revocation is revoked-key with invalid_token even with a third-party DPoP key (and one issued at that second, or saying no iat); one issued after it, with a fractional iat, is accepted; over HTTP/1.1 and HTTP/2",
        arguments: Version.allCases)
    func userRevocationReachesTokens(_ version: Version) async throws {
        try await Self.withAdminServer(version) { server, client, issuer, adminPort in
            let device = try TestDevice(.ecdsaP256SHA256)
            try await Self.register(device, as: "dev-u1", user: "user-1", on: server)
            // An OAuth client's key, no device's.
            let thirdParty = try DPoPProver(signer: try SigningKey.generate(.ecdsaP256SHA256), clock: server.clock)
            let issuedBefore = server.clock.now() - 60
            let before = try await Self.token(
                issuer, boundTo: thirdParty.thumbprint, expiresAt: server.clock.now() + 3600,
                issuedAt: Double(issuedBefore))
            let accepted = try await Self.dpopEcho(server, client, prover: thirdParty, token: before)
            #expect(accepted.version == version.wire)
            #expect(accepted.status == 200, "\(accepted.text)")
            #expect(accepted.json["userId"] as? String == "user-1")
            #expect(accepted.json["keyId"] == nil, "a third-party key is no registered key")

            let revokedAt = server.clock.now()
            let revoked = try await AdminScaffold.call(
                .POST, "/admin/v1/users/user-1/revoke?reason=left", port: adminPort,
                token: AdminScaffold.adminToken, client: client)
            #expect(revoked.status == 200, "\(String(decoding: revoked.body, as: UTF8.self))")

            // The same token (remembered by the server as verified) with a fresh proof: refused.
            let refused = try await Self.dpopEcho(server, client, prover: thirdParty, token: before)
            #expect(refused.version == version.wire)
            #expect(Self.refusedToken(refused, "revoked-key"), "\(refused.status) \(refused.text)")
            // Issued in the second of the revocation, or not saying when: refused too.
            let atRevocation = try await Self.token(
                issuer, boundTo: thirdParty.thumbprint, expiresAt: server.clock.now() + 3600,
                issuedAt: Double(revokedAt))
            let sameSecond = try await Self.dpopEcho(server, client, prover: thirdParty, token: atRevocation)
            #expect(Self.refusedToken(sameSecond, "revoked-key"), "\(sameSecond.text)")
            let undated = try await Self.token(
                issuer, boundTo: thirdParty.thumbprint, expiresAt: server.clock.now() + 3600, issuedAt: nil)
            let noIAT = try await Self.dpopEcho(server, client, prover: thirdParty, token: undated)
            #expect(Self.refusedToken(noIAT, "revoked-key"), "\(noIAT.text)")

            // A token issued within the clock skew allowed after the revocation is refused too (the
            // issuer's clock may run ahead); one issued later (a fraction of a second in its iat) is accepted.
            server.clock.advance(by: 5)
            let soon = try await Self.token(
                issuer, boundTo: thirdParty.thumbprint, expiresAt: server.clock.now() + 3600,
                issuedAt: Double(server.clock.now()))
            let withinSkew = try await Self.dpopEcho(server, client, prover: thirdParty, token: soon)
            #expect(Self.refusedToken(withinSkew, "revoked-key"), "\(withinSkew.text)")
            server.clock.advance(by: 300)
            let after = try await Self.token(
                issuer, boundTo: thirdParty.thumbprint, expiresAt: server.clock.now() + 3600,
                issuedAt: Double(server.clock.now()) + 0.5)
            let fresh = try await Self.dpopEcho(server, client, prover: thirdParty, token: after)
            #expect(fresh.status == 200, "\(fresh.text)")
            #expect(fresh.json["userId"] as? String == "user-1")
            // The user's revoked device key stays refused, whatever its token's age.
            let deviceProver = try DPoPProver(signer: device.key, clock: server.clock)
            let deviceToken = try await Self.token(
                issuer, boundTo: deviceProver.thumbprint, expiresAt: server.clock.now() + 3600,
                issuedAt: Double(server.clock.now()))
            let deviceRefused = try await Self.dpopEcho(server, client, prover: deviceProver, token: deviceToken)
            #expect(Self.refusedToken(deviceRefused, "revoked-key"), "\(deviceRefused.text)")
        }
    }

    @Test(
        "a DPoP proof whose iat carries a fraction of a second (1763769600.5) is read, rounded down, and accepted, over HTTP/1.1 and HTTP/2",
        arguments: Version.allCases)
    func fractionalProofIAT(_ version: Version) async throws {
        let issuer = try await TestTokenIssuer.make()
        try await TestServer.with(configure: { issuer.configure(&$0) }) { server in
            try await Self.client(server, version).using { client in
                let key = try SigningKey.generate(.ed25519)
                let jwk = try JWK(key.verificationKey)
                let token = try await Self.token(
                    issuer, boundTo: jwk.thumbprint, expiresAt: server.clock.now() + 600,
                    issuedAt: Double(server.clock.now()) - 0.25)
                func proof(iat: String, jti: String) throws -> String {
                    let header = #"{"alg":"EdDSA","jwk":\#(jwk.canonicalJSON),"typ":"dpop+jwt"}"#
                    let ath = Base64URL.encode(Array(SHA256.hash(data: Array(token.utf8))))
                    let claims =
                        #"{"ath":"\#(ath)","htm":"POST","htu":"https://localhost:\#(server.port)/v1/echo","iat":\#(iat),"jti":"\#(jti)"}"#
                    let input = Base64URL.encode(Array(header.utf8)) + "." + Base64URL.encode(Array(claims.utf8))
                    return input + "." + Base64URL.encode(try key.signature(for: Array(input.utf8), profile: .rfc9421))
                }
                for (index, iat) in [
                    "\(server.clock.now()).5", "\(server.clock.now() - 1).999", "\(server.clock.now()).0",
                ]
                .enumerated() {
                    var request = TestRequest(.post, "/v1/echo", server: server, json: "{}")
                    request.head.headerFields[.authorization] = "DPoP " + token
                    request.head.headerFields[DPoPProver.field] = try proof(iat: iat, jti: "fraction-\(index)")
                    let response = try await request.send(client)
                    #expect(response.version == version.wire)
                    #expect(response.status == 200, "iat \(iat): \(response.text)")
                    #expect(response.json["userId"] as? String == "user-1")
                }
            }
        }
    }

    // MARK: Token failures keep their code, with invalid_token

    @Test(
        "an expired access token is `expired` with DPoP error=\"invalid_token\" (fresh, and remembered then expired); wrong audience, issuer, signing key or binding are invalid_token, never invalid_dpop_proof; over HTTP/1.1 and HTTP/2",
        arguments: Version.allCases)
    func tokenFailures(_ version: Version) async throws {
        let issuer = try await TestTokenIssuer.make()
        let stranger = try await TestTokenIssuer.make()
        try await TestServer.with(configure: { issuer.configure(&$0) }) { server in
            try await Self.client(server, version).using { client in
                let prover = try DPoPProver(signer: try SigningKey.generate(.ecdsaP256SHA256), clock: server.clock)
                let now = server.clock.now()
                let expired = try await Self.token(
                    issuer, boundTo: prover.thumbprint, expiresAt: now - 1, issuedAt: Double(now - 600))
                let refusedExpired = try await Self.dpopEcho(server, client, prover: prover, token: expired)
                #expect(refusedExpired.version == version.wire)
                #expect(Self.refusedToken(refusedExpired, "expired"), "\(refusedExpired.status) \(refusedExpired.text)")
                #expect(
                    refusedExpired.headers[.wwwAuthenticate]?.contains("algs=\"ES256 ES384 EdDSA RS256 PS256\"") == true
                )

                // A token that verified, remembered, then past its exp.
                let short = try await Self.token(
                    issuer, boundTo: prover.thumbprint, expiresAt: now + 30, issuedAt: Double(now))
                let first = try await Self.dpopEcho(server, client, prover: prover, token: short)
                #expect(first.status == 200, "\(first.text)")
                server.clock.advance(by: 31)
                let later = try await Self.dpopEcho(server, client, prover: prover, token: short)
                #expect(Self.refusedToken(later, "expired"), "\(later.status) \(later.text)")

                let current = server.clock.now()
                let other = try DPoPProver(signer: try SigningKey.generate(.ed25519), clock: server.clock)
                let wrong: [(String, String)] = [
                    (
                        "audience",
                        try await Self.token(
                            issuer, boundTo: prover.thumbprint, expiresAt: current + 600, issuedAt: Double(current),
                            audience: "another-api")
                    ),
                    (
                        "issuer",
                        try await Self.token(
                            issuer, boundTo: prover.thumbprint, expiresAt: current + 600, issuedAt: Double(current),
                            issuerName: "https://elsewhere.test")
                    ),
                    (
                        "signing key",
                        try await Self.token(
                            stranger, boundTo: prover.thumbprint, expiresAt: current + 600, issuedAt: Double(current))
                    ),
                    (
                        "binding",
                        try await Self.token(
                            issuer, boundTo: other.thumbprint, expiresAt: current + 600, issuedAt: Double(current))
                    ),
                ]
                for (what, token) in wrong {
                    let response = try await Self.dpopEcho(server, client, prover: prover, token: token)
                    #expect(response.version == version.wire, "\(what)")
                    #expect(
                        Self.refusedToken(response, "invalid-signature"), "\(what): \(response.status) \(response.text)"
                    )
                    #expect(response.headers[.wwwAuthenticate]?.contains("invalid_dpop_proof") == false, "\(what)")
                }
            }
        }
    }

    // MARK: Hole 2: a client certificate is its device

    @Test(
        "hole 2: over mTLS, device A's client certificate with a third-party DPoP proof is device A; with device B's DPoP key it is certificate-mismatch; once A is revoked, its certificate with a third-party proof is revoked-key; over HTTP/1.1 and HTTP/2",
        arguments: Version.allCases)
    func clientCertificateIsItsDevice(_ version: Version) async throws {
        let issuer = try await TestTokenIssuer.make()
        let dataDirectory = TestServer.temporaryDirectory()
        let data = try DataDirectory(path: dataDirectory)
        let caPath = try data.createCertificateAuthority()
        let authority = try #require(try data.certificateAuthority())
        let holder = TLSScaffold.CSRDevice()
        let deviceA = try holder.device
        let csr = try CertificateAuthority.parseCSR(Array(try holder.csrPEM.utf8))
        let certificatePEM = try authority.issue(csr, keyID: deviceA.keyID).serializeAsPEM().pemString
        try await TestServer.with(
            dataDirectory: dataDirectory,
            configure: { options in
                issuer.configure(&options)
                options.clientCAFile = caPath
            }
        ) { server in
            let deviceB = try TestDevice(.ecdsaP256SHA256)
            try await Self.register(deviceA, as: "dev-cert-a", user: "user-1", on: server)
            try await Self.register(deviceB, as: "dev-cert-b", user: "user-1", on: server)
            try await Self.client(server, version) { tls in
                tls.certificateChain = [
                    .certificate(try NIOSSLCertificate(bytes: Array(certificatePEM.utf8), format: .pem))
                ]
                tls.privateKey = .privateKey(
                    try NIOSSLPrivateKey(bytes: Array(holder.privateKey.pemRepresentation.utf8), format: .pem))
            }.using { client in
                let thirdParty = try DPoPProver(signer: try SigningKey.generate(.ecdsaP256SHA256), clock: server.clock)
                let token = try await issuer.token(boundTo: thirdParty.thumbprint, expiresAt: server.clock.now() + 600)
                let accepted = try await Self.dpopEcho(server, client, prover: thirdParty, token: token)
                #expect(accepted.version == version.wire)
                #expect(accepted.status == 200, "\(accepted.text)")
                #expect(accepted.json["deviceId"] as? String == "dev-cert-a")
                #expect(accepted.json["userId"] as? String == "user-1")
                let certificate = accepted.json["clientCertificate"] as? [String: Any]
                #expect(certificate?["keyId"] as? String == deviceA.keyID)

                // Device B's key proving, device A's certificate on the connection: two devices.
                let proverB = try DPoPProver(signer: deviceB.key, clock: server.clock)
                let tokenB = try await issuer.token(boundTo: proverB.thumbprint, expiresAt: server.clock.now() + 600)
                let mixed = try await Self.dpopEcho(server, client, prover: proverB, token: tokenB)
                #expect(mixed.status == 401, "\(mixed.text)")
                #expect(mixed.code == "certificate-mismatch", "\(mixed.text)")

                // A revoked: its certificate no longer opens the route, whatever proof stands beside it.
                try await server.prepared.directory.apply(DirectoryChange(revokedDevices: ["dev-cert-a"]))
                let refused = try await Self.dpopEcho(server, client, prover: thirdParty, token: token)
                #expect(refused.version == version.wire)
                #expect(refused.status == 401 && refused.code == "revoked-key", "\(refused.status) \(refused.text)")
            }
        }
    }

    // MARK: Hole 4: the scheme is the connection's

    @Test(
        "hole 4: on sigil serve --dpop alone with no --dpop-origin, a proof for http://localhost is refused and one for https:// accepted; an rfc9421 signature covering \"@scheme\": http is refused and https accepted; over HTTP/1.1 and HTTP/2",
        arguments: Version.allCases)
    func schemeIsTheConnections(_ version: Version) async throws {
        let issuer = try await TestTokenIssuer.make()
        try await TestServer.with(configure: { issuer.configure(&$0) }) { server in
            try await Self.client(server, version).using { client in
                let prover = try DPoPProver(signer: try SigningKey.generate(.ecdsaP256SHA256), clock: server.clock)
                let token = try await issuer.token(boundTo: prover.thumbprint, expiresAt: server.clock.now() + 600)
                let plain = try await Self.dpopEcho(
                    server, client, prover: prover, token: token, origin: "http://localhost:\(server.port)")
                #expect(plain.version == version.wire)
                #expect(plain.status == 401, "\(plain.text)")
                #expect(plain.headers[.wwwAuthenticate]?.hasPrefix(#"DPoP error="invalid_dpop_proof""#) == true)
                let secure = try await Self.dpopEcho(
                    server, client, prover: prover, token: token, origin: "https://localhost:\(server.port)")
                #expect(secure.version == version.wire)
                #expect(secure.status == 200, "\(secure.text)")

                let device = try TestDevice(.ed25519)
                try await Self.register(device, as: "dev-scheme", user: nil, on: server)
                for scheme in ["http", "https"] {
                    var signer = device.signer(.rfc9421, clock: server.clock)
                    signer.components = [.method, .scheme, .authority, .path, .query]
                    var request = TestRequest(.post, "/v1/echo", server: server, json: #"{"scheme":1}"#)
                    request.head.scheme = scheme
                    try request.sign(with: signer)
                    #expect(
                        request.head.headerFields[HTTPField.Name("Signature-Input")!]?.contains("\"@scheme\"") == true)
                    let response = try await request.send(client)
                    #expect(response.version == version.wire)
                    if scheme == "http" {
                        #expect(response.status == 401 && response.code == "invalid-signature", "\(response.text)")
                    } else {
                        #expect(response.status == 200, "\(response.text)")
                        #expect(response.json["profile"] as? String == "rfc9421")
                    }
                }
            }
        }
    }

    @Test(
        "hole 4 over HTTP/2: a client writing :scheme http on the TLS connection is still https: its http:// proof and its rfc9421 \"@scheme\": http are refused, an https:// proof accepted"
    )
    func clientSchemeIsNotTheConnections() async throws {
        let issuer = try await TestTokenIssuer.make()
        try await TestServer.with(configure: { issuer.configure(&$0) }) { server in
            let prover = try DPoPProver(signer: try SigningKey.generate(.ecdsaP256SHA256), clock: server.clock)
            let token = try await issuer.token(boundTo: prover.thumbprint, expiresAt: server.clock.now() + 600)
            for scheme in ["http", "https"] {
                var request = TestRequest(.post, "/v1/echo", server: server, json: #"{"n":1}"#)
                try request.addDPoP(prover, token: token, origin: "\(scheme)://localhost:\(server.port)")
                request.head.scheme = "http"  // what the client writes as :scheme
                let response = try await HTTP2Scaffold.sendHTTP2(request, to: server)
                if scheme == "http" {
                    #expect(response.status == 401, "\(response.text)")
                    #expect(response.headers[.wwwAuthenticate]?.hasPrefix(#"DPoP error="invalid_dpop_proof""#) == true)
                } else {
                    #expect(response.status == 200, "\(response.text)")
                    #expect(response.json["profile"] as? String == "dpop")
                }
            }
            let device = try TestDevice(.ed25519)
            try await Self.register(device, as: "dev-h2-scheme", user: nil, on: server)
            var signer = device.signer(.rfc9421, clock: server.clock)
            signer.components = [.method, .scheme, .authority, .path, .query]
            var signed = TestRequest(.post, "/v1/echo", server: server, json: #"{"scheme":"http"}"#)
            signed.head.scheme = "http"
            try signed.sign(with: signer)
            let refused = try await HTTP2Scaffold.sendHTTP2(signed, to: server)
            #expect(refused.status == 401 && refused.code == "invalid-signature", "\(refused.text)")
        }
    }

    @Test(
        "hole 4: sigil gateway --public-host api.example checks a DPoP proof's htu against https://api.example: one naming the Host the client sent is refused; over HTTP/1.1 and HTTP/2",
        .enabled(if: PythonUpstream.available), arguments: Version.allCases)
    func gatewayPublicOrigin(_ version: Version) async throws {
        let issuer = try await TestTokenIssuer.make()
        try await GatewayScaffold.withGateway(publicHost: "api.example", configure: { issuer.configure(&$0) }) {
            server, upstream, _, _ in
            try await Self.client(server, version).using { client in
                let prover = try DPoPProver(signer: try SigningKey.generate(.ecdsaP256SHA256), clock: server.clock)
                let token = try await issuer.token(boundTo: prover.thumbprint, expiresAt: server.clock.now() + 600)
                let toHost = try await Self.dpopEcho(
                    server, client, prover: prover, token: token, origin: "https://localhost:\(server.port)",
                    path: "/orders/1")
                #expect(toHost.version == version.wire)
                #expect(toHost.status == 401, "\(toHost.text)")
                #expect(toHost.headers[.wwwAuthenticate]?.hasPrefix(#"DPoP error="invalid_dpop_proof""#) == true)
                #expect(try await upstream.count() == 0)
                let toPublic = try await Self.dpopEcho(
                    server, client, prover: prover, token: token, origin: "https://api.example", path: "/orders/1")
                #expect(toPublic.status == 200, "\(toPublic.text)")
                let headers = toPublic.json["headers"] as? [String: [String]] ?? [:]
                #expect(headers["sigil-profile"] == ["dpop"])
                #expect(try await upstream.count() == 1)
            }
        }
    }

    // MARK: Hole 5: single use survives a restart

    enum NonceChoice: String, CaseIterable, CustomTestStringConvertible, Sendable {
        case defaultStore, memory
        var testDescription: String { self == .memory ? "--nonces memory" : "default store" }
    }

    @Test(
        "hole 5: an enrollment JWT that enrolled a device is enrollment-refused after sigil serve restarts on the same data directory (by jti, else the token); over HTTP/1.1 and HTTP/2",
        arguments: NonceChoice.allCases, Version.allCases)
    func enrollmentJWTSpentAcrossRestart(_ nonces: NonceChoice, _ version: Version) async throws {
        let dataDirectory = TestServer.temporaryDirectory()
        let clock = ManualUnixClock(SigningSetup.start)
        let secretFile = TestServer.temporaryDirectory() + "-jwt-secret"
        let secret = (0..<32).map { UInt8(truncatingIfNeeded: $0 * 11) }
        try SecureFile.write(Base64.encode(secret), to: secretFile)
        let configure: (inout SigilStandalone.Options) -> Void = { options in
            options.jwt.secretFiles = [secretFile]
            options.jwt.audience = RegistrationInputTests.audience
            options.jwt.issuer = RegistrationInputTests.issuer
            if nonces == .memory { options.nonceStorage = .memory }
        }
        let expires = clock.now() + 3600
        let byToken = try await RegistrationInputTests.jwt(secret: secret, subject: "alice", expires: expires)
        let byID = try await RegistrationInputTests.jwt(
            secret: secret, subject: "bob", expires: expires, jti: "enroll-once-\(nonces.rawValue)")
        let sameID = try await RegistrationInputTests.jwt(
            secret: secret, subject: "bob", expires: expires + 1, jti: "enroll-once-\(nonces.rawValue)")
        #expect(sameID != byID)

        func enroll(_ jwt: String, on server: TestServer, client: HTTPClient) async throws -> TestResponse {
            let device = try TestDevice(.ed25519)
            return try await RegistrationInputTests.registration(
                device, server: server, authorization: "Bearer \(jwt)", signedBy: device
            ).send(client)
        }
        try await TestServer.with(dataDirectory: dataDirectory, clock: clock, configure: configure) { server in
            try await Self.client(server, version).using { client in
                for jwt in [byToken, byID] {
                    let enrolled = try await enroll(jwt, on: server, client: client)
                    #expect(enrolled.version == version.wire)
                    #expect(enrolled.status == 201, "\(enrolled.text)")
                }
                let again = try await enroll(byToken, on: server, client: client)
                #expect(again.status == 401 && again.code == "enrollment-refused", "\(again.text)")
            }
        }
        clock.advance(by: 5)
        try await TestServer.with(dataDirectory: dataDirectory, clock: clock, configure: configure) { server in
            try await Self.client(server, version).using { client in
                for (what, jwt) in [("the token", byToken), ("its jti", byID), ("a copy with its jti", sameID)] {
                    let refused = try await enroll(jwt, on: server, client: client)
                    #expect(refused.version == version.wire, "\(what)")
                    #expect(refused.status == 401 && refused.code == "enrollment-refused", "\(what): \(refused.text)")
                }
                // A JWT not used before still enrolls after the restart.
                let unused = try await RegistrationInputTests.jwt(
                    secret: secret, subject: "carol", expires: clock.now() + 600, jti: "never-used")
                let enrolled = try await enroll(unused, on: server, client: client)
                #expect(enrolled.status == 201, "\(enrolled.text)")
                #expect(try await server.prepared.directory.keyIDs().count == 3)
            }
        }
    }
}

// MARK: Revocation reaches every replica

/// Issue 29 on three `sigil serve` replicas sharing PostgreSQL (keys) and Redis (nonces).
@Suite(
    "One identity for every credential (issue 29), on replicas",
    .enabled(if: ExternalServers.runPostgres && ExternalServers.runRedis), .externalServers)
struct ReplicaIdentityTests {
    @Test(
        "a device revoked through replica 1's admin API: within 1 s replicas 2 and 3 refuse its DPoP requests (revoked-key, invalid_token), and its signed requests; over HTTP/1.1 and HTTP/2",
        arguments: IdentityTests.Version.allCases)
    func revocationReachesReplicasForDPoP(_ version: IdentityTests.Version) async throws {
        let issuer = try await TestTokenIssuer.make()
        let adminToken = try AdminScaffold.tokenFile()
        try await Replicas.withReplicas(
            nonces: .redis,
            configure: { options in
                issuer.configure(&options)
                options.admin.port = 0
                options.admin.tokenFile = adminToken
            }
        ) { replicas, _, _ in
            let device = try TestDevice(.ed25519)
            try await replicas[0].prepared.directory.apply(
                DirectoryChange(added: [
                    RegisteredKey(
                        keyID: device.keyID, key: try device.key.verificationKey, deviceID: "dev-reach",
                        userID: "user-1")
                ]))
            let prover = try DPoPProver(signer: device.key, clock: replicas[0].clock)
            let token = try await issuer.token(boundTo: prover.thumbprint, expiresAt: replicas[0].clock.now() + 600)
            try await IdentityTests.client(replicas[0], version).using { client in
                func dpop(_ replica: TestServer) async throws -> TestResponse {
                    try await IdentityTests.dpopEcho(replica, client, prover: prover, token: token)
                }
                func signed(_ replica: TestServer) async throws -> TestResponse {
                    var request = TestRequest(.post, "/v1/echo", server: replica, json: "{}")
                    try request.sign(with: device.signer(clock: replica.clock))
                    return try await request.send(client)
                }
                // Every replica accepts the device both ways, and has its key cached.
                for replica in replicas {
                    let accepted = try await dpop(replica)
                    #expect(accepted.version == version.wire)
                    #expect(accepted.status == 200, "\(accepted.text)")
                    #expect(accepted.json["deviceId"] as? String == "dev-reach")
                    #expect(try await signed(replica).status == 200)
                }

                let adminPort = try #require(await replicas[0].prepared.adminPort?.value())
                let revoked = try await AdminScaffold.call(
                    .POST, "/admin/v1/devices/dev-reach/revoke", port: adminPort,
                    token: AdminScaffold.adminToken, client: client)
                let revokedAt = ContinuousClock.now
                #expect(revoked.status == 200, "\(String(decoding: revoked.body, as: UTF8.self))")

                // The replicas' clock stands still: only the change reaching them can refuse.
                var refusedWithin: [Int: Duration] = [:]
                while refusedWithin.count < 2 && revokedAt.duration(to: .now) < .seconds(1) {
                    for index in [1, 2] where refusedWithin[index] == nil {
                        let response = try await dpop(replicas[index])
                        if IdentityTests.refusedToken(response, "revoked-key") {
                            refusedWithin[index] = revokedAt.duration(to: .now)
                        } else {
                            #expect(response.status == 200, "\(response.status) \(response.text)")
                        }
                    }
                    if refusedWithin.count < 2 { try await Task.sleep(for: .milliseconds(20)) }
                }
                #expect(refusedWithin.keys.sorted() == [1, 2], "DPoP still accepted 1 s after: \(refusedWithin)")
                for index in [1, 2] {
                    let response = try await signed(replicas[index])
                    #expect(response.version == version.wire)
                    #expect(response.status == 401 && response.code == "revoked-key", "\(response.text)")
                }
            }
        }
    }
}
