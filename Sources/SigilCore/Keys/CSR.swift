import SwiftASN1

/// PKCS#10 certificate signing requests (RFC 2986) made by any ``SignatureProvider``, so a key that
/// never leaves its hardware (the Secure Enclave) signs its own CSR.
public enum CSR {
    /// A CSR for `signer`'s public key with the subject `CN=commonName`, signed by `signer`, as PEM.
    ///
    /// - Throws: ``SigilInputError`` for an HMAC secret or an algorithm client certificates do not
    ///   use here (RSASSA-PSS, ML-DSA); the signer's own errors.
    public static func pem(for signer: any SignatureProvider, commonName: String = "sigil device") throws -> String {
        PEM.encode(try der(for: signer, commonName: commonName), label: "CERTIFICATE REQUEST")
    }

    /// The DER of ``pem(for:commonName:)``.
    public static func der(for signer: any SignatureProvider, commonName: String = "sigil device") throws -> [UInt8] {
        guard let publicKey = signer.publicKey, let pem = KeyFile.publicKeyFile(for: publicKey) else {
            throw SigilInputError("a CSR needs a key pair, not an HMAC secret")
        }
        let signatureAlgorithm: [UInt8]
        switch signer.algorithm {
        case .ecdsaP256SHA256: signatureAlgorithm = DERWriter.sequence(DERWriter.oid([1, 2, 840, 10045, 4, 3, 2]))
        case .ecdsaP384SHA384: signatureAlgorithm = DERWriter.sequence(DERWriter.oid([1, 2, 840, 10045, 4, 3, 3]))
        case .ecdsaP256SHA512: signatureAlgorithm = DERWriter.sequence(DERWriter.oid([1, 2, 840, 10045, 4, 3, 4]))
        case .ed25519: signatureAlgorithm = DERWriter.sequence(DERWriter.oid(KeyFile.OID.ed25519))
        case .rsaV15SHA256:
            // sha256WithRSAEncryption, with the NULL parameters RFC 4055 asks for.
            signatureAlgorithm = DERWriter.sequence(DERWriter.oid([1, 2, 840, 113549, 1, 1, 11]) + [0x05, 0x00])
        default:
            throw SigilInputError("client certificates are not issued for \(signer.algorithm) keys")
        }
        let name = DERWriter.sequence(
            DERWriter.tlv(
                0x31,
                DERWriter.sequence(DERWriter.oid([2, 5, 4, 3]) + DERWriter.tlv(0x0C, Array(commonName.utf8)))))
        let info = DERWriter.sequence(
            DERWriter.integer0 + name + (try PEM.decode(pem).der) + [0xA0, 0x00])
        let signature = try signer.signature(for: info, profile: .sigilV1)
        return DERWriter.sequence(info + signatureAlgorithm + DERWriter.bitString(signature))
    }
}
