import AsyncHTTPClient
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import SigilClient
@_spi(Sigil) import SigilCore
import SigilHummingbird
import SigilServer
import Testing

@testable import SigilTestSupport

/// Refusals signed for the request they answer, and one body limit for the middleware and the route.
@Suite("Signed refusals and the body limit")
struct RefusalAndLimitTests {
    /// The server's response key, from discovery.
    static func responseVerifier(_ server: TestServer, _ client: HTTPClient) async throws -> ResponseVerifier {
        let discovery = try await TestRequest(.get, "/.well-known/sigil", server: server).send(client, to: server)
        let keys = try #require(discovery.json["responseKeys"] as? [[String: Any]])
        let pem = try #require(keys.first?["publicKey"] as? String)
        let keyID = try #require(keys.first?["keyId"] as? String)
        return ResponseVerifier(
            key: try KeyFile.load(Array(pem.utf8)).verificationKey, keyID: keyID, clock: server.clock)
    }

    @Test("refusals are signed over the request's nonce (sigil-v1) or the request (rfc9421) when it parsed")
    func signedRefusals() async throws {
        try await TestServer.with { server in
            try await server.client().using { client in
                let responses = try await Self.responseVerifier(server, client)
                let device = try await DeviceSteps.registeredDevice(on: server, client: client)

                let (_, _, sent) = try await DeviceSteps.echo(
                    "once", signer: device.signer(clock: server.clock), server: server, client: client)
                let replay = try await sent.send(client, to: server)
                #expect(replay.code == "replayed-nonce")
                try responses.verifySigilV1(
                    HTTPResponse(status: .unauthorized, headerFields: replay.headers), body: replay.body,
                    answering: sent.answered)
                // Bound to that request: it does not pass as the answer to another key's request under
                // the same nonce, nor to another request.
                for other in [
                    SigilV1.AnsweredRequest(
                        keyID: "attacker-key-0001", nonce: sent.answered.nonce, signature: sent.answered.signature),
                    SigilV1.AnsweredRequest(
                        keyID: sent.answered.keyID, nonce: "another-nonce-0000000", signature: sent.answered.signature),
                ] {
                    #expect(throws: SigilError(.invalidSignature, "")) {
                        try responses.verifySigilV1(
                            HTTPResponse(status: .unauthorized, headerFields: replay.headers), body: replay.body,
                            answering: other)
                    }
                }

                var rfc9421 = TestRequest(.post, "/v1/echo", server: server, json: #"{"a":1}"#)
                try rfc9421.sign(with: device.signer(.rfc9421, clock: server.clock))
                #expect(try await rfc9421.send(client, to: server).status == 200)
                let replayed = try await rfc9421.send(client, to: server)
                #expect(replayed.code == "replayed-nonce")
                #expect(replayed.headers[MessageSignatures.signatureInputField]?.contains(#""signature";req"#) == true)
                try responses.verifyRFC9421(
                    HTTPResponse(status: .unauthorized, headerFields: replayed.headers), body: replayed.body,
                    answering: rfc9421.head)

                // A request whose signature does not verify gets an unsigned refusal, nonce or not.
                var tampered = rfc9421
                tampered.body = Array(#"{"a":2}"#.utf8)
                let refused = try await tampered.send(client, to: server)
                #expect(refused.code == "digest-mismatch")
                #expect(refused.headers[MessageSignatures.signatureField] == nil)

                // No nonce that parses, nothing to bind to: unsigned.
                var malformed = TestRequest(.post, "/v1/echo", server: server, json: "{}")
                try malformed.sign(with: device.signer(clock: server.clock))
                malformed.head.headerFields[SigilV1.nonceField] = "short"
                let unsigned = try await malformed.send(client, to: server)
                #expect(unsigned.code == "malformed-signature")
                #expect(unsigned.headers[SigilV1.signatureField] == nil)
                let missing = try await TestRequest(.post, "/v1/echo", server: server).send(client, to: server)
                #expect(missing.code == "missing-signature")
                #expect(missing.headers[MessageSignatures.signatureField] == nil)
            }
        }
    }

    @Test("a victim's nonce on a tampered copy earns no signed refusal, so the victim is never told to resend")
    func nonceOnATamperedCopy() async throws {
        try await TestServer.with { server in
            try await server.client().using { client in
                let device = try await DeviceSteps.registeredDevice(on: server, client: client)
                for profile in SignatureProfile.allCases {
                    var request = TestRequest(.post, "/v1/echo", server: server, json: #"{"amount":25}"#)
                    try request.sign(with: device.signer(profile, clock: server.clock))
                    #expect(try await request.send(client, to: server).status == 200)  // carried out

                    // The attacker re-dates a copy (or names an unknown key) to provoke a refusal for the nonce.
                    var stale = request
                    var unknown = request
                    switch profile {
                    case .sigilV1:
                        stale.head.headerFields[SigilV1.timestampField] = "1"
                        unknown.head.headerFields[SigilV1.keyIDField] = "0123456789abcdef"
                    case .rfc9421:
                        let input = try #require(request.head.headerFields[MessageSignatures.signatureInputField])
                        let created = try #require(input.range(of: #"created=\d+"#, options: .regularExpression))
                        stale.head.headerFields[MessageSignatures.signatureInputField] = input.replacingCharacters(
                            in: created, with: "created=1")
                        unknown.head.headerFields[MessageSignatures.signatureInputField] = input.replacingOccurrences(
                            of: device.keyID, with: "0123456789abcdef")
                    }
                    let staleAnswer = try await stale.send(client, to: server)
                    #expect(staleAnswer.code == "timestamp-out-of-window", "\(profile)")
                    #expect(staleAnswer.headers[SigilV1.signatureField] == nil, "\(profile)")
                    #expect(staleAnswer.headers[MessageSignatures.signatureField] == nil, "\(profile)")
                    // An unknown key's refusal is signed (a statement about the key the copy names), but
                    // for that key: as the answer to the victim's request it does not verify, so the
                    // victim is never told its own key is unknown.
                    let unknownAnswer = try await unknown.send(client, to: server)
                    #expect(unknownAnswer.code == "unknown-key", "\(profile)")
                    let responses = try SessionScaffold.responseVerifier(server, clock: server.clock)
                    var head = HTTPResponse(status: .init(code: unknownAnswer.status))
                    head.headerFields = unknownAnswer.headers
                    switch profile {
                    case .sigilV1:
                        _ = try responses.verifySigilV1(head, body: unknownAnswer.body, answering: unknown.answered)
                        #expect(throws: SigilError.self, "\(profile)") {
                            try responses.verifySigilV1(head, body: unknownAnswer.body, answering: request.answered)
                        }
                    case .rfc9421:
                        let copy = try responses.verifyRFC9421(head, body: unknownAnswer.body, answering: unknown.head)
                        #expect(copy.coversRequestKeyID)
                        #expect(throws: SigilError.self, "\(profile)") {
                            try responses.verifyRFC9421(head, body: unknownAnswer.body, answering: request.head)
                        }
                    }
                }
            }
        }
    }

