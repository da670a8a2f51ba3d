import Foundation
@_spi(Sigil) import SigilCore
import SigilRSA
import SigilServer
import Testing

@testable import SigilTestSupport

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

    @Test(
        "one algorithm table: every JOSE name written is read back to its algorithm (PS512 was written, not read), DPoP's list is the table's, and discovery lists RSA only where RSA keys are read"
    )
    func algorithmTable() async throws {
        for algorithm in SignatureAlgorithm.allCases {
            #expect(AlgorithmEntry.of(algorithm) != nil, "\(algorithm) is in the table")
            if let jose = JWK.joseAlgorithm(algorithm) {
                #expect(JWK.algorithm(jose: jose) == algorithm, "\(jose)")
            }
        }
        #expect(JWK.joseAlgorithm(.rsaPSSSHA512) == "PS512" && JWK.algorithm(jose: "PS512") == .rsaPSSSHA512)
        #expect(JWK.algorithm(jose: "Ed25519") == .ed25519)
        #expect(JWK.algorithm(jose: "PS256") == nil && JWK.algorithm(jose: "none") == nil)
        #expect(DPoPProof.algorithms == ["ES256", "ES384", "EdDSA", "RS256", "PS256"])
        #expect(Set(AlgorithmEntry.all.compactMap(\.jose)).count == AlgorithmEntry.all.compactMap(\.jose).count)

        let clock = ManualUnixClock(SigningSetup.start)
        for (formats, listsRSA) in [(KeyFormats.builtIn, false), (.withRSA, true)] {
            var configuration = RegistrationService.Configuration()
            configuration.keyFormats = formats
            let service = RegistrationService(
                directory: Directory.inMemory(clock: clock), nonces: MemoryNonceStore(clock: clock),
                enrollment: EnrollmentScaffold.NoEnrollment(), configuration: configuration, clock: clock)
            let listed = service.discovery(responseSigner: nil, pins: [], backupPins: []).algorithms
            #expect(listed.contains("rsa-pss-sha512") == listsRSA && listed.contains("rsa-v1_5-sha256") == listsRSA)
            #expect(listed.contains("ed25519") && listed.contains("ml-dsa-65") && !listed.contains("apple-appattest"))
        }
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
