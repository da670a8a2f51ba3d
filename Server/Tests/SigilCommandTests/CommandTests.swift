import Foundation
@_spi(Sigil) import SigilCore
import SigilFiles
import Testing

@testable import SigilTestSupport

@Suite("The sigil command", .serialized)
struct CommandTests {
    static let request = Array(
        "POST /v1/echo?b=2&a=1 HTTP/1.1\r\nHost: api.example.com\r\nContent-Type: application/json\r\n\r\n{\"b\":1,\"a\":2}"
            .utf8
    )

    @Test(
        "keygen, sign | verify round trips",
        arguments: [
            ("ecdsa-p256-sha256", "sigil-v1"), ("ed25519", "rfc9421"), ("ml-dsa-65", "sigil-v1"),
            ("hmac-sha256", "rfc9421"),
        ]
    )
    func roundTrip(_ algorithm: String, _ profile: String) async throws {
        let directory = try SigilCommand.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let keyPath = directory.appendingPathComponent("key.pem").path
        let keygen = try await SigilCommand.run(["keygen", "--alg", algorithm, "--out", keyPath])
        #expect(keygen.status == 0)
        let summary = try #require(try JSONSerialization.jsonObject(with: Data(keygen.output)) as? [String: String])
        #expect(summary["alg"] == algorithm)
        let keyID = try #require(summary["keyId"])
        let permissions = try FileManager.default.attributesOfItem(atPath: keyPath)[.posixPermissions] as? Int
        #expect(permissions == 0o600)
        let keyArguments = ["--key", keyPath, "--key-id", keyID]
        let signed = try await SigilCommand.run(["sign", "--profile", profile] + keyArguments, input: Self.request)
        #expect(signed.status == 0)
        let verified = try await SigilCommand.run(["verify"] + keyArguments, input: signed.output)
        #expect(verified.status == 0)
        #expect(verified.text == "valid key-id=\(keyID) alg=\(algorithm)\n")
        // Tampered body: exit 1 with the code.
        let tampered = Array(signed.text.replacingOccurrences(of: "\"a\":2", with: "\"a\":3").utf8)
        let refused = try await SigilCommand.run(["verify"] + keyArguments, input: tampered)
        #expect(refused.status == 1)
        #expect(
            refused.text.hasPrefix(profile == "rfc9421" ? "invalid digest-mismatch: " : "invalid invalid-signature: "))
        // The base of a signed message.
        let base = try await SigilCommand.run(["base"], input: signed.output)
        #expect(base.status == 0)
        #expect(base.text.contains(profile == "rfc9421" ? "\"@signature-params\": " : "POST\n/v1/echo?a=1&b=2\n"))
    }

    @Test("a command mistyped is named with the nearest one (sigil enrol said \"2 unexpected arguments\")")
    func mistypedCommand() async throws {
        let enrol = try await SigilCommand.run(["enrol", "https://localhost:8443", "--token", "t"])
        #expect(enrol.status == 2)
        #expect(enrol.error == "sigil: no command 'enrol'; did you mean 'sigil enroll'?\n", "\(enrol.error)")
        let far = try await SigilCommand.run(["\u{1B}[31mserver"])
        #expect(far.status == 2 && far.error.contains("sigil --help lists them") && !far.error.contains("\u{1B}"))
    }

    @Test func vectorsVerifyFromTheCommandLine() async throws {
        let vector = try #require(Vectors.cases("sigil-v1-requests.json").first { $0.name == "ed25519-post-json" })
        let keyPath = Vectors.directory.appendingPathComponent("keys/ed25519.pub.pem").path
        let message = Array((vector["message"]?.string ?? "").utf8)
        let now = String(vector["now"]?.int ?? 0)
        let valid = try await SigilCommand.run(["verify", "--key", keyPath, "--now", now], input: message)
        #expect(valid.text == "valid key-id=543ab1204f012699 alg=ed25519\n")
        let late = try await SigilCommand.run(
            ["verify", "--key", keyPath, "--now", String((vector["now"]?.int ?? 0) + 301)], input: message)
        #expect(late.status == 1)
        #expect(late.text.hasPrefix("invalid timestamp-out-of-window: "))
    }

    @Test func deterministicSigningFromTheCommandLine() async throws {
        let vector = try #require(Vectors.cases("sigil-v1-requests.json").first { $0.name == "hmac-sha256-post-json" })
        let message = try RawHTTPMessage(parsing: Array((vector["message"]?.string ?? "").utf8))
        let unsigned = RawHTTPMessage(
            startLine: message.startLine,
            headers: message.headers.filter { !$0.name.hasPrefix("X-") },
            body: message.body
        )
        let nonce = message.headers.first { $0.name == "X-Nonce" }?.value ?? ""
        let signed = try await SigilCommand.run(
            [
                "sign", "--key", try Vectors.privateKeyCopy("hmac-sha256.key"), "--key-id",
                "hmac-test-key-1", "--timestamp", String(vector["now"]?.int ?? 0), "--nonce", nonce,
            ],
            input: unsigned.serialized
        )
        #expect(signed.text == vector["message"]?.string)
    }

    @Test(
        "unusable input exits 2 with one line",
        arguments: [
            (["verify", "--key", "/nonexistent/key.pem"], "GET / HTTP/1.1\r\n\r\n"),
            (["verify", "--key", "KEY"], "garbage"),
            (["verify", "--key", "KEY"], "GET / HTTP/1.1\r\nHost: a"),
            (["sign", "--key", "KEY", "--alg", "ed25519"], "GET / HTTP/1.1\r\n\r\n"),
            (["sign", "--key", "KEY", "--nonce", "bad"], "GET / HTTP/1.1\r\n\r\n"),
            (["keygen", "--alg", "rsa-sha1"], ""),
            (["verify"], ""),
            (["frobnicate"], ""),
            (["pin", "--cert", "KEY"], ""),
        ]
    )
    func unusableInput(_ arguments: [String], _ input: String) async throws {
        let keyPath = try Vectors.privateKeyCopy("ecdsa-p256.pem")
        let result = try await SigilCommand.run(arguments.map { $0 == "KEY" ? keyPath : $0 }, input: Array(input.utf8))
        #expect(result.status == 2)
        #expect(result.error.hasPrefix("sigil: "))
        #expect(result.error.filter { $0 == "\n" }.count == 1)
        #expect(!result.error.contains("BEGIN"))
    }

    @Test("keygen --alg x-wing: the seed 0600, the public key, and discovery's entry on one line")
    func sealingKeygen() async throws {
        let directory = try SigilCommand.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let (keyPath, publicPath) = (
            directory.appendingPathComponent("x.pem").path, directory.appendingPathComponent("x.pub").path
        )
        let result = try await SigilCommand.run([
            "keygen", "--alg", "x-wing", "--out", keyPath, "--public-out", publicPath,
        ])
        #expect(result.status == 0)
        let entry = try JSONDecoder().decode(Registration.Discovery.SealingKey.self, from: Data(result.output))
        let key = try Sealing.privateKey(pem: try String(contentsOfFile: keyPath, encoding: .utf8))
        #expect(entry.keyId == key.keyID)
        #expect(try entry.key() == key.publicKey)
        #expect(try Sealing.publicKey(pem: try String(contentsOfFile: publicPath, encoding: .utf8)) == key.publicKey)
        let mode = try FileManager.default.attributesOfItem(atPath: keyPath)[.posixPermissions] as? Int
        #expect(mode == 0o600)
    }

    @Test func pinOfACertificate() async throws {
        let directory = try SigilCommand.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let certificate = TestPaths.tests.appendingPathComponent("Fixtures/certificates/localhost.pem").path
        let result = try await SigilCommand.run(["pin", "--cert", certificate])
        #expect(result.status == 0)
        let expected = try String(
            contentsOf: URL(fileURLWithPath: certificate).deletingPathExtension().appendingPathExtension("pin"),
            encoding: .utf8
        )
        #expect(result.text == expected)
    }
}
