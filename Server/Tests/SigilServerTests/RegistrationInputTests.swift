import AsyncHTTPClient
import Crypto
import Foundation
import HTTPTypes
import JWTKit
import NIOCore
@_spi(Sigil) import SigilCore
import SigilFiles
import SigilStandalone
import Testing

@testable import SigilTestSupport

/// Bad registration input gets problem+json with a PROTOCOL.md code and leaves the directory unchanged.
@Suite("Registration input")
struct RegistrationInputTests {
    struct Claims: JWTPayload {
        var sub: SubjectClaim
        var exp: ExpirationClaim
        var aud: AudienceClaim? = .init(value: [audience])
        var iss: IssuerClaim? = .init(value: issuer)
        var jti: IDClaim?
        func verify(using algorithm: some JWTAlgorithm) throws {}
    }

    static let audience = "https://sigil.test"
    static let issuer = "https://id.example.com"

    static func jwt(
        secret: [UInt8],
        subject: String,
        expires: Int64,
        audience: String? = audience,
        issuer: String? = issuer,
        jti: String? = nil
    ) async throws -> String {
        let keys = JWTKeyCollection()
        await keys.add(hmac: HMACKey(key: SymmetricKey(data: secret)), digestAlgorithm: .sha256)
        return try await keys.sign(
            Claims(
                sub: .init(value: subject), exp: .init(value: Date(timeIntervalSince1970: TimeInterval(expires))),
                aud: audience.map { .init(value: [$0]) }, iss: issuer.map { .init(value: $0) },
                jti: jti.map { .init(value: $0) })
        )
    }

    /// A registration request: `body` (the device's own unless given), `authorization`, signed by `signer` if any.
    static func registration(
        _ device: TestDevice,
        server: TestServer,
        body: [UInt8]? = nil,
        authorization: String? = "Bearer \(TestServer.token)",
        signedBy signer: TestDevice?
    ) throws -> TestRequest {
        var request = TestRequest(.post, "/v1/devices", server: server, body: try body ?? device.registration)
        request.head.headerFields[.contentType] = "application/json"
        request.head.headerFields[.authorization] = authorization
        if let signer { try request.sign(with: signer.signer(clock: server.clock)) }
        return request
    }

    static func body(alg: String, publicKey: String) throws -> [UInt8] {
        Array(try JSONSerialization.data(withJSONObject: ["alg": alg, "publicKey": publicKey]))
    }

