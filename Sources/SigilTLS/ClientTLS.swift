import NIOSSL
import SigilCore

/// TLS settings of a Sigil client: TLS 1.3, the hybrid group X25519MLKEM768 offered first (or only,
/// with `pqOnly`), the server's certificate validated against the system roots or given anchors,
/// and a client certificate when one is configured.
public enum ClientTLS {
    /// A client configuration.
    ///
    /// - Parameters:
    ///   - pqOnly: offer X25519MLKEM768 only; a server without it fails the handshake.
    ///   - anchors: trust only these certificates (a self-signed server's own certificate, say)
    ///     instead of the system roots. The host name or IP address is checked either way.
    ///   - identity: the client certificate chain and key to present.
    public static func configuration(
        pqOnly: Bool = false,
        anchors: [NIOSSLCertificate]? = nil,
        identity: TLSIdentity? = nil
    ) -> TLSConfiguration {
        var configuration = TLSConfiguration.makeClientConfiguration()
        configuration.minimumTLSVersion = .tlsv13
        configuration.curves = pqOnly ? [.x25519_MLKEM768] : [.x25519_MLKEM768, .x25519]
        configuration.certificateVerification = .fullVerification
        if let anchors { configuration.trustRoots = .certificates(anchors) }
        if let identity {
            configuration.certificateChain = identity.chain.map { .certificate($0) }
            configuration.privateKey = .privateKey(identity.privateKey)
        }
        return configuration
    }
}

extension TLSIdentity {
    /// Loads a PKCS#12 bundle (certificate chain and key) protected by `password`.
    ///
    /// - Throws: ``SigilInputError`` when the file does not open with the password; the password is
    ///   never part of the message.
    public init(pkcs12File path: String, password: String) throws {
        do {
            let bundle = try NIOSSLPKCS12Bundle(file: path, passphrase: Array(password.utf8))
            self.init(chain: bundle.certificateChain, privateKey: bundle.privateKey)
        } catch {
            throw SigilInputError("\(path) does not open as PKCS#12 with the given password")
        }
    }
}
