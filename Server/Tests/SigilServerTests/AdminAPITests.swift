import AsyncHTTPClient
import Crypto
import Foundation
import HTTPTypes
import NIOCore
import NIOHTTP1
import NIOSSL
import SigilClient
@_spi(Sigil) import SigilCore
import SigilHTTPClient
import SigilServer
import SigilStandalone
import SigilTLS
import Testing
import X509

@testable import SigilTestSupport

/// The admin API of a running server, and the server's response key rotating under enrolled clients.
@Suite("Admin API and server key rotation")
struct AdminAPITests {

    /// An identity enrolled with `server` over pinned TLS, its connection, and a session made from it
    /// (trusting the response key of enrollment only).
    static func enrolledSession(_ server: TestServer) async throws -> (
        DeviceIdentity, SigilHTTPClient, SigilSession, makeSession: @Sendable () throws -> SigilSession
    ) {
        let store = FileDeviceStore(directory: TestServer.temporaryDirectory())
        var options = SigilHTTPClient.Options()
        options.pins = server.prepared.pins + [try #require(server.prepared.backupPin)]
        let enrolled = try await Enrollment.enroll(
            server: "https://localhost:\(server.port)", token: TestServer.token, options: options,
            enrollment: DeviceEnrollment(), store: store)
        let connection = try await SigilHTTPClient.connect(host: "localhost", port: server.port, options: options)
        let clock = ServerClock(local: server.clock)
        let key = try #require(try store.privateKey())
        let make: @Sendable () throws -> SigilSession = {
            try SigilSession(
                identity: enrolled, transport: connection.transport,
                signer: RequestSigner(key: key, keyID: enrolled.keyID, clock: clock), clock: clock)
        }
        return (enrolled, connection, try make(), make)
    }

    @Test("admin routes answer on the admin port only, with the token only (401 and nothing more), and are audited")
    func adminAPI() async throws {
        try await AdminScaffold.withAdmin(configure: {
            $0.metrics = true
        }) { server, port, client in
            let device = try await DeviceSteps.registeredDevice(on: server, client: client)

            for token in [nil, "wrong-token-0123456789-abcdefghijklmnop", AdminScaffold.adminToken + "x"] {
                let refused = try await AdminScaffold.call(
                    .GET, "/admin/v1/devices", port: port, token: token, client: client)
                #expect(refused.status == 401)
                #expect(!String(decoding: refused.body, as: UTF8.self).contains("devices"))
            }
            let unknownRoute = try await AdminScaffold.call(
                .GET, "/admin/v1/nothing", port: port, token: nil, client: client)
            #expect(unknownRoute.status == 401)  // nothing is said before the credential
            // The public port has no admin route, and no /metrics when the admin port serves it.
            var publicCall = TestRequest(.get, "/admin/v1/devices", server: server)
            publicCall.head.headerFields[.authorization] = "Bearer \(AdminScaffold.adminToken)"
            #expect(try await publicCall.send(client).status != 200)
            #expect(try await TestRequest(.get, "/metrics", server: server).send(client).status != 200)
            #expect(
                try await AdminScaffold.call(
                    .GET, "/metrics", port: port, token: AdminScaffold.adminToken, client: client
                ).status
                    == 200)

            let listed = try await AdminScaffold.call(
                .GET, "/admin/v1/devices", port: port, token: AdminScaffold.adminToken, client: client)
            #expect(listed.status == 200)
            let devices = try JSONDecoder().decode([DeviceRecord].self, from: Data(listed.body))
            let record = try #require(devices.first { $0.keys.contains { $0.keyID == device.keyID } })
            let one = try await AdminScaffold.call(
                .GET, "/admin/v1/devices/\(device.keyID)", port: port, token: AdminScaffold.adminToken, client: client)
            #expect(try JSONDecoder().decode(DeviceRecord.self, from: Data(one.body)).deviceID == record.deviceID)
            let missing = try await AdminScaffold.call(
                .GET, "/admin/v1/devices/dev-none", port: port, token: AdminScaffold.adminToken, client: client)
            #expect(missing.status == 404)

            // Signed requests pass, then the device is revoked over the admin API and refused.
            let signer = device.signer(clock: server.clock)
            let (before, _, _) = try await DeviceSteps.echo("{}", signer: signer, server: server, client: client)
            #expect(before.status == 200)
            let revoked = try await AdminScaffold.call(
                .POST, "/admin/v1/devices/\(record.deviceID)/revoke?reason=lost", port: port,
                token: AdminScaffold.adminToken, client: client)
            #expect(revoked.status == 200, "\(String(decoding: revoked.body, as: UTF8.self))")
            let (after, _, _) = try await DeviceSteps.echo("{}", signer: signer, server: server, client: client)
            #expect(after.status == 401)
            #expect(after.code == "revoked-key")

            let trail = try await AdminScaffold.call(
                .GET, "/admin/v1/audit?device=\(record.deviceID)", port: port, token: AdminScaffold.adminToken,
                client: client)
            let rows = try JSONDecoder().decode([AuditEntry].self, from: Data(trail.body))
            #expect(rows.map(\.action) == [.registered, .revoked])
            #expect(rows.first?.clientAddress == "127.0.0.1")  // the registration, through Hummingbird
            #expect(rows.last?.actor == "operator:token:alice-ops")
            #expect(rows.last?.reason == "lost")
            #expect(rows.last?.clientAddress == "127.0.0.1")
            // Calls that may change something are audited; reads (the console's page views) and
            // scrapes are counted, not audited, so the trail holds changes.
            let calls = try await server.prepared.directory.auditTrail(AuditQuery()).filter {
                $0.action == .adminCall
            }
            #expect(calls.map(\.reason) == ["POST /admin/v1/devices/\(record.deviceID)/revoke"], "\(calls)")
            #expect(calls.allSatisfy { $0.actor == "operator:token:alice-ops" })
            let scrape = try await AdminScaffold.call(
                .GET, "/metrics", port: port, token: AdminScaffold.adminToken, client: client)
            let text = String(decoding: scrape.body, as: UTF8.self)
            #expect(text.contains(#"sigil_admin_reads_total{route="devices"} 3"#), "\(text)")
            #expect(text.contains(#"sigil_admin_reads_total{route="audit"} 1"#))
        }
    }

