import ArgumentParser
import Crypto
import Foundation
import SigilAndroidAttestation
@_spi(Sigil) import SigilCore
import X509

extension Attest {
    /// `sigil attest verify-android-key`: an Android Key Attestation chain checked by hand (chain,
    /// Google's root, challenge, Key Description, status list), its facts printed as JSON; the server's
    /// policy applies only where a flag asks for it.
    struct VerifyAndroidKey: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "verify-android-key",
            abstract:
                "Verify an Android Key Attestation chain: signatures, Google's root, validity, challenge, status list.",
            discussion: """
                Reads a file of the shape of android-key.json (one vector, or --vector ID) or --chain and \
                --challenge. A genuine chain from an unlocked development device verifies (its facts say \
                so) unless --require-locked asks otherwise.
                """
        )

        @Argument(help: "A JSON file of the shape of android-key.json (or - for standard input); flags override it.")
        var file: String?

        @Option(name: .long, help: "The vector's id, when the file holds several.")
        var vector: String?

        @Option(name: .long, help: "The chain: a PEM file of certificates, leaf first.")
        var chain: String?

        @Option(name: .long, help: "The challenge the server issued, base64.")
        var challenge: String?

        @Option(name: .long, help: "The time to verify at, ISO 8601 (default: the vector's verifyAt, else now).")
        var at: String?

        @Option(name: .long, help: "Google's attestation status list (JSON) to refuse revoked certificates.")
        var status: String?

        @Option(name: .long, help: "An allowed app, PACKAGE:SHA256 of its signing certificate (repeatable).")
        var app: [String] = []

        @Option(name: .customLong("security-level"), help: "Require at least tee or strongbox.")
        var securityLevel: String?

        @Flag(name: .customLong("require-locked"), help: "Require a Verified boot and a locked bootloader.")
        var requireLocked = false

        func run() async throws {
            let fields = try Attest.loadVector(file: file, id: vector)
            let pem =
                try chain.map { String(decoding: try IO.readFile($0), as: UTF8.self) }
                ?? (fields["chainPem"] as? [String] ?? []).joined(separator: "\n")
            guard pem.contains("-----BEGIN") else {
                throw SigilInputError("give the chain: --chain FILE.pem or a vector file")
            }
            let ders = try PEM.certificates(pem)
            guard let challengeText = challenge ?? fields["challengeBase64"] as? String,
                let issued = Base64.decode(challengeText)
            else { throw SigilInputError("give the challenge: --challenge BASE64") }
            let time: Date
            if let text = at ?? fields["verifyAt"] as? String {
                guard let date = ISO8601DateFormatter().date(from: text) else {
                    throw SigilInputError("--at is not ISO 8601 (2026-02-24T00:56:04Z)")
                }
                time = date
            } else {
                time = Date()
            }
            let statusList = try status.map { try AttestationStatusList(json: Data(try IO.readFile($0))) }
            let policy = try policy()
            do {
                let attestation = try AndroidKeyAttestation.verify(
                    chain: ders, challenge: issued, at: time, statusList: statusList)
                try policy?.check(attestation)
                let data = try JSONSerialization.data(
                    withJSONObject: Self.facts(attestation), options: [.sortedKeys, .withoutEscapingSlashes])
                IO.write(Array(data) + [0x0A])
            } catch let error as AndroidAttestationError {
                print("invalid \(error.code): \(error.detail)")
                throw ExitStatus(code: 1)
            }
        }

        /// The policy the flags ask for, if any: only the rules named apply.
        func policy() throws -> AndroidAttestationPolicy? {
            guard !app.isEmpty || securityLevel != nil || requireLocked else { return nil }
            var policy = AndroidAttestationPolicy(apps: [])
            policy.acceptedBootStates = Set(RootOfTrust.BootState.allCases)
            policy.requiresLockedDevice = false
            policy.apps = try app.map { text in
                guard let app = AndroidAttestationPolicy.App(text) else {
                    throw SigilInputError("--app is PACKAGE:SHA256 (64 hex digits)")
                }
                return app
            }
            policy.checksApp = !app.isEmpty
            guard let level = KeyDescription.SecurityLevel(flag: securityLevel ?? "tee") else {
                throw SigilInputError("--security-level is tee or strongbox")
            }
            policy.minimumSecurityLevel = level
            if requireLocked {
                policy.acceptedBootStates = [.verified]
                policy.requiresLockedDevice = true
            }
            return policy
        }

        static let purposeNames = [
            0: "ENCRYPT", 1: "DECRYPT", 2: "SIGN", 3: "VERIFY", 5: "WRAP_KEY", 6: "AGREE_KEY", 7: "ATTEST_KEY",
        ]
        static let digestNames = [
            0: "NONE", 1: "MD5", 2: "SHA1", 3: "SHA_2_224", 4: "SHA_2_256", 5: "SHA_2_384", 6: "SHA_2_512",
        ]
        static let curveNames = [0: "P-224", 1: "P-256", 2: "P-384", 3: "P-521", 4: "CURVE_25519"]
        static let algorithmNames = [1: "RSA", 3: "EC", 32: "AES", 33: "3DES", 128: "HMAC"]
        static let originNames = [0: "GENERATED", 1: "DERIVED", 2: "IMPORTED", 3: "RESERVED", 4: "SECURELY_IMPORTED"]

        /// The facts, named as android-key.json names them (hardwareEnforced first, then softwareEnforced).
        static func facts(_ attestation: AndroidKeyAttestation) -> [String: Any] {
            let description = attestation.keyDescription
            var facts: [String: Any] = [
                "attestationVersion": description.attestationVersion,
                "attestationSecurityLevel": description.attestationSecurityLevel.description,
                "keymasterVersion": description.keyMintVersion,
                "keymasterSecurityLevel": description.keyMintSecurityLevel.description,
                "uniqueIdHex": Hex.encode(description.uniqueID),
                "rootName": attestation.root.name,
                "publicKeyPem": ((try? attestation.publicKey.serializeAsPEM().pemString) ?? "") + "\n",
            ]
            facts["algorithm"] = description.either(\.algorithm).map { algorithmNames[$0] ?? "\($0)" }
            facts["ecCurve"] = description.either(\.ecCurve).map { curveNames[$0] ?? "\($0)" }
            facts["keySize"] = description.either(\.keySize)
            facts["purposes"] = description.either(\.purposes)?.map { purposeNames[$0] ?? "\($0)" }
            facts["digests"] = description.either(\.digests)?.map { digestNames[$0] ?? "\($0)" }
            facts["origin"] = description.either(\.origin).map { originNames[$0] ?? "\($0)" }
            if let root = description.hardwareEnforced.rootOfTrust ?? description.softwareEnforced.rootOfTrust {
                facts["verifiedBootState"] = root.verifiedBootState.description
                facts["deviceLocked"] = root.deviceLocked
                facts["verifiedBootKeyHex"] = Hex.encode(root.verifiedBootKey)
                facts["verifiedBootHashHex"] = root.verifiedBootHash.map(Hex.encode)
            }
            facts["osVersion"] = description.either(\.osVersion)
            facts["osPatchLevel"] = description.either(\.osPatchLevel)
            facts["vendorPatchLevel"] = description.either(\.vendorPatchLevel)
            facts["bootPatchLevel"] = description.either(\.bootPatchLevel)
            facts["creationDateTime"] = description.either(\.creationDateTime)
            if let application = description.either(\.attestationApplicationID) {
                facts["packageNames"] = application.packages.map(\.name)
                facts["packageVersions"] = application.packages.map(\.version)
                facts["signatureDigestsHex"] = application.signatureDigests.map(Hex.encode)
            }
            return facts
        }
    }
}

extension KeyDescription.SecurityLevel {
    /// The level a `--security-level` or `--android-security-level` flag names: `tee` or `strongbox`.
    init?(flag: String) {
        switch flag.lowercased() {
        case "tee": self = .trustedEnvironment
        case "strongbox": self = .strongBox
        default: return nil
        }
    }
}
