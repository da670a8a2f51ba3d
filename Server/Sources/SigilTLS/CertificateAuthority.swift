import Crypto
import Foundation
@_spi(Sigil) import SigilCore
import SigilRSA
import SwiftASN1
import X509

/// A client certificate authority: issues client certificates from CSRs, so a device's private key
/// never leaves it.
///
/// Client certificates name the Sigil key ID as their common name and carry the URI
/// `urn:sigil:key:<key ID>` as subject alternative name, with the clientAuth extended key usage.
public struct CertificateAuthority: Sendable {
    /// The CA certificate.
    public let certificate: Certificate
    private let privateKey: Certificate.PrivateKey

    /// Creates an authority from its certificate and private key.
    public init(certificate: Certificate, privateKey: Certificate.PrivateKey) {
        self.certificate = certificate
        self.privateKey = privateKey
    }

    /// Loads an authority from its PEM certificate and PEM private key.
    ///
    /// - Throws: ``SigilInputError`` when either does not parse.
    public init(certificatePEM: String, keyPEM: String) throws {
        do {
            certificate = try Certificate(pemEncoded: certificatePEM)
            privateKey = try Certificate.PrivateKey(pemEncoded: keyPEM)
        } catch {
            throw SigilInputError("the CA certificate or key does not parse")
        }
    }

    /// A new authority with a P-256 key.
    ///
    /// - Returns: the authority and the PEM of its certificate and private key.
    public static func create(
        name: String = "Sigil client CA",
        now: Date = Date(),
        validity: TimeInterval = 10 * 365 * 86_400
    ) throws -> (authority: CertificateAuthority, certificatePEM: String, keyPEM: String) {
        let key = P256.Signing.PrivateKey()
        let subject = try DistinguishedName {
            CommonName(name)
            OrganizationName("Sigil")
        }
        let certificate = try Certificates.selfSigned(
            key: key,
            name: subject,
            now: now,
            validity: validity,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 0))
                Critical(KeyUsage(keyCertSign: true, cRLSign: true))
                SubjectKeyIdentifier(hash: Certificate.PublicKey(key.publicKey))
            }
        )
        let authority = CertificateAuthority(certificate: certificate, privateKey: Certificate.PrivateKey(key))
        return (authority, try certificate.serializeAsPEM().pemString + "\n", key.pemRepresentation + "\n")
    }

    /// Parses a PEM or DER CSR and checks its self-signature.
    ///
    /// - Throws: `invalid-registration` when it does not parse or its signature does not verify.
    public static func parseCSR(_ bytes: [UInt8]) throws -> CertificateSigningRequest {
        let csr: CertificateSigningRequest
        do {
            if let text = String(validating: bytes, as: UTF8.self), text.contains("-----BEGIN") {
                csr = try CertificateSigningRequest(pemEncoded: text)
            } else {
                csr = try CertificateSigningRequest(derEncoded: bytes)
            }
        } catch {
            throw SigilError(.invalidRegistration, "the CSR does not parse")
        }
        guard csr.publicKey.isValidSignature(csr.signature, for: csr) else {
            throw SigilError(.invalidRegistration, "the CSR's signature does not verify with its own key")
        }
        return csr
    }

    /// A CSR for a PEM private key (P-256, P-384, Ed25519 or RSA), for an operator who holds the key.
    ///
    /// - Returns: the CSR and the key's PKCS#8 DER.
    public static func csr(privateKeyPEM: String) throws -> (CertificateSigningRequest, privateKeyDER: [UInt8]) {
        let key: Certificate.PrivateKey
        do {
            key = try Certificate.PrivateKey(pemEncoded: privateKeyPEM)
        } catch {
            throw SigilInputError("the key is not a P-256, P-384, Ed25519 or RSA private key in PEM")
        }
        let csr = try CertificateSigningRequest(
            version: .v1,
            subject: try DistinguishedName { CommonName("sigil device") },
            privateKey: key,
            attributes: CertificateSigningRequest.Attributes()
        )
        return (csr, try PEM.decode(privateKeyPEM).der)
    }

    /// The Sigil key ID of a CSR's public key (PROTOCOL.md section 1).
    public static func keyID(of csr: CertificateSigningRequest) throws -> String {
        let spki = PEM.encode(try Certificates.spkiDER(csr.publicKey), label: "PUBLIC KEY")
        guard let id = try KeyFile.load(Array(spki.utf8), formats: .withRSA).verificationKey.derivedKeyID else {
            throw SigilError(.invalidRegistration, "the CSR holds no usable public key")
        }
        return id
    }

    /// Issues a client certificate for the key in `csr`, registered as `keyID`.
    ///
    /// - Throws: `invalid-registration` when the CSR's key is not the key `keyID` names.
    public func issue(
        _ csr: CertificateSigningRequest,
        keyID: String,
        now: Date = Date(),
        validity: TimeInterval = 90 * 86_400
    ) throws -> Certificate {
        guard try Self.keyID(of: csr) == keyID else {
            throw SigilError(.invalidRegistration, "the CSR is for another key than \(keyID)")
        }
        let subject = try DistinguishedName {
            CommonName(keyID)
            OrganizationName("Sigil device")
        }
        return try Certificate(
            version: .v3,
            serialNumber: Certificate.SerialNumber(),
            publicKey: csr.publicKey,
            notValidBefore: now.addingTimeInterval(-300),
            notValidAfter: min(now.addingTimeInterval(validity), certificate.notValidAfter),
            issuer: certificate.subject,
            subject: subject,
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.notCertificateAuthority)
                Critical(KeyUsage(digitalSignature: true))
                try ExtendedKeyUsage([.clientAuth])
                SubjectAlternativeNames([.uniformResourceIdentifier("urn:sigil:key:\(keyID)")])
                AuthorityKeyIdentifier(keyIdentifier: try authorityKeyIdentifier())
            },
            issuerPrivateKey: privateKey
        )
    }

    private func authorityKeyIdentifier() throws -> ArraySlice<UInt8>? {
        try certificate.extensions.subjectKeyIdentifier?.keyIdentifier
    }
}