    @Test(
        "a missing or wrong admin credential is 401 with WWW-Authenticate: Bearer and problem+json whose status is 401, on any path; an unknown ID is 404 with a body saying 404"
    )
    func unauthorizedAnswers() async throws {
        try await AdminScaffold.withAdmin { server, port, client in
            func send(_ method: HTTPMethod, _ path: String, token: String?) async throws -> (
                status: Int, headers: HTTPHeaders, problem: [String: Any]
            ) {
                var request = HTTPClientRequest(url: "https://localhost:\(port)\(path)")
                request.method = method
                if let token { request.headers.add(name: "Authorization", value: "Bearer \(token)") }
                let response = try await client.execute(request, timeout: .seconds(30))
                let body = Array(buffer: try await response.body.collect(upTo: 1 << 20))
                let problem = (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any] ?? [:]
                return (Int(response.status.code), response.headers, problem)
            }
            let wrong = "wrong-token-0123456789-abcdefghijklmnop"
            for (method, path) in [
                (HTTPMethod.GET, "/admin/v1/devices"), (.POST, "/admin/v1/users/alice/revoke"), (.GET, "/nothing"),
            ] {
                for token in [nil, wrong] {
                    let answer = try await send(method, path, token: token)
                    #expect(answer.status == 401, "\(method) \(path)")
                    #expect(
                        answer.headers.first(name: "WWW-Authenticate")
                            == (token == nil ? "Bearer" : #"Bearer error="invalid_token""#))
                    #expect(answer.headers.first(name: "Content-Type") == "application/problem+json")
                    #expect(answer.problem["status"] as? Int == 401)
                    #expect(answer.problem["code"] as? String == "missing-signature")
                    #expect((answer.problem["detail"] as? String)?.contains(AdminScaffold.adminToken) == false)
                }
            }
            // With the token: an unknown ID is 404, and its problem says 404 too.
            let unknown = try await send(.GET, "/admin/v1/devices/dev-none", token: AdminScaffold.adminToken)
            #expect(unknown.status == 404)
            #expect(unknown.problem["status"] as? Int == 404)
            #expect(unknown.problem["code"] as? String == "unknown-key")
            #expect(
                try await send(.GET, "/admin/v1/nothing", token: AdminScaffold.adminToken).problem["status"] as? Int
                    == 404)
        }
    }