    @Test("garbage, wrong algorithm, unsigned, bad or expired JWT, oversize, CSR for another key")
    func badInput() async throws {
        let secret = (0..<32).map { UInt8($0) }
        let dataDirectory = TestServer.temporaryDirectory()
        let secretFile = dataDirectory + "-jwt-secret"
        try SecureFile.write(Base64.encode(secret), to: secretFile)
        _ = try DataDirectory(path: dataDirectory).createCertificateAuthority()
        let jwtOptions: (inout SigilStandalone.Options) -> Void = {
            $0.jwt.secretFiles = [secretFile]
            $0.jwt.audience = Self.audience
            $0.jwt.issuer = Self.issuer
        }
        try await TestServer.with(dataDirectory: dataDirectory, configure: jwtOptions) { server in
            try await server.client().using { client in
                let now = server.clock.now()
                let device = try TestDevice(.ecdsaP256SHA256)
                let other = try TestDevice(.ed25519)
                let privatePEM = try KeyFile.privateKeyFile(for: device.key)
                let cases: [(String, TestRequest, Int, String)] = [
                    (
                        "garbage key",
                        try Self.registration(
                            device, server: server, body: try Self.body(alg: "ecdsa-p256-sha256", publicKey: "garbage"),
                            signedBy: device), 400, "invalid-registration"
                    ),
                    (
                        "wrong algorithm",
                        try Self.registration(
                            device, server: server,
                            body: try Self.body(alg: "ed25519", publicKey: try device.publicKeyPEM), signedBy: device),
                        400, "invalid-registration"
                    ),
                    (
                        "unknown algorithm",
                        try Self.registration(
                            device, server: server, body: try Self.body(alg: "dsa", publicKey: try device.publicKeyPEM),
                            signedBy: device), 400, "invalid-registration"
                    ),
                    (
                        "HMAC",
                        try Self.registration(
                            device, server: server,
                            body: try Self.body(alg: "hmac-sha256", publicKey: Base64.encode(secret)), signedBy: device),
                        400, "invalid-registration"
                    ),
                    (
                        "private key",
                        try Self.registration(
                            device, server: server,
                            body: try Self.body(alg: "ecdsa-p256-sha256", publicKey: privatePEM), signedBy: device),
                        400, "invalid-registration"
                    ),
                    (
                        "not JSON",
                        try Self.registration(device, server: server, body: Array("alg=x".utf8), signedBy: device), 400,
                        "invalid-registration"
                    ),
                    (
                        "unsigned", try Self.registration(device, server: server, signedBy: nil), 401,
                        "missing-signature"
                    ),
                    (
                        "signed by another key", try Self.registration(device, server: server, signedBy: other), 401,
                        "unknown-key"
                    ),
                    (
                        "no token", try Self.registration(device, server: server, authorization: nil, signedBy: device),
                        401, "enrollment-refused"
                    ),
                    (
                        "wrong token",
                        try Self.registration(
                            device, server: server, authorization: "Bearer not-the-token", signedBy: device), 401,
                        "enrollment-refused"
                    ),
                    (
                        "JWT with another secret",
                        try Self.registration(
                            device, server: server,
                            authorization: "Bearer "
                                + (try await Self.jwt(
                                    secret: Array(secret.reversed()), subject: "mallory", expires: now + 600)),
                            signedBy: device), 401, "enrollment-refused"
                    ),
                    (
                        "JWT for another audience",
                        try Self.registration(
                            device, server: server,
                            authorization: "Bearer "
                                + (try await Self.jwt(
                                    secret: secret, subject: "alice", expires: now + 600, audience: "https://other.test"
                                )),
                            signedBy: device), 401, "enrollment-refused"
                    ),
                    (
                        "JWT without an audience",
                        try Self.registration(
                            device, server: server,
                            authorization: "Bearer "
                                + (try await Self.jwt(
                                    secret: secret, subject: "alice", expires: now + 600, audience: nil)),
                            signedBy: device), 401, "enrollment-refused"
                    ),
                    (
                        "JWT from another issuer",
                        try Self.registration(
                            device, server: server,
                            authorization: "Bearer "
                                + (try await Self.jwt(
                                    secret: secret, subject: "alice", expires: now + 600, issuer: "https://evil.test")),
                            signedBy: device), 401, "enrollment-refused"
                    ),
                    (
                        "expired JWT",
                        try Self.registration(
                            device, server: server,
                            authorization: "Bearer "
                                + (try await Self.jwt(secret: secret, subject: "alice", expires: now - 1)),
                            signedBy: device), 401, "enrollment-refused"
                    ),
                    (
                        "oversize body",
                        try Self.registration(
                            device, server: server, body: [UInt8](repeating: 0x20, count: 70_000), signedBy: device),
                        413, "body-too-large"
                    ),
                ]
                for (name, request, status, code) in cases {
                    let response = try await request.send(client, to: server)
                    #expect(response.status == status, "\(name): \(response.text)")
                    #expect(response.code == code, "\(name)")
                    #expect(response.headers[.contentType] == "application/problem+json", "\(name)")
                }
                #expect(try await server.prepared.directory.keyIDs().isEmpty)

                // A valid JWT registers the device for its subject.
                let token = try await Self.jwt(secret: secret, subject: "alice", expires: now + 600)
                let registered = try await Self.registration(
                    device, server: server, authorization: "Bearer \(token)", signedBy: device
                ).send(client, to: server)
                #expect(registered.status == 201, "\(registered.text)")
                #expect(registered.json["userId"] as? String == "alice")
                let (echo, _, _) = try await DeviceSteps.echo(
                    "hi", signer: device.signer(clock: server.clock), server: server, client: client)
                #expect(echo.json["userId"] as? String == "alice")

                // Registering the same key again changes nothing.
                let again = try await Self.registration(device, server: server, signedBy: device).send(
                    client, to: server)
                #expect(again.code == "invalid-registration")

                // A CSR for another key than the one that signs the request.
                let stranger = TLSScaffold.CSRDevice()
                let csrBody = try JSONSerialization.data(withJSONObject: ["csr": try stranger.csrPEM])
                var csrRequest = TestRequest(
                    .post, "/v1/certificates", server: server, json: String(decoding: csrBody, as: UTF8.self))
                try csrRequest.sign(with: device.signer(clock: server.clock))
                let refused = try await csrRequest.send(client, to: server)
                #expect(refused.status == 400, "\(refused.text)")
                #expect(refused.code == "invalid-registration")
                #expect(try await server.prepared.directory.keyIDs() == [device.keyID])
            }
        }
    }

