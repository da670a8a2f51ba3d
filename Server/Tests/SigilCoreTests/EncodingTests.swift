import Foundation
@_spi(Sigil) import SigilCore
import Testing

@testable import SigilTestSupport

@Suite("Encodings")
struct EncodingTests {
    @Test func base64URLRoundTripsEveryLength() {
        for length in 0..<70 {
            let bytes = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) }
            let encoded = Base64URL.encode(bytes)
            #expect(!encoded.contains("=") && !encoded.contains("+") && !encoded.contains("/"))
            #expect(Base64URL.decode(encoded) == bytes)
            #expect(Base64.decode(Data(bytes).base64EncodedString()) == bytes)
        }
    }

    @Test(
        "strict base64url",
        // "AB" and "AAB" leave non-zero bits after the last byte (4 and 2); "AAAAAA.A" and "AAAA*A" have a
        // character outside the alphabet in a later block and in a tail.
        arguments: [
            "AAAA=", "AA==", "AA+/", "AA/_", "A", "AB", "AAB", "AA AA", "AA\n", "é", "AAAAA", "AAAAAA.A", "AAAA*A",
        ]
    )
    func rejectedBase64URL(_ text: String) {
        #expect(Base64URL.decode(text) == nil)
    }

    @Test("strict standard base64", arguments: ["AA=", "A===", "AB==", "AAA-", "AA_A", "AAAA ", "=AAA"])
    func rejectedBase64(_ text: String) {
        #expect(Base64.decode(text) == nil)
    }

    @Test func hex() {
        #expect(Hex.encode([0x00, 0xAB, 0xFF]) == "00abff")
    }
}
