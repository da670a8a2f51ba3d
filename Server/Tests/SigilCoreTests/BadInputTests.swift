import Foundation
import HTTPTypes
import SigilClient
@_spi(Sigil) import SigilCore
import SigilServer
import Testing

@testable import SigilTestSupport

@Suite("Bad input gets its documented code")
struct BadInputTests {
    /// A valid HMAC-signed request whose signature headers are then replaced.
    static func request(
        replacing name: HTTPField.Name,
        with value: String
    ) async throws -> (SigningSetup, HTTPRequest, [UInt8]) {
        let setup = try await SigningSetup(.hmacSHA256)
        var (request, body) = SigningSetup.jsonPost()
        try setup.signer(.sigilV1).sign(&request, body: body)
        request.headerFields[name] = value
        return (setup, request, body)
    }

    static let oneMiB = String(repeating: "A", count: 1 << 20)

    @Test(
        "malformed sigil-v1 headers",
        arguments: [
            (SigilV1.timestampField, ""), (SigilV1.timestampField, "-1763769600"),
            (SigilV1.timestampField, "176376960000000000000000000000"), (SigilV1.timestampField, "1763769600.5"),
            (SigilV1.timestampField, "１７６３７６９６００"), (SigilV1.timestampField, oneMiB),
            (SigilV1.nonceField, ""), (SigilV1.nonceField, "short"), (SigilV1.nonceField, "nonce with spaces 0000"),
            (SigilV1.nonceField, "nönce-0000000000000"), (SigilV1.nonceField, oneMiB),
            (SigilV1.keyIDField, ""), (SigilV1.keyIDField, "key/id"), (SigilV1.keyIDField, oneMiB),
            (SigilV1.signatureField, ""), (SigilV1.signatureField, "AAAA="), (SigilV1.signatureField, "AA+/"),
            (SigilV1.signatureField, "AA AA"), (SigilV1.signatureField, "A"), (SigilV1.signatureField, "AB"),
            (SigilV1.signatureField, "é"), (SigilV1.signatureField, oneMiB),
        ]
    )
    func malformedHeader(_ name: HTTPField.Name, _ value: String) async throws {
        let (setup, request, body) = try await Self.request(replacing: name, with: value)
        #expect(await setup.verifier.failure(request, body: body) == .malformedSignature)
    }

    @Test func wellFormedButWrongSignatureBytes() async throws {
        // "AA" decodes to one byte: well-formed base64url, not a valid HMAC.
        let (setup, request, body) = try await Self.request(replacing: SigilV1.signatureField, with: "AA")
        #expect(await setup.verifier.failure(request, body: body) == .invalidSignature)
    }

    @Test func missingAndRepeatedHeaders() async throws {
        let (setup, request, body) = try await Self.request(
            replacing: SigilV1.nonceField, with: "nonce-0000000000000001")
        var missing = request
        missing.headerFields[SigilV1.keyIDField] = nil
        #expect(await setup.verifier.failure(missing, body: body) == .malformedSignature)
        var repeated = request
        repeated.headerFields.append(HTTPField(name: SigilV1.timestampField, value: "1763769600"))
        #expect(await setup.verifier.failure(repeated, body: body) == .malformedSignature)
        var unsigned = request
        for name in [SigilV1.timestampField, SigilV1.nonceField, SigilV1.keyIDField, SigilV1.signatureField] {
            unsigned.headerFields[name] = nil
        }
        #expect(await setup.verifier.failure(unsigned, body: body) == .missingSignature)
    }

    @Test func bodyOverTheLimit() async throws {
        var configuration = VerifierConfiguration()
        configuration.bodyLimit = 1024
        let setup = try await SigningSetup(.hmacSHA256, configuration: configuration)
        var (request, _) = SigningSetup.jsonPost()
        let body = [UInt8](repeating: UInt8(ascii: "a"), count: 1025)
        try setup.signer(.sigilV1).sign(&request, body: body)
        #expect(await setup.verifier.failure(request, body: body) == .bodyTooLarge)
        // Streamed: refused while reading, not after.
        let chunks = AsyncStream<[UInt8]> { continuation in
            for _ in 0..<100 { continuation.yield([UInt8](repeating: 0x61, count: 512)) }
            continuation.finish()
        }
        do {
            _ = try await setup.verifier.verify(request, bodyChunks: chunks)
            Issue.record("expected body-too-large")
        } catch let error as SigilError {
            #expect(error.code == .bodyTooLarge)
            #expect(error.code.httpStatus == 413)
        }
    }

    /// A body that records whether anyone read it.
    struct WatchedBody: AsyncSequence {
        typealias Element = [UInt8]
        let read: ManualUnixClock
        struct AsyncIterator: AsyncIteratorProtocol {
            let read: ManualUnixClock
            mutating func next() async -> [UInt8]? {
                read.set(1)
                return nil
            }
        }
        func makeAsyncIterator() -> AsyncIterator { AsyncIterator(read: read) }
    }

