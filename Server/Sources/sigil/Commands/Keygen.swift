import ArgumentParser
import Foundation
@_spi(Sigil) import SigilCore
import SigilFiles
import SigilRSA

struct Keygen: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Make a new key; prints {\"alg\":…,\"keyId\":…,\"publicKey\":…}.",
        discussion: """
            Without --out the private key is written to standard output and the JSON line to standard error. \
            A file that exists (--out, --public-out) is kept: choose another path, or replace it with --force.
            """
    )

    @Option(
        name: .long,
        help:
            "One of: \(SignatureAlgorithm.generatable.map(\.rawValue).joined(separator: ", ")), or x-wing for a sealing key (PROTOCOL.md section 6)."
    )
    var alg: String

    @Option(name: .long, help: "Where to write the private key (PKCS#8 PEM, or the base64 secret), mode 0600.")
    var out: String?

    @Option(name: .customLong("public-out"), help: "Where to write the public key (SubjectPublicKeyInfo PEM).")
    var publicOut: String?

    @Flag(help: "Print the public key as a JWK (kid: its RFC 7638 thumbprint) instead of the JSON line.")
    var jwk = false

    @Flag(name: .long, help: "Replace --out and --public-out if they exist.")
    var force = false

    func run() throws {
        if !force {
            // Before anything is written: a key someone relies on is never replaced by accident.
            for path in [out, publicOut].compactMap({ $0 }) {
                try SecureFile.refuseExisting(
                    path, advice: "it is kept; choose another path, or replace it with --force")
            }
        }
        if alg == Sealing.kemName {
            try sealingKey()
            return
        }
        guard let algorithm = SignatureAlgorithm(rawValue: alg) else {
            throw SigilInputError("unknown algorithm '\(alg.prefix(40))'")
        }
        let key = try SigningKey.generate(algorithm, formats: .withRSA)
        let verificationKey = try key.verificationKey
        let keyID = verificationKey.derivedKeyID ?? "hmac-" + Hex.random(bytes: 8)
        if let publicOut {
            guard let publicPEM = KeyFile.publicKeyFile(for: verificationKey) else {
                throw SigilInputError("an HMAC secret has no public key")
            }
            try IO.writeSecret(publicPEM, to: publicOut, mode: 0o644)
        }
        // With the public key in it, the line is also the body of a registration (`POST /v1/devices`).
        var summary = "{\"alg\":\"\(algorithm.rawValue)\",\"keyId\":\"\(keyID)\""
        if let publicPEM = KeyFile.publicKeyFile(for: verificationKey) {
            summary += ",\"publicKey\":\"" + publicPEM.replacingOccurrences(of: "\n", with: "\\n") + "\""
        }
        summary += "}\n"
        if jwk { summary = try Jwk.line(verificationKey) }
        if let out {
            try IO.writeSecret(try KeyFile.privateKeyFile(for: key), to: out)
            IO.write(Array(summary.utf8))
        } else {
            IO.write(Array(try KeyFile.privateKeyFile(for: key).utf8))
            FileHandle.standardError.write(Data(summary.utf8))
        }
    }

    /// An X-Wing key: the private file holds the 32-byte seed, the public one the 1216-byte key; the
    /// JSON line is discovery's `sealingKeys` entry.
    func sealingKey() throws {
        let key = try SealingPrivateKey.generate()
        if let publicOut { try IO.writeSecret(Sealing.publicKeyFile(for: key.publicKey), to: publicOut, mode: 0o644) }
        let entry = Registration.Discovery.SealingKey(key.publicKey)
        let summary = "{\"kem\":\"\(entry.kem)\",\"keyId\":\"\(entry.keyId)\",\"publicKey\":\"\(entry.publicKey)\"}\n"
        if let out {
            try IO.writeSecret(try Sealing.privateKeyFile(for: key), to: out)
            IO.write(Array(summary.utf8))
        } else {
            IO.write(Array(try Sealing.privateKeyFile(for: key).utf8))
            FileHandle.standardError.write(Data(summary.utf8))
        }
    }
}

/// `sigil jwk FILE`: a key file's public key as a JWK, with its RFC 7638 thumbprint as `kid`.
struct Jwk: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print a key file's public key as a JWK (kid: its RFC 7638 thumbprint), or the thumbprint alone.")

    @Argument(help: "A PEM key file, public or private (a private key's public half is printed).")
    var file: String

    @Flag(help: "Print the thumbprint alone.")
    var thumbprint = false

    func run() throws {
        let key = try KeyFile.load(try IO.readFile(file), formats: .withRSA).verificationKey
        IO.write(Array((thumbprint ? try JWK(key).thumbprint + "\n" : try Self.line(key)).utf8))
    }

    /// The JWK line: the key's members, `kid`, `use: sig` and its JOSE `alg` where it has one.
    static func line(_ key: VerificationKey) throws -> String {
        var extra = ["use": "\"sig\""]
        if let alg = JWK.joseAlgorithm(key.algorithm) { extra["alg"] = "\"\(alg)\"" }
        return try JWK(key).json(extra: extra) + "\n"
    }
}
