import AsyncHTTPClient
import Crypto
import Foundation
import HTTPTypes
import SigilAppAttest
import SigilClient
@_spi(Sigil) import SigilCore
import SigilHTTPClient
import SigilJWT
import SigilServer
import SigilStandalone
import SigilTLS
import SigilVapor
import Testing
import Vapor
import VaporTesting
import X509

@testable import SigilTestSupport

/// SigilVapor: the middleware and the registration routes in a Vapor app, the same behaviour as
/// SigilHummingbird's.
@Suite("Vapor adapter")
struct VaporAdapterTests {
    static let token = "vapor-enrollment-token-0123456789"

    /// The README's example: a Vapor app with registration and protected routes.
    static func configure(
        _ app: Application,
        clock: ManualUnixClock,
        certificates: CertificateAuthority? = nil,
        bodyLimit: Int? = nil,
        bodyTimeout: Duration = .seconds(60),
        readsClientCertificate: Bool = false,
        appAttest: TestAppAttestAuthority? = nil
    ) throws -> (SigilVapor.SigilMiddleware, Directory, SigningKey) {
        let directory = Directory.inMemory(clock: clock)
        let nonces = MemoryNonceStore(clock: clock)
        clock.advance(by: 2)  // past the store's start, which only later timestamps may follow
        let responseKey = try SigningKey.generate(.ecdsaP256SHA256)
        var configuration = VerifierConfiguration()
        var attestation: AttestationEnrollment?
        if let appAttest {
            let store = Directory.inMemory()
            let verifier = appAttest.verifier()
            configuration.assertions = AppAttestAssertions(verifier: verifier, counters: store)
            attestation = AttestationEnrollment(
                verifier: verifier, challenges: AttestationChallenges(key: SymmetricKey(size: .bits256)), store: store)
        }
        let sigil = SigilVapor.SigilMiddleware(
            exchange: Exchange(
                verifier: RequestVerifier(keys: directory, nonces: nonces, clock: clock, configuration: configuration),
                responseSigner: ResponseSigner(
                    signer: responseKey, keyID: responseKey.derivedKeyID ?? "", clock: clock),
                bodyTimeout: bodyTimeout),
            readsClientCertificate: readsClientCertificate, bodyLimit: bodyLimit)
        let registration = RegistrationService(
            directory: directory, nonces: nonces, enrollment: EnrollmentPolicy(bootstrapToken: token, clock: clock),
            certificates: certificates, attestation: attestation,
            configuration: RegistrationService.Configuration(verifier: configuration), clock: clock)
        try app.register(collection: SigilVapor.SigilRegistrationRoutes(service: registration, middleware: sigil))
        let api = app.grouped("api").grouped(sigil)
        api.get("me") { request in try request.sigil.requireIdentity().keyID ?? "none" }
        api.post("echo") { request in
            Response(status: .ok, body: .init(buffer: request.body.data ?? ByteBuffer()))
        }
        api.get("forbidden") { _ -> String in throw SigilError(.forbidden, "not for this key") }
        api.get("missing") { _ -> String in throw Abort(.notFound) }
        app.get("open") { request in try request.sigil.requireIdentity().keyID ?? "none" }
        return (sigil, directory, responseKey)
    }

