import AsyncHTTPClient
import Foundation
import HTTPTypes
import NIOCore
import NIOHTTP1
import SigilClient
@_spi(Sigil) import SigilCore
import SigilServer
import Testing

@testable import SigilTestSupport

/// A client that sends its headers and part of its body, then stalls: what the verifier checked when
/// the headers arrived must hold again when the body ends.
@Suite("Stalled requests")
struct StalledRequestTests {
    /// Verifies `request` with a body that stalls after its first `prefix` bytes: `whileStalled` runs
    /// once the verifier has read them and waits for the rest.
    static func verifyStalled(
        _ request: HTTPRequest,
        body: [UInt8],
        prefix: Int = 5,
        verifier: RequestVerifier,
        whileStalled: () async throws -> Void
    ) async throws -> SigilError.Code? {
        let gate = StallingBody(first: Array(body.prefix(prefix)), rest: Array(body.dropFirst(prefix)))
        async let verdict: SigilError.Code? = {
            do {
                _ = try await verifier.verify(request, bodyChunks: gate)
                return nil
            } catch let error as SigilError {
                return error.code
            }
        }()
        await gate.waitUntilStalled()
        try await whileStalled()
        gate.resume()
        return try await verdict
    }

    @Test("a key revoked while the body stalls is refused when the body ends")
    func revokedWhileStalled() async throws {
        let setup = try await SigningSetup(.ed25519)
        var (request, body) = SigningSetup.jsonPost()
        try setup.signer(.sigilV1).sign(&request, body: body)
        let code = try await Self.verifyStalled(request, body: body, verifier: setup.verifier) {
            await setup.directory.revoke(setup.keyID)
        }
        #expect(code == .revokedKey)
    }

    @Test("a request whose window closes while the body stalls is refused, in both profiles")
    func windowClosesWhileStalled() async throws {
        for profile in SignatureProfile.allCases {
            let setup = try await SigningSetup(.hmacSHA256)
            var (request, body) = SigningSetup.jsonPost()
            try setup.signer(profile).sign(&request, body: body)
            let code = try await Self.verifyStalled(request, body: body, verifier: setup.verifier) {
                setup.clock.advance(by: 301)
            }
            #expect(code == .timestampOutOfWindow, "\(profile)")
        }
    }

    @Test("an rfc9421 signature that expires while the body stalls is refused")
    func expiresWhileStalled() async throws {
        let setup = try await SigningSetup(.ecdsaP256SHA256)
        var (request, body) = SigningSetup.jsonPost()
        request.headerFields[MessageSignatures.contentDigestField] = ContentDigest.fieldValue(for: body)
        let input = SignatureInput(
            components: [.method, .authority, .path, .query, .contentDigest],
            created: SigningSetup.start,
            expires: SigningSetup.start + 10,
            keyID: setup.keyID,
            nonce: "nonce-stalled-expiring"
        )
        let (inputMember, signatureMember) = try RFC9421.sign(
            RFC9421Message(request: request), input: input, label: "sig1", signer: setup.key)
        request.headerFields[MessageSignatures.signatureInputField] = inputMember
        request.headerFields[MessageSignatures.signatureField] = signatureMember
        let code = try await Self.verifyStalled(request, body: body, verifier: setup.verifier) {
            setup.clock.advance(by: 10)
        }
        #expect(code == .expired)
    }

    @Test("a replay that stalls until the nonce store forgets the original is refused")
    func replayOutlastsItsNonce() async throws {
        let setup = try await SigningSetup(.ed25519)
        var (request, body) = SigningSetup.jsonPost()
        try setup.signer(.sigilV1).sign(&request, body: body)
        _ = try await setup.verifier.verify(request, body: body)
        let code = try await Self.verifyStalled(request, body: body, verifier: setup.verifier) {
            // The original's nonce expires (timestamp + 300 + 60) and the tables are rebuilt without it.
            setup.clock.advance(by: 361)
            for index in 0..<40_000 {
                _ = setup.store.insertSync(
                    keyID: "other", nonce: "filler-\(index)", expiresAt: setup.clock.now() + 60, now: setup.clock.now())
            }
        }
        #expect(code == .timestampOutOfWindow)
    }

