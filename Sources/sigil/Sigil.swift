import ArgumentParser
import Foundation
import SigilCore
import SigilFiles
import SigilRSA

/// The `sigil` command (PROTOCOL.md section 5).
@main
struct Sigil: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sigil",
        abstract: "Sign and verify HTTP requests; keys, pins, a protected server and benchmarks.",
        subcommands: [
            Keygen.self, Sign.self, Verify.self, Base.self, Pin.self, Serve.self, Gateway.self, CA.self, Enroll.self,
            Curl.self, PushSecret.self, Attest.self,
            Bench.self,
        ]
    )

    /// Exit codes: 0 valid or done, 1 invalid (verify), 2 unusable input or arguments. One line, no traces.
    static func main() async {
        do {
            var command = try parseAsRoot()
            if var asyncCommand = command as? AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch let exit as ExitStatus {
            Foundation.exit(exit.code)
        } catch {
            if exitCode(for: error) == .success {
                print(fullMessage(for: error))
                Foundation.exit(0)
            }
            let message = Self.message(for: error).split(separator: "\n").first.map(String.init) ?? "\(error)"
            FileHandle.standardError.write(Data("sigil: \(message)\n".utf8))
            Foundation.exit(2)
        }
    }
}

/// Ends the command with a status after it printed its own result.
struct ExitStatus: Error {
    let code: Int32
}

enum IO {
    static func readStandardInput() throws -> [UInt8] {
        let data = FileHandle.standardInput.readDataToEndOfFile()
        guard data.count <= RawHTTPMessage.maximumSize else { throw SigilInputError("input is larger than 64 MiB") }
        return Array(data)
    }

    static func readFile(_ path: String) throws -> [UInt8] {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw SigilInputError("cannot read \(path)")
        }
        return Array(data)
    }

    static func write(_ bytes: [UInt8]) { FileHandle.standardOutput.write(Data(bytes)) }

    /// Writes a file with owner-only permissions, all or nothing (a temporary file renamed into place).
    static func writeSecret(_ text: String, to path: String, mode: Int = 0o600) throws {
        try SecureFile.write(text, to: path, mode: mode)
    }
}

struct KeyOptions: ParsableArguments {
    @Option(name: .long, help: "A private key, public key or HMAC secret file.")
    var key: String

    @Option(name: .long, help: "The algorithm the key is registered for.")
    var alg: String?

    @Option(
        name: .customLong("key-id"), help: "The key ID (default: derived from the public key; required for a secret).")
    var keyID: String?

    func load() throws -> (LoadedKey, String) {
        let algorithm = try alg.map { name in
            guard let algorithm = SignatureAlgorithm(rawValue: name) else {
                throw SigilInputError("unknown algorithm '\(name.prefix(40))'")
            }
            return algorithm
        }
        let loaded = try KeyFile.load(try IO.readFile(key), algorithm: algorithm, formats: .withRSA)
        guard let id = keyID ?? loaded.verificationKey.derivedKeyID else {
            throw SigilInputError("--key-id is required with an HMAC secret")
        }
        guard KeyID.isValid(id) else { throw SigilInputError("--key-id must match [A-Za-z0-9._~-]{1,128}") }
        return (loaded, id)
    }
}

extension SignatureProfile: ExpressibleByArgument {}
