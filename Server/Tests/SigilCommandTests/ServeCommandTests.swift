import AsyncHTTPClient
import Foundation
import HTTPTypes
import NIOSSL
@_spi(Sigil) import SigilCore
import Testing

@testable import SigilTestSupport

/// `sigil serve` as a user starts it: banner, pin, enrollment with `keygen` and `sign --headers-only`,
/// graceful shutdown on SIGTERM.
@Suite("sigil serve command")
struct ServeCommandTests {
    @Test("starts, prints URL and pin, enrolls a device signed by hand, stops on SIGTERM")
    func serve() async throws {
        let directory = try SigilCommand.temporaryDirectory()
        let dataDirectory = directory.appendingPathComponent("data").path
        let server = try ServerProcess(dataDirectory: dataDirectory)
        let process = server.process
        let banner = server.banner
        let port = server.port
        let certificatePath = dataDirectory + "/tls-cert.pem"
        let pins = try SPKIPin.pins(certificatePEM: try String(contentsOfFile: certificatePath, encoding: .utf8))
        #expect(banner.contains("pin: \(pins[0])"))
        #expect(banner.contains("X25519MLKEM768 only"))
        // sigil pin against the live server prints the same pin as the certificate file.
        let live = try await SigilCommand.run(["pin", "127.0.0.1:\(port)"])
        #expect(live.status == 0, "\(live.error)")
        #expect(live.text == pins.map { $0 + "\n" }.joined())
        #expect(try await SigilCommand.run(["pin", "127.0.0.1:1"]).status == 2)
        #expect(try await SigilCommand.run(["pin", "no-port"]).status == 2)
        let mode = try FileManager.default.attributesOfItem(atPath: dataDirectory + "/master.key")[.posixPermissions]
        #expect(mode as? Int == 0o600)

        // The README's enrollment: keygen's JSON line is the body; sign --headers-only gives the headers.
        let keyPath = directory.appendingPathComponent("device.pem").path
        let keygen = try await SigilCommand.run(["keygen", "--alg", "ecdsa-p256-sha256", "--out", keyPath])
        let raw = Array(
            "POST /v1/devices HTTP/1.1\r\nHost: localhost:\(port)\r\nContent-Type: application/json\r\n\r\n".utf8)
        let signed = try await SigilCommand.run(
            ["sign", "--key", keyPath, "--headers-only"], input: raw + keygen.output)
        #expect(signed.status == 0, "\(signed.error)")
        var request = TestRequest(.post, "/v1/devices", port: port, body: keygen.output)
        request.head.headerFields[.contentType] = "application/json"
        request.head.headerFields[.authorization] = "Bearer \(TestServer.token)"
        for line in signed.text.split(separator: "\n") {
            let parts = line.split(separator: ":", maxSplits: 1)
            let name = try #require(HTTPField.Name(String(parts[0])))
            request.head.headerFields.append(.init(name: name, value: parts[1].trimmingCharacters(in: .whitespaces)))
        }
        let client = try TestServer.client(trusting: try NIOSSLCertificate.fromPEMFile(certificatePath))
        let response = try await client.using { try await request.send($0) }
        #expect(response.status == 201, "\(response.text)")
        let summary = try #require(try JSONSerialization.jsonObject(with: Data(keygen.output)) as? [String: String])
        #expect(response.json["keyId"] as? String == summary["keyId"])

        // sigil enroll, then sigil curl with the stored identity, its pins and its secret.
        let home = ["HOME": directory.appendingPathComponent("client-home").path]
        let backup = try #require(
            banner.split(separator: "\n").first { $0.contains("backup pin") }?.split(separator: " ").last.map(
                String.init))
        let enroll = try await SigilCommand.run(
            ["enroll", "https://localhost:\(port)", "--token", TestServer.token, "--pin", pins[0], "--pin", backup],
            environment: home)
        #expect(enroll.status == 0, "\(enroll.error)")
        #expect(enroll.text.hasPrefix("enrolled key-id="))
        let curl = try await SigilCommand.run(
            ["curl", "-v", "--json", #"{"hello":"world"}"#, "https://localhost:\(port)/v1/echo"], environment: home)
        #expect(curl.status == 0, "\(curl.error)")
        #expect(curl.text.contains(#""body":"{\"hello\":\"world\"}""#))
        #expect(curl.error.contains("signature verified"))
        #expect(curl.error.contains("pins matched"))
        let hmac = try await SigilCommand.run(
            ["curl", "--use-secret", "--profile", "rfc9421", "-d", "plain", "https://localhost:\(port)/v1/echo"],
            environment: home)
        #expect(hmac.status == 0, "\(hmac.error)")
        #expect(hmac.text.contains("hmac-sha256"))
        // --seal-secret: the device's X-Wing key registered, its secret sealed to it, opened and used.
        let sealed = try await SigilCommand.run(
            [
                "enroll", "https://localhost:\(port)", "--token", TestServer.token, "--pin", pins[0], "--pin", backup,
                "--identity", "sealed", "--seal-secret",
            ],
            environment: home)
        #expect(sealed.status == 0, "\(sealed.error)")
        #expect(sealed.text.contains("secret-sealed-to="))
        let sealedHMAC = try await SigilCommand.run(
            ["curl", "--identity", "sealed", "--use-secret", "-d", "plain", "https://localhost:\(port)/v1/echo"],
            environment: home)
        #expect(sealedHMAC.status == 0, "\(sealedHMAC.error)")
        #expect(sealedHMAC.text.contains("hmac-sha256"))
        // The default identity signs for the origin it enrolled with only: nothing is sent elsewhere
        // (sigil-v1 covers no authority, so another server could replay it here).
        let elsewhere = try await SigilCommand.run(
            ["curl", "--pin", pins[0], "--pin", backup, "-d", "x", "https://127.0.0.1:\(port)/v1/echo"],
            environment: home)
        #expect(elsewhere.status == 2)
        #expect(elsewhere.error.contains("signs for https://localhost:\(port) only"), "\(elsewhere.error)")
        // An identity name that is not one plain path component is refused before anything is written.
        for name in ["..", ".", ".hidden", "a/b"] {
            let walked = try await SigilCommand.run(
                [
                    "enroll", "https://localhost:\(port)", "--token", TestServer.token, "--pin", pins[0], "--pin",
                    backup, "--identity", name,
                ],
                environment: home)
            #expect(walked.status == 2, "\(name)")
        }
        let sigilHome = directory.appendingPathComponent("client-home/.sigil").path
        #expect(!FileManager.default.fileExists(atPath: sigilHome + "/device-key.pem"))
        #expect(!FileManager.default.fileExists(atPath: sigilHome + "/identity.json"))
        // A secret others can read is refused, as ssh refuses such a key.
        let secretPath = sigilHome + "/identities/sealed/secret"
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: secretPath)
        let exposed = try await SigilCommand.run(
            ["curl", "--identity", "sealed", "--use-secret", "-d", "plain", "https://localhost:\(port)/v1/echo"],
            environment: home)
        #expect(exposed.status == 2)
        #expect(exposed.error.contains("run chmod 600 \(secretPath)"), "\(exposed.error)")
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: secretPath)
        // A refusal: exit 1 and the server's code.
        let strangerPath = directory.appendingPathComponent("stranger.pem").path
        _ = try await SigilCommand.run(["keygen", "--alg", "ed25519", "--out", strangerPath])
        let unsigned = try await SigilCommand.run(
            [
                "curl", "--key", strangerPath, "-d", "x", "--pin", pins[0], "--pin", backup,
                "https://localhost:\(port)/v1/echo",
            ],
            environment: home)
        #expect(unsigned.status == 1)
        #expect(unsigned.error.contains("unknown-key"))
        // A body file that cannot be read is unusable input, not an empty body.
        let missing = try await SigilCommand.run(
            [
                "curl", "--data-binary", "@" + directory.appendingPathComponent("missing.json").path,
                "https://localhost:\(port)/v1/echo",
            ], environment: home)
        #expect(missing.status == 2)
        #expect(missing.error.contains("missing.json"))
        // A mismatched pin names what was expected and what was seen.
        let wrongPin = "sha256/" + Base64.encode([UInt8](repeating: 1, count: 32))
        let mismatch = try await SigilCommand.run(
            ["curl", "--pin", wrongPin, "--pin", backup, "https://localhost:\(port)/v1/echo"], environment: home)
        #expect(mismatch.status == 2)
        #expect(mismatch.error.contains(wrongPin) && mismatch.error.contains(pins[0]))

        process.terminate()
        #expect(process.waitUntilExit() == 0)
    }
}
