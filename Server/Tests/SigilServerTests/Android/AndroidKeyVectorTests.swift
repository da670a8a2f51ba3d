import Crypto
import Foundation
import SigilAndroidAttestation
@_spi(Sigil) import SigilCore
import SwiftASN1
import Testing
import X509

@testable import SigilTestSupport

/// Real Android Key Attestation chains captured on devices (`Vectors/android-key.json`), each verified
/// at its `verifyAt` with its challenge; then each single change, refused with its own code.
@Suite("Android Key Attestation vectors")
struct AndroidKeyVectorTests {
    static let file = Vectors.file("android-key.json")
    static let vectors = Vectors.cases("android-key.json", "vectors")

    static func chain(_ vector: VectorCase) throws -> [[UInt8]] {
        try vector["chainPem"]?.array.map { pem in try PEMDocument(pemString: pem.string ?? "").derBytes } ?? []
    }

    static func time(_ vector: VectorCase) throws -> Date {
        let text = try #require(vector["verifyAt"]?.string)
        return try #require(ISO8601DateFormatter().date(from: text))
    }

    static func challenge(_ vector: VectorCase) throws -> [UInt8] {
        let data = try #require(vector["challengeBase64"]?.string.flatMap { Data(base64Encoded: $0) })
        return [UInt8](data)
    }

    static func verify(
        _ vector: VectorCase, chain: [[UInt8]]? = nil, challenge: [UInt8]? = nil, at time: Date? = nil,
        statusList: AttestationStatusList? = nil, roots: [GoogleAttestationRoots.Root] = GoogleAttestationRoots.hardware
    ) throws -> AndroidKeyAttestation {
        try AndroidKeyAttestation.verify(
            chain: try chain ?? Self.chain(vector), challenge: try challenge ?? Self.challenge(vector),
            at: try time ?? Self.time(vector), statusList: statusList, roots: roots)
    }

    /// The code `body` is refused with, or `"accepted"`.
    static func outcome(_ body: () throws -> Void) -> String {
        do {
            try body()
            return "accepted"
        } catch let error as AndroidAttestationError {
            return error.code.rawValue
        } catch {
            return "\(error)"
        }
    }

