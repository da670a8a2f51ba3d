import Foundation
@_spi(Sigil) import SigilCore
import SigilSQLite
import SigilServer
import SigilStandalone
import Testing

@testable import SigilTestSupport

/// What users and devices supply cannot write lines of its own into operators' output.
@Suite("sigil admin output escapes what users and devices supply")
struct OperatorOutputTests {
    /// A user ID as an enrollment JWT's `sub` may carry it: a newline, then a whole audit line of its
    /// choosing (an operator's revocation of someone else), a terminal escape and non-ASCII text.
    static let forgedUser =
        "mallory\n2026-11-25T10:00:00Z revoked actor=operator:root device=dev-victim reason=\"stolen\"\u{1B}[2Jé"
    /// The same, escaped as `sigil admin` prints it: one field, in quotes since it holds spaces.
    static let escapedUser =
        #""mallory\n2026-11-25T10:00:00Z revoked actor=operator:root device=dev-victim reason=\"stolen\"\u{1b}[2J\u{e9}""#

    @Test(
        "a user ID holding a newline and a forged audit line: `sigil admin audit` and `sigil admin devices` print one line per row, the ID escaped, slashes as they are"
    )
    func forgedLinesStayInTheirField() async throws {
        let directory = try SigilCommand.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let (data, store) = try await ServerProcess.startedOnce(in: directory)
        // Two devices registered as a registration writes them (the store `sigil admin` reads).
        let now = SystemUnixClock().now()
        for (device, user) in [("dev-victim", "victim"), ("dev-mallory", Self.forgedUser)] {
            let key = try TestDevice(.ed25519)
            try await store.apply(
                DirectoryChange(
                    added: [
                        RegisteredKey(
                            keyID: key.keyID, key: try key.key.verificationKey, deviceID: device, userID: user)
                    ],
                    audit: [
                        AuditEntry(
                            time: now, action: .registered, deviceID: device, keyID: key.keyID, userID: user,
                            actor: key.keyID, clientAddress: "127.0.0.1")
                    ]))
        }
        try await store.close()
        let revoke = try await SigilCommand.run([
            "admin", "revoke", "--device", "dev-mallory", "--reason", "lost/stolen", "--as", "ops", "--data-dir", data,
        ])
        #expect(revoke.status == 0, "\(revoke.error)")

        let audit = try await SigilCommand.run(["admin", "audit", "--data-dir", data])
        #expect(audit.status == 0, "\(audit.error)")
        let auditLines = audit.text.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
        #expect(auditLines.count == 3, "\(audit.text)")  // two registrations, one revocation
        #expect(auditLines.map { $0.split(separator: " ")[1] } == ["registered", "registered", "revoked"])
        #expect(auditLines.filter { $0.contains("user=\(Self.escapedUser)") }.count == 2)
        #expect(auditLines.last?.hasSuffix(#"reason="lost/stolen""#) == true)  // no "\/"
        #expect(auditLines.last?.contains("actor=operator:ops device=dev-mallory") == true)
        #expect(!audit.text.contains("\u{1B}") && !audit.text.contains("é"))

        let devices = try await SigilCommand.run(["admin", "devices", "--data-dir", data])
        #expect(devices.status == 0, "\(devices.error)")
        let deviceLines = devices.text.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
        #expect(deviceLines.count == 2, "\(devices.text)")
        #expect(deviceLines.first?.hasPrefix("dev-mallory user=\(Self.escapedUser) revoked ") == true)
        #expect(deviceLines.last?.hasPrefix("dev-victim user=victim active ") == true)
        #expect(!devices.text.contains("\u{1B}"))

        // The JSON Lines keep the ID as it is (JSON escapes it), one line a device.
        let json = try await SigilCommand.run(["admin", "devices", "--json", "--data-dir", data])
        let records = try json.text.split(separator: "\n").map {
            try JSONDecoder().decode(DeviceRecord.self, from: Data($0.utf8))
        }
        #expect(records.map(\.userID) == [Self.forgedUser, "victim"])
    }

    @Test("OperatorText.escaped: control characters, quotes, backslashes and non-ASCII made visible; / kept")
    func escaping() {
        #expect(OperatorText.escaped("dev-1") == "dev-1")
        #expect(OperatorText.escaped("a/b") == "a/b")
        #expect(OperatorText.escaped("a\nb\r\t\"\\") == #"a\nb\r\t\"\\"#)
        #expect(OperatorText.escaped("\u{1B}[31m\u{7F}\u{202E}é") == #"\u{1b}[31m\u{7f}\u{202e}\u{e9}"#)
        #expect(OperatorText.escaped("two words") == #""two words""#)
        #expect(OperatorText.escaped("") == #""""#)
        #expect(OperatorText.escaped("lost", quoting: .always) == #""lost""#)
        #expect(OperatorText.escaped("user a\nb", quoting: .never) == #"user a\nb"#)
    }
}
