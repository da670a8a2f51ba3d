import Foundation
@_spi(Sigil) import SigilCore
import SigilRSA
import Testing

@testable import SigilTestSupport

@Suite("Key files")
struct KeyFileTests {
    static let fixtures = TestPaths.tests.appendingPathComponent("Fixtures/keys")

    static func load(_ name: String, _ algorithm: SignatureAlgorithm? = nil) throws -> LoadedKey {
        try KeyFile.load(
            Array(try Data(contentsOf: fixtures.appendingPathComponent(name))), algorithm: algorithm, formats: .withRSA)
    }

    @Test(
        "files written by openssl and Python's cryptography load, sign and verify",
        arguments: [
            ("openssl-p256.pem", "openssl-p256.pub.pem", SignatureAlgorithm.ecdsaP256SHA256),
            ("openssl-ed25519.pem", "openssl-ed25519.pub.pem", .ed25519),
            ("openssl-rsa.pem", "openssl-rsa.pub.pem", .rsaPSSSHA512),
            ("python-ml-dsa-65.pem", "python-ml-dsa-65.pub.pem", .mlDSA65),
            ("python-ml-dsa-87.pem", "python-ml-dsa-87.pub.pem", .mlDSA87),
        ]
    )
    func interoperableFiles(_ privateFile: String, _ publicFile: String, _ algorithm: SignatureAlgorithm) throws {
        let privateKey = try Self.load(privateFile)
        let publicKey = try Self.load(publicFile)
        #expect(privateKey.algorithm == algorithm)
        #expect(publicKey.signingKey == nil)
        #expect(privateKey.verificationKey.derivedKeyID == publicKey.verificationKey.derivedKeyID)
        let message = Array("sigil".utf8)
        for profile in SignatureProfile.allCases {
            let signature = try #require(privateKey.signingKey).signature(for: message, profile: profile)
            #expect(publicKey.verificationKey.isValidSignature(signature, for: message, profile: profile))
        }
    }

    @Test("RSA is read only where SigilRSA's format is given; the built-in reader names what is missing")
    func rsaNeedsItsModule() throws {
        let pem = try Data(contentsOf: Self.fixtures.appendingPathComponent("openssl-rsa.pem"))
        let publicPEM = try Data(contentsOf: Self.fixtures.appendingPathComponent("openssl-rsa.pub.pem"))
        #expect(throws: SigilInputError.self) { try KeyFile.load(Array(pem)) }
        #expect(throws: SigilInputError.self) { try KeyFile.load(Array(publicPEM)) }
        #expect(throws: SigilError(.unsupportedAlgorithm, "")) { try SigningKey.generate(.rsaPSSSHA512) }
        let loaded = try KeyFile.load(Array(publicPEM), formats: .withRSA)
        #expect(loaded.algorithm == .rsaPSSSHA512)
        #expect(loaded.verificationKey.rawPublicKey?.first == 0x30)
    }

    @Test("a provider returns r‖s; the profile makes DER for sigil-v1; an ECDSA provider returning DER is refused")
    func profilesEncodeSignatures() throws {
        let key = try SigningKey.generate(.ecdsaP256SHA256)
        let message = Array("sigil".utf8)
        let raw = try key.signature(for: message)
        #expect(raw.count == 64)
        let der = try SignatureProfile.sigilV1.wireSignature(raw, algorithm: .ecdsaP256SHA256)
        #expect(der.first == 0x30)
        #expect(try SignatureProfile.rfc9421.wireSignature(raw, algorithm: .ecdsaP256SHA256) == raw)
        let verification = try key.verificationKey
        #expect(verification.isValidSignature(der, for: message, profile: .sigilV1))
        #expect(verification.isValidSignature(raw, for: message, profile: .rfc9421))
        for profile in SignatureProfile.allCases {
            #expect(throws: SigilInputError.self) { try profile.wireSignature(der, algorithm: .ecdsaP256SHA256) }
        }
    }

    @Test("a PEM block reads the same with CRLF, indentation or text around it; a broken one is refused")
    func pemBlocks() throws {
        let key = try SigningKey.generate(.ed25519)
        let pem = try #require(KeyFile.publicKeyFile(for: try key.verificationKey))
        let plain = try PEM.decode(pem)
        #expect(plain.label == "PUBLIC KEY")
        let variants = [
            pem.replacingOccurrences(of: "\n", with: "\r\n"),
            "a comment line\n" + pem.replacingOccurrences(of: "\n", with: "\n\t ") + "\ntrailing text",
        ]
        for variant in variants {
            let decoded = try PEM.decode(variant)
            #expect(decoded.label == plain.label && decoded.der == plain.der)
        }
        let body = pem.split(separator: "\n")[1]
        for broken in [
            "no block", "-----BEGIN PUBLIC KEY-----\n\(body)\n",
            "-----BEGIN PUBLIC KEY-----\n\(body)\n-----END OTHER-----",
            "-----BEGIN PUBLIC KEY-----\n\(body)\u{A0}\n-----END PUBLIC KEY-----",
            "-----BEGIN PUBLIC KEY-----\n\(body)*\n-----END PUBLIC KEY-----",
            "-----BEGIN PUBLIC KEY-----\n\n-----END PUBLIC KEY-----", "-----BEGIN ",
        ] {
            #expect(throws: SigilInputError.self, "\(broken)") { try PEM.decode(broken) }
        }
    }