    @Test(
        "an enrollment JWT enrolls one device (by jti, else the token), spent only by a registration whose signature verified",
        arguments: [false, true])
    func jwtEnrollsOnce(_ reuse: Bool) async throws {
        let secretFile = TestServer.temporaryDirectory() + "-jwt-secret"
        let secret = (0..<32).map { UInt8($0 &* 7) }
        try SecureFile.write(Base64.encode(secret), to: secretFile)
        try await TestServer.with(configure: {
            $0.jwt.secretFiles = [secretFile]
            $0.jwt.audience = Self.audience
            $0.jwt.issuer = Self.issuer
            $0.jwt.reuse = reuse
        }) { server in
            try await server.client().using { client in
                let now = server.clock.now()
                let token = try await Self.jwt(secret: secret, subject: "alice", expires: now + 600)
                let (first, second, third) = (
                    try TestDevice(.ed25519), try TestDevice(.ed25519), try TestDevice(.ed25519)
                )
                // A copy signed by another key fails its signature and spends nothing.
                let forged = try await Self.registration(
                    first, server: server, authorization: "Bearer \(token)", signedBy: second
                ).send(client, to: server)
                #expect(forged.status == 401 && forged.code != "enrollment-refused", "\(forged.text)")
                let enrolled = try await Self.registration(
                    first, server: server, authorization: "Bearer \(token)", signedBy: first
                ).send(client, to: server)
                #expect(enrolled.status == 201, "\(enrolled.text)")
                let again = try await Self.registration(
                    second, server: server, authorization: "Bearer \(token)", signedBy: second
                ).send(client, to: server)
                #expect(again.status == (reuse ? 201 : 401), "\(again.text)")
                if !reuse { #expect(again.code == "enrollment-refused") }
                // Two tokens with one jti are one credential.
                let withID = try await Self.jwt(secret: secret, subject: "bob", expires: now + 600, jti: "enroll-1")
                let sameID = try await Self.jwt(secret: secret, subject: "bob", expires: now + 601, jti: "enroll-1")
                #expect(withID != sameID)
                let byID = try await Self.registration(
                    third, server: server, authorization: "Bearer \(withID)", signedBy: third
                ).send(client, to: server)
                #expect(byID.status == 201, "\(byID.text)")
                let fourth = try TestDevice(.ed25519)
                let byCopy = try await Self.registration(
                    fourth, server: server, authorization: "Bearer \(sameID)", signedBy: fourth
                ).send(client, to: server)
                #expect(byCopy.status == (reuse ? 201 : 401), "\(byCopy.text)")
                #expect(try await server.prepared.directory.keyIDs().count == (reuse ? 4 : 2))
            }
        }
    }

    @Test("the credential the signed body names must be the Authorization sent: a proxy's own JWT is refused")
    func credentialBound() async throws {
        let secretFile = TestServer.temporaryDirectory() + "-jwt-secret"
        let secret = (0..<32).map { UInt8($0 &* 5) }
        try SecureFile.write(Base64.encode(secret), to: secretFile)
        try await TestServer.with(configure: {
            $0.jwt.secretFiles = [secretFile]
            $0.jwt.audience = Self.audience
            $0.jwt.issuer = Self.issuer
        }) { server in
            try await server.client().using { client in
                let now = server.clock.now()
                let alice = try await Self.jwt(secret: secret, subject: "alice", expires: now + 600)
                let mallory = try await Self.jwt(secret: secret, subject: "mallory", expires: now + 600)
                let device = try TestDevice(.ed25519)
                func body(binding authorization: String?) throws -> [UInt8] {
                    var object =
                        try JSONSerialization.jsonObject(with: Data(try device.registration)) as? [String: Any] ?? [:]
                    object["credential"] = authorization.map(Registration.KeySubmission.credentialHash(of:))
                    return Array(try JSONSerialization.data(withJSONObject: object))
                }
                // The device bound alice's token; a proxy sends mallory's in its place.
                let swapped = try await Self.registration(
                    device, server: server, body: try body(binding: "Bearer \(alice)"),
                    authorization: "Bearer \(mallory)", signedBy: device
                ).send(client, to: server)
                #expect(swapped.status == 401)
                #expect(swapped.code == "enrollment-refused")
                #expect(try await server.prepared.directory.keyIDs().isEmpty)
                let bound = try await Self.registration(
                    device, server: server, body: try body(binding: "Bearer \(alice)"),
                    authorization: "Bearer \(alice)", signedBy: device
                ).send(client, to: server)
                #expect(bound.status == 201, "\(bound.text)")
                #expect(bound.json["userId"] as? String == "alice")
                // One JWT, one device, whatever spelling of its signature is sent.
                let other = try TestDevice(.ed25519)
                let respelled = try await Self.registration(
                    other, server: server, authorization: "Bearer \(alice)==", signedBy: other
                ).send(client, to: server)
                #expect(respelled.status != 201)
            }
        }
    }

    @Test("JWT keys need an audience and an issuer; with JWTs the bootstrap token is off unless given")
    func jwtConfiguration() async throws {
        let secretFile = TestServer.temporaryDirectory() + "-jwt-secret"
        try SecureFile.write(Base64.encode((0..<32).map { UInt8($0) }), to: secretFile)
        await #expect(throws: SigilInputError.self) {
            try await TestServer.with(configure: { $0.jwt.secretFiles = [secretFile] }) { _ in }
        }
        await #expect(throws: SigilInputError.self) {
            try await TestServer.with(configure: {
                $0.jwt.secretFiles = [secretFile]
                $0.jwt.audience = Self.audience
            }) { _ in }
        }
        let dataDirectory = TestServer.temporaryDirectory()
        try await TestServer.with(
            dataDirectory: dataDirectory,
            configure: {
                $0.jwt.secretFiles = [secretFile]
                $0.jwt.audience = Self.audience
                $0.jwt.issuer = Self.issuer
                $0.enrollToken = nil
            }
        ) { server in
            #expect(server.prepared.enrollToken == nil)
            #expect(!FileManager.default.fileExists(atPath: dataDirectory + "/enroll-token"))
            try await server.client().using { client in
                let device = try TestDevice()
                let refused = try await DeviceSteps.register(device, on: server, client: client)
                #expect(refused.code == "enrollment-refused")
            }
        }
    }

    @Test("the enrollment JWT is judged when the registration body has arrived, not when its head did")
    func jwtJudgedAtTheEnd() async throws {
        let secret = (0..<32).map { UInt8($0) }
        let secretFile = TestServer.temporaryDirectory() + "-jwt-secret"
        try SecureFile.write(Base64.encode(secret), to: secretFile)
        try await TestServer.with(configure: {
            $0.jwt.secretFiles = [secretFile]
            $0.jwt.audience = Self.audience
            $0.jwt.issuer = Self.issuer
        }) { server in
            try await server.client().using { client in
                let device = try TestDevice()
                let body = try device.registration
                let token = try await Self.jwt(secret: secret, subject: "alice", expires: server.clock.now() + 60)
                let head = try Self.registration(
                    device, server: server, authorization: "Bearer \(token)", signedBy: device
                ).head
                let (request, feed) = StalledRequestTests.stalled(head, body: body, server: server)
                async let stalled = client.execute(request, timeout: .seconds(30))
                // The server has the head (a round trip on the same connection), then the token expires.
                _ = try await TestRequest(.get, "/.well-known/sigil", server: server).send(client, to: server)
                server.clock.advance(by: 120)
                feed.yield(ByteBuffer(bytes: body.dropFirst(5)))
                feed.finish()
                let response = try await stalled
                let answer = try await response.body.collect(upTo: 1 << 16)
                #expect(response.status.code == 401)
                #expect(String(buffer: answer).contains("enrollment-refused"))
                #expect(try await server.prepared.directory.keyIDs().isEmpty)
            }
        }
    }
}
