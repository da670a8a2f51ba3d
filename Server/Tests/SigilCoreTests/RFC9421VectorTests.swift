import Foundation
import HTTPTypes
@_spi(Sigil) import SigilCore
import SigilRSA
import Testing

@testable import SigilTestSupport

@Suite("RFC 9421 vectors")
struct RFC9421VectorTests {
    static let file = Vectors.file("rfc9421.json")
    static let appendixB = Vectors.cases("rfc9421.json", "appendix_b_cases", nameKey: "rfc_section")
    static let bodySections = Vectors.cases("rfc9421.json", "body_section_cases", nameKey: "rfc_section")
    static let transformations = (file["messages"]?["b4-variants"]?.array ?? []).map {
        VectorCase(name: $0["name"]?.string ?? "?", json: $0)
    }

    static func loadedKey(_ keyID: String, _ algorithm: String, privateKey: Bool = false) throws -> LoadedKey {
        let entry = file["keys"]?[keyID]
        let text = entry?["secret_base64"]?.string ?? entry?[privateKey ? "private_pem" : "public_pem"]?.string ?? ""
        return try KeyFile.load(Array(text.utf8), algorithm: try SignatureAlgorithm.named(algorithm), formats: .withRSA)
    }

    static func input(_ vector: VectorCase, label: String) throws -> SignatureInput {
        var fields = HTTPFields()
        fields[MessageSignatures.signatureInputField] = vector["signature_input_field"]?.string
        fields[MessageSignatures.signatureField] = vector["signature_field"]?.string
        let signatures = try MessageSignatures(fields)
        guard let entry = signatures.entry(label: label) else { throw SigilInputError("no label \(label)") }
        return entry.input
    }

    static func rawMessage(named name: String) throws -> RawHTTPMessage {
        if name == "b4-original" {
            let variant = transformations.first { $0.name == name }
            return try Fixtures.message(headersOnly(variant?["message"]?.string ?? ""))
        }
        return try Fixtures.message(file["messages"]?[name]?["raw"]?.string ?? "")
    }

    /// The B.4 messages are printed without the empty line that ends the header section.
    static func headersOnly(_ text: String) -> String { text.contains("\n\n") ? text : text + "\n\n" }

    @Test func vectorsLoaded() {
        #expect(Self.appendixB.count == 8)
        #expect(Self.bodySections.count == 6)
        #expect(Self.transformations.count >= 6)
    }

    @Test("Appendix B base is byte-exact and the signature verifies", arguments: appendixB)
    func appendix(_ vector: VectorCase) throws {
        let label = vector["label"]?.string ?? ""
        let algorithm = vector["alg"]?.string ?? ""
        let messageName = vector["message"]?.string ?? ""
        var raw = try Self.rawMessage(named: messageName)
        let message: RFC9421Message
        if raw.isResponse {
            if let corrected = Self.file["messages"]?[messageName]?["content_digest_correct"]?.string,
                let index = raw.headers.firstIndex(where: { $0.name == "Content-Digest" })
            {
                raw.headers[index].value = corrected  // the B.2.4 erratum
            }
            message = RFC9421Message(response: try raw.response())
        } else {
            message = RFC9421Message(request: try raw.request())
        }
        let input = try Self.input(vector, label: label)
        let base = try RFC9421.signatureBase(for: input, message: message)
        #expect(String(decoding: base, as: UTF8.self) == vector["signature_base"]?.string)
        let key = try Self.loadedKey(vector["keyid"]?.string ?? "", algorithm)
        let signature = Array(Data(base64Encoded: vector["signature_base64"]?.string ?? "") ?? Data())
        #expect(key.verificationKey.isValidSignature(signature, for: base, profile: .rfc9421))
        if raw.isResponse, raw.headers.contains(where: { $0.name == "Content-Digest" }) {
            try ContentDigest.verify(message.response?.headerFields ?? [:], body: raw.body)
        }
        if vector["deterministic"]?.bool == true {
            let signer = try Self.loadedKey(vector["keyid"]?.string ?? "", algorithm, privateKey: true).signingKey
            let (inputMember, signatureMember) = try RFC9421.sign(message, input: input, label: label, signer: signer!)
            #expect(inputMember == vector["signature_input_field"]?.string)
            #expect(signatureMember == vector["signature_field"]?.string)
        }
    }