    /// A context that decodes at most 1 MiB.
    struct SmallUploadContext: SigilRequestContext {
        var coreContext: CoreRequestContextStorage
        var sigilIdentity: SigilIdentity?
        let channel: (any Channel)?

        init(source: ApplicationRequestContextSource) {
            coreContext = .init(source: source)
            channel = source.channel
        }

        var maxUploadSize: Int { 1 << 20 }
    }

    /// Posts a signed 2 MiB JSON body to a route that decodes it; returns the status and the answer.
    static func postLargeBody<Context: SigilRequestContext>(with context: Context.Type) async throws -> (Int, String)
    where Context.Source == ApplicationRequestContextSource {
        let setup = try await SigningSetup(.hmacSHA256)
        let body = Array(
            try JSONEncoder().encode([String](repeating: String(repeating: "x", count: 1000), count: 2100)))
        let router = Router(context: Context.self)
        router.add(middleware: SigilMiddleware<Context>(exchange: Exchange(verifier: setup.verifier, bodyTimeout: nil)))
        router.post("upload") { request, context -> String in
            "\(try await request.decode(as: [String].self, context: context).count)"
        }
        return try await Application(router: router).test(.live) { client in
            var head = HTTPRequest(method: .post, scheme: "http", authority: "localhost", path: "/upload")
            head.headerFields[.contentType] = "application/json"
            try setup.signer(.sigilV1).sign(&head, body: body)
            return try await client.execute(
                uri: "/upload", method: .post, headers: head.headerFields, body: ByteBuffer(bytes: body)
            ) { response in (Int(response.status.code), String(buffer: response.body)) }
        }
    }

    @Test("a body the middleware admits is one the route can decode: one limit")
    func oneBodyLimit() async throws {
        let (small, smallAnswer) = try await Self.postLargeBody(with: SmallUploadContext.self)
        #expect(small == 413)
        #expect(smallAnswer.contains("body-too-large"))
        let (basic, basicAnswer) = try await Self.postLargeBody(with: SigilBasicRequestContext.self)
        #expect(basic == 200, "\(basicAnswer)")
        #expect(basicAnswer == "2100")
    }
}
