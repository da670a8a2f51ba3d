import RawStructuredFieldValues
import Testing

@_spi(Sigil) @testable import SigilCore
@testable import SigilTestSupport

/// Sigil's concrete Structured Field parser and serializer against swift-http-structured-headers' own,
/// on generated input: the same verdict on every input, the same bytes when both accept.
@Suite("Structured fields")
struct StructuredFieldsTests {
    typealias Generator = SeededGenerator

    static let fragments = [
        "sig1", "=", "(", ")", " ", ";", ",", "\"", "\\", ":", "?1", "?0", "@", "%\"", "%25", "%e2%82%ac", "-", ".",
        "0", "12", "123456789012345", "1234567890123456", "1.5", "12.345", "1.2345", "\"@method\"", "\"a\\\"b\"",
        "created=1618884473", "keyid=\"k\"", "*", "tok/en:x", "YWJj", "YWJj=", ":YWJj:", "a-b", "A", "é", "\t",
        "\u{7f}", "sha-256=:AAAA:", ";req", ";sf", ";key=\"a\"", "@1659578233", "@1.5", "%\"x\"",
    ]

    static let keys = ["sig1", "a", "*x", "b-2", "sha-256", "k.y_z", "A", "1a"]
    static let bareItems = [
        "1", "-7", "123456789012345", "1.5", "-0.125", "\"s\"", "\"q\\\"\"", "tok", "*t/x:y", ":YWJj:", "?0", "?1",
        "@1659578233", "%\"caf%c3%a9\"", "1.2345", "\"\u{7f}\"",
    ]

    /// A field built from the grammar, then perhaps damaged, so that most are valid.
    static func structured(_ generator: inout Generator) -> [UInt8] {
        func item(_ generator: inout Generator) -> String {
            var text = bareItems.randomElement(using: &generator)!
            for _ in 0..<Int.random(in: 0...2, using: &generator) {
                text += ";" + keys.randomElement(using: &generator)!
                if Bool.random(using: &generator) { text += "=" + bareItems.randomElement(using: &generator)! }
            }
            return text
        }
        func member(_ generator: inout Generator) -> String {
            guard Int.random(in: 0..<3, using: &generator) == 0 else { return item(&generator) }
            let items = (0..<Int.random(in: 0...3, using: &generator)).map { _ in item(&generator) }
            return "(" + items.joined(separator: " ") + ")" + (Bool.random(using: &generator) ? ";p=1" : "")
        }
        var members: [String] = []
        for _ in 0..<Int.random(in: 1...4, using: &generator) {
            let key = keys.randomElement(using: &generator)!
            members.append(Bool.random(using: &generator) ? key + "=" + member(&generator) : key)
        }
        var bytes = Array(members.joined(separator: Bool.random(using: &generator) ? ", " : ",\t").utf8)
        if Int.random(in: 0..<4, using: &generator) == 0, !bytes.isEmpty {
            let at = Int.random(in: 0..<bytes.count, using: &generator)
            if Bool.random(using: &generator) {
                bytes.remove(at: at)
            } else {
                bytes.insert(Array(fragments.randomElement(using: &generator)!.utf8).first ?? 0x20, at: at)
            }
        }
        return bytes
    }

    static func input(_ generator: inout Generator) -> [UInt8] {
        if Bool.random(using: &generator) { return structured(&generator) }
        var text = ""
        for _ in 0..<Int.random(in: 1...12, using: &generator) {
            text += fragments.randomElement(using: &generator)!
        }
        return Array(text.utf8)
    }

    static func library(_ bytes: [UInt8], _ kind: Int) -> [UInt8]? {
        var parser = StructuredFieldValueParser(bytes)
        var serializer = StructuredFieldValueSerializer()
        switch kind {
        case 0:
            guard let value = try? parser.parseDictionaryFieldValue() else { return nil }
            return (try? serializer.writeDictionaryFieldValue(value)) ?? [0]
        case 1:
            guard let value = try? parser.parseListFieldValue() else { return nil }
            return (try? serializer.writeListFieldValue(value)) ?? [0]
        default:
            guard let value = try? parser.parseItemFieldValue() else { return nil }
            return (try? serializer.writeItemFieldValue(value)) ?? [0]
        }
    }

    static func sigil(_ bytes: [UInt8], _ kind: Int) -> [UInt8]? {
        var serializer = StructuredFields.Serializer()
        switch kind {
        case 0:
            guard let value = try? StructuredFields.parseDictionary(bytes) else { return nil }
            return (try? serializer.dictionary(value)) == nil ? [0] : serializer.bytes
        case 1:
            guard let value = try? StructuredFields.parseList(bytes) else { return nil }
            return (try? serializer.list(value)) == nil ? [0] : serializer.bytes
        default:
            guard let value = try? StructuredFields.parseItem(bytes) else { return nil }
            return (try? serializer.item(value)) == nil ? [0] : serializer.bytes
        }
    }

    @Test("parse then serialize: the same verdict and bytes as swift-http-structured-headers", arguments: 0..<3)
    func differential(_ kind: Int) {
        var generator = Generator(seed: 0x5167_11 + UInt64(kind))
        var accepted = 0
        for index in 0..<20_000 {
            let bytes = Self.input(&generator)
            let expected = Self.library(bytes, kind)
            let actual = Self.sigil(bytes, kind)
            if expected != nil { accepted += 1 }
            #expect(
                actual == expected,
                "case \(index): \(String(decoding: bytes, as: UTF8.self)) → \(actual.map { String(decoding: $0, as: UTF8.self) } ?? "refused"), library \(expected.map { String(decoding: $0, as: UTF8.self) } ?? "refused")"
            )
            if actual != expected { return }
        }
        #expect(accepted > 500, "the generator must produce valid fields too (\(accepted))")
    }

    @Test("the RFC 9421 examples parse as the library parses them")
    func rfcExamples() throws {
        let input =
            #"sig1=("@method" "@authority" "@path" "content-digest" "content-length" "content-type");created=1618884473;keyid="test-key-rsa-pss""#
        #expect(Self.sigil(Array(input.utf8), 0) == Self.library(Array(input.utf8), 0))
        let dictionary = try StructuredFields.parseDictionary(Array(input.utf8))
        guard case .innerList(let items, let parameters) = try #require(dictionary.first?.1) else {
            Issue.record("not an inner list")
            return
        }
        #expect(items.count == 6)
        #expect(parameters.count == 2)
    }
}
