import NIOSSL
@_spi(Sigil) import SigilCore
import SigilFiles

/// TLS settings of a Sigil server: TLS 1.3 only, and the hybrid post-quantum group X25519MLKEM768
/// only unless classical key exchange is explicitly allowed.
///
/// A client that offers no group the server accepts fails in the handshake; the server never falls
/// back to TLS 1.2 or to a classical group it was not told to allow.
public enum ServerTLS {
    /// The key exchange groups: X25519MLKEM768, then X25519 when `allowClassical` is set.
    public static func groups(allowClassical: Bool) -> [NIOTLSCurve] {
        allowClassical ? [.x25519_MLKEM768, .x25519] : [.x25519_MLKEM768]
    }

    /// A server configuration.
    ///
    /// - Parameters:
    ///   - identity: the server's certificate chain and private key.
    ///   - allowClassical: also accept X25519 alone.
    ///   - clientCA: when set, every client must present a certificate chained to one of these; a
    ///     client without one fails in the handshake.
    ///   - groups: replaces the key exchange groups, for interoperability tests only.
    public static func configuration(
        identity: TLSIdentity,
        allowClassical: Bool = false,
        clientCA: [NIOSSLCertificate]? = nil,
        groups: [NIOTLSCurve]? = nil
    ) -> TLSConfiguration {
        var configuration = TLSConfiguration.makeServerConfiguration(
            certificateChain: identity.chain.map { .certificate($0) },
            privateKey: .privateKey(identity.privateKey)
        )
        configuration.minimumTLSVersion = .tlsv13
        configuration.maximumTLSVersion = .tlsv13
        configuration.curves = groups ?? Self.groups(allowClassical: allowClassical)
        if let clientCA {
            configuration.certificateVerification = .noHostnameVerification
            configuration.trustRoots = .certificates(clientCA)
            configuration.sendCANameList = true
        }
        return configuration
    }
}

/// A certificate chain (leaf first) and its private key, as NIOSSL uses them.
public struct TLSIdentity: Sendable {
    /// The chain, leaf first.
    public let chain: [NIOSSLCertificate]
    /// The leaf's private key.
    public let privateKey: NIOSSLPrivateKey

    /// Creates an identity.
    public init(chain: [NIOSSLCertificate], privateKey: NIOSSLPrivateKey) {
        self.chain = chain
        self.privateKey = privateKey
    }

    /// Reads a PEM certificate chain and a PEM private key.
    ///
    /// - Throws: ``SigilInputError`` when either does not parse.
    public init(certificatePEM: String, keyPEM: String) throws {
        do {
            chain = try NIOSSLCertificate.fromPEMBytes(Array(certificatePEM.utf8))
            privateKey = try NIOSSLPrivateKey(bytes: Array(keyPEM.utf8), format: .pem)
        } catch {
            throw SigilInputError("the client certificate or its key does not parse")
        }
        guard !chain.isEmpty else { throw SigilInputError("no certificate in the PEM") }
    }

    /// Loads a PEM certificate chain file and a PEM private key file.
    ///
    /// - Throws: ``SigilInputError`` when either file is unreadable or not PEM of the right kind, or
    ///   when the key file's group or others may read or write it (``SecureFile/readSecret(_:)``).
    public init(certificateFile: String, keyFile: String) throws {
        let keyPEM = try SecureFile.readSecret(keyFile)
        do {
            chain = try NIOSSLCertificate.fromPEMFile(certificateFile)
            privateKey = try NIOSSLPrivateKey(bytes: keyPEM, format: .pem)
        } catch {
            throw SigilInputError("cannot load the TLS certificate or key (\(certificateFile), \(keyFile))")
        }
        guard !chain.isEmpty else { throw SigilInputError("\(certificateFile) holds no certificate") }
    }
}
