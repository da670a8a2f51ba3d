import AsyncHTTPClient
import Foundation
import HTTPTypes
import SigilClient
@_spi(Sigil) import SigilCore
import SigilHTTPClient
import SigilServer
import SigilStandalone
import SigilTLS
import Synchronization
import Testing

@testable import SigilTestSupport

/// What a client holds to: one identity, one origin; pins looked up by a normalized host; the user a
/// device enrolls for; pins taken on first use recorded as such.
@Suite("Client hardening")
struct ClientHardeningTests {
    @Test("origins compare as browsers do: case, a trailing dot and the default port do not matter")
    func origins() throws {
        let origin = try #require(Origin(url: "https://API.Example.com:443"))
        #expect(origin == Origin(scheme: "https", authority: "api.example.com."))
        #expect(origin.description == "https://api.example.com")
        #expect(origin != Origin(scheme: "https", authority: "api.example.com:8443"))
        #expect(origin != Origin(scheme: "http", authority: "api.example.com"))
        #expect(origin != Origin(scheme: "https", authority: "evil.example"))
        #expect(Origin(scheme: "https", authority: "user@api.example.com") == nil)
        #expect(Origin(url: "https://[::1]:8443") == Origin(scheme: "https", authority: "[::1]:8443"))
    }

    @Test("pins are kept and looked up under a normalized host: another case or a trailing dot is still pinned")
    func pinHosts() throws {
        let pins = ["sha256/" + Base64.encode([UInt8](repeating: 1, count: 32))]
        #expect(try PinSet(host: "API.Example.com.", pins: pins, allowSinglePin: true).host == "api.example.com")
        #expect(PinSet.normalizedHost("LOCALHOST") == "localhost")
    }

    @Test("a session signs for its origin only: a request to another is refused before it is signed or sent")
    func sessionOrigin() async throws {
        let sent = Mutex(0)
        let transport = ClosureTransport { _, _ in
            sent.withLock { $0 += 1 }
            return (HTTPResponse(status: .ok), [])
        }
        let key = try SigningKey.generate(.ed25519)
        var session = SigilSession(
            transport: transport, signer: RequestSigner(key: key, keyID: "k-0000000000000001"), clock: ServerClock())
        session.origin = Origin(url: "https://api.example.com")
        let elsewhere = HTTPRequest(method: .get, scheme: "https", authority: "other.example", path: "/v1/me")
        await #expect(throws: SigilInputError.self) { _ = try await session.send(elsewhere) }
        #expect(sent.withLock { $0 } == 0)
        let home = HTTPRequest(method: .get, scheme: "https", authority: "API.example.com.", path: "/v1/me")
        _ = try await session.send(home)
        #expect(sent.withLock { $0 } == 1)
        // A path a transport would join into another authority is refused too.
        let joined = HTTPRequest(method: .get, scheme: "https", authority: "api.example.com", path: "@evil.example/x")
        await #expect(throws: SigilInputError.self) { _ = try await session.send(joined) }
        #expect(sent.withLock { $0 } == 1)
    }

