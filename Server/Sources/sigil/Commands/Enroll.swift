import ArgumentParser
import Foundation
import NIOSSL
import SigilClient
@_spi(Sigil) import SigilCore
import SigilFiles
import SigilHTTPClient
import SigilRSA
import SigilStandalone
import SigilTLS

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

/// `--pin`: the rule ``PinSet`` holds clients to, said with the flags that meet it.
enum Pins {
    static func check(_ pins: [String], allowSinglePin: Bool) throws {
        guard Set(pins).count == 1, !allowSinglePin else { return }
        throw SigilInputError(
            "one pin given: pin the server's backup key too (a second --pin; sigil serve prints both), "
                + "or accept a single pin with --allow-single-pin")
    }
}

/// `sigil enroll URL --token T --pin sha256/…`: make a key, register it, keep the identity.
struct Enroll: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Enroll this machine with a Sigil server: a new key, registered, kept under ~/.sigil/identities.",
        discussion: """
            An identity that exists is kept: enroll under another --identity NAME, or replace it with --force. \
            A server started with --client-ca takes a client certificate in the handshake: give it with --cert \
            and --key (or --p12); that key is the one enrolled, so the certificate names the device.
            """)

    @Argument(help: "The server, https://host:port.")
    var url: String

    // Unconditional: a token may start with `-` (base64url), and is still the value of --token.
    @Option(name: .long, parsing: .unconditional, help: "The bootstrap enrollment token or an enrollment JWT.")
    var token: String

    @Option(name: .long, help: "A pin of the server (sha256/…); give the backup pin too.")
    var pin: [String] = []

    @Flag(name: .customLong("allow-single-pin"), help: "Accept a single pin with no backup.")
    var allowSinglePin = false

    @Option(name: .long, help: "Trust the CA certificates in this PEM file instead of the system roots.")
    var cacert: String?

    @Option(name: .long, help: "The key's algorithm.")
    var alg = "ecdsa-p256-sha256"

    @Option(
        name: .long, help: "Enroll this private key (PEM) instead of a new one; with --cert, the certificate's key.")
    var key: String?

    @Option(name: .long, help: "A client certificate (PEM) for servers that require one; its key is --key.")
    var cert: String?

    @Option(name: .long, help: "A PKCS#12 client bundle: its certificate is presented and its key enrolled.")
    var p12: String?

    @Option(name: .customLong("p12-password-env"), help: "The environment variable with the PKCS#12 password.")
    var p12PasswordEnv = "SIGIL_P12_PASSWORD"

    @Option(name: .long, help: "The identity's name.")
    var identity = "default"

    @Flag(name: .long, help: "Replace the identity of that name if it exists.")
    var force = false

    @Flag(name: .customLong("pq-only"), help: "Offer X25519MLKEM768 only.")
    var pqOnly = false

    @Flag(name: .customLong("client-certificate"), help: "Also get a client certificate from the server's CA.")
    var clientCertificate = false

    @Flag(
        name: .customLong("seal-secret"),
        help: "Register an X-Wing key of this device too: its HMAC secrets come sealed to it (PROTOCOL.md 6.4).")
    var sealSecret = false

    func validate() throws {
        if cert != nil && key == nil { throw ValidationError("--cert needs --key, the certificate's private key") }
        if p12 != nil && (cert != nil || key != nil) { throw ValidationError("give --p12, or --cert and --key") }
    }

    func run() async throws {
        _ = try Enrollment.endpoint(url)  // an http:// URL is refused before anything else is asked for
        guard !pin.isEmpty else {
            throw SigilInputError("pin the server: --pin sha256/… (sigil serve prints its pins)")
        }
        try Pins.check(pin, allowSinglePin: allowSinglePin)
        let store = try Identities.store(identity)
        if !force, let existing = Self.existing(store) {
            throw SigilInputError(
                "identity '\(identity)' exists\(existing): enrolling again would replace its key; "
                    + "enroll under another name with --identity NAME, or replace it with --force")
        }
        var options = SigilHTTPClient.Options()
        options.pins = pin
        options.allowSinglePin = allowSinglePin
        options.pqOnly = pqOnly
        options.anchors = try cacert.map(Anchors.load)
        var enrollment = DeviceEnrollment(requestCertificate: clientCertificate)
        enrollment.sealingKey = sealSecret ? try SealingPrivateKey.generate() : nil
        let algorithm = try SignatureAlgorithm.named(alg)
        var deviceKey: SigningKey?
        if let p12 {
            guard let password = ProcessInfo.processInfo.environment[p12PasswordEnv] else {
                throw SigilInputError("set the PKCS#12 password in $\(p12PasswordEnv)")
            }
            let bundle = try TLSIdentity(pkcs12File: p12, password: password)
            deviceKey = try ClientCertificateKey.signingKey(of: bundle, algorithm: algorithm)
            options.identity = bundle
            enrollment.clientCertificate = try ClientCertificateKey.pem(bundle.chain)
        } else if let key {
            deviceKey = try ClientCertificateKey.load(key, algorithm: algorithm)
            if let cert {
                let certificateText = String(decoding: try IO.readFile(cert), as: UTF8.self)
                let bundle = try TLSIdentity(certificateFile: cert, keyFile: key)
                try ClientCertificateKey.check(bundle, names: deviceKey, certificateFile: cert, keyFile: key)
                options.identity = bundle
                enrollment.clientCertificate = certificateText
            }
        }
        let enrolled = try await Enrollment.enroll(
            server: url, token: token, options: options, key: deviceKey, algorithm: algorithm,
            enrollment: enrollment, keyFormats: .withRSA, store: store)
        let sealed = enrolled.deviceSealingKeyID.map { " secret-sealed-to=\($0)" } ?? ""
        print("enrolled key-id=\(enrolled.keyID) device=\(enrolled.deviceID) identity=\(identity)\(sealed)")
    }

    /// What names the identity kept in `store`, when there is one (an unreadable one counts).
    static func existing(_ store: FileDeviceStore) -> String? {
        if let stored = try? store.identity() { return " (key-id \(stored.keyID), enrolled with \(stored.server))" }
        let files = ["identity.json", "device-key.pem"]
        return files.contains { FileManager.default.fileExists(atPath: store.directory + "/" + $0) } ? "" : nil
    }
}

