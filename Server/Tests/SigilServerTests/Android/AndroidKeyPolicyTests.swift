import Crypto
import Foundation
import SigilAndroidAttestation
@_spi(Sigil) import SigilCore
import SigilRSA
import SigilServer
import SwiftASN1
import Testing
import X509

@testable import SigilTestSupport

/// Chains from a test authority laid out as Google's, whose Key Description the test writes: each
/// rule of the policy refuses its own case, and malformed extensions are refused without a crash.
@Suite("Android Key Attestation policy and parser")
struct AndroidKeyPolicyTests {
    static let challenge = Array("server challenge 0123456789abcdef".utf8)

    static func verify(
        _ authority: TestAndroidAuthority, _ fields: TestAndroidAuthority.Fields,
        key: P256.Signing.PublicKey = P256.Signing.PrivateKey().publicKey
    ) throws -> AndroidKeyAttestation {
        try AndroidKeyAttestation.verify(
            chain: try authority.chain(for: key, fields), challenge: challenge, at: authority.now,
            roots: [authority.anchor])
    }

    static func outcome(_ body: () throws -> Void) -> String { AndroidKeyVectorTests.outcome(body) }

    @Test("a chain of the test authority passes the default policy; each broken rule is refused with its code")
    func rules() throws {
        let authority = try TestAndroidAuthority()
        let policy = AndroidAttestationPolicy(apps: [TestAndroidAuthority.app])
        let base = TestAndroidAuthority.Fields(challenge: Self.challenge)
        #expect(Self.outcome { try policy.check(try Self.verify(authority, base)) } == "accepted")
        // Not trusted unless its root is.
        #expect(
            Self.outcome {
                _ = try AndroidKeyAttestation.verify(
                    chain: try authority.chain(for: P256.Signing.PrivateKey().publicKey, base),
                    challenge: Self.challenge, at: authority.now)
            } == "untrusted-root")

        var cases: [(String, TestAndroidAuthority.Fields, String)] = []
        func with(_ change: (inout TestAndroidAuthority.Fields) -> Void, _ name: String, _ code: String) {
            var fields = base
            change(&fields)
            cases.append((name, fields, code))
        }
        with({ $0.securityLevel = .software }, "Software security level", "security-level")
        with({ $0.bootState = .unverified }, "unverified boot", "boot-state")
        with({ $0.bootState = .selfSigned }, "self-signed boot", "boot-state")
        with({ $0.bootState = .failed }, "failed boot", "boot-state")
        with({ $0.lockedByte = 0x00 }, "unlocked", "device-unlocked")
        with({ $0.algorithm = 1 }, "an RSA key by the hardware's word", "key-properties")
        with({ $0.algorithm = nil }, "no algorithm", "key-properties")
        with({ $0.ecCurve = 2 }, "P-384 by the hardware's word", "key-properties")
        with({ $0.purposes = [0, 1] }, "not for signing", "key-properties")
        with({ $0.origin = 2 }, "imported", "key-properties")
        with({ $0.origin = nil }, "no origin", "key-properties")
        with({ $0.packages = [("com.example.other", 1)] }, "another package", "app-not-allowed")
        with({ $0.signatureDigests = [[UInt8](repeating: 1, count: 32)] }, "another signer", "app-not-allowed")
        with({ $0.lockedByte = 0x01 }, "BER true", "accepted")
        with({ $0.ecCurve = nil }, "no curve (the key says P-256)", "accepted")
        with({ $0.attestationVersion = 3 }, "attestation version 3", "accepted")
        with(
            {
                $0.attestationVersion = 1
                $0.hasBootHash = false
                $0.extraHardwareTags = [(600, [0x05, 0x00]), (703, [0x05, 0x00])]
            }, "attestation version 1: no boot hash, allApplications and rollbackResistant", "accepted")
        with({ $0.securityLevel = .strongBox }, "StrongBox", "accepted")
        with(
            { $0.extraHardwareTags = [(724, [0x04, 0x02, 0xAA, 0xBB]), (999, [0x05, 0x00])] }, "tags not read",
            "accepted")
        for (name, fields, code) in cases {
            #expect(Self.outcome { try policy.check(try Self.verify(authority, fields)) } == code, "\(name)")
        }

