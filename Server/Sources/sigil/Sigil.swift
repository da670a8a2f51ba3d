import ArgumentParser
import Foundation
import Logging
import NIOCore
import SigilClient
@_spi(Sigil) import SigilCore
import SigilFiles
import SigilRSA
import SigilServer
import SigilStandalone
import SigilTLS

/// The `sigil` command (PROTOCOL.md section 5).
@main
struct Sigil: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sigil",
        abstract: "Sign and verify HTTP requests; keys, pins, a protected server and benchmarks.",
        version: Sigil.version,
        subcommands: [
            Keygen.self, Jwk.self, Sign.self, Verify.self, Base.self, Pin.self, Serve.self, Gateway.self, CA.self,
            Enroll.self,
            Curl.self, MakeCSR.self, PushSecret.self, Attest.self, Admin.self,
            Bench.self,
        ]
    )

    /// This build's version, `sigil --version`: CHANGELOG.md's newest release heading (a test holds
    /// them equal).
    static let version = "0.9.0"

    /// Exit codes: 0 valid or done, 1 invalid (verify), 2 unusable input or arguments. One line, no traces.
    static func main() async {
        // Lines as swift-log's stream handler writes them, metadata formatted only for a line written.
        LoggingSystem.bootstrap { DeferredMetadataLogHandler(label: $0) }
        if let unknown = unknownCommand(CommandLine.arguments.dropFirst().first) {
            FileHandle.standardError.write(Data("sigil: \(unknown)\n".utf8))
            Foundation.exit(2)
        }
        var parsed: (any ParsableCommand)?
        do {
            var command = try parseAsRoot()
            parsed = command
            if var asyncCommand = command as? AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch let exit as ExitStatus {
            Foundation.exit(exit.code)
        } catch {
            // A connection that failed is said as the connection's own error, which the advice reads.
            let error =
                (error as? SigilClientError).flatMap { $0.kind == .transport ? $0.underlying : nil } ?? error
            if exitCode(for: error) == .success {
                print(fullMessage(for: error))
                Foundation.exit(0)
            }
            var advice: String?
            if let parsed { advice = await ErrorAdvice.message(for: error, command: parsed) }
            let message =
                advice ?? Self.message(for: error).split(separator: "\n").first.map(String.init) ?? "\(error)"
            FileHandle.standardError.write(Data("sigil: \(message)\n".utf8))
            Foundation.exit(2)
        }
    }
}

extension Sigil {
    /// What to say when `word`, the first argument, names no command (`sigil enrol` said "2 unexpected
    /// arguments"), with the nearest command when one is a typo away; `nil` for a command or an option.
    static func unknownCommand(_ word: String?) -> String? {
        guard let word, !word.hasPrefix("-") else { return nil }
        let names = configuration.subcommands.map { $0._commandName } + ["help"]
        guard !names.contains(word) else { return nil }
        let nearest = names.map { (name: $0, distance: editDistance(Array(word.utf8), Array($0.utf8))) }
            .min { $0.distance < $1.distance }
        let shown = OperatorText.escaped(String(word.prefix(40)), quoting: .never)
        guard let nearest, nearest.distance <= 2 else {
            return "no command '\(shown)'; sigil --help lists them"
        }
        return "no command '\(shown)'; did you mean 'sigil \(nearest.name)'?"
    }

    /// Levenshtein distance of `a` and `b`.
    static func editDistance(_ a: [UInt8], _ b: [UInt8]) -> Int {
        var previous = Array(0...b.count)
        for (i, x) in a.enumerated() {
            var current = [i + 1]
            for (j, y) in b.enumerated() {
                current.append(min(previous[j + 1] + 1, current[j] + 1, previous[j] + (x == y ? 0 : 1)))
            }
            previous = current
        }
        return previous[b.count]
    }
}

