import AsyncHTTPClient
import Foundation
import HTTPTypes
import HTTPTypesFoundation
@_spi(Sigil) import SigilCore
import SigilHTTPClient
import SigilServer
import SigilStandalone
import SigilTLS
import Synchronization
import Testing

@testable import SigilClient
@testable import SigilTestSupport

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

@Suite("SigilDevice: enroll, send, rotate, reset, and what it keeps by itself")
struct SigilDeviceTests {

    @Test("rotate: the server registers the new key, a new secret comes with it, and the store holds all three at once")
    func rotate() async throws {
        try await DeviceScaffold.withServer { server, transport, pins in
            let store = DeviceScaffold.store()
            let device = try SigilDevice(store: store, clock: server.clock, transport: transport)
            #expect(await device.enrollmentState == .notEnrolled)
            let first = try SigningKey.generate(.ecdsaP256SHA256)
            let enrolled = try await device.enroll(first, server: DeviceScaffold.url(server), token: TestServer.token)
            #expect(try await DeviceScaffold.echo(device, server).head.status == .ok)
            let firstSecret = try #require(try store.secret()?.verificationKey.hmacSecret)

            let next = try SigningKey.generate(.ed25519)
            let rotated = try await device.rotate(to: next)
            #expect(rotated.keyID == next.derivedKeyID)
            #expect(rotated.keyID != enrolled.keyID)
            #expect(rotated.algorithm == "ed25519")
            #expect(try store.identity() == rotated)
            #expect(try store.privateKey()?.derivedKeyID == next.derivedKeyID)
            let secret = try #require(try store.secret()?.verificationKey.hmacSecret)
            #expect(secret != firstSecret)
            #expect(rotated.secretKeyID != enrolled.secretKeyID)

            // The next request is signed by the new key.
            let answer = try await DeviceScaffold.echo(device, server)
            #expect(answer.head.status == .ok)
            #expect(String(decoding: answer.body, as: UTF8.self).contains(try #require(next.derivedKeyID)))
            // Every transport was made with the pins the identity holds: taken at enrollment, then those
            // of the server's signed discovery (which lists its backup pin too), read after an answer.
            let held = try #require(await device.identity).pins
            #expect(Set(enrolled.pins).isSubset(of: held))
            #expect(pins.seen.withLock { $0 }.dropFirst().allSatisfy { $0 == enrolled.pins || $0 == held })
        }
    }

    @Test("reset revokes the device and deletes the store; the old key is then refused, and nothing is left to sign")
    func reset() async throws {
        try await DeviceScaffold.withServer { server, transport, _ in
            let store = DeviceScaffold.store()
            let device = try SigilDevice(store: store, clock: server.clock, transport: transport)
            let key = try SigningKey.generate(.ecdsaP256SHA256)
            let identity = try await device.enroll(key, server: DeviceScaffold.url(server), token: TestServer.token)
            #expect(try await DeviceScaffold.echo(device, server).head.status == .ok)
            // Enrolling over an identity would leave the first device live on the server: refused.
            await #expect(throws: SigilInputError.self) {
                try await device.enroll(
                    try SigningKey.generate(.ed25519), server: DeviceScaffold.url(server), token: TestServer.token)
            }

            try await device.reset()
            #expect(await device.enrollmentState == .notEnrolled)
            #expect(try store.identity() == nil)
            #expect(try store.deviceKey() == nil)
            #expect(try store.secret() == nil)
            #expect(!FileManager.default.fileExists(atPath: store.directory))
            // Not enrolled is the device's own state, never a server's code.
            let local = await #expect(throws: SigilClientError.self) {
                _ = try await DeviceScaffold.echo(device, server)
            }
            #expect(local?.kind == .notEnrolled)

