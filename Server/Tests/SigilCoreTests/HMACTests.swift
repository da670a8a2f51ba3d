import Crypto
import Testing

@_spi(Sigil) @testable import SigilCore
@testable import SigilTestSupport

/// Sigil's HMAC-SHA256 (over swift-crypto's SHA-256 states) against swift-crypto's `HMAC<SHA256>`.
@Suite("HMAC-SHA256")
struct HMACTests {
    @Test("the same tags as swift-crypto for keys of 32 to 200 bytes and messages of 0 to 300 bytes")
    func matchesSwiftCrypto() throws {
        var generator = SeededGenerator(seed: 0x4D41_43)
        for keyLength in [32, 33, 63, 64, 65, 128, 200] {
            let key = (0..<keyLength).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let secret = try HMACSecret(key)
            for messageLength in [0, 1, 55, 56, 63, 64, 65, 119, 120, 300] {
                let message = (0..<messageLength).map { _ in UInt8.random(in: 0...255, using: &generator) }
                let expected = Array(HMAC<SHA256>.authenticationCode(for: message, using: SymmetricKey(data: key)))
                let tag = secret.authenticationCode(for: message).withUnsafeBytes { Array($0) }
                #expect(tag == expected, "key \(keyLength) B, message \(messageLength) B")
                #expect(secret.isValidAuthenticationCode(expected, for: message))
                var wrong = expected
                wrong[Int.random(in: 0..<32, using: &generator)] ^= 0x01
                #expect(!secret.isValidAuthenticationCode(wrong, for: message))
                #expect(!secret.isValidAuthenticationCode(Array(expected.prefix(31)), for: message))
            }
        }
    }

    @Test("RFC 4231 test case 6: a key longer than a block is hashed first")
    func rfc4231() throws {
        let key6 = [UInt8](repeating: 0xAA, count: 131)
        let message6 = Array("Test Using Larger Than Block-Size Key - Hash Key First".utf8)
        let tag = try HMACSecret(key6).authenticationCode(for: message6).withUnsafeBytes { Array($0) }
        #expect(Hex.encode(tag) == "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54")
    }
}