    @Test("section examples verify, responses bound with ;req", arguments: bodySections)
    func sections(_ vector: VectorCase) throws {
        let label = vector["label"]?.string ?? ""
        let request = try Fixtures.message(vector["request_message"]?.string ?? "").request()
        let message: RFC9421Message
        if let responseText = vector["response_message"]?.string {
            message = RFC9421Message(response: try Fixtures.message(responseText).response(), answering: request)
        } else {
            message = RFC9421Message(request: request)
        }
        let input = try Self.input(vector, label: label)
        let base = try RFC9421.signatureBase(for: input, message: message)
        if let expected = vector["signature_base"]?.string {
            #expect(String(decoding: base, as: UTF8.self) == expected)
        }
        let key = try Self.loadedKey(vector["keyid"]?.string ?? "", vector["alg"]?.string ?? "")
        let signature = Array(Data(base64Encoded: vector["signature_base64"]?.string ?? "") ?? Data())
        #expect(key.verificationKey.isValidSignature(signature, for: base, profile: .rfc9421))
        if vector["deterministic"]?.bool == true {
            let signer = try Self.loadedKey(
                vector["keyid"]?.string ?? "", vector["alg"]?.string ?? "", privateKey: true)
            #expect(try signer.signingKey?.signature(for: base, profile: .rfc9421) == signature)
        }
    }

    @Test("B.4 transformations", arguments: transformations)
    func transformation(_ vector: VectorCase) throws {
        let raw = try Fixtures.message(Self.headersOnly(vector["message"]?.string ?? ""))
        let signatures = try MessageSignatures(raw.fields)
        let entry = try #require(signatures.entry(label: "transform"))
        let key = try Self.loadedKey("test-key-ed25519", "ed25519")
        let valid: Bool
        do {
            let base = try RFC9421.signatureBase(for: entry.input, message: RFC9421Message(request: try raw.request()))
            valid = key.verificationKey.isValidSignature(entry.signature, for: base, profile: .rfc9421)
        } catch {
            valid = false
        }
        #expect(valid == vector["expect_valid"]?.bool)
    }

    @Test func derivedQueryComponents() throws {
        let examples = Self.file["derived_component_examples"]
        for example in examples?["query"]?.array ?? [] {
            let request = HTTPRequest(
                method: .get,
                scheme: "https",
                authority: "www.example.com",
                path: example["request_target"]?.string
            )
            let line = "\"@query\": " + (try RFC9421.componentValue(.query, message: RFC9421Message(request: request)))
            #expect(line == example["base_line"]?.string)
        }
        for example in examples?["query_param"]?.array ?? [] {
            let request = HTTPRequest(
                method: .get, scheme: "https", authority: "h", path: example["request_target"]?.string)
            for expected in example["base_lines"]?.array.compactMap(\.string) ?? [] {
                let identifier = try ComponentIdentifier.parse(String(expected.prefix { $0 != ":" }))
                let value = try RFC9421.componentValue(identifier, message: RFC9421Message(request: request))
                #expect(identifier.serialized + ": " + value == expected)
            }
        }
    }

    @Test func contentDigestExamples() throws {
        let examples = Self.file["rfc9530_examples"]
        let body = Array((examples?["body_19_bytes_with_LF"]?.string ?? "").utf8)
        #expect(ContentDigest.fieldValue(for: body, algorithm: .sha256) == examples?["sha-256"]?.string)
        #expect(ContentDigest.fieldValue(for: body, algorithm: .sha512) == examples?["sha-512"]?.string)
        #expect(
            ContentDigest.fieldValue(for: [UInt8](), algorithm: .sha256) == examples?["empty_content_sha-256"]?.string)
    }
}

