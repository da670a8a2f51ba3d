import ArgumentParser
import Foundation
import SigilCore
import SigilServe
import SigilTLS
import X509

/// `sigil ca`: the built-in client certificate authority.
struct CA: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ca",
        abstract: "The client certificate authority of the data directory.",
        subcommands: [Init.self, Issue.self]
    )

    struct Init: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Create the client CA (ca-cert.pem, ca-key.pem) in the data directory.")

        @Option(name: .customLong("data-dir"), help: "The data directory (default: ~/.sigil).")
        var dataDirectory: String?

        func run() async throws {
            let data = try DataDirectory(path: dataDirectory ?? DataDirectory.defaultPath)
            let path = try data.createCertificateAuthority()
            print("client CA: \(path)")
            print("require client certificates with: sigil serve --client-ca \(path)")
        }
    }

    struct Issue: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Issue a client certificate for a CSR (the key ID is the CSR key's derived ID).")

        @Option(name: .customLong("data-dir"), help: "The data directory (default: ~/.sigil).")
        var dataDirectory: String?

        @Option(name: .long, help: "The CSR, PEM or DER.")
        var csr: String

        @Option(name: .long, help: "Days the certificate is valid.")
        var days = 90

        @Option(name: .long, help: "Write the certificate here instead of standard output.")
        var out: String?

        func run() async throws {
            let data = try DataDirectory(path: dataDirectory ?? DataDirectory.defaultPath)
            guard let authority = try data.certificateAuthority() else {
                throw SigilInputError("no client CA in \(data.path); run `sigil ca init` first")
            }
            guard (1...825).contains(days) else { throw SigilInputError("--days must be 1 to 825") }
            let certificate: Certificate
            do {
                let request = try CertificateAuthority.parseCSR(try IO.readFile(csr))
                certificate = try authority.issue(
                    request,
                    keyID: try CertificateAuthority.keyID(of: request),
                    validity: TimeInterval(days) * 86_400
                )
            } catch let error as SigilError {
                throw SigilInputError(error.detail)
            }
            let pem = try certificate.serializeAsPEM().pemString + "\n"
            if let out { try SecureFile.write(pem, to: out, mode: 0o644) } else { print(pem, terminator: "") }
        }
    }
}
