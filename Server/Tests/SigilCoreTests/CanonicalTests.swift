import Foundation
@_spi(Sigil) import SigilCore
import Testing

@testable import SigilTestSupport

@Suite("sigil-v1 canonical forms")
struct CanonicalTests {
    static let targets = Vectors.cases("sigil-v1-canonical.json", "targets", nameKey: "note")
    static let bodies = Vectors.cases("sigil-v1-canonical.json", "bodies", nameKey: "note")

    @Test func vectorsLoaded() {
        #expect(Self.targets.count >= 38)
        #expect(Self.bodies.count >= 25)
    }

    @Test("canonical target", arguments: targets)
    func target(_ vector: VectorCase) {
        let target = vector["requestTarget"]?.string ?? ""
        #expect(CanonicalTarget.canonicalize(target) == vector["canonicalTarget"]?.string)
    }

    @Test("body hash and JCS", arguments: bodies)
    func body(_ vector: VectorCase) {
        let body = Array((vector["body"]?.string ?? "").utf8)
        let contentType = vector["contentType"]?.string
        #expect(BodyHash.compute(body, contentType: contentType) == vector["bodyHash"]?.string)
        #expect(
            BodyHash.compute(body, contentType: contentType, canonicalJSON: false)
                == vector["bodyHashWithCanonicalJSONOff"]?.string
        )
        if let expected = vector["canonicalJSON"]?.string {
            #expect(JSONCanonicalizer.canonicalize(body).map { String(decoding: $0, as: UTF8.self) } == expected)
        } else if !body.isEmpty && BodyHash.isJSONMediaType(contentType) {
            #expect(JSONCanonicalizer.canonicalize(body) == nil)
        }
    }

    @Test(
        "JSON media types: application/json and application/*+json, any case, parameters and spaces ignored",
        arguments: [
            ("application/json", true), ("Application/JSON; charset=utf-8", true), (" \tapplication/json \t;x", true),
            ("application/problem+json", true), ("APPLICATION/VND.API+JSON", true), ("application/+json", false),
            ("application/jsonx", false), ("application/json5", false), ("text/json", false), ("application/", false),
            ("application", false), ("", false), (";application/json", false), ("application/ json", false),
            ("application/x+jsoN;", true), ("applicatio/json", false), ("application/json\u{0}", false),
        ])
    func jsonMediaType(_ contentType: String, _ isJSON: Bool) {
        #expect(BodyHash.isJSONMediaType(contentType) == isJSON)
    }

    @Test(
        "ECMAScript number serialization",
        arguments: [
            (1e21, "1e+21"), (1e-7, "1e-7"), (333333333.33333329, "333333333.3333333"), (1e20, "100000000000000000000"),
            (0.000001, "0.000001"), (123e-20, "1.23e-18"), (-1.5, "-1.5"), (5e-324, "5e-324"),
            (1.7976931348623157e308, "1.7976931348623157e+308"), (9007199254740992, "9007199254740992"), (-0.0, "0"),
            (0.1, "0.1"), (100, "100"), (1e-6, "0.000001"), (1.5e-7, "1.5e-7"), (4.35, "4.35"),
        ])
    func number(_ value: Double, _ expected: String) {
        #expect(ECMAScriptNumber.serialize(value) == expected)
    }

    /// What JCS makes of a decimal literal, with Foundation's `Decimal` as an independent judge of
    /// exactness: the shortest double form when it has the literal's decimal value, else not I-JSON.
    static func expectedCanonical(_ literal: String) -> String? {
        let serialized = ECMAScriptNumber.serialize(Double(literal)!)
        return Decimal(string: literal) == Decimal(string: serialized) ? serialized : nil
    }

    @Test func shortDecimalFastPathAgreesWithDoubleFormatting() {
        var generator = SystemRandomNumberGenerator()
        var exact = 0
        for _ in 0..<20_000 {
            let integerDigits = Int.random(in: 0...8, using: &generator)
            let fractionDigits = Int.random(in: 1...9, using: &generator)
            var literal = Bool.random(using: &generator) ? "-" : ""
            literal += integerDigits == 0 ? "0" : String(Int.random(in: 1...9, using: &generator))
            for _ in 1..<max(1, integerDigits) { literal += String(Int.random(in: 0...9, using: &generator)) }
            literal += "."
            for _ in 0..<fractionDigits { literal += String(Int.random(in: 0...9, using: &generator)) }
            let canonical = JSONCanonicalizer.canonicalize(Array(literal.utf8)).map {
                String(decoding: $0, as: UTF8.self)
            }
            #expect(canonical == Self.expectedCanonical(literal), "\(literal)")
            if canonical != nil { exact += 1 }
        }
        #expect(exact > 10_000)  // most literals of up to 17 digits are exact; the test exercises both outcomes
        for literal in ["0.000001", "0.0000001", "-0.0", "100.000", "123456789012345.6", "0.10", "999999999999999.0"] {
            let canonical = JSONCanonicalizer.canonicalize(Array(literal.utf8)).map {
                String(decoding: $0, as: UTF8.self)
            }
            #expect(canonical == ECMAScriptNumber.serialize(Double(literal)!), "\(literal)")
        }
    }

    @Test(
        "numbers more precise than their double are not I-JSON",
        arguments: [
            ("9007199254740993.0", nil), ("9007199254740992.0", "9007199254740992"), ("0.10000000000000000001", nil),
            ("1.5e-400", nil), ("333333333.33333329", nil), ("333333333.3333333", "333333333.3333333"),
            ("1e23", "1e+23"), ("5e-324", "5e-324"), ("4.50", "4.5"), ("-0.0e99999999999999999999", "0"),
            ("1e99999999999999999999", nil), ("0.30000000000000004", "0.30000000000000004"),
            ("0.30000000000000004441", nil), ("12345678901234567890e-10", nil),
            ("1234567890123456e-10", "123456.7890123456"),
        ] as [(String, String?)]
    )
    func exactNumbers(_ literal: String, _ expected: String?) {
        let canonical = JSONCanonicalizer.canonicalize(Array("[\(literal)]".utf8)).map {
            String(decoding: $0, as: UTF8.self)
        }
        #expect(canonical == expected.map { "[\($0)]" })
    }

    @Test(
        "JCS edge cases",
        arguments: [
            (#"{"a":1,"\u0061":2}"#, nil),  // duplicate once escapes are decoded
            ("[\"\u{C0}\u{AF}\"]", nil),
            (#"["\u0000\u001F\/\u00E9\uD83D\uDE00"]"#, "[\"\\u0000\\u001f/é😀\"]"),
            (#"[1E2,-0.0,0.5e1,0e-400]"#, "[100,0,5,0]"),
            (#"[1e-400]"#, nil),  // underflows to 0, another value
            (#"{"b":{"d":1,"c":2},"a":[]}"#, #"{"a":[],"b":{"c":2,"d":1}}"#),
            (#"[-9007199254740991,-9007199254740992]"#, nil),
            (#"[01]"#, nil), (#"[1.]"#, nil), (#"[.5]"#, nil), (#"[+1]"#, nil), (#"{"a" 1}"#, nil), (#"[1,]"#, nil),
            (#"tru"#, nil), (#""\x""#, nil), (#"{"a":1}x"#, nil),
        ] as [(String, String?)]
    )
    func jcsEdgeCases(_ json: String, _ expected: String?) {
        var bytes = Array(json.utf8)
        if json.hasPrefix("[\"\u{C0}") { bytes = [0x5B, 0x22, 0xC0, 0xAF, 0x22, 0x5D] }  // overlong "/"
        #expect(JSONCanonicalizer.canonicalize(bytes).map { String(decoding: $0, as: UTF8.self) } == expected)
    }

    @Test(
        "every character written as a \\u escape comes out in its JCS form, in a value and in a member name (whose decoded form orders the members)"
    )
    func escapedCharacters() throws {
        let samples: [UInt32] =
            Array(0..<0x80).filter { $0 != 0x7E } + [
                0x80, 0xE9, 0x7FF, 0x800, 0x20AC, 0xD7FF, 0xE000, 0xFFFD, 0xFFFF, 0x10000, 0x1F600, 0x10FFFF,
            ]
        for scalar in samples {
            let escaped: String
            if scalar >= 0x10000 {
                let value = scalar - 0x10000
                escaped = String(format: "\\u%04X\\u%04X", 0xD800 + (value >> 10), 0xDC00 + (value & 0x3FF))
            } else {
                escaped = String(format: "\\u%04x", scalar)
            }
            let expected: String
            switch scalar {
            case 0x22: expected = "\\\""
            case 0x5C: expected = "\\\\"
            case 0x08: expected = "\\b"
            case 0x09: expected = "\\t"
            case 0x0A: expected = "\\n"
            case 0x0C: expected = "\\f"
            case 0x0D: expected = "\\r"
            case 0..<0x20: expected = String(format: "\\u%04x", scalar)
            default: expected = String(Character(Unicode.Scalar(scalar)!))
            }
            // "~" (U+007E, left out of the samples) orders before every sample above it, after every other.
            let json = "{\"\(escaped)\":\"x\(escaped)y\",\"~\":0}"
            let canonical = try #require(JSONCanonicalizer.canonicalize(Array(json.utf8)), "\(json)")
            let member = "\"\(expected)\":\"x\(expected)y\""
            let ordered = scalar >= 0x7F ? "{\"~\":0,\(member)}" : "{\(member),\"~\":0}"
            #expect(String(decoding: canonical, as: UTF8.self) == ordered, "U+\(String(scalar, radix: 16))")
        }
    }

    @Test func escapedNamesAreTheCharactersTheyEscape() throws {
        // A name written raw and the same name escaped are one name: a duplicate.
        for (raw, escaped) in [
            ("é", "\\u00e9"), ("\u{800}", "\\u0800"), ("\u{FFFF}", "\\uffff"), ("😀", "\\ud83d\\ude00"),
            ("\u{10FFFF}", "\\udbff\\udfff"),
        ] {
            let json = "{\"\(raw)\":1,\"\(escaped)\":2}"
            #expect(JSONCanonicalizer.canonicalize(Array(json.utf8)) == nil, "\(json)")
        }
        // Lone or malformed surrogate escapes are refused.
        for string in [
            #""\uD800""#, #""\uDC00""#, #""\uD800\u0041""#, #""\uDBFF\uDBFF""#, #""\uD800x""#, #""\uD800\u12""#,
        ] {
            #expect(JSONCanonicalizer.canonicalize(Array(string.utf8)) == nil, "\(string)")
        }
        // Names order by their UTF-16 code units, escaped or not: U+1F600 (D83D DE00) before U+FB33.
        let ordered = try #require(JSONCanonicalizer.canonicalize(Array(#"{"\ufb33":1,"\ud83d\ude00":2}"#.utf8)))
        #expect(String(decoding: ordered, as: UTF8.self) == "{\"😀\":2,\"\u{FB33}\":1}")
        // Short escapes in names come out as JCS writes them.
        let short = try #require(JSONCanonicalizer.canonicalize(Array(#"{"a\/b\u0041\t":1}"#.utf8)))
        #expect(String(decoding: short, as: UTF8.self) == #"{"a/bA\t":1}"#)
    }

    @Test func membersAreSortedAndADuplicateAnywhereIsRefused() throws {
        // Objects of 1 to 20 members (insertion sort up to 16, the library's sort above) in seeded
        // random orders: sorted when the names differ, refused when any two are the same.
        var generator = SeededGenerator(seed: 0x5151_6e61)
        for count in 1...20 {
            let names = (0..<count).map { String(format: "k%02d", $0) }
            for _ in 0..<20 {
                let shuffled = names.shuffled(using: &generator)
                let json = "{" + shuffled.map { "\"\($0)\":\"\($0)\"" }.joined(separator: ",") + "}"
                let sorted = "{" + names.map { "\"\($0)\":\"\($0)\"" }.joined(separator: ",") + "}"
                let canonical = try #require(JSONCanonicalizer.canonicalize(Array(json.utf8)), "\(json)")
                #expect(String(decoding: canonical, as: UTF8.self) == sorted)
                guard count > 1 else { continue }
                var twice = shuffled
                let copied = Int.random(in: 0..<count, using: &generator)
                var into = Int.random(in: 0..<count, using: &generator)
                if into == copied { into = (into + 1) % count }
                twice[into] = twice[copied]
                let duplicated = "{" + twice.map { "\"\($0)\":0" }.joined(separator: ",") + "}"
                #expect(JSONCanonicalizer.canonicalize(Array(duplicated.utf8)) == nil, "\(duplicated)")
            }
        }
    }

    @Test func escapesInValuesComeOutAsJCSWritesThem() throws {
        // Kept as they came: \" \\ \b \f \n \r \t; rewritten: \/ and \u.
        let json = #"{"v":"a\"b\\c\bd\fe\nf\rg\th\/i\u0041\u001f\u00e9"}"#
        let canonical = try #require(JSONCanonicalizer.canonicalize(Array(json.utf8)))
        #expect(String(decoding: canonical, as: UTF8.self) == #"{"v":"a\"b\\c\bd\fe\nf\rg\th/iA\u001fé"}"#)
    }

    @Test func encodedSurrogatesAreNotUTF8() {
        // U+D800 encoded directly in UTF-8 (ED A0 80) is ill-formed.
        #expect(JSONCanonicalizer.canonicalize([0x22, 0xED, 0xA0, 0x80, 0x22]) == nil)
        #expect(JSONCanonicalizer.canonicalize([0x22, 0xF4, 0x90, 0x80, 0x80, 0x22]) == nil)  // past U+10FFFF
        #expect(JSONCanonicalizer.canonicalize([0x22, 0xE2, 0x82, 0x22]) == nil)  // truncated
    }

    @Test func deepNestingIsRawNotACrash() {
        let deep =
            [UInt8](repeating: UInt8(ascii: "["), count: 100_000)
            + [UInt8](repeating: UInt8(ascii: "]"), count: 100_000)
        #expect(JSONCanonicalizer.canonicalize(deep) == nil)
        let hash = BodyHash.compute(deep, contentType: "application/json")
        #expect(hash == BodyHash.compute(deep, contentType: "text/plain"))
    }

    @Test func supplementaryCharactersSortByUTF16() {
        // U+1F600 (surrogates D83D DE00) sorts before U+FB33 in UTF-16 order, after it in code point order.
        let json = Array("{\"\u{FB33}\":1,\"\u{1F600}\":2}".utf8)
        let canonical = JSONCanonicalizer.canonicalize(json).map { String(decoding: $0, as: UTF8.self) }
        #expect(canonical == "{\"\u{1F600}\":2,\"\u{FB33}\":1}")
    }

    @Test func tenThousandQueryPairs() {
        let query = (0..<10_000).map { "k\(9_999 - $0)=v" }.joined(separator: "&")
        let canonical = CanonicalTarget.canonicalize("/p?" + query)
        #expect(canonical.hasPrefix("/p?k0=v&k1=v&k10=v"))
    }
}