    @Test func headersAreCheckedBeforeTheBodyIsRead() async throws {
        let setup = try await SigningSetup(.hmacSHA256)
        let wasRead = ManualUnixClock(0)
        var (request, _) = SigningSetup.jsonPost()
        request.headerFields[.contentLength] = String(1 << 30)
        await #expect(throws: SigilError(.missingSignature, "")) {
            _ = try await setup.verifier.verify(request, bodyChunks: WatchedBody(read: wasRead))
        }
        request.headerFields[SigilV1.keyIDField] = "nobody"
        request.headerFields[SigilV1.nonceField] = "nonce-0000000000000001"
        request.headerFields[SigilV1.timestampField] = String(SigningSetup.start)
        request.headerFields[SigilV1.signatureField] = "AAAA"
        await #expect(throws: SigilError(.unknownKey, "")) {
            _ = try await setup.verifier.verify(request, bodyChunks: WatchedBody(read: wasRead))
        }
        #expect(wasRead.now() == 0)
    }

    @Test func deeplyNestedJSONBodyIsHashedRaw() async throws {
        let setup = try await SigningSetup(.hmacSHA256)
        var (request, _) = SigningSetup.jsonPost()
        let body =
            [UInt8](repeating: UInt8(ascii: "["), count: 100_000)
            + [UInt8](repeating: UInt8(ascii: "]"), count: 100_000)
        try setup.signer(.sigilV1).sign(&request, body: body)
        _ = try await setup.verifier.verify(request, body: body)
    }

    @Test func tenThousandQueryPairs() async throws {
        let setup = try await SigningSetup(.ed25519)
        let query = (0..<10_000).map { "k\($0)=v\($0)" }.joined(separator: "&")
        var request = HTTPRequest(method: .get, scheme: "https", authority: "api.example.com", path: "/search?" + query)
        try setup.signer(.sigilV1).sign(&request, body: [])
        _ = try await setup.verifier.verify(request, body: [])
        try setup.signer(.rfc9421).sign(&request, body: [])
        request.headerFields[SigilV1.signatureField] = nil
        request.headerFields[SigilV1.timestampField] = nil
        request.headerFields[SigilV1.nonceField] = nil
        request.headerFields[SigilV1.keyIDField] = nil
        _ = try await setup.verifier.verify(request, body: [])
    }

    @Test(
        "malformed rfc9421 fields",
        arguments: [
            ("sig1=(\"@method\";created=1", "sig1=:AAAA:"), ("sig1=(\"@method\");created=1", "sig2=:AAAA:"),
            ("sig1=(\"@method\");created=1", "sig1=AAAA"), ("sig1=(\"@method\");created=\"x\"", "sig1=:AAAA:"),
            ("sig1=(\"@method\" \"@method\");created=1", "sig1=:AAAA:"),
            ("sig1=(\"Content-Type\");created=1", "sig1=:AAAA:"),
            ("sig1=(@method);created=1", "sig1=:AAAA:"), (String(repeating: "(", count: 100_000), "sig1=:AAAA:"),
        ]
    )
    func malformedRFC9421(_ input: String, _ signature: String) async throws {
        let setup = try await SigningSetup(.ed25519)
        var (request, body) = SigningSetup.jsonPost()
        request.headerFields[MessageSignatures.signatureInputField] = input
        request.headerFields[MessageSignatures.signatureField] = signature
        body = []
        #expect(await setup.verifier.failure(request, body: body) == .malformedSignature)
    }

    @Test(
        "truncated and garbage raw messages",
        arguments: [
            "", "\r\n", "GET / HTTP/1.1", "GET / HTTP/1.1\r\nHost: a", "GET / HTTP/1.1\r\nHost a\r\n\r\n",
            "\u{0}\u{1}\u{2}\r\n\r\n", "GET\r\n\r\n", "G(T / HTTP/1.1\r\n\r\n", "HTTP/1.1 abc OK\r\n\r\n",
            "GET / HTTP/1.1\r\n bad continuation\r\n\r\n", "GET / HTTP/1.1\r\nBad Name: x\r\n\r\n",
        ]
    )
    func rawMessages(_ text: String) {
        #expect(throws: SigilInputError.self) {
            let message = try RawHTTPMessage(parsing: Array(text.utf8))
            if message.isResponse { _ = try message.response() } else { _ = try message.request() }
        }
    }

    @Test func rawMessageKeepsLineEndingsAndBody() throws {
        for ending in ["\r\n", "\n"] {
            let text = "POST /p HTTP/1.1\(ending)Host: h\(ending)X-A:  spaced  \(ending)\(ending)body\(ending)more"
            var message = try RawHTTPMessage(parsing: Array(text.utf8))
            #expect(message.body == Array("body\(ending)more".utf8))
            #expect(message.headers[1].value == "spaced")
            message.append(HTTPFields([HTTPField(name: SigilV1.nonceField, value: "n")]))
            let out = String(decoding: message.serialized, as: UTF8.self)
            #expect(out.contains("X-Nonce: n\(ending)\(ending)body"))
            #expect(!out.contains(ending == "\n" ? "\r" : "\n\n"))
        }
    }

    @Test func problemJSON() throws {
        let error = SigilError(.replayedNonce, "nonce \"x\" used", signatureBase: "a\nb")
        let body = Problem.body(for: error, serverTime: 1_708_300_800, includeSignatureBase: true)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(body)) as? [String: Any])
        #expect(object["type"] as? String == "urn:sigil:error:replayed-nonce")
        #expect(object["code"] as? String == "replayed-nonce")
        #expect(object["status"] as? Int == 401)
        #expect(object["serverTime"] as? Int == 1_708_300_800)
        #expect(object["signatureBase"] as? String == "a\nb")
        let quiet = Problem.body(for: error, serverTime: 1, includeSignatureBase: false)
        #expect(!String(decoding: quiet, as: UTF8.self).contains("signatureBase"))
    }
}
