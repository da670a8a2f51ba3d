import Crypto
import Foundation
@_spi(Sigil) import SigilCore
import SigilFiles
import SigilStandalone
import SigilTLS
import Testing
import X509

@testable import SigilTestSupport

/// Every option of every command that reads a secret file (a key, a token, a password) refuses one
/// its group or others may read or write, naming the fix, and takes it at mode 0600.
@Suite("Secret files others may read are refused")
struct SecretFileTests {
    /// What a command did with a secret file.
    enum Outcome: Equatable, CustomStringConvertible {
        /// It started (printed its banner) or finished with status 0.
        case accepted
        /// It stopped for another reason than the file's permissions (its store or server is not there).
        case failedLater
        /// It refused the file, naming `chmod 600` and the file.
        case refused
        /// Anything else, with its stderr.
        case other(String)

        var description: String {
            switch self {
            case .accepted: "accepted"
            case .failedLater: "failed later"
            case .refused: "refused"
            case .other(let error): "other: \(error)"
            }
        }
    }

    /// Runs `sigil arguments` until it prints a server's banner (then stops it) or exits, and says
    /// what it did with `file` (whose contents must not appear in its output).
    static func run(
        _ arguments: [String], file: String, contents: String, environment: [String: String] = [:],
        input: [UInt8] = []
    ) async throws -> Outcome {
        let (started, status, printed) = try await withCheckedThrowingContinuation { continuation in
            Thread {
                continuation.resume(with: Result { try launch(arguments, environment: environment, input: input) })
            }.start()
        }
        let secret = contents.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(!printed.contains(secret), "the secret was printed")
        let output = printed.replacingOccurrences(of: secret, with: "<the secret>")
        if started || status == 0 { return .accepted }
        if output.contains("run chmod 600 \(file)") { return .refused }
        if !output.contains("chmod") && !output.contains(file) { return .failedLater }
        return .other(output)
    }

    /// Runs the command: whether it printed a banner, its exit status, and its stdout and stderr.
    static func launch(_ arguments: [String], environment: [String: String], input: [UInt8]) throws -> (
        Bool, Int32, String
    ) {
        var merged = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        merged["LOG_LEVEL"] = "critical"
        let process = try ChildProcess(SigilCommand.executable.path, arguments, environment: merged)
        process.send(input)
        var output = ""
        while !output.contains("enroll this machine") {
            let data = process.output.availableChunk
            guard !data.isEmpty else { break }
            output += String(decoding: data, as: UTF8.self)
        }
        let started = output.contains("enroll this machine")
        if started { process.terminate() }
        let (rest, error, status) = process.finish()
        return (started, status, output + String(decoding: rest + error, as: UTF8.self))
    }

    /// One secret-file option: the file it reads, the command line that reads it from `path`, and
    /// what the command does once the file is taken.
    struct Case: Sendable, CustomTestStringConvertible, CustomStringConvertible {
        let name: String
        let contents: [UInt8]
        let arguments: @Sendable (_ path: String, _ scratch: String) -> [String]
        var environment: [String: String] = [:]
        var input: [UInt8] = []
        var whenTaken = Outcome.accepted

        // The option's name only: the test's output never shows the secret.
        var testDescription: String { name }
        var description: String { name }
    }

