import ArgumentParser
import Crypto
import Foundation
import SigilAppAttest
@_spi(Sigil) import SigilCore

/// `sigil attest verify-attestation | verify-assertion`: App Attest evidence checked by hand, as the
/// server checks it, from the JSON shape of the shared vectors or from flags.
struct Attest: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract:
            "Verify App Attest attestations and assertions, and Android Key Attestation chains; prints the facts as JSON.",
        discussion: "Exit 0 and the facts; exit 1 and 'invalid CODE: detail'; exit 2 on unusable input.",
        subcommands: [VerifyAttestation.self, VerifyAssertion.self, VerifyAndroidKey.self]
    )

    /// What both subcommands read: a vector (a file of the shape of appattest.json, one vector or the
    /// whole file with --vector) and flags that override its fields.
    struct Input: ParsableArguments {
        @Argument(help: "A JSON file of the shape of appattest.json (or - for standard input); flags override it.")
        var file: String?

        @Option(name: .long, help: "The vector's id, when the file holds several.")
        var vector: String?

        @Option(name: .customLong("app-id"), help: "An accepted App ID, TEAMID.bundle.id (repeatable).")
        var appID: [String] = []

        @Option(name: .long, help: "The accepted environment: production or development (repeatable).")
        var environment: [String] = []

        @Option(name: .long, help: "The attestation or assertion object, base64.")
        var object: String?

        @Option(name: .long, help: "The time to verify at, ISO 8601 (default: now).")
        var time: String?

        func loadVector() throws -> [String: Any] { try Attest.loadVector(file: file, id: vector) }

        func verifier(_ vector: [String: Any]) throws -> AppAttestVerifier {
            let appIDs = appID.isEmpty ? [vector["appId"] as? String].compactMap { $0 } : appID
            guard !appIDs.isEmpty else { throw SigilInputError("give --app-id TEAMID.bundle.id") }
            let names = environment.isEmpty ? [vector["environment"] as? String ?? "production"] : environment
            let environments = try names.map { name in
                guard let environment = AppAttestVerifier.Environment(rawValue: name) else {
                    throw SigilInputError("an environment is production or development")
                }
                return environment
            }
            return AppAttestVerifier(appIDs: appIDs, environments: Set(environments))
        }

        func date(_ vector: [String: Any]) throws -> Date {
            guard let text = time ?? vector["verifyAt"] as? String else { return Date() }
            guard let date = AppAttestReceipt.date(text) else { throw SigilInputError("--time is not ISO 8601") }
            return date
        }
    }

    /// The vector `id` names in `file` (`-`: standard input), or the file's only one, or the file itself
    /// when it holds no `vectors`; an empty object without a file.
    static func loadVector(file: String?, id: String?) throws -> [String: Any] {
        guard let file else { return [:] }
        let bytes = file == "-" ? try IO.readStandardInput() : try IO.readFile(file)
        guard let json = try? JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any] else {
            throw SigilInputError("\(file) is not a JSON object")
        }
        guard let vectors = json["vectors"] as? [[String: Any]] else { return json }
        guard
            let chosen = vectors.first(where: { $0["id"] as? String == id })
                ?? (vectors.count == 1 ? vectors.first : nil)
        else {
            throw SigilInputError(
                "name one of the file's vectors with --vector: \(vectors.compactMap { $0["id"] as? String })")
        }
        return chosen
    }

    static func base64(_ value: Any?, _ what: String) throws -> [UInt8] {
        guard let text = value as? String, let bytes = Base64.decode(text) else {
            throw SigilInputError("\(what) is missing or not base64")
        }
        return bytes
    }

    /// Prints `facts` as one JSON line, or `invalid CODE: detail` and exit 1.
    static func report(_ body: () async throws -> [String: Any]) async throws {
        do {
            let facts = try await body()
            let data = try JSONSerialization.data(
                withJSONObject: facts, options: [.sortedKeys, .withoutEscapingSlashes])
            IO.write(Array(data) + [0x0A])
        } catch let error as AppAttestError {
            print("invalid \(error.code): \(error.detail)")
            throw ExitStatus(code: 1)
        }
    }

    static func iso(_ date: Date) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.string(from: date)
    }

    struct VerifyAttestation: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "verify-attestation",
            abstract: "Verify an attestation object: chain, nonce, key ID, App ID, counter, environment, credential ID."
        )

        @OptionGroup var input: Input

        @Option(name: .customLong("key-id"), help: "The key ID the app sent, base64.")
        var keyID: String?

        @Option(name: .long, help: "The server's challenge (UTF-8); clientDataHash = SHA-256 of it.")
        var challenge: String?

        @Option(name: .customLong("client-data-hash"), help: "Or the clientDataHash the app passed, base64.")
        var clientDataHash: String?

        func run() async throws {
            let vector = try input.loadVector()
            let fields = vector["attestation"] as? [String: Any] ?? vector
            let object = try Attest.base64(input.object ?? fields["attestationObjectBase64"], "the attestation object")
            let keyID = try Attest.base64(keyID ?? fields["keyIdBase64"], "the key ID")
            // The flags first, then the vector's hash (as the app passed it), then its challenge.
            let hash: [UInt8]
            if let challenge {
                hash = Array(SHA256.hash(data: Array(challenge.utf8)))
            } else if let given = clientDataHash ?? fields["clientDataHashSha256Base64"]
                ?? fields["clientDataHashBase64"]
            {
                hash = try Attest.base64(given, "--client-data-hash")
            } else if let challenge = fields["challengeUtf8"] as? String {
                hash = Array(SHA256.hash(data: Array(challenge.utf8)))
            } else {
                throw SigilInputError("give the challenge: --challenge TEXT or --client-data-hash BASE64")
            }
            let verifier = try input.verifier(vector)
            let time = try input.date(fields.merging(vector) { own, _ in own })
            try await Attest.report {
                let verified = try await verifier.verifyAttestation(
                    object, keyID: keyID, clientDataHash: hash, at: time)
                var facts: [String: Any] = [
                    "keyId": Base64.encode(verified.keyID),
                    "publicKey": verified.publicKey.pemRepresentation,
                    "publicKeyX963Hex": Hex.encode(Array(verified.publicKey.x963Representation)),
                    "counter": verified.counter, "environment": verified.environment.rawValue,
                    "appId": verified.appID, "notBefore": Attest.iso(verified.notBefore),
                    "notAfter": Attest.iso(verified.notAfter), "receiptLength": verified.receipt.count,
                ]
                do {
                    let receipt = try await verifier.verifyReceipt(of: verified, at: time)
                    facts["receipt"] = Attest.facts(receipt)
                } catch let error as AppAttestError {
                    facts["receiptError"] = "\(error.code): \(error.detail)"
                }
                return facts
            }
        }
    }

    static func facts(_ receipt: AppAttestReceipt) -> [String: Any] {
        var facts: [String: Any] = [
            "appId": receipt.appID, "type": receipt.type, "creationTime": iso(receipt.creationTime),
            "expirationTime": iso(receipt.expirationTime), "clientHashBase64": Base64.encode(receipt.clientHash),
            "token": receipt.token,
        ]
        facts["environment"] = receipt.environment
        facts["riskMetric"] = receipt.riskMetric
        facts["notBefore"] = receipt.notBefore.map(iso)
        return facts
    }

    struct VerifyAssertion: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "verify-assertion",
            abstract: "Verify an assertion: signature by the attested key, App ID, counter above the stored one.")

        @OptionGroup var input: Input

        @Option(name: .customLong("public-key"), help: "The attested key, a PEM file.")
        var publicKey: String?

        @Option(name: .customLong("client-data"), help: "The client data the app asserted, base64.")
        var clientData: String?

        @Option(name: .customLong("previous-counter"), help: "The counter stored for the key.")
        var previousCounter: UInt32?

        func run() async throws {
            let vector = try input.loadVector()
            let fields = vector["assertion"] as? [String: Any] ?? vector
            let attestation = vector["attestation"] as? [String: Any] ?? [:]
            let object = try Attest.base64(input.object ?? fields["assertionObjectBase64"], "the assertion object")
            let data = try Attest.base64(clientData ?? fields["clientDataBase64"], "the client data")
            let pem =
                try publicKey.map { String(decoding: try IO.readFile($0), as: UTF8.self) }
                ?? attestation["publicKeyPem"] as? String
            guard let pem, let key = try? P256.Signing.PublicKey(pemRepresentation: pem) else {
                throw SigilInputError("give the attested key: --public-key FILE (P-256 PEM)")
            }
            let previous = previousCounter ?? (fields["previousCounter"] as? NSNumber)?.uint32Value ?? 0
            let verifier = try input.verifier(vector)
            try await Attest.report {
                let verified = try verifier.verifyAssertion(
                    object, clientData: data, publicKey: key, previousCounter: previous)
                return ["counter": verified.counter, "appId": verified.appID]
            }
        }
    }
}
