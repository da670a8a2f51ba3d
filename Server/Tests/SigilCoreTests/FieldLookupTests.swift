import HTTPTypes
@_spi(Sigil) import SigilCore
import Testing

@testable import SigilTestSupport

@Suite("Field lookups on the verification path")
struct FieldLookupTests {
    /// The scans that replace HTTPFields' subscripts answer exactly as the subscripts do.
    @Test func scansAgreeWithTheSubscripts() {
        let names = [
            HTTPField.Name.contentType, .contentLength, HTTPField.Name("X-Nonce")!, HTTPField.Name("Signature")!,
            HTTPField.Name("Content-Digest")!,
        ]
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<500 {
            var fields = HTTPFields()
            for _ in 0..<Int.random(in: 0...8, using: &generator) {
                let name = names.randomElement(using: &generator)!
                fields.append(HTTPField(name: name, value: ["a", "b c", "", "x, y"].randomElement(using: &generator)!))
            }
            for name in names {
                #expect(fields.value(name) == fields[name])
                #expect(fields.values(name) == fields[values: name])
                #expect(fields.has(name) == (fields[name] != nil))
            }
        }
    }
}