    @Test(
        "a signed timestamp-out-of-window is resent only when its round trip taught the clock: a held-back answer is not",
        arguments: [false, true])
    func resendOnlyWhenSynchronized(_ heldBack: Bool) async throws {
        let local = ManualUnixClock(1_000_000)
        let serverKey = try SigningKey.generate(.ed25519)
        let serverKeyID = try #require(try serverKey.verificationKey.derivedKeyID)
        let signer = ResponseSigner(signer: serverKey, keyID: serverKeyID, clock: ManualUnixClock(1_000_900))
        let sent = Mutex(0)
        let transport = ClosureTransport { request, _ in
            sent.withLock { $0 += 1 }
            // A proxy holds the answer back past the round-trip limit.
            if heldBack { local.advance(by: 200) }
            var head = HTTPResponse(status: .unauthorized)
            head.headerFields[.contentType] = "application/problem+json"
            let body = Array(#"{"code":"timestamp-out-of-window","status":401,"serverTime":1000900}"#.utf8)
            let answered = try #require(SigilV1.AnsweredRequest(request.headerFields))
            head.headerFields.append(contentsOf: try signer.sigilV1Fields(for: head, body: body, answering: answered))
            return (head, body)
        }
        let clock = ServerClock(local: local)
        let session = SigilSession(
            transport: transport,
            signer: RequestSigner(key: try SigningKey.generate(.ed25519), keyID: "k-0000000000000001", clock: clock),
            clock: clock,
            responses: ResponseVerifier(key: try serverKey.verificationKey, keyID: serverKeyID, clock: local),
            requireSignedResponses: true)
        let answer = try await session.send(
            HTTPRequest(method: .post, scheme: "https", authority: "api.example.com", path: "/v1/pay"), body: [1])
        #expect(answer.signatureVerified)
        #expect(sent.withLock { $0 } == (heldBack ? 1 : 2))
    }

    @Test("a device enrolled for another user than it expects stores nothing; pins taken from discovery say so")
    func enrolledUser() async throws {
        let serverClock = ManualUnixClock(SystemUnixClock().now())
        try await TestServer.with(clock: serverClock) { server in
            let tls = ClientTLS.configuration(anchors: try server.certificates)
            try await HTTPClient(eventLoopGroupProvider: .singleton, configuration: .init(tlsConfiguration: tls))
                .using { client in
                    let registration = DeviceRegistration(
                        transport: AsyncHTTPClientTransport(client: client), authority: "localhost:\(server.port)",
                        clock: ServerClock(local: serverClock))
                    // The bootstrap token enrolls for no user: a device expecting alice refuses that.
                    var expecting = DeviceEnrollment(fetchSecret: false)
                    expecting.expectedUserID = "alice"
                    let refusedStore = FileDeviceStore(directory: TestServer.temporaryDirectory())
                    // The client's own verdict on a signed answer, not a code of the server's.
                    let error = await #expect(throws: SigilClientError.self) {
                        _ = try await expecting.enroll(
                            try SigningKey.generate(.ed25519), token: TestServer.token, with: registration,
                            store: refusedStore)
                    }
                    #expect(error?.kind == .untrustedAnswer)
                    #expect(try refusedStore.identity() == nil)

                    // No pins checked by the transport: the identity records that discovery's were taken on trust.
                    let store = FileDeviceStore(directory: TestServer.temporaryDirectory())
                    let identity = try await DeviceEnrollment(fetchSecret: false).enroll(
                        try SigningKey.generate(.ed25519), token: TestServer.token, with: registration, store: store)
                    #expect(identity.pinsTakenOnFirstUse == true)
                    #expect(identity.pins == server.prepared.pins)
                    // A session made from the identity signs for its server only, answers required signed.
                    let clock = ServerClock(local: serverClock)
                    let session = try SigilSession(
                        identity: identity, transport: AsyncHTTPClientTransport(client: client),
                        signer: RequestSigner(
                            key: try #require(try store.privateKey()), keyID: identity.keyID, clock: clock),
                        clock: clock)
                    let echoed = try await session.send(SessionScaffold.echo(server), body: Array("{}".utf8))
                    #expect(echoed.head.status == .ok)
                    #expect(echoed.signatureVerified)
                    var elsewhere = SessionScaffold.echo(server)
                    elsewhere.authority = "127.0.0.1:\(server.port)"
                    await #expect(throws: SigilInputError.self) {
                        _ = try await session.send(elsewhere, body: Array("{}".utf8))
                    }
                    let pinned = try await DeviceEnrollment(fetchSecret: false, pins: server.prepared.pins).enroll(
                        try SigningKey.generate(.ed25519), token: TestServer.token, with: registration,
                        store: FileDeviceStore(directory: TestServer.temporaryDirectory()))
                    #expect(pinned.pinsTakenOnFirstUse == nil)
                }
        }
    }
}

/// rfc9421: a message that carries `Content-Encoding` must cover it (PROTOCOL.md section 3).
@Suite("Signed codings")
struct SignedCodingTests {
    @Test("a request whose Content-Encoding its signature does not cover is missing-component")
    func requestCoding() async throws {
        let setup = try await SigningSetup(.ed25519)
        var (request, body) = SigningSetup.jsonPost()
        try setup.signer(.rfc9421).sign(&request, body: body)
        request.headerFields[.contentEncoding] = "gzip"  // added on the way
        #expect(await setup.verifier.failure(request, body: body) == .missingComponent)
        // The signer covers a coding the request carries.
        var encoded = SigningSetup.jsonPost().0
        encoded.headerFields[.contentEncoding] = "gzip"
        try setup.signer(.rfc9421).sign(&encoded, body: body)
        #expect(encoded.headerFields[MessageSignatures.signatureInputField]?.contains("\"content-encoding\"") == true)
        _ = try await setup.verifier.verify(encoded, body: body)
    }

    @Test("a response with a Content-Encoding its signature does not cover is refused")
    func responseCoding() throws {
        let serverKey = try SigningKey.generate(.ecdsaP256SHA256)
        let keyID = try #require(try serverKey.verificationKey.derivedKeyID)
        let clock = ManualUnixClock(SigningSetup.start)
        let signer = ResponseSigner(signer: serverKey, keyID: keyID, clock: clock)
        let client = ResponseVerifier(key: try serverKey.verificationKey, keyID: keyID, clock: clock)
        let request = HTTPRequest(method: .get, scheme: "https", authority: "api.example.com", path: "/v1/x")
        var response = HTTPResponse(status: .ok)
        response.headerFields[.contentEncoding] = "sigil-hpke"
        let body: [UInt8] = [1, 2, 3]
        try signer.signRFC9421(&response, body: body, answering: request, requestLabel: nil)
        _ = try client.verifyRFC9421(response, body: body, answering: request)
        var stripped = response
        stripped.headerFields[.contentEncoding] = nil
        #expect(throws: SigilError.self) { _ = try client.verifyRFC9421(stripped, body: body, answering: request) }
        var added = HTTPResponse(status: .ok)
        try signer.signRFC9421(&added, body: body, answering: request, requestLabel: nil)
        added.headerFields[.contentEncoding] = "gzip"
        #expect(throws: SigilError(.missingComponent, "")) {
            _ = try client.verifyRFC9421(added, body: body, answering: request)
        }
    }
}
