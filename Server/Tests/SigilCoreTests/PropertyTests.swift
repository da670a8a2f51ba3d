import Foundation
import HTTPTypes
import PropertyBased
import SigilClient
@_spi(Sigil) import SigilCore
import SigilRSA
import SigilServer
import Testing

@testable import SigilTestSupport

/// Properties over random requests: signing then verifying holds in both profiles for every
/// algorithm, canonical forms are idempotent, and a one-byte change to what a signature covers is
/// refused.
@Suite("Properties")
struct PropertyTests {
    static let start: Int64 = 1_763_769_600

    /// One key per algorithm, registered once (RSA and ML-DSA keys are slow to make).
    static let keys: [SignatureAlgorithm: (key: SigningKey, keyID: String)] = {
        var keys: [SignatureAlgorithm: (SigningKey, String)] = [:]
        for algorithm in SignatureAlgorithm.generatable {
            let key = try! SigningKey.generate(algorithm, formats: .withRSA)
            keys[algorithm] = (key, (try? key.derivedKeyID) ?? "hmac-property")
        }
        return keys
    }()

    static let verifier: RequestVerifier = {
        let registered = keys.values.map { RegisteredKey(keyID: $0.keyID, key: try! $0.key.verificationKey) }
        return RequestVerifier(
            keys: MemoryKeyDirectory(registered),
            nonces: MemoryNonceStore(clock: ManualUnixClock(start - 60)),
            clock: ManualUnixClock(start)
        )
    }()

    /// Paths with reserved, percent-encoded, dot-segment and non-ASCII characters.
    static let paths = Gen.element(of: Array("abcXYZ019-._~%/!$&'()*+,;=:@é")).compactMap { $0 }.string(of: 0...24).map
    { "/" + $0 }
    /// Queries with the same mix and `=`, `&`, `+`.
    static let queries = Gen.element(of: Array("abZ09-._~%!$'()*+,;=:@&=é ")).compactMap { $0 }.string(of: 0...24)
    /// Bodies: printable text, sometimes empty.
    static let bodies = Gen.element(of: Array("abc {}[]\":,0123456789.-\\\né")).compactMap { $0 }.string(of: 0...64)
    static let contentTypes = Gen.element(of: ["", "application/json", "text/plain", "application/problem+json"])
        .compactMap { $0 }

    /// A request signed with `algorithm` in `profile`.
    static func signed(
        _ algorithm: SignatureAlgorithm,
        _ profile: SignatureProfile,
        path: String,
        query: String,
        body: String,
        contentType: String
    ) throws -> (HTTPRequest, [UInt8]) {
        let target = path + (query.isEmpty ? "" : "?" + query.replacingOccurrences(of: " ", with: "%20"))
        var request = HTTPRequest(method: .post, scheme: "https", authority: "api.example.com", path: target)
        if !contentType.isEmpty { request.headerFields[.contentType] = contentType }
        let (key, keyID) = try #require(keys[algorithm])
        let bytes = Array(body.utf8)
        try RequestSigner(key: key, keyID: keyID, profile: profile, clock: ManualUnixClock(start)).sign(
            &request, body: bytes)
        return (request, bytes)
    }

    @Test("sign then verify holds for random requests, both profiles, every algorithm")
    func signThenVerify() async {
        await propertyCheck(
            count: 300, input: Gen.element(of: SignatureAlgorithm.generatable).compactMap { $0 },
            Gen<SignatureProfile>.case, Self.paths,
            Self.queries
        ) { algorithm, profile, path, query in
            let (request, body) = try Self.signed(
                algorithm, profile, path: path, query: query, body: #"{"a":[1,2.5,"x"]}"#,
                contentType: "application/json")
            _ = try await Self.verifier.verify(request, body: body)
        }
        await propertyCheck(count: 200, input: Gen<SignatureProfile>.case, Self.bodies, Self.contentTypes) {
            profile, body, contentType in
            let (request, bytes) = try Self.signed(
                .ed25519, profile, path: "/v1/items", query: "", body: body, contentType: contentType)
            _ = try await Self.verifier.verify(request, body: bytes)
        }
    }

    @Test("canonical forms are idempotent: path, query, target and JCS")
    func canonicalFormsAreIdempotent() async {
        await propertyCheck(count: 500, input: Self.paths, Self.queries) { path, query in
            let canonicalPath = CanonicalTarget.canonicalPath(ArraySlice(path.utf8))
            // Section 2.3 step 5 removes one trailing slash, so `///` becomes `//`, then `/`: a path
            // that still ends in a slash is the one case the contract leaves not idempotent.
            guard canonicalPath.count == 1 || canonicalPath.last != UInt8(ascii: "/") else { return }
            #expect(CanonicalTarget.canonicalPath(ArraySlice(canonicalPath)) == canonicalPath)
            let canonicalQuery = CanonicalTarget.canonicalQuery(ArraySlice(query.utf8))
            #expect(CanonicalTarget.canonicalQuery(ArraySlice(canonicalQuery)) == canonicalQuery)
            let target = CanonicalTarget.canonicalize(path + "?" + query)
            #expect(CanonicalTarget.canonicalize(target) == target)
        }
        let numbers = Gen.double(in: -1e12...1e12).array(of: 0...6)
        let names = Gen.element(of: Array("abcé\"\\/ \u{1}z")).compactMap { $0 }.string(of: 0...6).array(of: 0...6)
        await propertyCheck(
            count: 500, input: numbers, names, Gen.int(in: -9_007_199_254_740_991...9_007_199_254_740_991)
        ) { numbers, names, integer in
            struct Document: Encodable {
                let numbers: [Double]
                let names: [String: Int]
                let integer: Int
            }
            let document = Document(
                numbers: numbers, names: Dictionary(names.map { ($0, integer) }) { first, _ in first }, integer: integer
            )
            let json = try JSONEncoder().encode(document)
            // A shortest-round-trip encoder writes exact literals: always I-JSON, and JCS is a fixed point.
            let canonical = try #require(JSONCanonicalizer.canonicalize(Array(json)))
            #expect(JSONCanonicalizer.canonicalize(canonical) == canonical)
        }
    }

