import ArgumentParser
import Foundation
import NIOSSL
import SigilClient
import SigilCore
import SigilHTTPClient
import SigilRSA
import SigilStandalone

/// Where `sigil enroll` keeps identities: `~/.sigil/identities/NAME`.
enum Identities {
    static func store(_ name: String) throws -> FileDeviceStore {
        guard isValidName(name) else {
            throw SigilInputError("an identity name is one plain path component: [A-Za-z0-9_~-][A-Za-z0-9._~-]{0,127}")
        }
        return FileDeviceStore(directory: DataDirectory.defaultPath + "/identities/" + name, keyFormats: .withRSA)
    }

    /// A name that stays inside the identities folder: one path component, not starting with `.`
    /// (so neither `.` nor `..`, nor a hidden file), of the key ID alphabet.
    static func isValidName(_ name: String) -> Bool {
        KeyID.isValid(name) && name.utf8.first != UInt8(ascii: ".")
    }
}

/// `--cacert FILE`: the certificates to trust instead of the system roots, as curl's flag does.
enum Anchors {
    static func load(_ path: String) throws -> [NIOSSLCertificate] {
        do {
            let certificates = try NIOSSLCertificate.fromPEMFile(path)
            guard !certificates.isEmpty else { throw SigilInputError("\(path) holds no certificate") }
            return certificates
        } catch let error as SigilInputError {
            throw error
        } catch {
            throw SigilInputError("cannot read the certificates in \(path)")
        }
    }
}

/// `sigil enroll URL --token T --pin sha256/…`: make a key, register it, keep the identity.
struct Enroll: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Enroll this machine with a Sigil server: a new key, registered, kept under ~/.sigil/identities.")

    @Argument(help: "The server, https://host:port.")
    var url: String

    @Option(name: .long, help: "The bootstrap enrollment token or an enrollment JWT.")
    var token: String

    @Option(name: .long, help: "A pin of the server (sha256/…); give the backup pin too.")
    var pin: [String] = []

    @Flag(name: .customLong("allow-single-pin"), help: "Accept a single pin with no backup.")
    var allowSinglePin = false

    @Option(name: .long, help: "Trust the CA certificates in this PEM file instead of the system roots.")
    var cacert: String?

    @Option(name: .long, help: "The key's algorithm.")
    var alg = "ecdsa-p256-sha256"

    @Option(name: .long, help: "The identity's name.")
    var identity = "default"

    @Flag(name: .customLong("pq-only"), help: "Offer X25519MLKEM768 only.")
    var pqOnly = false

    @Flag(name: .customLong("client-certificate"), help: "Also get a client certificate from the server's CA.")
    var clientCertificate = false

    @Flag(
        name: .customLong("seal-secret"),
        help: "Register an X-Wing key of this device too: its HMAC secrets come sealed to it (PROTOCOL.md 6.4).")
    var sealSecret = false

    func run() async throws {
        guard !pin.isEmpty else {
            throw SigilInputError("pin the server: --pin sha256/… (sigil serve prints its pins)")
        }
        var options = SigilHTTPClient.Options()
        options.pins = pin
        options.allowSinglePin = allowSinglePin
        options.pqOnly = pqOnly
        options.anchors = try cacert.map(Anchors.load)
        var enrollment = DeviceEnrollment(requestCertificate: clientCertificate)
        enrollment.sealingKey = sealSecret ? try SealingPrivateKey.generate() : nil
        let enrolled = try await Enrollment.enroll(
            server: url, token: token, options: options, algorithm: try SignatureAlgorithm.named(alg),
            enrollment: enrollment, keyFormats: .withRSA, store: try Identities.store(identity))
        let sealed = enrolled.deviceSealingKeyID.map { " secret-sealed-to=\($0)" } ?? ""
        print("enrolled key-id=\(enrolled.keyID) device=\(enrolled.deviceID) identity=\(identity)\(sealed)")
    }
}