    @Test func sec1AndPythonEd25519Load() throws {
        #expect(try Self.load("openssl-p384-sec1.pem").algorithm == .ecdsaP384SHA384)
        #expect(try Self.load("python-ed25519.pem").algorithm == .ed25519)
    }

    @Test("what Sigil writes, Sigil reads back", arguments: SignatureAlgorithm.generatable)
    func writtenFilesRoundTrip(_ algorithm: SignatureAlgorithm) throws {
        let key = try SigningKey.generate(algorithm, formats: .withRSA)
        let file = try KeyFile.privateKeyFile(for: key)
        let loaded = try KeyFile.load(Array(file.utf8), algorithm: algorithm, formats: .withRSA)
        #expect(loaded.verificationKey.derivedKeyID == (try key.verificationKey.derivedKeyID))
        if let publicFile = KeyFile.publicKeyFile(for: try key.verificationKey) {
            let publicKey = try KeyFile.load(Array(publicFile.utf8), algorithm: algorithm, formats: .withRSA)
            #expect(publicKey.verificationKey.derivedKeyID == loaded.verificationKey.derivedKeyID)
            #expect(publicKey.signingKey == nil)
        }
    }

    @Test func mlDSAPrivateKeyIsTheSeedForm() throws {
        let key = try SigningKey.generate(.mlDSA65)
        let (label, der) = try PEM.decode(try KeyFile.privateKeyFile(for: key))
        #expect(label == "PRIVATE KEY")
        #expect(der.count == 54)  // 30 34 | 02 01 00 | 30 0b 06 09 <oid> | 04 22 80 20 <seed>
        #expect(Array(der[20..<22]) == [0x80, 0x20])
        // The same layout as the vectors' key, written by Python's cryptography 48.
        let vectorText = String(decoding: try Vectors.keyFile("ml-dsa-65.pem"), as: UTF8.self)
        #expect(try PEM.decode(vectorText).der.prefix(22) == der.prefix(22))
    }

    @Test(
        "garbage is a clear input error",
        arguments: [
            "", "not a key", "-----BEGIN PRIVATE KEY-----\n!!!\n-----END PRIVATE KEY-----\n",
            "-----BEGIN PRIVATE KEY-----\nMAA=\n-----END PRIVATE KEY-----\n",
            "-----BEGIN PUBLIC KEY-----\nMIIBCgKCAQEA\n-----END PUBLIC KEY-----\n",
            "-----BEGIN CERTIFICATE-----\nMAA=\n-----END CERTIFICATE-----\n", "-----BEGIN PRIVATE KEY-----\nMAA=\n",
            "c2hvcnQ=",
        ]
    )
    func garbage(_ text: String) {
        #expect(throws: SigilInputError.self) { try KeyFile.load(Array(text.utf8)) }
    }

    @Test func secretsAreNeverPrinted() throws {
        let secret = [UInt8](repeating: 0xAB, count: 32)
        let signing = try SigningKey(hmacSecret: secret)
        let verifying = try VerificationKey(hmacSecret: secret)
        var dumped = ""
        dump(signing, to: &dumped)
        dump(verifying, to: &dumped)
        dump(try KeyFile.load(Array(try KeyFile.privateKeyFile(for: signing).utf8)), to: &dumped)
        let issued = Registration.IssuedSecret(
            keyId: "hmac-1", alg: "hmac-sha256", secret: Base64.encode(secret), previousKeysValidUntil: nil)
        dump(issued, to: &dumped)
        let text = dumped + "\(signing) \(verifying) \(String(reflecting: signing)) \(issued)"
        #expect(!text.contains("171"))  // 0xAB
        #expect(!text.lowercased().contains("abab"))
        #expect(!text.contains("q6urq6"))  // base64 of 0xAB bytes
        #expect(text.contains("hmac-sha256"))
    }

    @Test func keyKindDecidesAlgorithm() throws {
        #expect(throws: SigilError(.algorithmMismatch, "")) {
            try Self.load("openssl-ed25519.pub.pem", .ecdsaP256SHA256)
        }
        #expect(throws: SigilError(.algorithmMismatch, "")) {
            try KeyFile.load(Array("AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=".utf8), algorithm: .ed25519)
        }
        #expect(try Self.load("openssl-p256.pub.pem", .ecdsaP256SHA512).algorithm == .ecdsaP256SHA512)
    }
}