    /// The byte ranges of a raw signed request that its signature covers: the method and target,
    /// the signature fields (and the authority for rfc9421), and the body.
    static func coveredRanges(_ message: [UInt8], profile: SignatureProfile) -> [Range<Int>] {
        var ranges: [Range<Int>] = []
        let text = message
        guard let firstLineEnd = text.firstIndex(of: 0x0D), let headerEnd = Self.find([13, 10, 13, 10], in: text)
        else { return [] }
        let versionStart = firstLineEnd - " HTTP/1.1".utf8.count
        ranges.append(0..<versionStart)
        var signedNames: Set<String> = [
            "x-timestamp", "x-nonce", "x-key-id", "x-signature", "signature-input", "signature", "content-digest",
        ]
        if profile == .rfc9421 { signedNames.insert("host") }
        var lineStart = firstLineEnd + 2
        while lineStart < headerEnd {
            let lineEnd = Self.find([13, 10], in: text, from: lineStart) ?? headerEnd
            if let colon = text[lineStart..<lineEnd].firstIndex(of: UInt8(ascii: ":")) {
                let name = String(decoding: text[lineStart..<colon], as: UTF8.self).lowercased()
                if signedNames.contains(name) { ranges.append((colon + 2)..<lineEnd) }
            }
            lineStart = lineEnd + 2
        }
        if headerEnd + 4 < text.count { ranges.append((headerEnd + 4)..<text.count) }
        return ranges
    }

    static func find(_ needle: [UInt8], in haystack: [UInt8], from start: Int = 0) -> Int? {
        guard haystack.count >= needle.count else { return nil }
        var index = start
        while index + needle.count <= haystack.count {
            if Array(haystack[index..<(index + needle.count)]) == needle { return index }
            index += 1
        }
        return nil
    }

    @Test("any one-byte change to what a signature covers is refused")
    func oneByteChangeIsRefused() async {
        let verified = Tally()
        await propertyCheck(
            count: 400, input: Gen.element(of: SignatureAlgorithm.generatable).compactMap { $0 },
            Gen<SignatureProfile>.case, Gen.int(in: 0...1_000_000),
            Gen.int(in: 0x21...0x7E)
        ) { algorithm, profile, seed, replacement in
            let (request, body) = try Self.signed(
                algorithm, profile, path: "/v1/transfers", query: "to=acct_2&amount=25", body: "transfer 25.00",
                contentType: "text/plain")
            var headers = [("Host", request.authority ?? "")]
            for field in request.headerFields { headers.append((field.name.rawName, field.value)) }
            let raw = RawHTTPMessage(
                startLine: "POST \(request.path ?? "/") HTTP/1.1", headers: headers, body: body
            ).serialized
            let ranges = Self.coveredRanges(raw, profile: profile)
            let positions = ranges.flatMap { Array($0) }
            let position = try #require(positions.isEmpty ? nil : positions[seed % positions.count])
            guard raw[position] != UInt8(replacement) else { return }
            var changed = raw
            changed[position] = UInt8(replacement)
            guard let message = try? RawHTTPMessage(parsing: changed), let parsed = try? message.request() else {
                return  // no longer a request: refused before any signature check
            }
            if profile == .sigilV1,
                CanonicalTarget.canonicalize(parsed.path ?? "") == CanonicalTarget.canonicalize(request.path ?? ""),
                message.body == body, parsed.method == request.method,
                parsed.headerFields[values: SigilV1.signatureField]
                    == request.headerFields[values: SigilV1.signatureField],
                parsed.headerFields[values: SigilV1.nonceField] == request.headerFields[values: SigilV1.nonceField],
                parsed.headerFields[values: SigilV1.keyIDField] == request.headerFields[values: SigilV1.keyIDField],
                parsed.headerFields[values: SigilV1.timestampField]
                    == request.headerFields[values: SigilV1.timestampField]
            {
                return  // the same canonical request (sigil-v1 folds the path's case): nothing was changed
            }
            if profile == .rfc9421, parsed.authority != request.authority,
                parsed.authority?.lowercased() == request.authority?.lowercased()
            {
                return  // the same @authority: RFC 9421 section 2.2.3 lowercases the host
            }
            verified.count.add(1, ordering: .relaxed)
            let accepted = (try? await Self.verifier.verify(parsed, body: message.body)) != nil
            #expect(
                !accepted,
                "\(algorithm) \(profile): byte \(position) '\(UnicodeScalar(raw[position]))'→'\(UnicodeScalar(UInt8(replacement)))' accepted"
            )
        }
        // Most changes still parse as a request and reach the verifier: the property is not vacuous.
        #expect(verified.count.load(ordering: .relaxed) > 200)
    }
}
