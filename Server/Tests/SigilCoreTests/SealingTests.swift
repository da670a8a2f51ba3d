import Crypto
import Foundation
import HTTPTypes
@_spi(Sigil) import SigilCore
import Testing

@testable import SigilTestSupport

/// PROTOCOL.md section 6: sealed requests, responses and secrets.
@Suite("Sealing")
struct SealingTests {
    @Test("a sealed request opens for its nonce only; the response opens for that request only")
    func requestAndResponse() throws {
        let server = try SealingPrivateKey.generate()
        let plaintext = Array(#"{"card":"4111 1111 1111 1111"}"#.utf8)
        let (body, opener) = try Sealing.sealRequest(plaintext, to: server.publicKey, keyID: "key-a", nonce: "nonce-1")
        #expect(body.count == 16 + 1120 + plaintext.count + 16)
        #expect(String(decoding: body.prefix(16), as: UTF8.self) == server.keyID)
        #expect(body.firstRange(of: plaintext) == nil)

        let (opened, sealer) = try Sealing.openRequest(body, with: [server], keyID: "key-a", nonce: "nonce-1")
        #expect(opened == plaintext)
        let answer = Array(#"{"ok":true}"#.utf8)
        let sealedAnswer = try sealer.seal(answer)
        #expect(try opener.open(sealedAnswer) == answer)
        // Every answer has its response nonce of its own (32 random bytes), so its key and GCM nonce too.
        let answers = try (0..<64).map { _ in try sealer.seal(answer) }
        #expect(Set(answers.map { Array($0.prefix(32)) }).count == answers.count)
        #expect(Set(answers.map { Array($0.dropFirst(32)) }).count == answers.count)
        #expect(try answers.allSatisfy { try opener.open($0) == answer })

        // Moved to another request (another nonce): does not open.
        #expect(
            Self.code { try Sealing.openRequest(body, with: [server], keyID: "key-a", nonce: "nonce-2") }
                == .sealedBodyInvalid)
        // Moved into another signer's request under the same nonce (nonces are unique per key only):
        // does not open, so an attacker cannot have the server read a victim's body back to it.
        #expect(
            Self.code { try Sealing.openRequest(body, with: [server], keyID: "key-b", nonce: "nonce-1") }
                == .sealedBodyInvalid)
        // Another request's answer does not open with this request's opener.
        let (_, otherOpener) = try Sealing.sealRequest(
            plaintext, to: server.publicKey, keyID: "key-a", nonce: "nonce-1")
        #expect(Self.code { try otherOpener.open(sealedAnswer) } == .sealedBodyInvalid)
        // Truncated, bit-flipped, another key ID, no key at all.
        #expect(
            Self.code {
                try Sealing.openRequest(Array(body.dropLast()), with: [server], keyID: "key-a", nonce: "nonce-1")
            }
                == .sealedBodyInvalid)
        for index in [0, 20, 16 + 1120 + 3, body.count - 1] {
            var flipped = body
            flipped[index] ^= 0x01
            #expect(
                Self.code { try Sealing.openRequest(flipped, with: [server], keyID: "key-a", nonce: "nonce-1") }
                    == .sealedBodyInvalid)
        }
        #expect(
            Self.code {
                try Sealing.openRequest(Array(body.prefix(40)), with: [server], keyID: "key-a", nonce: "nonce-1")
            }
                == .sealedBodyInvalid)
        #expect(
            Self.code { try Sealing.openRequest(body, with: [try .generate()], keyID: "key-a", nonce: "nonce-1") }
                == .sealedBodyInvalid
        )
        var flippedAnswer = sealedAnswer
        flippedAnswer[40] ^= 0x80
        #expect(Self.code { try opener.open(flippedAnswer) } == .sealedBodyInvalid)
    }

    @Test("during a rotation a body sealed to the previous key still opens")
    func rotation() throws {
        let previous = try SealingPrivateKey.generate()
        let current = try SealingPrivateKey.generate()
        let (body, _) = try Sealing.sealRequest([1, 2, 3], to: previous.publicKey, keyID: "key-a", nonce: "n")
        #expect(
            try Sealing.openRequest(body, with: [current, previous], keyID: "key-a", nonce: "n").plaintext == [1, 2, 3])
        #expect(
            Self.code { try Sealing.openRequest(body, with: [current], keyID: "key-a", nonce: "n") }
                == .sealedBodyInvalid)
    }

    @Test("a secret sealed to a device opens only with its key and for its key ID")
    func secrets() throws {
        let device = try SealingPrivateKey.generate()
        let secret = (0..<32).map { UInt8($0) }
        let sealed = try Sealing.sealSecret(secret, keyID: "hmac-1", to: device.publicKey)
        #expect(try Sealing.openSecret(sealed, keyID: "hmac-1", with: device) == secret)
        #expect(Self.code { try Sealing.openSecret(sealed, keyID: "hmac-2", with: device) } == .sealedBodyInvalid)
        #expect(
            Self.code { try Sealing.openSecret(sealed, keyID: "hmac-1", with: try .generate()) } == .sealedBodyInvalid)
    }

    @Test("key files: the seed and the 1216-byte key in PEM; the key ID is SHA-256's first 8 bytes of the key")
    func keyFiles() throws {
        let key = try SealingPrivateKey.generate()
        let reloaded = try Sealing.privateKey(pem: Sealing.privateKeyFile(for: key))
        #expect(try reloaded.seed == key.seed)
        #expect(reloaded.publicKey == key.publicKey)
        #expect(try Sealing.publicKey(pem: Sealing.publicKeyFile(for: key.publicKey)) == key.publicKey)
        #expect(key.publicKey.rawRepresentation.count == 1216)
        let digest = Array(SHA256.hash(data: key.publicKey.rawRepresentation))
        #expect(key.keyID == digest.prefix(8).map { String(format: "%02x", $0) }.joined())
        #expect(throws: SigilInputError.self) { try SealingPrivateKey(seed: [UInt8](repeating: 1, count: 31)) }
        #expect(throws: SigilInputError.self) {
            try SealingPublicKey(rawRepresentation: [UInt8](repeating: 1, count: 1215))
        }
    }

    @Test("a request body sealed by Python's cryptography opens in Sigil", .enabled(if: PythonHPKE.available))
    func sealedByPython() throws {
        let server = try SealingPrivateKey.generate()
        let plaintext = Array(#"{"from":"python","amount":"25.00"}"#.utf8)
        let body = try PythonHPKE.seal(plaintext, to: server.publicKey, keyID: "key-a", nonce: "py-nonce-1")
        #expect(
            try Sealing.openRequest(body, with: [server], keyID: "key-a", nonce: "py-nonce-1").plaintext == plaintext)
        #expect(
            Self.code { try Sealing.openRequest(body, with: [server], keyID: "key-a", nonce: "py-nonce-2") }
                == .sealedBodyInvalid)
        #expect(
            Self.code { try Sealing.openRequest(body, with: [server], keyID: "key-b", nonce: "py-nonce-1") }
                == .sealedBodyInvalid)
    }

    @Test("sigil-v1 hashes a body with a Content-Encoding as <coding>:<raw hex> (section 2.5): the coding is signed")
    func encodedBodiesHashRaw() {
        var request = HTTPRequest(method: .post, scheme: "https", authority: "api.example.com", path: "/v1/x")
        request.headerFields[.contentType] = "application/json"
        let body = Array(#"{"b":1, "a":2}"#.utf8)
        let plain = SigilV1.requestBase(for: request, body: body, timestamp: "1", nonce: "n")
        request.headerFields[.contentEncoding] = Sealing.contentEncoding
        let encoded = SigilV1.requestBase(for: request, body: body, timestamp: "1", nonce: "n")
        #expect(plain != encoded)
        let raw = SHA256.hash(data: body).map { String(format: "%02x", $0) }.joined()
        #expect(String(decoding: encoded.suffix(64 + 11), as: UTF8.self) == "sigil-hpke:" + raw)
        request.headerFields[.contentEncoding] = "GZIP, Sigil-HPKE"
        let spelled = SigilV1.requestBase(for: request, body: body, timestamp: "1", nonce: "n")
        #expect(String(decoding: spelled.suffix(64 + 16), as: UTF8.self) == "gzip,sigil-hpke:" + raw)
        // An empty body hashes empty, coding or not.
        #expect(SigilV1.requestBase(for: request, body: [], timestamp: "1", nonce: "n").last == 0x0A)
    }

    static func code(_ body: () throws -> Any) -> SigilError.Code? {
        do {
            _ = try body()
            return nil
        } catch let error as SigilError {
            return error.code
        } catch {
            return nil
        }
    }
}
