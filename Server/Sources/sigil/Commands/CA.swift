import ArgumentParser
import Foundation
@_spi(Sigil) import SigilCore
import SigilFiles
import SigilStandalone
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
            abstract: "Issue a client certificate for a CSR or a private key; the key ID is the key's derived ID.")

        @Option(name: .customLong("data-dir"), help: "The data directory (default: ~/.sigil).")
        var dataDirectory: String?

        @Option(name: .long, help: "The CSR, PEM or DER.")
        var csr: String?

        @Option(name: .long, help: "Or the client's private key (PEM), when the operator holds it.")
        var key: String?

        @Option(name: .long, help: "Also write a PKCS#12 bundle of the certificate and --key here.")
        var p12: String?

        @Option(
            name: .customLong("p12-password-env"),
            help: "The environment variable holding the PKCS#12 password.")
        var p12PasswordEnv = "SIGIL_P12_PASSWORD"

        @Option(name: .long, help: "Days the certificate is valid.")
        var days = 90

        @Option(name: .long, help: "Write the certificate here instead of standard output.")
        var out: String?

        @Flag(name: .long, help: "Replace --out and --p12 if they exist.")
        var force = false

        func run() async throws {
            if !force {
                // Before anything is written, as keygen does: a bundle someone relies on is never replaced by accident.
                for path in [out, p12].compactMap({ $0 }) {
                    try SecureFile.refuseExisting(
                        path, advice: "it is kept; choose another path, or replace it with --force")
                }
            }
            // Creates no data directory: one without a CA issues nothing.
            let data = DataDirectory(existing: dataDirectory ?? DataDirectory.defaultPath)
            guard let authority = try data.certificateAuthority() else {
                throw SigilInputError("no client CA in \(data.path); run `sigil ca init` first")
            }
            guard (1...825).contains(days) else { throw SigilInputError("--days must be 1 to 825") }
            guard (csr == nil) != (key == nil) else { throw SigilInputError("give --csr or --key") }
            guard p12 == nil || key != nil else { throw SigilInputError("--p12 needs the private key (--key)") }
            let certificate: Certificate
            var privateKeyDER: [UInt8] = []
            do {
                let request: CertificateSigningRequest
                if let key {
                    (request, privateKeyDER) = try CertificateAuthority.csr(
                        privateKeyPEM: String(decoding: try SecureFile.readSecret(key), as: UTF8.self))
                } else {
                    request = try CertificateAuthority.parseCSR(try IO.readFile(csr ?? ""))
                }
                certificate = try authority.issue(
                    request,
                    keyID: try CertificateAuthority.keyID(of: request),
                    validity: TimeInterval(days) * 86_400
                )
            } catch let error as SigilError {
                throw SigilInputError(error.detail)
            }
            let pem = try certificate.serializeAsPEM().pemString + "\n"
            if let p12 {
                guard let password = ProcessInfo.processInfo.environment[p12PasswordEnv], !password.isEmpty else {
                    throw SigilInputError("set the PKCS#12 password in $\(p12PasswordEnv)")
                }
                let bundle = try PKCS12.bundle(
                    privateKeyDER: privateKeyDER,
                    certificatesDER: [try Certificates.der(certificate), try Certificates.der(authority.certificate)],
                    password: password
                )
                try SecureFile.write(bundle, to: p12)
            }
            if let out { try SecureFile.write(pem, to: out, mode: 0o644) } else { print(pem, terminator: "") }
        }
    }
}