@Suite("RFC 9421 section 2.1 field components")
struct FieldComponentTests {
    static let message = """
        GET /foo HTTP/1.1\r
        Host: www.example.com\r
        X-OWS-Header:   Leading and trailing whitespace.   \r
        X-Obs-Fold-Header: Obsolete\r
            line folding.\r
        Cache-Control: max-age=60\r
        Cache-Control:    must-revalidate\r
        Example-Dict:  a=1,    b=2;x=1;y=2,   c=(a   b   c)\r
        Example-Header: value, with, lots\r
        Example-Header: of, commas\r
        Cache-Status: ExampleCache; hit\r
        X-Empty-Header:\r
        \r

        """

    @Test(
        "the RFC's examples",
        arguments: [
            ("x-ows-header", "\"x-ows-header\": Leading and trailing whitespace."),
            ("x-obs-fold-header", "\"x-obs-fold-header\": Obsolete line folding."),
            ("cache-control", "\"cache-control\": max-age=60, must-revalidate"),
            ("example-dict", "\"example-dict\": a=1,    b=2;x=1;y=2,   c=(a   b   c)"),
            ("x-empty-header", "\"x-empty-header\": "),
            ("example-dict;sf", "\"example-dict\";sf: a=1, b=2;x=1;y=2, c=(a b c)"),
            ("example-dict;key=\"a\"", "\"example-dict\";key=\"a\": 1"),
            ("example-dict;key=\"b\"", "\"example-dict\";key=\"b\": 2;x=1;y=2"),
            ("example-dict;key=\"c\"", "\"example-dict\";key=\"c\": (a b c)"),
            ("example-header;bs", "\"example-header\";bs: :dmFsdWUsIHdpdGgsIGxvdHM=:, :b2YsIGNvbW1hcw==:"),
            ("cache-status;sf", "\"cache-status\";sf: ExampleCache;hit"),
        ]
    )
    func line(_ identifier: String, _ expected: String) throws {
        let request = try RawHTTPMessage(parsing: Array(Self.message.utf8)).request()
        let component = try ComponentIdentifier.parse(identifier)
        let value = try RFC9421.componentValue(component, message: RFC9421Message(request: request))
        #expect(component.serialized + ": " + value == expected)
    }

    @Test(
        "unusable field components",
        arguments: [
            ("example-dict;key=\"zz\"", SigilError.Code.missingComponent), ("x-absent", .missingComponent),
            ("example-header;bs;sf", .malformedSignature), ("example-dict;name=\"a\"", .malformedSignature),
            ("example-dict;req", .malformedSignature), ("x-ows-header;key=\"a\"", .malformedSignature),
            ("example-dict;tr", .missingComponent), ("example-dict;unknown", .malformedSignature),
        ]
    )
    func unusable(_ identifier: String, _ code: SigilError.Code) throws {
        let request = try RawHTTPMessage(parsing: Array(Self.message.utf8)).request()
        let component = try ComponentIdentifier.parse(identifier)
        #expect(throws: SigilError(code, "")) {
            try RFC9421.componentValue(component, message: RFC9421Message(request: request))
        }
    }

    @Test func trailers() throws {
        let request = try RawHTTPMessage(parsing: Array(Self.message.utf8)).request()
        var trailers = HTTPFields()
        trailers[HTTPField.Name("Expires")!] = "Wed, 9 Nov 2022 07:28:00 GMT"
        let value = try RFC9421.componentValue(
            try ComponentIdentifier.parse("expires;tr"),
            message: RFC9421Message(request: request, trailers: trailers)
        )
        #expect(value == "Wed, 9 Nov 2022 07:28:00 GMT")
    }
}