        // A critical extension this verifier does not process.
        let critical = try authority.chain(
            for: .init(P256.Signing.PrivateKey().publicKey),
            keyDescription: try TestAndroidAuthority.keyDescription(base),
            criticalOID: [1, 3, 6, 1, 4, 1, 99999, 1])
        #expect(
            Self.outcome {
                _ = try AndroidKeyAttestation.verify(
                    chain: critical, challenge: Self.challenge, at: authority.now, roots: [authority.anchor])
            } == "critical-extension")

        // An RSA key in the certificate where EC is required.
        let rsa = try RSATestKey.make()
        let chain = try authority.chain(
            for: rsa, keyDescription: try TestAndroidAuthority.keyDescription(base))
        let attestation = try AndroidKeyAttestation.verify(
            chain: chain, challenge: Self.challenge, at: authority.now, roots: [authority.anchor])
        #expect(Self.outcome { try policy.check(attestation) } == "key-properties")

        // Demands the operator adds: StrongBox, a patch level, SelfSigned accepted, an unlocked device allowed.
        var strict = policy
        strict.minimumSecurityLevel = .strongBox
        #expect(Self.outcome { try strict.check(try Self.verify(authority, base)) } == "security-level")
        strict.minimumSecurityLevel = .trustedEnvironment
        strict.minimumPatchLevel = 202_611
        #expect(Self.outcome { try strict.check(try Self.verify(authority, base)) } == "patch-level")
        var noPatch = base
        noPatch.osPatchLevel = nil
        strict.minimumPatchLevel = 202_610
        #expect(Self.outcome { try strict.check(try Self.verify(authority, base)) } == "accepted")
        #expect(Self.outcome { try strict.check(try Self.verify(authority, noPatch)) } == "patch-level")
        var custom = base
        custom.bootState = .selfSigned
        var lenient = policy
        lenient.acceptedBootStates = [.verified, .selfSigned]
        #expect(Self.outcome { try lenient.check(try Self.verify(authority, custom)) } == "accepted")
        custom.lockedByte = 0
        lenient.requiresLockedDevice = false
        #expect(Self.outcome { try lenient.check(try Self.verify(authority, custom)) } == "accepted")
    }

    @Test(
        "a factory chain whose batch certificate (the leaf's signer) is no CA is accepted, as Google's verifier accepts it; a non-CA certificate anywhere else, or a batch certificate that carries a Key Description or may not sign, is refused"
    )
    func batchCertificateWithoutCA() throws {
        let authority = try TestAndroidAuthority()
        let policy = AndroidAttestationPolicy(apps: [TestAndroidAuthority.app])
        let description = try TestAndroidAuthority.keyDescription(.init(challenge: Self.challenge))
        let rootKey = P384.Signing.PrivateKey()
        let root = GoogleAttestationRoots.Root(
            name: "test-root",
            certificate: try Self.certificate(
                "Test Root", key: .init(rootKey.publicKey), issuer: "Test Root", signer: .init(rootKey),
                authority: .isCertificateAuthority(maxPathLength: nil), usage: KeyUsage(keyCertSign: true),
                now: authority.now))
        /// A chain root ← intermediate ← batch ← leaf, each above the leaf with the given constraints
        /// (nil: no basic constraints extension) and key usage, every signature genuine.
        func chain(
            intermediate: BasicConstraints?, intermediateUsage: KeyUsage? = KeyUsage(keyCertSign: true),
            batch: BasicConstraints?, batchUsage: KeyUsage?, batchDescription: Bool = false
        ) throws -> [[UInt8]] {
            let intermediateKey = P256.Signing.PrivateKey()
            let batchKey = P256.Signing.PrivateKey()
            let middle = try Self.certificate(
                "Test Intermediate", key: .init(intermediateKey.publicKey), issuer: "Test Root",
                signer: .init(rootKey), authority: intermediate, usage: intermediateUsage, now: authority.now)
            let batchCertificate = try Self.certificate(
                "Test Batch TEE", key: .init(batchKey.publicKey), issuer: "Test Intermediate",
                signer: .init(intermediateKey), authority: batch, usage: batchUsage,
                keyDescription: batchDescription ? description : nil, now: authority.now)
            let leaf = try Self.certificate(
                "Android Keystore Key", key: .init(P256.Signing.PrivateKey().publicKey), issuer: "Test Batch TEE",
                signer: .init(batchKey), authority: nil, usage: nil, keyDescription: description, now: authority.now)
            return try [leaf, batchCertificate, middle, root.certificate].map { Array(try $0.serializeAsDER()) }
        }
        func outcome(_ ders: [[UInt8]]) -> String {
            Self.outcome {
                try policy.check(
                    try AndroidKeyAttestation.verify(
                        chain: ders, challenge: Self.challenge, at: authority.now, roots: [root]))
            }
        }
        let ca = BasicConstraints.isCertificateAuthority(maxPathLength: nil)
        let signs = KeyUsage(digitalSignature: true)
        // The OEM factory chain: the batch certificate has no basic constraints, or says it is no CA.
        #expect(try outcome(chain(intermediate: ca, batch: nil, batchUsage: signs)) == "accepted")
        #expect(try outcome(chain(intermediate: ca, batch: nil, batchUsage: nil)) == "accepted")
        #expect(try outcome(chain(intermediate: ca, batch: .notCertificateAuthority, batchUsage: signs)) == "accepted")
        // The same chain with a CA batch certificate, as Google's own devices make them, passes as before.
        #expect(
            try outcome(chain(intermediate: ca, batch: ca, batchUsage: KeyUsage(keyCertSign: true))) == "accepted")
        // No CA above the batch certificate: an intermediate that signs another CA must be one.
        #expect(
            try outcome(chain(intermediate: nil, intermediateUsage: nil, batch: ca, batchUsage: signs))
                == "certificate-chain")
        #expect(
            try outcome(chain(intermediate: .notCertificateAuthority, batch: nil, batchUsage: signs))
                == "certificate-chain")
        // A non-CA batch certificate whose key may not sign, or that carries a Key Description itself
        // (an attested key signing a leaf of its own making: the chain extension attack).
        #expect(
            try outcome(chain(intermediate: ca, batch: nil, batchUsage: KeyUsage(keyEncipherment: true)))
                == "certificate-chain")
        #expect(
            try outcome(chain(intermediate: ca, batch: nil, batchUsage: signs, batchDescription: true))
                == "certificate-chain")
    }

    /// A certificate of `subject` for `key`, issued by `issuer` with `signer`, valid around `now`.
    static func certificate(
        _ subject: String, key: Certificate.PublicKey, issuer: String, signer: Certificate.PrivateKey,
        authority: BasicConstraints?, usage: KeyUsage?, keyDescription: [UInt8]? = nil, now: Date
    ) throws -> Certificate {
        try Certificate(
            version: .v3, serialNumber: .init(), publicKey: key, notValidBefore: now - 86_400,
            notValidAfter: now + 86_400 * 365, issuer: try DistinguishedName { CommonName(issuer) },
            subject: try DistinguishedName { CommonName(subject) },
            extensions: try Certificate.Extensions {
                if let authority { Critical(authority) }
                if let usage { Critical(usage) }
                if let keyDescription {
                    Certificate.Extension(oid: KeyDescription.oid, critical: false, value: keyDescription[...])
                }
            },
            issuerPrivateKey: signer)
    }

    @Test(
        "the status list file is read again when it changes (looked at once a minute): a serial listed later is refused without a restart; a file that stops reading keeps the list before"
    )
    func statusFile() throws {
        let authority = try TestAndroidAuthority()
        let key = P256.Signing.PrivateKey().publicKey
        let chain = try authority.chain(for: key, .init(challenge: Self.challenge))
        let path = NSTemporaryDirectory() + "sigil-status-\(UUID().uuidString).json"
        defer { try? FileManager.default.removeItem(atPath: path) }
        func write(_ text: String, modified: Date) throws {
            try Data(text.utf8).write(to: URL(fileURLWithPath: path))
            try FileManager.default.setAttributes([.modificationDate: modified], ofItemAtPath: path)
        }
        let start = Int64(authority.now.timeIntervalSince1970)
        try write(#"{"entries":{"2c8cdddfd5e03bfc":{"status":"REVOKED"}}}"#, modified: authority.now)
        var verifier = AndroidKeyEnrollmentVerifier(
            policy: AndroidAttestationPolicy(apps: [TestAndroidAuthority.app]), roots: [authority.anchor])
        let file = try AttestationStatusFile(path: path, now: start)
        verifier.statusFile = file
        func outcome(at time: Int64) -> String {
            do {
                _ = try verifier.attestedKey(chain: chain, challenge: Self.challenge, at: time)
                return "accepted"
            } catch let error as SigilError {
                return error.detail
            } catch {
                return "\(error)"
            }
        }
        #expect(outcome(at: start) == "accepted")
        // The device's attestation key is revoked; the operator's download lands.
        let serial = try Certificate(derEncoded: chain[1]).serialNumber.bytes.map { String(format: "%02x", $0) }
        try write(
            #"{"entries":{"\#(serial.joined())":{"status":"REVOKED","reason":"KEY_COMPROMISE"}}}"#,
            modified: authority.now + 10)
        #expect(outcome(at: start + 30) == "accepted")
        #expect(outcome(at: start + 61).contains("certificate-revoked"))
        // A download cut short: the list read before stands, and the file says why.
        try write("{\"entries\":", modified: authority.now + 20)
        #expect(outcome(at: start + 200).contains("certificate-revoked"))
        #expect(file.lastError != nil)
        #expect(throws: AndroidAttestationError.self) { try AttestationStatusFile(path: path + ".missing", now: start) }
    }

    @Test(
        "malformed Key Descriptions are refused without a crash: truncated, wrong tags, lengths past the end, deep nesting"
    )
    func malformed() throws {
        let good = try TestAndroidAuthority.keyDescription(.init(challenge: Self.challenge))
        #expect(throws: Never.self) { try KeyDescription(derEncoded: good[...]) }
        var inputs: [[UInt8]] = []
        for cut in stride(from: 0, to: good.count, by: 7) { inputs.append(Array(good[..<cut])) }
        var wrongTag = good
        wrongTag[0] = 0x31
        inputs.append(wrongTag)
        // The outer length one byte past the end.
        #expect(good[1] == 0x82)
        var pastEnd = good
        let length = (Int(good[2]) << 8 | Int(good[3])) + 1
        pastEnd[2] = UInt8(length >> 8)
        pastEnd[3] = UInt8(length & 0xFF)
        inputs.append(pastEnd)
        inputs.append(good + [0x00])
        // 10,000 nested SEQUENCEs.
        var nested: [UInt8] = []
        for _ in 0..<10_000 {
            nested = [0x30, 0x84] + withUnsafeBytes(of: UInt32(nested.count).bigEndian, Array.init) + nested
        }
        inputs.append(nested)
        // Each field of the top SEQUENCE in the wrong type: its first byte flipped to another tag.
        guard case .constructed(let fields) = try DER.parse(good).content else { return }
        var offset = 4
        for field in fields {
            var changed = good
            changed[offset] = changed[offset] == 0x04 ? 0x02 : 0x04
            inputs.append(changed)
            offset += field.encodedBytes.count
        }
        #expect(offset == good.count)
        for (index, input) in inputs.enumerated() {
            #expect(throws: AndroidAttestationError.self, "\(index)") { try KeyDescription(derEncoded: input[...]) }
        }
        // A tag given twice, a list of 65 tags.
        var twice = TestAndroidAuthority.Fields(challenge: Self.challenge)
        twice.extraHardwareTags = [(999, [0x05, 0x00]), (999, [0x05, 0x00])]
        #expect(throws: AndroidAttestationError.self) {
            try KeyDescription(derEncoded: try TestAndroidAuthority.keyDescription(twice)[...])
        }
        var many = TestAndroidAuthority.Fields(challenge: Self.challenge)
        many.extraHardwareTags = (2000..<2060).map { (UInt($0), [0x05, 0x00]) }
        #expect(throws: AndroidAttestationError.self) {
            try KeyDescription(derEncoded: try TestAndroidAuthority.keyDescription(many)[...])
        }
    }
}

/// An RSA public key for a certificate (the key an attestation of `RSA` would carry).
enum RSATestKey {
    static func make() throws -> Certificate.PublicKey {
        let key = try SigningKey.generate(.rsaV15SHA256, formats: KeyFormats([RSAKeyFormat(generatedKeySize: 2048)]))
        return try Certificate.PublicKey(pemEncoded: try #require(KeyFile.publicKeyFile(for: try key.verificationKey)))
    }
}