    static func cases(_ directory: String) throws -> [Case] {
        let made = try Certificates.selfSignedServer(names: ["localhost", "127.0.0.1"])
        let certificate = directory + "/server-cert.pem"
        try SecureFile.write(made.certificatePEM, to: certificate, mode: 0o644)
        let signingKey = P256.Signing.PrivateKey()
        let device = directory + "/device.pem"
        try SecureFile.write(signingKey.pemRepresentation, to: device)
        let p12 = try PKCS12.bundle(
            privateKeyDER: Array(try P256.Signing.PrivateKey(pemRepresentation: made.keyPEM).derRepresentation),
            certificatesDER: [Array(try Certificate(pemEncoded: made.certificatePEM).serializeAsDER())],
            password: "p12 password", iterations: 2048)
        let caData = directory + "/ca-data"
        _ = try DataDirectory(path: caData).createCertificateAuthority()
        let pins = [1, 2].flatMap { ["--pin", "sha256/" + Base64.encode([UInt8](repeating: $0, count: 32))] }
        let postgres = "postgres://sigil@127.0.0.1:1/sigil?sslmode=disable"
        let serve: @Sendable (String) -> [String] = { scratch in ["serve", "--data-dir", scratch, "--port", "0"] }
        let base64Secret = Array(Base64.encode([UInt8](repeating: 7, count: 32)).utf8)
        let token = Array("operator-token-0123456789-abcdefghijklmnop".utf8)
        return [
            Case(
                name: "serve --jwt-secret", contents: base64Secret,
                arguments: { serve($1) + ["--jwt-secret", $0, "--jwt-audience", "api", "--jwt-issuer", "idp"] }),
            Case(
                name: "gateway --upstream-secret-file", contents: Array("upstream-secret-0123456789".utf8),
                arguments: {
                    ["gateway", "--data-dir", $1, "--port", "0", "--upstream", "http://127.0.0.1:9"]
                        + ["--upstream-secret-file", $0]
                }),
            Case(
                name: "serve --admin-token-file", contents: token,
                arguments: { serve($1) + ["--admin-port", "0", "--admin-token-file", $0] }),
            Case(
                name: "serve --app-attest-debug-token", contents: token,
                arguments: { serve($1) + ["--app-id", "TEAMID1234.com.example.app", "--app-attest-debug-token", $0] }),
            Case(
                name: "serve --key (TLS)", contents: Array(made.keyPEM.utf8),
                arguments: { serve($1) + ["--cert", certificate, "--key", $0] }),
            Case(
                name: "serve --store-password-file", contents: Array("pg-password-0123".utf8),
                arguments: {
                    serve($1) + ["--store", postgres, "--store-timeout", "500", "--store-password-file", $0]
                },
                whenTaken: .failedLater),
            Case(
                name: "serve --nonces-password-file", contents: Array("redis-password-0123".utf8),
                arguments: {
                    serve($1) + ["--nonces", "redis://127.0.0.1:1", "--store-timeout", "500"]
                        + ["--nonces-password-file", $0]
                },
                whenTaken: .failedLater),
            Case(
                name: "admin --store-password-file", contents: Array("pg-password-0123".utf8),
                arguments: {
                    ["admin", "devices", "--data-dir", $1, "--store", postgres, "--store-password-file", $0]
                },
                whenTaken: .failedLater),
            Case(
                name: "sign --key", contents: Array(signingKey.pemRepresentation.utf8),
                arguments: { path, _ in ["sign", "--key", path, "--headers-only"] }, input: Self.request),
            Case(
                name: "sign --key (an HMAC secret)", contents: base64Secret,
                arguments: { path, _ in ["sign", "--key", path, "--key-id", "hmac-1", "--headers-only"] },
                input: Self.request),
            Case(
                name: "csr --key", contents: Array(signingKey.pemRepresentation.utf8),
                arguments: { path, _ in ["csr", "--key", path] }),
            Case(
                name: "ca issue --key", contents: Array(signingKey.pemRepresentation.utf8),
                arguments: { path, _ in ["ca", "issue", "--data-dir", caData, "--key", path] }),
            Case(
                name: "enroll --key", contents: Array(signingKey.pemRepresentation.utf8),
                arguments: { path, scratch in
                    ["enroll", "https://127.0.0.1:1", "--token", "t-0123456789abcdef", "--key", path] + pins
                        + ["--identity", "secret-file-test-" + URL(fileURLWithPath: scratch).lastPathComponent]
                },
                environment: ["HOME": directory], whenTaken: .failedLater),
            Case(
                name: "curl --token @FILE", contents: Array("access-token-0123456789".utf8),
                arguments: { path, _ in
                    ["curl", "--key", device, "--dpop", "--token", "@" + path, "https://127.0.0.1:1/"]
                },
                environment: ["HOME": directory], whenTaken: .failedLater),
            Case(
                name: "curl --cert-key", contents: Array(made.keyPEM.utf8),
                arguments: { path, _ in
                    ["curl", "--key", device, "--cert", certificate, "--cert-key", path, "https://127.0.0.1:1/"]
                },
                environment: ["HOME": directory], whenTaken: .failedLater),
            Case(
                name: "curl --p12", contents: p12,
                arguments: { path, _ in ["curl", "--key", device, "--p12", path, "https://127.0.0.1:1/"] },
                environment: ["HOME": directory, "SIGIL_P12_PASSWORD": "p12 password"], whenTaken: .failedLater),
        ]
    }

