import Foundation
@_spi(Sigil) import SigilCore
import SigilSQLite
import SigilServer
import SigilStandalone
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Issue 30, "the first day, tried as a new operator would": a key is never replaced by accident,
/// `--version`, an http:// URL and one port for two listeners said as such, SIGHUP survived, and
/// `sigil admin`'s text outputs telling the same times the same way.
@Suite("The first day of an operator")
struct FirstDayTests {
    /// An ISO 8601 time in UTC, to the second.
    static let isoTime = #"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ"#

    @Test("keygen keeps a file that exists: refused, naming it, exit 2, nothing written; --force replaces it")
    func keygenKeepsAKey() async throws {
        let directory = try SigilCommand.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let key = directory.appendingPathComponent("device.pem").path
        let first = try await SigilCommand.run(["keygen", "--alg", "ed25519", "--out", key])
        #expect(first.status == 0, "\(first.error)")
        let kept = try Data(contentsOf: URL(fileURLWithPath: key))

        for alg in ["ed25519", "x-wing"] {
            let again = try await SigilCommand.run(["keygen", "--alg", alg, "--out", key])
            #expect(again.status == 2)
            #expect(again.error.contains("\(key) exists already"), "\(again.error)")
            #expect(again.error.contains("--force"), "\(again.error)")
            #expect(again.output.isEmpty)
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: key)) == kept)

        // A public key file that exists stops it before the private key is written.
        let publicKey = directory.appendingPathComponent("device.pub").path
        try Data("kept\n".utf8).write(to: URL(fileURLWithPath: publicKey))
        let fresh = directory.appendingPathComponent("fresh.pem").path
        let refused = try await SigilCommand.run(
            ["keygen", "--alg", "ed25519", "--out", fresh, "--public-out", publicKey])
        #expect(refused.status == 2)
        #expect(refused.error.contains("\(publicKey) exists already"), "\(refused.error)")
        #expect(!FileManager.default.fileExists(atPath: fresh))

        let forced = try await SigilCommand.run(["keygen", "--alg", "ed25519", "--out", key, "--force"])
        #expect(forced.status == 0, "\(forced.error)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: key)) != kept)
    }

    @Test("sigil --version prints the version of CHANGELOG.md's newest release")
    func version() async throws {
        let result = try await SigilCommand.run(["--version"])
        #expect(result.status == 0, "\(result.error)")
        let changelog = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("CHANGELOG.md")
        let text = try String(contentsOf: changelog, encoding: .utf8)
        let heading = try #require(text.split(separator: "\n").first { $0.hasPrefix("## ") })
        let version = heading.dropFirst(3).prefix { !$0.isWhitespace }
        #expect(!version.isEmpty)
        #expect(result.text == "\(version)\n")
    }

    @Test("enroll and curl refuse an http:// URL as such, before pins, without repeating it: exit 2")
    func httpIsRefused() async throws {
        let home = ["HOME": try SigilCommand.temporaryDirectory().path]
        let url = "http://ops:hunter2-secret@127.0.0.1:8443"
        for arguments in [
            ["enroll", url, "--token", "a-token-0123456789"],
            ["enroll", url, "--token", "a-token-0123456789", "--pin", PinningTests.otherPin],
            ["curl", url + "/v1/echo"],
        ] {
            let result = try await SigilCommand.run(arguments, environment: home)
            #expect(result.status == 2)
            #expect(result.error.contains("https is required"), "\(arguments): \(result.error)")
            #expect(!result.error.contains("pin"), "\(result.error)")
            #expect(!result.error.contains("hunter2"), "\(result.error)")
        }
    }

    @Test("--admin-port equal to --port is refused before anything is made or listens, for serve and gateway")
    func adminPortDiffers() async throws {
        let directory = try SigilCommand.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let data = directory.appendingPathComponent("data").path
        let token = directory.appendingPathComponent("admin-token").path
        for command in [["serve"], ["gateway", "--upstream", "http://127.0.0.1:9"]] {
            for host in [[], ["--host", "0.0.0.0"]] {
                let result = try await SigilCommand.run(
                    command + host + [
                        "--data-dir", data, "--port", "9443", "--admin-port", "9443", "--admin-token-file", token,
                    ],
                    environment: ["LOG_LEVEL": "error"])
                #expect(result.status == 2)
                #expect(
                    result.error.contains("--admin-port and --port must differ (both are 9443)"),
                    "\(command): \(result.error)")
                #expect(!result.error.contains("another"), "\(result.error)")
            }
        }
        #expect(!FileManager.default.fileExists(atPath: data))
    }
}