            // Whoever kept a copy of the key is refused, in a refusal the server signs for that request
            // (a statement about the key, true whoever sent it): the app can act on it.
            let session = SigilSession(
                transport: try transport("localhost", identity.pins),
                signer: RequestSigner(key: key, keyID: identity.keyID, clock: server.clock),
                clock: ServerClock(local: server.clock),
                responses: try SessionScaffold.responseVerifier(server, clock: ServerClock(local: server.clock)))
            let refused = try await session.send(SessionScaffold.echo(server), body: [])
            #expect(refused.signatureVerified)
            #expect((refused.failure as? SigilError)?.code == .revokedKey)
        }
    }

    @Test("the clock's offset learnt from a signed answer is kept: after a relaunch the first request goes once")
    func clockOffsetKept() async throws {
        try await DeviceScaffold.withServer { server, transport, _ in
            let store = DeviceScaffold.store()
            // The phone's clock is 20 minutes behind the server's.
            let phone = ManualUnixClock(server.clock.now() - 1200)
            let device = try SigilDevice(store: store, clock: phone, transport: transport)
            try await device.enroll(
                try SigningKey.generate(.ecdsaP256SHA256), server: DeviceScaffold.url(server), token: TestServer.token)
            #expect(try await DeviceScaffold.echo(device, server).attempts == 1)
            let offset = try #require(try store.identity()?.clockOffset)
            #expect(abs(offset - 1200) <= 1)

            let relaunched = try SigilDevice(store: store, clock: phone, transport: transport)
            #expect(abs(relaunched.clock.offsetSeconds - 1200) <= 1)
            let first = try await DeviceScaffold.echo(relaunched, server)
            #expect(first.head.status == .ok)
            #expect(first.attempts == 1)
        }
    }

    @Test("a server key promotion is followed and stored without the app: a relaunch verifies with the new key")
    func followsPromotion() async throws {
        try await DeviceScaffold.withServer { server, transport, _ in
            let store = DeviceScaffold.store()
            let device = try SigilDevice(store: store, clock: server.clock, transport: transport)
            let enrolled = try await device.enroll(
                try SigningKey.generate(.ecdsaP256SHA256), server: DeviceScaffold.url(server), token: TestServer.token)
            let ring = server.prepared.serverKeys
            let next = try await ring.rotate(.response, actor: "operator:test")
            _ = try await ring.promote(.response, actor: "operator:test")

            let answer = try await DeviceScaffold.echo(device, server)
            #expect(answer.signatureVerified)
            #expect(answer.head.headerFields[SigilV1.keyIDField] == next)
            let stored = try #require(try store.identity())
            #expect(stored.responseKeyID == next)
            #expect(stored.responseKeyID != enrolled.responseKeyID)

            // Past the overlap the old key vouches for nothing; the stored identity needs it no more.
            server.clock.advance(by: 7 * 86_400 + 1)
            let relaunched = try SigilDevice(store: store, clock: server.clock, transport: transport)
            #expect(try await DeviceScaffold.echo(relaunched, server).signatureVerified)
        }
    }

    @Test("a signed refusal is thrown as SigilError with the server's code, an unsigned one as an untrusted refusal")
    func refusalsThrow() async throws {
        try await DeviceScaffold.withServer(configure: { $0.sealedPaths = ["/v1/echo"] }) { server, transport, _ in
            let device = try SigilDevice(store: DeviceScaffold.store(), clock: server.clock, transport: transport)
            // Refused before the registration's signature is checked: unsigned, the code only claimed.
            let claimed = await #expect(throws: SigilClientError.self) {
                try await device.enroll(
                    try SigningKey.generate(.ed25519), server: DeviceScaffold.url(server), token: "wrong")
            }
            #expect(claimed?.kind == .untrustedRefusal && claimed?.claimedCode == .enrollmentRefused)
            try await device.enroll(
                try SigningKey.generate(.ed25519), server: DeviceScaffold.url(server), token: TestServer.token)
            // A plain body where the server requires a sealed one: its signed refusal, thrown.
            await #expect(throws: SigilError(.sealedBodyInvalid, "")) {
                _ = try await DeviceScaffold.echo(device, server)
            }
            // Sealed, it goes through.
            let sealed = try await device.send(SessionScaffold.echo(server), body: Array("{}".utf8), sealed: true)
            #expect(sealed.head.status == .ok)
            #expect(sealed.answerSealed)
        }
    }

    @Test("one call sends a URLRequest signed and checks its answer; a skewed clock is corrected in that call")
    func urlRequest() async throws {
        try await DeviceScaffold.withServer { server, transport, _ in
            let phone = ManualUnixClock(server.clock.now() + 900)
            let device = try SigilDevice(store: DeviceScaffold.store(), clock: phone, transport: transport)
            try await device.enroll(
                try SigningKey.generate(.ecdsaP256SHA256), server: DeviceScaffold.url(server), token: TestServer.token)
            var request = URLRequest(url: try #require(URL(string: DeviceScaffold.url(server) + "/v1/echo")))
            request.httpMethod = "POST"
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
            request.httpBody = Data(#"{"amount":"25.00"}"#.utf8)
            let (data, response) = try await device.data(for: request)
            #expect(response.statusCode == 200)
            #expect(String(decoding: data, as: UTF8.self).contains("25.00"))
        }
    }

    @Test(
        "the interceptor: adapt signs, validate checks the answer is for that request, one retry after a signed clock refusal"
    )
    func interceptor() async throws {
        try await DeviceScaffold.withServer { server, transport, _ in
            // Ten minutes behind: the first request is refused, signed, and teaches the clock.
            let phone = ManualUnixClock(server.clock.now() - 600)
            let device = try SigilDevice(store: DeviceScaffold.store(), clock: phone, transport: transport)
            try await device.enroll(
                try SigningKey.generate(.ecdsaP256SHA256), server: DeviceScaffold.url(server), token: TestServer.token)
            let sigil = try await device.interceptor()
            let raw = try transport("localhost", [])
            func exchange(_ request: URLRequest) async throws -> (Data, HTTPURLResponse) {
                let head = try #require(request.httpRequest)
                let (answer, body) = try await raw.send(head, body: request.httpBody.map(Array.init) ?? [])
                return (Data(body), try #require(HTTPURLResponse(httpResponse: answer, url: request.url!)))
            }
            var request = URLRequest(url: try #require(URL(string: DeviceScaffold.url(server) + "/v1/echo")))
            request.httpMethod = "POST"
            request.httpBody = Data("{}".utf8)
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")

            // The enrollment already taught the clock; skew it again to meet the refusal here.
            phone.advance(by: -900)
            var signed = try await sigil.adapt(request)
            var (data, response) = try await exchange(signed)
            #expect(response.statusCode == 401)
            await #expect(throws: SigilError(.timestampOutOfWindow, "")) {
                try await sigil.validate(signed, response: response, data: data)
            }
            #expect(sigil.shouldRetry(signed, response: response, data: data, attempt: 0))
            #expect(!sigil.shouldRetry(signed, response: response, data: data, attempt: 1))
            signed = try await sigil.adapt(request)
            (data, response) = try await exchange(signed)
            #expect(response.statusCode == 200)
            try await sigil.validate(signed, response: response, data: data)

            // An answer to another request (or altered) does not validate.
            let other = try await sigil.adapt(request)
            let mismatch = await #expect(throws: SigilClientError.self) {
                try await sigil.validate(other, response: response, data: data)
            }
            #expect(mismatch?.kind == .untrustedAnswer)
            // Stored: the offset the answers taught.
            #expect(try #require(await device.identity?.clockOffset) != 0)
        }
    }

    @Test("a body from a file is hashed as it streams and verifies in both profiles; a canonical JSON file is refused")
    func bodyFromFile() async throws {
        try await DeviceScaffold.withServer { server, transport, _ in
            let device = try SigilDevice(store: DeviceScaffold.store(), clock: server.clock, transport: transport)
            try await device.enroll(
                try SigningKey.generate(.ecdsaP256SHA256), server: DeviceScaffold.url(server), token: TestServer.token)
            let file = URL(fileURLWithPath: TestServer.temporaryDirectory() + ".bin")
            var generator = SystemRandomNumberGenerator()
            let bytes = (0..<(700 * 1024)).map { _ in UInt8.random(in: 0...255, using: &generator) }
            try Data(bytes).write(to: file)
            var request = SessionScaffold.echo(server)
            request.headerFields[.contentType] = "application/octet-stream"
            let answer = try await device.send(request, bodyFile: file)
            #expect(answer.head.status == .ok)

            var json = SessionScaffold.echo(server)
            json.headerFields[.contentType] = "application/json"
            try Data(#"{"b":1,"a":2}"#.utf8).write(to: file)
            await #expect(throws: SigilInputError.self) { _ = try await device.send(json, bodyFile: file) }
        }
    }

    @Test("signing from a body's digest gives the very headers signing from its bytes gives, in both profiles")
    func digestSigning() throws {
        let key = try SigningKey.generate(.ed25519)
        let body = Array("not json, a raw upload".utf8)
        for profile in SignatureProfile.allCases {
            for coding in [nil, "gzip"] {
                var request = HTTPRequest(
                    method: .put, scheme: "https", authority: "api.example.com", path: "/v1/files/a")
                request.headerFields[.contentType] = "application/octet-stream"
                request.headerFields[.contentEncoding] = coding
                let signer = RequestSigner(
                    key: key, keyID: "k1", profile: profile, clock: ManualUnixClock(1_800_000_000))
                var fromBytes = request
                var fromDigest = request
                try signer.sign(
                    &fromBytes, body: .bytes(body), nonce: "nonce-0123456789abcdef", timestamp: 1_800_000_000, key: key)
                try signer.sign(
                    &fromDigest, body: .digest(BodyDigest(body)), nonce: "nonce-0123456789abcdef",
                    timestamp: 1_800_000_000,
                    key: key)
                // Ed25519 is deterministic: the same base gives the same signature.
                #expect(fromBytes.headerFields == fromDigest.headerFields, "\(profile) \(coding ?? "-")")
            }
        }
    }

    /// A transport that runs `before` ahead of each request it passes on (to hold one back).
    struct Holding: SigilTransport {
        let inner: any SigilTransport
        let before: @Sendable (HTTPRequest) async throws -> Void

        func send(_ request: HTTPRequest, body: [UInt8]) async throws -> (HTTPResponse, [UInt8]) {
            try await before(request)
            return try await inner.send(request, body: body)
        }
    }

    @Test(
        "two devices on one store (an app and its extension): one's stale identity is never written over the other's rotation or reset"
    )
    func sharedStore() async throws {
        try await DeviceScaffold.withServer { server, transport, _ in
            let store = DeviceScaffold.store()
            let app = try SigilDevice(store: store, clock: server.clock, transport: transport)
            try await app.enroll(
                try SigningKey.generate(.ecdsaP256SHA256), server: DeviceScaffold.url(server), token: TestServer.token)
            let phone = ManualUnixClock(server.clock.now())
            let extensionDevice = try SigilDevice(store: store, clock: phone, transport: transport)
            #expect(try await DeviceScaffold.echo(extensionDevice, server).head.status == .ok)

            let rotated = try await app.rotate(to: try SigningKey.generate(.ed25519))
            phone.advance(by: 5)  // the extension's clock moves: it would store a new offset
            _ = try? await DeviceScaffold.echo(extensionDevice, server)
            #expect(try store.identity()?.keyID == rotated.keyID)
            #expect(try await DeviceScaffold.echo(app, server).head.status == .ok)

            try await app.reset()
            _ = try? await DeviceScaffold.echo(extensionDevice, server)
            #expect(try store.identity() == nil)
            #expect(await extensionDevice.enrollmentState == .notEnrolled)
        }
    }

    @Test("a reset while a rotation waits for the server wins: nothing the rotation brings back is kept")
    func resetDuringRotation() async throws {
        try await DeviceScaffold.withServer { server, transport, _ in
            let gate = Gate()
            let store = DeviceScaffold.store()
            let device = try SigilDevice(store: store, clock: server.clock) { host, pins in
                Holding(inner: try transport(host, pins)) { request in
                    if request.path == Registration.Path.rotate { await gate.wait() }
                }
            }
            try await device.enroll(
                try SigningKey.generate(.ecdsaP256SHA256), server: DeviceScaffold.url(server), token: TestServer.token)
            let rotation = Task { try await device.rotate(to: try SigningKey.generate(.ed25519)) }
            while await !gate.isWaiting { try await Task.sleep(nanoseconds: 1_000_000) }
            let reset = Task { try await device.reset(revoke: false) }
            try await Task.sleep(nanoseconds: 50_000_000)
            await gate.open()
            _ = try? await rotation.value
            try await reset.value
            #expect(await device.enrollmentState == .notEnrolled)
            #expect(try store.identity() == nil)
            #expect(try store.deviceKey() == nil)
        }
    }

    @Test("a reset is local first: a revocation the server never answers leaves nothing stored, and says so")
    func resetWhileServerStalls() async throws {
        try await DeviceScaffold.withServer { server, transport, _ in
            let store = DeviceScaffold.store()
            let device = try SigilDevice(store: store, clock: server.clock) { host, pins in
                Holding(inner: try transport(host, pins)) { request in
                    if request.method == .delete { try await Task.sleep(nanoseconds: 60_000_000_000) }
                }
            }
            try await device.enroll(
                try SigningKey.generate(.ecdsaP256SHA256), server: DeviceScaffold.url(server), token: TestServer.token)
            await device.setRevocationDeadline(.milliseconds(200))
            let late = await #expect(throws: SigilClientError.self) { try await device.reset() }
            #expect(late?.kind == .transport)
            #expect(try store.identity() == nil)
            #expect(try store.deviceKey() == nil)
        }
    }

    @Test(
        "the interceptor: an unsigned answer never validates; a refusal held back past the round-trip limit is not retried"
    )
    func interceptorHostileAnswers() async throws {
        try await DeviceScaffold.withServer { server, transport, _ in
            let phone = ManualUnixClock(server.clock.now())
            let device = try SigilDevice(store: DeviceScaffold.store(), clock: phone, transport: transport)
            try await device.enroll(
                try SigningKey.generate(.ecdsaP256SHA256), server: DeviceScaffold.url(server), token: TestServer.token)
            let sigil = try await device.interceptor()
            var request = URLRequest(url: try #require(URL(string: DeviceScaffold.url(server) + "/v1/echo")))
            request.httpMethod = "POST"
            request.httpBody = Data("{}".utf8)
            let signed = try await sigil.adapt(request)
            // A proxy's own answer, unsigned.
            let forged = try #require(
                HTTPURLResponse(url: request.url!, statusCode: 200, httpVersion: nil, headerFields: [:]))
            let unsigned = await #expect(throws: SigilClientError.self) {
                try await sigil.validate(signed, response: forged, data: Data("{\"ok\":true}".utf8))
            }
            #expect(unsigned?.kind == .untrustedAnswer && unsigned?.status == 200)
            // The server's signed clock refusal for this request, handed over 400 s after the signing
            // (the request it refuses may be a replay of one that ran): no retry.
            server.clock.advance(by: 400)
            let head = try #require(signed.httpRequest)
            let (answer, body) = try await transport("localhost", []).send(head, body: Array("{}".utf8))
            #expect(answer.status.code == 401)
            phone.advance(by: 400)
            let late = try #require(HTTPURLResponse(httpResponse: answer, url: request.url!))
            #expect(!sigil.shouldRetry(signed, response: late, data: Data(body), attempt: 0))
        }
    }
}

/// Holds a request until opened.
actor Gate {
    private var waiters: [CheckedContinuation<Void, Never>] = []
    private var opened = false
    var isWaiting: Bool { !waiters.isEmpty }

    func wait() async {
        if opened { return }
        await withCheckedContinuation { waiters.append($0) }
    }

    func open() {
        opened = true
        for waiter in waiters { waiter.resume() }
        waiters = []
    }
}
