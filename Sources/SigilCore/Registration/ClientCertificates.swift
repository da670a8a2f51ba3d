/// The identity in a TLS client certificate, as a verified request's identity carries it: read by
/// SigilTLS (`init(der:)`), checked by the server's exchange against the signer's device.
public struct ClientCertificateIdentity: Sendable, Hashable {
    /// The subject's common name (the key ID for certificates Sigil issued).
    public let commonName: String?
    /// The full subject, RFC 4514 style.
    public let subject: String
    /// The Sigil key ID from a `urn:sigil:key:` URI, if the certificate carries one.
    public let sigilKeyID: String?
    /// The SPKI pin of the certificate's key.
    public let pin: String

    /// Creates the identity from a certificate's fields.
    public init(commonName: String?, subject: String, sigilKeyID: String?, pin: String) {
        self.commonName = commonName
        self.subject = subject
        self.sigilKeyID = sigilKeyID
        self.pin = pin
    }
}

/// Issues client certificates from CSRs for SigilServer's `RegistrationService` (SigilTLS's `CertificateAuthority`).
public protocol ClientCertificateIssuer: Sendable {
    /// Issues a certificate for the PKCS#10 request `csrPEM`, whose key must be the key `keyID`,
    /// valid from the system's time (the time TLS stacks check certificates against).
    ///
    /// - Throws: ``SigilError`` `invalid-registration` for a CSR that does not parse, is not
    ///   self-signed, or holds another key.
    func issue(csrPEM: String, keyID: String) throws -> IssuedClientCertificate
}

/// A client certificate as SigilServer's `RegistrationService` records and returns it.
public struct IssuedClientCertificate: Sendable, Hashable {
    /// The certificate, PEM.
    public var certificatePEM: String
    /// The issuing CA's certificate, PEM.
    public var caCertificatePEM: String
    /// The serial number, lowercase hex.
    public var serial: String
    /// The end of its validity, in Unix seconds.
    public var notAfter: Int64

    /// Creates the record.
    public init(certificatePEM: String, caCertificatePEM: String, serial: String, notAfter: Int64) {
        self.certificatePEM = certificatePEM
        self.caCertificatePEM = caCertificatePEM
        self.serial = serial
        self.notAfter = notAfter
    }
}