    @Test("a server without a credential for its admin port does not start")
    func adminNeedsCredential() async throws {
        await #expect(throws: SigilInputError.self) {
            try await TestServer.with(configure: { $0.admin.port = 0 }) { _ in }
        }
        let short = try AdminScaffold.tokenFile("too-short")
        await #expect(throws: SigilInputError.self) {
            try await TestServer.with(configure: {
                $0.admin.port = 0
                $0.admin.tokenFile = short
            }) { _ in }
        }
    }

    @Test("a client enrolled before `rotate response` and `promote` keeps verifying answers after them")
    func clientFollowsPromotion() async throws {
        try await TestServer.with { server in
            let (enrolled, connection, session, makeSession) = try await Self.enrolledSession(server)
            let first = server.prepared.responseKeyID
            #expect(enrolled.responseKeyID == first)
            func echo() async throws -> SigilResponse {
                try await session.send(SessionScaffold.echo(server), body: Array("{}".utf8))
            }
            #expect(try await echo().signatureVerified)

            let ring = server.prepared.serverKeys
            let next = try await ring.rotate(.response, actor: "operator:test")
            // Published in discovery, signed by the current key; answers still signed by the current one.
            let discovery = try await connection.transport.send(SessionScaffold.discovery(server), body: [])
            let document = try JSONDecoder().decode(Registration.Discovery.self, from: Data(discovery.1))
            #expect(document.responseKeys.map(\.keyId) == [first, next])
            #expect(document.responseKeys.map(\.state) == ["current", "next"])
            let field = try #require(HTTPField.Name(Registration.DiscoverySignature.field))
            let firstKey = try server.data.responseKey().verificationKey
            #expect(
                Registration.DiscoverySignature.verifiedSigners(
                    discovery.0.headerFields[field], body: discovery.1, trusted: [first: firstKey]) == [first])
            #expect(try await echo().signatureVerified)

            _ = try await ring.promote(.response, actor: "operator:test")
            let answer = try await echo()
            #expect(answer.signatureVerified)
            #expect(answer.head.headerFields[SigilV1.keyIDField] == next)
            #expect(session.responses?.trusted?.current?.keyId == next)

            // A forged discovery (signed by no trusted key) teaches nothing.
            let stranger = TrustedResponseKeys([:])
            #expect(
                stranger.learn(
                    discovery: discovery.1, signature: discovery.0.headerFields[field], now: server.clock.now()
                )
                .isEmpty)

            // Once the overlap has passed, the old key no longer vouches: a client that slept through it re-enrolls.
            server.clock.advance(by: 7 * 86_400 + 1)
            let late = try makeSession()
            // Not the server's word for this client: an answer it cannot trust, which resets nothing.
            let untrusted = await #expect(throws: SigilClientError.self) {
                try await late.send(SessionScaffold.echo(server), body: Array("{}".utf8))
            }
            #expect(untrusted?.kind == .untrustedAnswer)
            try await connection.shutdown()
        }
    }

    @Test(
        "after a sealing key rotation, the first answer's Sigil-Keys tag has the session learn the new key from signed discovery; without the tag, it resends once"
    )
    func clientFollowsSealingRotation() async throws {
        try await TestServer.with { server in
            var (enrolled, connection, session, _) = try await Self.enrolledSession(server)
            session.sealsBodies = true
            let old = try #require(enrolled.sealingKey?.keyId)
            #expect(try await session.send(SessionScaffold.echo(server), body: Array("{}".utf8)).attempts == 1)

            let ring = server.prepared.serverKeys
            let next = try await ring.rotate(.sealing, actor: "operator:test")
            _ = try await ring.promote(.sealing, actor: "operator:test")
            // During the overlap the old key still opens.
            let during = try await session.send(SessionScaffold.echo(server), body: Array("{}".utf8))
            #expect(during.head.status == .ok)
            #expect(during.sealedTo == old)
            server.clock.advance(by: 7 * 86_400 + 1)
            let after = try await session.send(SessionScaffold.echo(server), body: Array("{}".utf8))
            #expect(after.head.status == .ok)
            // The answer during the overlap carried the keys' new tag: discovery was read then.
            #expect(after.attempts == 1)
            #expect(after.sealedTo == next)
            #expect(session.responses?.trusted?.sealingKey?.keyID == next)

            // A proxy that strips the tag only delays the news: a sealed body refused (signed) is sent
            // once more, to the key the signed discovery names.
            let third = try await ring.rotate(.sealing, actor: "operator:test")
            _ = try await ring.promote(.sealing, actor: "operator:test")
            server.clock.advance(by: 7 * 86_400 + 1)
            var stripped = SigilSession(
                transport: StrippingKeysTag(inner: session.transport), signer: session.signer, clock: session.clock,
                responses: session.responses, requireSignedResponses: session.requireSignedResponses)
            stripped.sealsBodies = true
            stripped.sealingKey = session.sealingKey
            stripped.origin = session.origin
            let resent = try await stripped.send(SessionScaffold.echo(server), body: Array("{}".utf8))
            #expect(resent.head.status == .ok && resent.attempts == 2 && resent.sealedTo == third)
            try await connection.shutdown()
        }
    }

    @Test("every admin route, bad input included: keys, rotation and promotion, key and user revocation, wrong state")
    func adminRoutes() async throws {
        try await AdminScaffold.withAdmin { server, port, client in
            func call(_ method: HTTPMethod, _ path: String) async throws -> (status: Int, body: [UInt8]) {
                try await AdminScaffold.call(method, path, port: port, token: AdminScaffold.adminToken, client: client)
            }
            let first = try await DeviceSteps.registeredDevice(on: server, client: client)
            #expect(try await call(.GET, "/admin/v1/devices?state=lost").status == 400)
            #expect(try await call(.GET, "/admin/v1/audit?since=yesterday").status == 400)
            #expect(try await call(.DELETE, "/admin/v1/devices").status == 404)
            #expect(try await call(.POST, "/admin/v1/keys/other/rotate").status == 404)
            // A user with no device (an OAuth client's) is revoked all the same: its tokens stop.
            #expect(try await call(.POST, "/admin/v1/users/nobody/revoke").status == 200)
            #expect(try await call(.POST, "/admin/v1/keys/no-such-key/revoke").status == 404)

            let keys = try JSONDecoder().decode(
                [ServerKeyInfo].self, from: Data(try await call(.GET, "/admin/v1/keys").body))
            #expect(Set(keys.map(\.kind)) == [.response, .sealing, .tls])
            #expect(keys.allSatisfy { $0.state == .current })
            #expect(try await call(.POST, "/admin/v1/keys/response/promote").status == 403)
            let rotated = try JSONDecoder().decode(
                [ServerKeyInfo].self, from: Data(try await call(.POST, "/admin/v1/keys/response/rotate").body))
            #expect(rotated.first?.state == .next)
            #expect(try await call(.POST, "/admin/v1/keys/response/rotate").status == 403)
            let promoted = try JSONDecoder().decode(
                [ServerKeyInfo].self, from: Data(try await call(.POST, "/admin/v1/keys/response/promote").body))
            #expect(promoted.first?.state == .current)
            #expect(server.prepared.serverKeys.phase(.response)?.current.stored.keyID == promoted.first?.keyID)

            let byKey = try await call(.POST, "/admin/v1/keys/\(first.keyID)/revoke")
            #expect(byKey.status == 200)
            let (refused, _, _) = try await DeviceSteps.echo(
                "{}", signer: first.signer(clock: server.clock), server: server, client: client)
            #expect(refused.code == "revoked-key")
            let trail = try await server.prepared.directory.auditTrail(AuditQuery())
            #expect(trail.contains { $0.action == .serverKeyPromoted && $0.actor == "operator:token:alice-ops" })
            #expect(trail.contains { $0.action == .revoked && $0.keyID == first.keyID })
        }
    }

    @Test(
        "operators with a client certificate from the admin CA get in without a token; a device-profile certificate does not"
    )
    func adminClientCertificate() async throws {
        let caKey = P256.Signing.PrivateKey()
        let caName = try DistinguishedName { CommonName("Sigil admin CA") }
        let caCertificate = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: .init(caKey.publicKey),
            notValidBefore: Date() - 300, notValidAfter: Date() + 86_400, issuer: caName, subject: caName,
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 0))
                Critical(KeyUsage(keyCertSign: true))
            },
            issuerPrivateKey: .init(caKey))
        let caFile = TestServer.temporaryDirectory() + "-admin-ca.pem"
        try caCertificate.serializeAsPEM().pemString.write(toFile: caFile, atomically: true, encoding: .utf8)
        let operatorKey = P256.Signing.PrivateKey()
        let operatorCertificate = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: .init(operatorKey.publicKey),
            notValidBefore: Date() - 300, notValidAfter: Date() + 86_400, issuer: caName,
            subject: try DistinguishedName {
                CommonName("jo ops")
                OrganizationName("Operators")
            },
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.notCertificateAuthority)
                try ExtendedKeyUsage([.clientAuth])
            },
            issuerPrivateKey: .init(caKey))
        // The same CA, a device's profile (what Sigil's client CA issues): never an operator.
        let holder = TLSScaffold.CSRDevice()
        let deviceCertificate = try CertificateAuthority(certificate: caCertificate, privateKey: .init(caKey)).issue(
            try CertificateAuthority.parseCSR(Array(try holder.csrPEM.utf8)), keyID: try holder.device.keyID)

        try await TestServer.with(configure: {
            $0.admin.port = 0
            $0.admin.clientCAFile = caFile
        }) { server in
            let port = try #require(await server.prepared.adminPort?.value())
            func status(
                certificate: Certificate?, key: P256.Signing.PrivateKey, _ method: HTTPMethod = .GET,
                _ path: String = "/admin/v1/devices"
            ) async throws -> Int {
                try await server.client { tls in
                    if let certificate {
                        tls.certificateChain = [
                            .certificate(
                                try NIOSSLCertificate(
                                    bytes: Array(try certificate.serializeAsPEM().pemString.utf8), format: .pem))
                        ]
                        tls.privateKey = .privateKey(
                            try NIOSSLPrivateKey(bytes: Array(key.pemRepresentation.utf8), format: .pem))
                    }
                }.using { client in
                    try await AdminScaffold.call(method, path, port: port, token: nil, client: client).status
                }
            }
            #expect(try await status(certificate: nil, key: operatorKey) == 401)
            #expect(try await status(certificate: deviceCertificate, key: holder.privateKey) == 401)
            #expect(try await status(certificate: operatorCertificate, key: operatorKey) == 200)
            #expect(
                try await status(
                    certificate: operatorCertificate, key: operatorKey, .POST, "/admin/v1/keys/none/revoke")
                    == 404)
            let calls = try await server.prepared.directory.auditTrail(AuditQuery()).filter { $0.action == .adminCall }
            #expect(calls.map(\.actor) == ["operator:jo_ops"], "a certificate's holder is named in the trail")
        }
    }

    @Test("the CA that issues device certificates cannot be the admin CA")
    func adminCAIsNotTheDeviceCA() async throws {
        let dataDirectory = TestServer.temporaryDirectory()
        let caPath = try DataDirectory(path: dataDirectory).createCertificateAuthority()
        await #expect(throws: SigilInputError.self) {
            try await TestServer.with(
                dataDirectory: dataDirectory,
                configure: {
                    $0.admin.port = 0
                    $0.admin.clientCAFile = caPath
                }
            ) { _ in }
        }
    }
}

/// A transport whose answers lose their `Sigil-Keys` field on the way (a proxy that strips it).
struct StrippingKeysTag: SigilTransport {
    let inner: any SigilTransport

    func send(_ request: HTTPRequest, body: [UInt8]) async throws -> (HTTPResponse, [UInt8]) {
        var (head, answer) = try await inner.send(request, body: body)
        head.headerFields[HTTPField.Name(Registration.keysTagField)!] = nil
        return (head, answer)
    }
}