    @Test("over TLS: a stalled echo, its device revoked meanwhile, gets 401 revoked-key, not 200")
    func stalledEchoAfterRevocation() async throws {
        try await TestServer.with { server in
            try await server.client().using { client in
                let device = try await DeviceSteps.registeredDevice(on: server, client: client)
                let body = Array(#"{"transfer":"all"}"#.utf8)
                let (request, feed) = try Self.stalledEcho(body, signedBy: device, server: server)
                async let stalled = client.execute(request, timeout: .seconds(30))

                // A discovery round trip on the same connection: the server has the stalled request's headers.
                _ = try await TestRequest(.get, "/.well-known/sigil", server: server).send(client, to: server)
                var revoke = TestRequest(.delete, "/v1/devices/\(device.keyID)", server: server)
                try revoke.sign(with: device.signer(clock: server.clock))
                #expect(try await revoke.send(client, to: server).status == 204)

                feed.yield(ByteBuffer(bytes: body.dropFirst(5)))
                feed.finish()
                let response = try await stalled
                let answer = try await response.body.collect(upTo: 1 << 16)
                #expect(response.status.code == 401)
                #expect(String(buffer: answer).contains("revoked-key"))
            }
        }
    }
}

extension StalledRequestTests {
    /// A signed `POST /v1/echo` of `body` whose first 5 bytes are sent; the rest is the caller's to feed.
    static func stalledEcho(_ body: [UInt8], signedBy device: TestDevice, server: TestServer) throws
        -> (HTTPClientRequest, AsyncStream<ByteBuffer>.Continuation)
    {
        var head = TestRequest(.post, "/v1/echo", server: server, json: String(decoding: body, as: UTF8.self)).head
        try device.signer(clock: server.clock).sign(&head, body: body)
        return stalled(head, body: body, server: server)
    }

    /// `head` (already signed) as an AsyncHTTPClient request whose first 5 body bytes are sent.
    static func stalled(_ head: HTTPRequest, body: [UInt8], server: TestServer)
        -> (HTTPClientRequest, AsyncStream<ByteBuffer>.Continuation)
    {
        var request = HTTPClientRequest(url: server.baseURL + (head.path ?? "/"))
        request.method = HTTPMethod(rawValue: head.method.rawValue)
        for field in head.headerFields where field.name != .contentLength {
            request.headers.add(name: field.name.rawName, value: field.value)
        }
        let (chunks, feed) = AsyncStream.makeStream(of: ByteBuffer.self)
        request.body = .stream(chunks, length: .known(Int64(body.count)))
        feed.yield(ByteBuffer(bytes: body.prefix(5)))
        return (request, feed)
    }
}

/// A body that yields its first chunk, then waits until ``resume()`` before yielding the rest.
final class StallingBody: AsyncSequence, Sendable {
    typealias Element = [UInt8]
    let first: [UInt8]
    let rest: [UInt8]
    private let stalled: AsyncStream<Void>
    private let stalledSignal: AsyncStream<Void>.Continuation
    private let resumed: AsyncStream<Void>
    private let resumedSignal: AsyncStream<Void>.Continuation

    init(first: [UInt8], rest: [UInt8]) {
        self.first = first
        self.rest = rest
        (stalled, stalledSignal) = AsyncStream.makeStream()
        (resumed, resumedSignal) = AsyncStream.makeStream()
    }

    /// Returns once the reader has taken the first chunk and asked for more.
    func waitUntilStalled() async {
        var iterator = stalled.makeAsyncIterator()
        _ = await iterator.next()
    }

    /// Lets the rest of the body through.
    func resume() { resumedSignal.finish() }

    struct AsyncIterator: AsyncIteratorProtocol {
        let body: StallingBody
        var step = 0

        mutating func next() async -> [UInt8]? {
            step += 1
            switch step {
            case 1: return body.first
            case 2:
                body.stalledSignal.finish()
                for await _ in body.resumed {}
                return body.rest
            default: return nil
            }
        }
    }

    func makeAsyncIterator() -> AsyncIterator { AsyncIterator(body: self) }
}