/// The private key of a client certificate, which `sigil enroll` enrolls so that the certificate
/// names the device it connects for.
enum ClientCertificateKey {
    /// Loads a private key file as a signing key of `algorithm` (the key's kind decides when it differs).
    static func load(_ path: String, algorithm: SigilCore.SignatureAlgorithm) throws -> SigningKey {
        let bytes = try SecureFile.readSecret(path)
        let loaded: LoadedKey
        if let chosen = try? KeyFile.load(bytes, algorithm: algorithm, formats: .withRSA) {
            loaded = chosen
        } else {
            loaded = try KeyFile.load(bytes, formats: .withRSA)
        }
        guard let key = loaded.signingKey, key.publicKey != nil else {
            throw SigilInputError("\(path) holds no private key pair to enroll")
        }
        return key
    }

    /// The key of a PKCS#12 bundle as a signing key (BoringSSL writes it as SEC1, PKCS#1 or PKCS#8 DER).
    static func signingKey(of bundle: TLSIdentity, algorithm: SigilCore.SignatureAlgorithm) throws -> SigningKey {
        let der = try bundle.privateKey.derBytes
        for label in ["EC PRIVATE KEY", "PRIVATE KEY", "RSA PRIVATE KEY"] {
            let pem = Array(PEM.encode(der, label: label).utf8)
            if let loaded = (try? KeyFile.load(pem, algorithm: algorithm, formats: .withRSA))
                ?? (try? KeyFile.load(pem, formats: .withRSA)), let key = loaded.signingKey
            {
                return key
            }
        }
        throw SigilInputError("the PKCS#12 bundle's key is not one Sigil can sign with")
    }

    /// Refuses a certificate whose public key is not `key`'s: the server would refuse its requests.
    static func check(_ bundle: TLSIdentity, names key: SigningKey?, certificateFile: String, keyFile: String) throws {
        guard let leaf = bundle.chain.first, let key,
            let keyPEM = try KeyFile.publicKeyFile(for: key.verificationKey),
            let certificateSPKI = try? leaf.extractPublicKey().toSPKIBytes(),
            (try? PEM.decode(keyPEM).1) == certificateSPKI
        else {
            throw SigilInputError("\(certificateFile) is not a certificate for the key in \(keyFile)")
        }
    }

    /// A certificate chain as PEM.
    static func pem(_ chain: [NIOSSLCertificate]) throws -> String {
        try chain.map { PEM.encode(try $0.toDERBytes(), label: "CERTIFICATE") }.joined()
    }
}

/// `sigil csr --key FILE`: a certificate signing request the device's key signs, for `sigil ca issue --csr`.
struct MakeCSR: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "csr",
        abstract: "Make a CSR signed by a private key (for sigil ca issue --csr); its CN is the key's ID.")

    @Option(name: .long, help: "The private key (PEM) the certificate is for.")
    var key: String

    @Option(name: .long, help: "Write the CSR here instead of standard output.")
    var out: String?

    func run() throws {
        guard let signer = try KeyFile.load(try SecureFile.readSecret(key), formats: .withRSA).signingKey,
            let keyID = try signer.verificationKey.derivedKeyID
        else {
            throw SigilInputError("\(key) holds no private key pair")
        }
        let pem = try CSR.pem(for: signer, commonName: keyID)
        if let out { try IO.writeSecret(pem, to: out, mode: 0o644) } else { IO.write(Array(pem.utf8)) }
    }
}