    @Test("a device enrolls, gets its secret and a certificate, signs both profiles, rotates, revokes, over HTTP")
    func lifecycle() async throws {
        let clock = ManualUnixClock(SystemUnixClock().now())
        let ca = try CertificateAuthority.create(name: "Sigil Vapor test CA").authority
        try await withApp { app in
            let (_, directory, _) = try Self.configure(app, clock: clock, certificates: ca)
            try await app.server.start(address: .hostname("127.0.0.1", port: 0))
            do {
                try await Self.lifecycle(port: try #require(app.http.server.shared.localAddress?.port), clock: clock)
            } catch {
                await app.server.shutdown()
                throw error
            }
            await app.server.shutdown()
            // Every change the routes made is audited with the client's address, as through Hummingbird.
            let trail = try await directory.auditTrail(AuditQuery())
            let actions = Set(trail.map(\.action))
            #expect(actions.isSuperset(of: [.registered, .secretIssued, .certificateIssued, .rotated, .revoked]))
            #expect(trail.allSatisfy { $0.clientAddress == "127.0.0.1" })
        }
    }

    static func lifecycle(port: Int, clock: ManualUnixClock) async throws {
        try await HTTPClient(eventLoopGroupProvider: .singleton).using { client in
            let deviceClock = ServerClock(local: clock)
            let registration = DeviceRegistration(
                transport: AsyncHTTPClientTransport(client: client), scheme: "http",
                authority: "127.0.0.1:\(port)", clock: deviceClock)
            let device = try SigningKey.generate(.ecdsaP256SHA256)
            let store = MemoryDeviceStore()
            let identity = try await DeviceEnrollment(requestCertificate: true).enroll(
                device, token: Self.token, with: registration, store: store)
            #expect(identity.keyID == device.derivedKeyID)
            let certificate = try Certificate(pemEncoded: try #require(identity.clientCertificate))
            #expect(certificate.subject.description.contains(identity.keyID))

            let server = try await registration.discover().responseVerifier(clock: deviceClock)
            for (key, keyID) in [
                (device, identity.keyID), (try #require(try store.secret()), try #require(identity.secretKeyID)),
            ] {
                for profile in SignatureProfile.allCases {
                    let session = SigilSession(
                        transport: registration.transport,
                        signer: RequestSigner(key: key, keyID: keyID, profile: profile, clock: deviceClock),
                        clock: deviceClock, responses: server, requireSignedResponses: true)
                    let me = try await session.send(
                        HTTPRequest(method: .get, scheme: "http", authority: "127.0.0.1:\(port)", path: "/api/me"))
                    #expect(me.head.status == .ok, "\(profile)")
                    #expect(me.signatureVerified)
                    #expect(String(decoding: me.body, as: UTF8.self) == keyID)
                    // Vapor answers HEAD with GET's route and no body: the signature covers none.
                    let head = try await session.send(
                        HTTPRequest(method: .head, scheme: "http", authority: "127.0.0.1:\(port)", path: "/api/me"))
                    #expect(head.head.status == .ok)
                    #expect(head.signatureVerified)
                    let body = Array(#"{"b":2,"a":[1,2.5]}"#.utf8)
                    var post = HTTPRequest(
                        method: .post, scheme: "http", authority: "127.0.0.1:\(port)", path: "/api/echo?x=1")
                    post.headerFields[.contentType] = "application/json"
                    let echo = try await session.send(post, body: body)
                    #expect(echo.head.status == .ok)
                    #expect(echo.body == body)
                }
            }

            let next = try SigningKey.generate(.ed25519)
            let rotated = try await registration.rotate(
                from: device, keyID: identity.keyID, to: next, server: server)
            #expect(rotated.deviceId == identity.deviceID)
            try await registration.revoke(key: next, keyID: rotated.keyId, server: server)
            let refused = await #expect(throws: SigilError.self) {
                _ = try await registration.fetchSecret(key: next, keyID: rotated.keyId, server: server)
            }
            #expect(refused?.code == .revokedKey)
        }
    }

    /// A request signed by `setup`'s key for Vapor's in-memory tester.
    static func signed(
        _ method: HTTPRequest.Method, _ path: String, body: [UInt8] = [], signer: RequestSigner
    ) throws -> (HTTPRequest, HTTPHeaders) {
        var request = HTTPRequest(method: method, scheme: "http", authority: "api.example.com", path: path)
        if !body.isEmpty { request.headerFields[.contentType] = "application/json" }
        try signer.sign(&request, body: body)
        var headers = HTTPHeaders([("Host", "api.example.com")])
        for field in request.headerFields { headers.add(name: field.name.rawName, value: field.value) }
        return (request, headers)
    }

    static func code(_ response: TestingHTTPResponse) -> String? {
        guard let object = try? JSONSerialization.jsonObject(with: Data(buffer: response.body)) as? [String: Any]
        else { return nil }
        return object["code"] as? String
    }

    @Test("App Attest: challenge, enrollment by attestation and apple-appattest requests through Vapor")
    func appAttest() async throws {
        let clock = ManualUnixClock(SystemUnixClock().now())
        let authority = try TestAppAttestAuthority(now: Date())
        try await withApp { app in
            _ = try Self.configure(app, clock: clock, appAttest: authority)
            try await app.server.start(address: .hostname("127.0.0.1", port: 0))
            do {
                let port = try #require(app.http.server.shared.localAddress?.port)
                try await HTTPClient(eventLoopGroupProvider: .singleton).using { client in
                    let deviceClock = ServerClock(local: clock)
                    let transport = AsyncHTTPClientTransport(client: client)
                    let registration = DeviceRegistration(
                        transport: transport, scheme: "http", authority: "127.0.0.1:\(port)", clock: deviceClock)
                    let device = TestAppAttestDevice()
                    let identity = try await DeviceEnrollment().enroll(
                        attested: device, appAttestKeyID: device.appAttestKeyID,
                        attest: { try AppAttestScaffold.attestation(authority, device: device, challenge: $0) },
                        with: registration, store: MemoryDeviceStore())
                    #expect(identity.keyID == device.keyID)
                    let session = SigilSession(
                        transport: transport,
                        signer: RequestSigner(key: device, keyID: device.keyID, clock: deviceClock), clock: deviceClock)
                    var request = HTTPRequest(
                        method: .get, scheme: "http", authority: "127.0.0.1:\(port)", path: "/api/me")
                    request.headerFields[.accept] = "text/plain"
                    let me = try await session.send(request, body: [])
                    #expect(me.head.status == .ok)
                    #expect(String(decoding: me.body, as: UTF8.self) == device.keyID)
                }
            } catch {
                await app.server.shutdown()
                throw error
            }
            await app.server.shutdown()
        }
    }

    @Test("refusals: codes, Accept-Signature, signed when the request verified; route errors signed too")
    func refusals() async throws {
        let clock = ManualUnixClock(SystemUnixClock().now())
        try await withApp { app in
            let (_, directory, responseKey) = try Self.configure(app, clock: clock, bodyLimit: 1024)
            let key = try SigningKey.generate(.ed25519)
            let keyID = try #require(key.derivedKeyID)
            try await directory.add(try key.verificationKey, keyID: keyID)
            let responses = ResponseVerifier(
                key: try responseKey.verificationKey, keyID: responseKey.derivedKeyID ?? "", clock: clock)
            let tester = try app.testing()

            let unsigned = try await tester.sendRequest(.GET, "/api/me", headers: ["Host": "api.example.com"])
            #expect(unsigned.status == .unauthorized)
            #expect(Self.code(unsigned) == "missing-signature")
            #expect(unsigned.headers.first(name: "Accept-Signature")?.contains("sig1") == true)
            #expect(unsigned.headers.first(name: "X-Signature") == nil)

            for profile in SignatureProfile.allCases {
                let signer = RequestSigner(key: key, keyID: keyID, profile: profile, clock: clock)
                let body = Array(#"{"a":1}"#.utf8)
                let (_, headers) = try Self.signed(.post, "/api/echo", body: body, signer: signer)
                let tampered = try await tester.sendRequest(
                    .POST, "/api/echo", headers: headers, body: ByteBuffer(string: #"{"a":2}"#))
                #expect(Self.code(tampered) == (profile == .sigilV1 ? "invalid-signature" : "digest-mismatch"))
                #expect((tampered.headers.first(name: "Accept-Signature") != nil) == (profile == .rfc9421))

                let (head, again) = try Self.signed(.get, "/api/me", signer: signer)
                let first = try await tester.sendRequest(.GET, "/api/me", headers: again)
                #expect(first.status == .ok)
                #expect(String(buffer: first.body) == keyID)
                let replayed = try await tester.sendRequest(.GET, "/api/me", headers: again)
                #expect(Self.code(replayed) == "replayed-nonce")
                // The replay's refusal is signed for the request's nonce: the client learns it was not carried out.
                let refusal = HTTPResponse(
                    status: .init(code: Int(replayed.status.code)), headerFields: try HTTPFields(replayed.headers))
                if profile == .sigilV1 {
                    _ = try responses.verifySigilV1(
                        refusal, body: Array(buffer: replayed.body),
                        answering: try #require(SigilV1.AnsweredRequest(head.headerFields)), checkingWindow: false)
                } else {
                    _ = try responses.verifyRFC9421(
                        refusal, body: Array(buffer: replayed.body), answering: head, checkingWindow: false)
                }

                let largeBody = Array(("[" + String(repeating: "0,", count: 1024) + "0]").utf8)
                let (_, large) = try Self.signed(.post, "/api/echo", body: largeBody, signer: signer)
                let tooLarge = try await tester.sendRequest(
                    .POST, "/api/echo", headers: large, body: ByteBuffer(bytes: largeBody))
                #expect(tooLarge.status == .payloadTooLarge)
                #expect(Self.code(tooLarge) == "body-too-large")

                let (_, forbidden) = try Self.signed(.get, "/api/forbidden", signer: signer)
                let refused = try await tester.sendRequest(.GET, "/api/forbidden", headers: forbidden)
                #expect(refused.status == .forbidden)
                #expect(Self.code(refused) == "forbidden")
                #expect(refused.headers.first(name: profile == .sigilV1 ? "X-Signature" : "Signature") != nil)

                let (_, missing) = try Self.signed(.get, "/api/missing", signer: signer)
                let notFound = try await tester.sendRequest(.GET, "/api/missing", headers: missing)
                #expect(notFound.status == .notFound)
                #expect(notFound.headers.first(name: profile == .sigilV1 ? "X-Signature" : "Signature") != nil)
            }

            let stranger = RequestSigner(key: try SigningKey.generate(.ed25519), keyID: "stranger", clock: clock)
            let (_, unknown) = try Self.signed(.get, "/api/me", signer: stranger)
            #expect(Self.code(try await tester.sendRequest(.GET, "/api/me", headers: unknown)) == "unknown-key")

            // Two Host fields: which one was signed is not for the server to guess.
            let (_, twice) = try Self.signed(
                .get, "/api/me", signer: RequestSigner(key: key, keyID: keyID, clock: clock))
            var twoHosts = twice
            twoHosts.add(name: "Host", value: "evil.example")
            let doubled = try await tester.sendRequest(.GET, "/api/me", headers: twoHosts)
            #expect(doubled.status == .forbidden)
            #expect(Self.code(doubled) == "forbidden")

            // A route outside the middleware that asks for the identity answers 401, never a 500.
            let open = try await tester.sendRequest(.GET, "/open", headers: ["Host": "api.example.com"])
            #expect(open.status == .unauthorized)
        }
    }

    @Test("a body that stalls gets 408 request-timeout; a client certificate Vapor cannot show is refused")
    func stalledBodyAndUnreadableCertificate() async throws {
        let clock = ManualUnixClock(SystemUnixClock().now())
        try await withApp { app in
            let (_, directory, _) = try Self.configure(app, clock: clock, bodyTimeout: .milliseconds(300))
            let key = try SigningKey.generate(.ed25519)
            let keyID = try #require(key.derivedKeyID)
            try await directory.add(try key.verificationKey, keyID: keyID)
            let port = try ExternalServers.freePort()
            try await app.server.start(address: .hostname("127.0.0.1", port: port))
            do {
                let body = Array(#"{"a":1}"#.utf8)
                var head = HTTPRequest(method: .post, scheme: "http", authority: "127.0.0.1:\(port)", path: "/api/echo")
                head.headerFields[.contentType] = "application/json"
                try RequestSigner(key: key, keyID: keyID, clock: clock).sign(&head, body: body)
                var request = HTTPClientRequest(url: "http://127.0.0.1:\(port)/api/echo")
                request.method = .POST
                for field in head.headerFields { request.headers.add(name: field.name.rawName, value: field.value) }
                // One byte of seven, then nothing.
                let (stream, continuation) = AsyncStream.makeStream(of: ByteBuffer.self)
                continuation.yield(ByteBuffer(bytes: body.prefix(1)))
                request.body = .stream(stream, length: .known(Int64(body.count)))
                let response = try await HTTPClient.shared.execute(request, timeout: .seconds(30))
                let answer = try await response.body.collect(upTo: 1 << 16)
                continuation.finish()
                #expect(response.status == .requestTimeout)
                #expect(String(buffer: answer).contains("request-timeout"))
            } catch {
                await app.server.shutdown()
                throw error
            }
            await app.server.shutdown()
        }
        try await withApp { app in
            let (_, directory, _) = try Self.configure(app, clock: clock, readsClientCertificate: true)
            let key = try SigningKey.generate(.ed25519)
            let keyID = try #require(key.derivedKeyID)
            try await directory.add(try key.verificationKey, keyID: keyID)
            let files = try DataDirectory(path: TestServer.temporaryDirectory()).tlsFiles(
                certificate: nil, key: nil, names: ["localhost"])
            app.http.server.configuration.tlsConfiguration = ServerTLS.configuration(
                identity: try TLSIdentity(certificateFile: files.certificate, keyFile: files.key))
            let (_, headers) = try Self.signed(
                .get, "/api/me", signer: RequestSigner(key: key, keyID: keyID, clock: clock))
            let refused = try await app.testing().sendRequest(.GET, "/api/me", headers: headers)
            #expect(Self.code(refused) == "certificate-mismatch")
        }
    }
}

extension HTTPFields {
    init(_ headers: HTTPHeaders) throws {
        self.init()
        for (name, value) in headers {
            append(HTTPField(name: try #require(HTTPField.Name(name)), value: value))
        }
    }
}
