import Foundation
import HTTPTypes
import RawStructuredFieldValues
import SigilClient
@_spi(Sigil) import SigilCore
import SigilServer

/// Per-stage cost of one verification of the 1 KiB JSON POST, HMAC-signed (`sigil bench --breakdown`).
enum BreakdownBench {
    static func run(seconds: Double) async throws -> [(String, Double)] {
        let key = try SigningKey.generate(.hmacSHA256)
        let clock = ManualUnixClock(1_763_769_600)
        var request = HTTPRequest(method: .post, scheme: "https", authority: "api.example.com", path: "/v1/transfers")
        request.headerFields[.contentType] = "application/json"
        try RequestSigner(key: key, keyID: "bench-hmac-key", clock: clock).sign(&request, body: BenchBody.json)
        let body = BenchBody.json
        let directory = MemoryKeyDirectory()
        try await directory.add(try key.verificationKey, keyID: "bench-hmac-key")
        let headers = try SigilV1.parseRequestHeaders(request.headerFields)
        let base = SigilV1.requestBase(for: request, body: body, timestamp: headers.timestampText, nonce: headers.nonce)
        let verificationKey = try key.verificationKey
        let store = MemoryNonceStore(clock: ManualUnixClock(0))
        var counter = 0
        var results: [(String, Double)] = []
        func time(_ name: String, _ body: () -> Void) {
            results.append((name, 1e6 / AlgorithmBench.measure(seconds: seconds, body)))
        }
        time("parse headers") { _ = try? SigilV1.parseRequestHeaders(request.headerFields) }
        time("canonical target") { _ = CanonicalTarget.canonicalBytes(Array((request.path ?? "").utf8)) }
        time("JCS 1 KiB") { _ = JSONCanonicalizer.canonicalize(body) }
        let sortedBody = JSONCanonicalizer.canonicalize(body) ?? body
        time("JCS 1 KiB, already canonical") { _ = JSONCanonicalizer.canonicalize(sortedBody) }
        time("raw body hash (SHA-256, hex) 1 KiB") { _ = BodyHash.bytes(body, contentType: nil) }
        time("body hash") { _ = BodyHash.bytes(body, contentType: "application/json") }
        time("request base") {
            _ = SigilV1.requestBase(for: request, body: body, timestamp: headers.timestampText, nonce: headers.nonce)
        }
        time("HMAC check") { _ = verificationKey.isValidSignature(headers.signature, for: base, profile: .sigilV1) }
        time("nonce insert") {
            counter += 1
            _ = store.insertSync(keyID: "k", nonce: "nonce-\(counter)", expiresAt: 1_763_770_000, now: 1_763_769_600)
        }
        var rfcRequest = HTTPRequest(
            method: .post, scheme: "https", authority: "api.example.com", path: "/v1/transfers")
        rfcRequest.headerFields[.contentType] = "application/json"
        try RequestSigner(key: key, keyID: "bench-hmac-key", profile: .rfc9421, clock: clock).sign(
            &rfcRequest, body: body)
        let signatures = try MessageSignatures(rfcRequest.headerFields)
        let input = signatures.entries[0].input
        time("rfc9421: parse Signature-Input and Signature") { _ = try? MessageSignatures(rfcRequest.headerFields) }
        let inputText = rfcRequest.headerFields[MessageSignatures.signatureInputField]!
        let inputBytes = Array(inputText.utf8)
        time("rfc9421: swift-http-structured-headers parse of Signature-Input") {
            var parser = StructuredFieldValueParser(inputBytes)
            _ = try? parser.parseDictionaryFieldValue()
        }
        time("rfc9421: Content-Digest check") { try? ContentDigest.verify(rfcRequest.headerFields, body: body) }
        time("rfc9421: signature base") {
            _ = try? RFC9421.signatureBase(for: input, message: RFC9421Message(request: rfcRequest))
        }
        time("rfc9421: policy") {
            for component in [ComponentIdentifier.method, .authority, .path, .query, .contentDigest] {
                _ = input.components.contains(component)
            }
        }
        var lookups = 0
        let start = Stopwatch.now()
        while Stopwatch.now() - start < UInt64(seconds * 1e9) {
            _ = await directory.key(for: "bench-hmac-key")
            lookups += 1
        }
        results.append(("key lookup (actor)", Double(Stopwatch.now() - start) / 1e3 / Double(lookups)))
        return results
    }
}
