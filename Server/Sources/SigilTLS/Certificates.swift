import Crypto
import Foundation
@_spi(Sigil) import SigilCore
import SwiftASN1
import X509

/// Certificates Sigil makes: the self-signed server certificate of a first start, a client CA, and
/// client certificates issued from CSRs.
public enum Certificates {
    /// A new self-signed P-256 server certificate for `names` (DNS names or IP addresses).
    ///
    /// - Returns: the certificate PEM and the PKCS#8 PEM of its private key.
    public static func selfSignedServer(
        names: [String],
        now: Date = Date(),
        validity: TimeInterval = 365 * 86_400
    ) throws -> (certificatePEM: String, keyPEM: String) {
        try selfSignedServer(names: names, key: P256.Signing.PrivateKey(), now: now, validity: validity)
    }

    /// ``selfSignedServer(names:now:validity:)`` for a key of the caller's (a TLS key that rotates).
    public static func selfSignedServer(
        names: [String],
        key: P256.Signing.PrivateKey,
        now: Date = Date(),
        validity: TimeInterval = 365 * 86_400
    ) throws -> (certificatePEM: String, keyPEM: String) {
        // A distinct name per certificate: a client trusting two of them finds the right anchor by name.
        let name = try DistinguishedName {
            CommonName(names.first ?? "localhost")
            OrganizationName("Sigil")
            OrganizationalUnitName(Hex.random(bytes: 8))
        }
        let certificate = try selfSigned(
            key: key,
            name: name,
            now: now,
            validity: validity,
            extensions: try Certificate.Extensions {
                // No KeyUsage: a self-signed leaf is its own trust anchor, and BoringSSL refuses an
                // anchor whose KeyUsage lacks keyCertSign, which a CA:FALSE certificate must not have.
                Critical(BasicConstraints.notCertificateAuthority)
                try ExtendedKeyUsage([.serverAuth])
                SubjectAlternativeNames(generalNames(names))
            }
        )
        return (try certificate.serializeAsPEM().pemString + "\n", key.pemRepresentation + "\n")
    }

    /// A certificate `key` signs for itself, valid from five minutes ago for `validity` seconds.
    static func selfSigned(
        key: P256.Signing.PrivateKey,
        name: DistinguishedName,
        now: Date,
        validity: TimeInterval,
        extensions: Certificate.Extensions
    ) throws -> Certificate {
        try Certificate(
            version: .v3,
            serialNumber: Certificate.SerialNumber(),
            publicKey: Certificate.PublicKey(key.publicKey),
            notValidBefore: now.addingTimeInterval(-300),
            notValidAfter: now.addingTimeInterval(validity),
            issuer: name,
            subject: name,
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: extensions,
            issuerPrivateKey: Certificate.PrivateKey(key)
        )
    }

    /// The subject alternative names for host names and IP addresses.
    static func generalNames(_ names: [String]) -> [GeneralName] {
        var result: [GeneralName] = []
        for name in names {
            if let address = ipAddressBytes(name) {
                result.append(.ipAddress(ASN1OctetString(contentBytes: ArraySlice(address))))
            } else {
                result.append(.dnsName(name))
            }
        }
        return result
    }

    /// The 4 or 16 bytes of an IPv4 or IPv6 address, or `nil` for a host name.
    static func ipAddressBytes(_ text: String) -> [UInt8]? {
        var v4 = in_addr()
        if inet_pton(AF_INET, text, &v4) == 1 { return withUnsafeBytes(of: &v4) { Array($0) } }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, text, &v6) == 1 { return withUnsafeBytes(of: &v6) { Array($0) } }
        return nil
    }

    /// The DER of a certificate.
    public static func der(_ certificate: Certificate) throws -> [UInt8] {
        var serializer = DER.Serializer()
        try serializer.serialize(certificate)
        return serializer.serializedBytes
    }

    /// The DER SubjectPublicKeyInfo of a public key (what an SPKI pin hashes).
    public static func spkiDER(_ key: Certificate.PublicKey) throws -> [UInt8] {
        var serializer = DER.Serializer()
        try serializer.serialize(key)
        return serializer.serializedBytes
    }

    /// The SPKI pins (`sha256/…`) of every certificate in a PEM file's text.
    public static func pins(certificatePEM: String) throws -> [String] {
        try SPKIPin.pins(certificatePEM: certificatePEM)
    }
}