extension ClientCertificateIdentity {
    /// Reads the certificate a TLS peer presented, for a check that must not be skipped.
    ///
    /// - Throws: ``SigilError`` `certificate-mismatch` when it cannot be read (a certificate not read
    ///   is a certificate not checked).
    public init(readingPeer der: [UInt8]) throws {
        do {
            try self.init(der: der)
        } catch {
            throw SigilError(.certificateMismatch, "the client certificate cannot be read")
        }
    }

    /// Reads the identity of a DER certificate.
    public init(der: [UInt8]) throws {
        let certificate = try Certificate(derEncoded: der)
        var keyID: String?
        let alternativeNames = (try? certificate.extensions.subjectAlternativeNames).flatMap { $0 }
        for name in alternativeNames.map(Array.init) ?? [] {
            if case .uniformResourceIdentifier(let uri) = name, uri.hasPrefix("urn:sigil:key:") {
                keyID = String(uri.dropFirst("urn:sigil:key:".count))
            }
        }
        self.init(
            commonName: certificate.subject.lazy.flatMap { $0 }.first { $0.type == .RDNAttributeType.commonName }?
                .value.description,
            subject: certificate.subject.description,
            sigilKeyID: keyID,
            pin: SPKIPin.pin(spkiDER: try Certificates.spkiDER(certificate.publicKey))
        )
    }
}

extension CertificateAuthority: ClientCertificateIssuer {
    public func issue(csrPEM: String, keyID: String) throws -> IssuedClientCertificate {
        let certificate = try issue(try Self.parseCSR(Array(csrPEM.utf8)), keyID: keyID)
        do {
            return IssuedClientCertificate(
                certificatePEM: try certificate.serializeAsPEM().pemString + "\n",
                caCertificatePEM: try self.certificate.serializeAsPEM().pemString + "\n",
                serial: Hex.encode(Array(certificate.serialNumber.bytes)),
                notAfter: Int64(certificate.notValidAfter.timeIntervalSince1970)
            )
        } catch {
            throw SigilError(.invalidRegistration, "the certificate could not be encoded")
        }
    }
}
