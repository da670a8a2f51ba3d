import Foundation
@_spi(Sigil) import SigilCore
import SigilRSA
import Testing

/// JWKs and RFC 7638 thumbprints against outside code (joserfc; `cryptography` for ML-DSA):
/// `Tests/Interop/jwk_thumbprints.py` made `Vectors/jwk-thumbprints.json` from these key files.
@Suite("JWK thumbprints")
struct JWKTests {
    struct Expected: Decodable, Sendable {
        let members: [String: String]
        let thumbprint: String
    }

    static let expected: [String: Expected] = {
        let url = Vectors.directory.appendingPathComponent("jwk-thumbprints.json")
        return (try? JSONDecoder().decode([String: Expected].self, from: Data(contentsOf: url))) ?? [:]
    }()

    static func keyFile(_ name: String) throws -> [UInt8] {
        let vectors = Vectors.directory.appendingPathComponent("keys").appendingPathComponent(name)
        let fixtures = Vectors.directory.deletingLastPathComponent().appendingPathComponent("Fixtures/keys")
            .appendingPathComponent(name)
        return Array(try Data(contentsOf: FileManager.default.fileExists(atPath: vectors.path) ? vectors : fixtures))
    }

    @Test("every key's JWK members and thumbprint are what outside code computes", arguments: expected.keys.sorted())
    func thumbprints(file: String) throws {
        let entry = try #require(Self.expected[file])
        let key = try KeyFile.load(try Self.keyFile(file), formats: .withRSA).verificationKey
        let jwk = try JWK(key)
        #expect(jwk.requiredMembers == entry.members)
        #expect(jwk.thumbprint == entry.thumbprint)
        #expect(key.jwkThumbprint == jwk.thumbprint)
    }

    @Test("the vectors cover every public key kind")
    func coverage() {
        #expect(Self.expected.count == 8)
        let kinds = Set(Self.expected.values.compactMap { $0.members["kty"] })
        #expect(kinds == ["EC", "OKP", "RSA", "AKP"])
    }

    @Test("a JWK has no private member, an HMAC secret has no JWK, and the JSON is sorted and compact")
    func shape() throws {
        let key = try SigningKey.generate(.ecdsaP256SHA256)
        let jwk = try JWK(try key.verificationKey)
        let json = jwk.json(extra: ["use": "\"sig\"", "alg": "\"ES256\"", "d": "\"leak\""])
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: String])
        #expect(object["kid"] == jwk.thumbprint)
        #expect(object["use"] == "sig")
        #expect(jwk.canonicalJSON.hasPrefix(#"{"crv":"P-256","kty":"EC","x":""#))
        #expect(!jwk.canonicalJSON.contains(" "))
        #expect(throws: SigilInputError.self) {
            try JWK(try VerificationKey(hmacSecret: [UInt8](repeating: 7, count: 32)))
        }
        #expect(JWK.joseAlgorithm(.ed25519) == "EdDSA")
        #expect(JWK.joseAlgorithm(.hmacSHA256) == nil)
    }

    @Test("sigil jwk prints the JWK and the thumbprint; sigil keygen --jwk prints the new key's JWK")
    func command() async throws {
        let path = Vectors.directory.appendingPathComponent("keys/ecdsa-p256.pem").path
        let thumbprint = try await SigilCommand.run(["jwk", "--thumbprint", path])
        #expect(thumbprint.text == (Self.expected["ecdsa-p256.pub.pem"]?.thumbprint ?? "") + "\n")
        let jwk = try await SigilCommand.run(["jwk", path])
        let object = try #require(try JSONSerialization.jsonObject(with: Data(jwk.output)) as? [String: String])
        #expect(object["alg"] == "ES256" && object["use"] == "sig" && object["d"] == nil)
        let secret = Vectors.directory.appendingPathComponent("keys/hmac-sha256.key").path
        #expect(try await SigilCommand.run(["jwk", secret]).status == 2)
        let out = TestServer.temporaryDirectory() + ".pem"
        let made = try await SigilCommand.run(["keygen", "--alg", "ml-dsa-65", "--jwk", "--out", out])
        let line = try #require(try JSONSerialization.jsonObject(with: Data(made.output)) as? [String: String])
        #expect(line["kty"] == "AKP" && line["alg"] == "ML-DSA-65")
        let written = try KeyFile.load(Array(try Data(contentsOf: URL(fileURLWithPath: out)))).verificationKey
        #expect(line["kid"] == written.jwkThumbprint)
    }
}