    @Test(
        "each secret-file option: refused at 0644 (and 0660, 0604) with `chmod 600 FILE` named and nothing of the file printed; taken at 0600",
        arguments: try SecretFileTests.cases(SecretFileTests.fixtures)
    )
    func secretFileOption(_ option: Case) async throws {
        let scratch = TestServer.temporaryDirectory()
        let path = scratch + "-secret"
        let text = String(decoding: option.contents, as: UTF8.self)
        for mode in [0o644, 0o660, 0o604] {
            try SecureFile.write(option.contents, to: path, mode: mode)
            let outcome = try await Self.run(
                option.arguments(path, scratch), file: path, contents: text, environment: option.environment,
                input: option.input)
            #expect(outcome == .refused, "\(option.name) at \(String(mode, radix: 8)): \(outcome)")
        }
        try SecureFile.write(option.contents, to: path, mode: 0o600)
        let outcome = try await Self.run(
            option.arguments(path, scratch), file: path, contents: text, environment: option.environment,
            input: option.input)
        #expect(outcome == option.whenTaken, "\(option.name) at 600: \(outcome)")
    }

    /// Where the cases' shared files are made, once.
    static let fixtures: String = {
        let path = TestServer.temporaryDirectory()
        try? SecureFile.createDirectory(path)
        return path
    }()

    @Test(
        "a symlink to a secret others may read is refused naming its target; to a 0600 one, taken; a public key others may read is no secret"
    )
    func symlinksAndPublicKeys() async throws {
        let directory = TestServer.temporaryDirectory()
        try SecureFile.createDirectory(directory)
        let key = P256.Signing.PrivateKey()
        let target = directory + "/real-key.pem"
        let link = directory + "/link.pem"
        try SecureFile.write(key.pemRepresentation, to: target, mode: 0o644)
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: target)
        let refused = try await SigilCommand.run(["sign", "--key", link, "--headers-only"])
        #expect(refused.status == 2)
        #expect(refused.error.contains("\(link) is a link to \(target)"), "\(refused.error)")
        #expect(refused.error.contains("run chmod 600 \(target)"), "\(refused.error)")
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: target)
        let signed = try await SigilCommand.run(["sign", "--key", link, "--headers-only"], input: Self.request)
        #expect(signed.status == 0, "\(signed.error)")
        // The public half, 0644, verifies what the private key signed.
        let publicKey = directory + "/public.pem"
        try SecureFile.write(key.publicKey.pemRepresentation, to: publicKey, mode: 0o644)
        let full = try await SigilCommand.run(["sign", "--key", link], input: Self.request)
        let verified = try await SigilCommand.run(
            ["verify", "--key", publicKey, "--alg", "ecdsa-p256-sha256"], input: full.output)
        #expect(verified.status == 0, "\(verified.error)")
    }

    static let request = Array("GET /v1/items HTTP/1.1\r\nHost: api.example.com\r\n\r\n".utf8)
}