    @Test("the built-in roots are the vectors' trusted roots; the AOSP software roots are not among them")
    func roots() throws {
        let fingerprints = try GoogleAttestationRoots.hardware.map {
            var serializer = DER.Serializer()
            try serializer.serialize($0.certificate)
            return Hex.encode(Array(SHA256.hash(data: serializer.serializedBytes)))
        }
        let trusted = Self.file["roots"]?.array.compactMap { $0["sha256Fingerprint"]?.string } ?? []
        #expect(trusted.count == 5 && fingerprints == trusted)
        #expect(
            GoogleAttestationRoots.hardware.map(\.name) == Self.file["roots"]?.array.compactMap { $0["name"]?.string })
        for untrusted in Self.file["untrustedRoots"]?.array ?? [] {
            #expect(!fingerprints.contains(try #require(untrusted["sha256Fingerprint"]?.string)))
        }
    }

    @Test("each chain verifies at its time with its challenge, and says what the vector expects", arguments: vectors)
    func facts(_ vector: VectorCase) throws {
        #expect(vector["expectedVerdict"]?.string == "valid")
        let expected = try #require(vector["expected"])
        let attestation = try Self.verify(vector)
        let description = attestation.keyDescription
        #expect(Int64(description.attestationVersion) == expected["attestationVersion"]?.int)
        #expect(description.attestationSecurityLevel.description == expected["attestationSecurityLevel"]?.string)
        #expect(Int64(description.keyMintVersion) == expected["keymasterVersion"]?.int)
        #expect(description.keyMintSecurityLevel.description == expected["keymasterSecurityLevel"]?.string)
        #expect(description.either(\.algorithm) == 3 && expected["algorithm"]?.string == "EC")
        #expect(description.either(\.ecCurve) == 1 && expected["ecCurve"]?.string == "P-256")
        #expect(description.either(\.keySize).map(Int64.init) == expected["keySize"]?.int)
        let purposes = ["ENCRYPT", "DECRYPT", "SIGN", "VERIFY", "?", "WRAP_KEY", "AGREE_KEY", "ATTEST_KEY"]
        #expect(
            description.either(\.purposes)?.map { purposes[$0] } == expected["purposes"]?.array.compactMap(\.string))
        let digests = ["NONE", "MD5", "SHA1", "SHA_2_224", "SHA_2_256", "SHA_2_384", "SHA_2_512"]
        #expect(description.either(\.digests)?.map { digests[$0] } == expected["digests"]?.array.compactMap(\.string))
        #expect(description.either(\.origin) == 0 && expected["origin"]?.string == "GENERATED")
        let root = try #require(description.hardwareEnforced.rootOfTrust)
        #expect(root.verifiedBootState.description == expected["verifiedBootState"]?.string)
        #expect(root.deviceLocked == expected["deviceLocked"]?.bool)
        #expect(Hex.encode(root.verifiedBootKey) == expected["verifiedBootKeyHex"]?.string)
        #expect(root.verifiedBootHash.map(Hex.encode) == expected["verifiedBootHashHex"]?.string)
        #expect(description.either(\.osVersion).map(Int64.init) == expected["osVersion"]?.int)
        #expect(description.either(\.osPatchLevel).map(Int64.init) == expected["osPatchLevel"]?.int)
        #expect(description.either(\.vendorPatchLevel).map(Int64.init) == expected["vendorPatchLevel"]?.int)
        #expect(description.either(\.bootPatchLevel).map(Int64.init) == expected["bootPatchLevel"]?.int)
        #expect(description.either(\.creationDateTime) == expected["creationDateTime"]?.int)
        #expect(Hex.encode(description.uniqueID) == expected["uniqueIdHex"]?.string)
        let application = try #require(description.either(\.attestationApplicationID))
        #expect(application.packages.map(\.name) == expected["packageNames"]?.array.compactMap(\.string))
        #expect(
            application.packages.map { Int64($0.version) } == expected["packageVersions"]?.array.compactMap(\.int))
        #expect(
            application.signatureDigests.map(Hex.encode) == expected["signatureDigestsHex"]?.array.compactMap(\.string))
        #expect(attestation.root.name == expected["rootName"]?.string)
        let publicKey = try P256.Signing.PublicKey(pemRepresentation: try #require(expected["publicKeyPem"]?.string))
        #expect(P256.Signing.PublicKey(attestation.publicKey)?.rawRepresentation == publicKey.rawRepresentation)
    }

    @Test("each single change is refused with its own code", arguments: vectors)
    func changes(_ vector: VectorCase) throws {
        let chain = try Self.chain(vector)
        let time = try Self.time(vector)
        #expect(Self.outcome { _ = try Self.verify(vector) } == "accepted")
        #expect(Self.outcome { _ = try Self.verify(vector, challenge: Array("another".utf8)) } == "challenge-mismatch")
        let leaf = try Certificate(derEncoded: chain[0])
        #expect(
            Self.outcome { _ = try Self.verify(vector, at: leaf.notValidAfter.addingTimeInterval(1)) }
                == "certificate-expired")
        #expect(
            Self.outcome { _ = try Self.verify(vector, at: leaf.notValidBefore.addingTimeInterval(-1)) }
                == "certificate-expired")
        // A flipped byte anywhere in any certificate: it no longer parses, or no longer links.
        for index in chain.indices {
            for offset in stride(from: 4, to: chain[index].count, by: max(1, chain[index].count / 23)) {
                var changed = chain
                changed[index][offset] ^= 0x01
                let code = Self.outcome { _ = try Self.verify(vector, chain: changed) }
                #expect(
                    ["malformed", "certificate-chain", "untrusted-root"].contains(code),
                    "certificate \(index) byte \(offset): \(code)")
            }
        }
        // Cut short (an intermediate left out), re-ordered, the leaf left out, the root alone.
        var cut = chain
        cut.remove(at: 1)
        #expect(Self.outcome { _ = try Self.verify(vector, chain: cut) } == "certificate-chain")
        var reordered = chain
        reordered.swapAt(1, 2)
        #expect(Self.outcome { _ = try Self.verify(vector, chain: reordered) } == "certificate-chain")
        #expect(
            Self.outcome { _ = try Self.verify(vector, chain: Array(chain.dropFirst())) } == "key-description-missing")
        #expect(Self.outcome { _ = try Self.verify(vector, chain: [chain[chain.count - 1]]) } == "certificate-chain")
        // The chain without its root still ends at it (signed by its key).
        #expect(Self.outcome { _ = try Self.verify(vector, chain: Array(chain.dropLast())) } == "accepted")
        // Another root: trusting only the AOSP software roots, or every root but this chain's.
        // (swift-certificates does not read the AOSP EC root's key; the RSA one is enough here.)
        let software = (Self.file["untrustedRoots"]?.array ?? []).compactMap { root in
            (try? Certificate(pemEncoded: root["pem"]?.string ?? "")).map {
                GoogleAttestationRoots.Root(name: root["name"]?.string ?? "", certificate: $0)
            }
        }
        #expect(!software.isEmpty)
        #expect(Self.outcome { _ = try Self.verify(vector, roots: software) } == "untrusted-root")
        let own = try Self.verify(vector).root.certificate.publicKey
        let others = GoogleAttestationRoots.hardware.filter { $0.certificate.publicKey != own }
        #expect(Self.outcome { _ = try Self.verify(vector, roots: others) } == "untrusted-root")
        // A revoked serial in the status list, for each certificate.
        for index in chain.indices.dropLast() {
            let serial = try Certificate(derEncoded: chain[index]).serialNumber.bytes.map { String(format: "%02X", $0) }
            let list = try AttestationStatusList(
                json: Data(
                    #"{"entries":{"00\#(serial.joined())":{"status":"REVOKED","reason":"KEY_COMPROMISE"}}}"#.utf8))
            #expect(
                Self.outcome { _ = try Self.verify(vector, statusList: list) } == "certificate-revoked", "\(index)")
        }
        let unrelated = try AttestationStatusList(
            json: Data(#"{"entries":{"2c8cdddfd5e03bfc":{"status":"REVOKED"}}}"#.utf8))
        #expect(Self.outcome { _ = try Self.verify(vector, statusList: unrelated) } == "accepted")
        _ = time
    }

    @Test("the policy: the unlocked development device is refused for its boot; the Pixel passes for its own app only")
    func policy() throws {
        let byID = Dictionary(uniqueKeysWithValues: Self.vectors.map { ($0.name, $0) })
        let development = try Self.verify(try #require(byID["gaka-2019-dev-tee-ec-factory"]))
        var policy = AndroidAttestationPolicy(apps: [])
        #expect(Self.outcome { try policy.check(development) } == "boot-state")
        policy.acceptedBootStates = [.verified, .unverified]
        #expect(Self.outcome { try policy.check(development) } == "device-unlocked")
        policy.requiresLockedDevice = false
        #expect(Self.outcome { try policy.check(development) } == "app-not-allowed")

        let pixel = try Self.verify(try #require(byID["ka-pixel9a-tee-ec-rkp-ecroot"]))
        let app = try #require(
            AndroidAttestationPolicy.App(
                "com.google.android.attestation:103938ee4537e59e8ee792f654504fb8346fc6b346d0bbc4415fc339fcfc8ec1"))
        var strict = AndroidAttestationPolicy(apps: [app])
        #expect(Self.outcome { try strict.check(pixel) } == "accepted")
        strict.minimumPatchLevel = 202602
        #expect(Self.outcome { try strict.check(pixel) } == "accepted")
        strict.minimumPatchLevel = 202603
        #expect(Self.outcome { try strict.check(pixel) } == "patch-level")
        strict.minimumPatchLevel = nil
        strict.minimumSecurityLevel = .strongBox
        #expect(Self.outcome { try strict.check(pixel) } == "security-level")
        for other in [
            "com.google.android.attestation:" + String(repeating: "00", count: 32),
            "com.example.other:103938ee4537e59e8ee792f654504fb8346fc6b346d0bbc4415fc339fcfc8ec1",
        ] {
            let refused = AndroidAttestationPolicy(apps: [try #require(AndroidAttestationPolicy.App(other))])
            #expect(Self.outcome { try refused.check(pixel) } == "app-not-allowed")
        }
        #expect(AndroidAttestationPolicy.App("no-digest") == nil)
        #expect(AndroidAttestationPolicy.App("a:1234") == nil)
    }
}

@Suite("sigil attest verify-android-key")
struct AndroidKeyCommandTests {
    static let file = Vectors.directory.appendingPathComponent("android-key.json").path

    @Test(
        "the vectors' facts as JSON (exit 0); a policy flag or another challenge: invalid CODE (exit 1); no chain (exit 2)"
    )
    func command() async throws {
        let pixel = try await SigilCommand.run([
            "attest", "verify-android-key", Self.file, "--vector", "ka-pixel9a-tee-ec-rkp-ecroot",
        ])
        #expect(pixel.status == 0, "\(pixel.error)")
        let facts = try #require(try JSONSerialization.jsonObject(with: Data(pixel.output)) as? [String: Any])
        #expect(facts["attestationSecurityLevel"] as? String == "TrustedEnvironment")
        #expect(facts["rootName"] as? String == "google-key-attestation-ca1-ec-p384")
        #expect(facts["verifiedBootState"] as? String == "Verified" && facts["deviceLocked"] as? Bool == true)
        #expect(facts["packageNames"] as? [String] == ["com.google.android.attestation"])
        #expect(facts["purposes"] as? [String] == ["SIGN", "VERIFY"] && facts["ecCurve"] as? String == "P-256")

        // The unlocked development device verifies, and says so, unless a flag asks for a locked one.
        let development = ["attest", "verify-android-key", Self.file, "--vector", "gaka-2019-dev-tee-ec-factory"]
        let unlocked = try await SigilCommand.run(development)
        #expect(unlocked.status == 0, "\(unlocked.error)")
        #expect(
            unlocked.text.contains(#""deviceLocked":false"#)
                && unlocked.text.contains(#""verifiedBootState":"Unverified""#))
        let locked = try await SigilCommand.run(development + ["--require-locked"])
        #expect(locked.status == 1 && locked.text.hasPrefix("invalid boot-state: "), "\(locked.text)")
        let another = try await SigilCommand.run(development + ["--challenge", "b3RoZXI="])
        #expect(another.status == 1 && another.text.hasPrefix("invalid challenge-mismatch: "), "\(another.text)")
        let app = try await SigilCommand.run(
            development + ["--app", "com.example.app:" + String(repeating: "00", count: 32)])
        #expect(app.status == 1 && app.text.hasPrefix("invalid "), "\(app.text)")
        let none = try await SigilCommand.run(["attest", "verify-android-key", "--challenge", "YWJj"])
        #expect(none.status == 2, "\(none.text)")
    }

    @Test("--chain FILE.pem with --challenge and --at verifies as the vector does; a PEM block cut short is exit 2")
    func chainFile() async throws {
        let json = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: Self.file))) as? [String: Any])
        let vectors = try #require(json["vectors"] as? [[String: Any]])
        let vector = try #require(vectors.first { $0["id"] as? String == "ka-pixel9a-tee-ec-rkp-ecroot" })
        let pem = try #require(vector["chainPem"] as? [String]).joined(separator: "\n")
        let flags = [
            "--challenge", try #require(vector["challengeBase64"] as? String),
            "--at", try #require(vector["verifyAt"] as? String),
        ]
        let path = TestServer.temporaryDirectory() + ".pem"
        try Data(pem.utf8).write(to: URL(fileURLWithPath: path))
        let whole = try await SigilCommand.run(["attest", "verify-android-key", "--chain", path] + flags)
        #expect(whole.status == 0, "\(whole.error)")
        #expect(whole.text.contains(#""rootName":"google-key-attestation-ca1-ec-p384""#), "\(whole.text)")

        let lastEnd = try #require(pem.range(of: "-----END CERTIFICATE-----", options: .backwards))
        let cut = String(pem[..<lastEnd.lowerBound])
        try Data(cut.utf8).write(to: URL(fileURLWithPath: path))
        let short = try await SigilCommand.run(["attest", "verify-android-key", "--chain", path] + flags)
        #expect(short.status == 2 && short.error.contains("no END line"), "\(short.error)")
    }
}