/// What a failed command says when the error alone would not tell a person what to do: the port a
/// server could not listen on and the flag that changes it, the flags that give a client certificate.
enum ErrorAdvice {
    static func message(for error: any Error, command: any ParsableCommand) async -> String? {
        if let listening = (command as? Serve)?.server ?? (command as? Gateway)?.server,
            let advice = listenFailure(error, listening)
        {
            return advice
        }
        // `sigil pin HOST:PORT` could not read the chain: a handshake of its own says why.
        if let pin = command as? Pin, let server = pin.server, error is SigilInputError,
            let (host, port) = try? Pin.hostAndPort(server)
        {
            var probe = ClientTLS.configuration()
            probe.certificateVerification = .none
            if let problem = await ClientTLS.diagnose(host: host, port: port, configuration: probe) {
                return problem.description
            }
        }
        if let refusal = error as? SigilError, refusal.code == .timestampOutOfWindow {
            return "\(refusal) (this machine's clock is off, or the server has just restarted: it refuses requests "
                + "dated up to a couple of seconds after its previous run's last one; try again in a moment)"
        }
        guard let failure = error as? ConnectionError else { return nil }
        let enrolling = command is Enroll
        switch failure.reason {
        case .clientCertificateRequired:
            return "\(failure): give "
                + (enrolling
                    ? "--cert FILE --key FILE or --p12 FILE (the certificate's key is the one enrolled)"
                    : "--cert FILE --cert-key FILE or --p12 FILE")
                + "; `sigil ca issue` on the server's machine makes them"
        case .clientCertificateRefused:
            return "\(failure): the server takes certificates from the CA its --client-ca names"
        case .untrustedCertificate:
            return "\(failure): pin the server with --pin (twice: `sigil serve` prints its pin and backup pin), "
                + "or trust its CA with --cacert FILE"
        case .noCommonParameters:
            return "\(failure) (this client offers TLS 1.3 with X25519MLKEM768"
                + ((command as? Curl)?.pqOnly == true || (command as? Enroll)?.pqOnly == true
                    ? " only)" : " and X25519)")
        case .refused, .timedOut, .unresolved, .unreachable:
            return nil
        }
    }

    /// A server that could not listen: the address and port, and the flag that changes them (the
    /// admin API's too when it listens, as the error does not say which of the two it is).
    static func listenFailure(_ error: any Error, _ options: ServerOptions) -> String? {
        guard let error = error as? IOError else { return nil }
        let (host, port) = (options.host, options.port)
        let admin = options.adminPort.map { " (or the admin port \($0) on \(options.adminHost), --admin-port)" } ?? ""
        switch error.errnoCode {
        case EADDRINUSE:
            return "port \(port) on \(host)\(admin) is in use (another sigil serve or gateway?): stop what listens "
                + "there, or choose another port with --port"
        case EACCES:
            return "listening on port \(port)\(admin) needs privileges here: choose a port above 1023 with --port"
        case EADDRNOTAVAIL:
            return "\(host)\(options.adminPort == nil ? "" : " (or \(options.adminHost), --admin-host)") is not an "
                + "address of this machine: --host takes one of its own (127.0.0.1, or 0.0.0.0 for all)"
        default:
            return nil
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

    /// A key file that is a private key, an HMAC secret or a public key: a private key or a secret
    /// (or what does not read as a public key) is refused when its group or others may read or write
    /// it (``SecureFile/read(_:secretWhen:)``); a public key is not a secret.
    static func readKeyFile(_ path: String) throws -> [UInt8] {
        let bytes = try SecureFile.read(path) { contents in
            (try? KeyFile.load(contents, formats: .withRSA)).map { $0.signingKey != nil } ?? true
        }
        guard let bytes else { throw SigilInputError("cannot read \(path)") }
        return bytes
    }

    static func write(_ bytes: [UInt8]) { FileHandle.standardOutput.write(Data(bytes)) }

    /// Writes a file with owner-only permissions, all or nothing (a temporary file renamed into place).
    static func writeSecret(_ text: String, to path: String, mode: Int = 0o600) throws {
        try SecureFile.write(text, to: path, mode: mode)
    }
}

/// Text for a person to paste into a shell.
enum Shell {
    /// `text` as one shell word: as it is when it holds nothing a shell reads, else in single quotes.
    static func quoted(_ text: String) -> String {
        let plain =
            !text.isEmpty
            && text.utf8.allSatisfy { byte in
                switch byte {
                case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                    UInt8(ascii: "0")...UInt8(ascii: "9"):
                    return true
                default:
                    return "/._-+=:@%,".utf8.contains(byte)
                }
            }
        return plain ? text : "'" + text.replacingOccurrences(of: "'", with: #"'\''"#) + "'"
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
        let loaded = try KeyFile.load(try IO.readKeyFile(key), algorithm: algorithm, formats: .withRSA)
        guard let id = keyID ?? loaded.verificationKey.derivedKeyID else {
            throw SigilInputError("--key-id is required with an HMAC secret")
        }
        guard KeyID.isValid(id) else { throw SigilInputError("--key-id must match [A-Za-z0-9._~-]{1,128}") }
        return (loaded, id)
    }
}

extension SignatureProfile: ExpressibleByArgument {}
