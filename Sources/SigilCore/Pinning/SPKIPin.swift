import Crypto
import Foundation
import SwiftASN1

/// Public key pins: `sha256/<base64 of SHA-256 over the SubjectPublicKeyInfo DER>`.
public enum SPKIPin {
    /// The pin of a certificate (DER).
    public static func pin(certificateDER: [UInt8]) throws -> String {
        pin(spkiDER: try subjectPublicKeyInfo(certificateDER: certificateDER))
    }

    /// The pin of a SubjectPublicKeyInfo (DER).
    public static func pin(spkiDER: some DataProtocol) -> String {
        "sha256/" + Data(SHA256.hash(data: spkiDER)).base64EncodedString()
    }

    /// The pins of every certificate in a PEM file, in order.
    public static func pins(certificatePEM text: String) throws -> [String] {
        try PEM.certificates(text).map { try pin(certificateDER: $0) }
    }

    /// The SubjectPublicKeyInfo of an X.509 certificate: the seventh field of tbsCertificate
    /// (the sixth when the optional version is absent).
    static func subjectPublicKeyInfo(certificateDER: [UInt8]) throws -> ArraySlice<UInt8> {
        do {
            let certificate = try DER.parse(certificateDER)
            guard case .constructed(let parts) = certificate.content, let tbs = parts.first(where: { _ in true }),
                case .constructed(let fields) = tbs.content
            else { throw SigilInputError("not an X.509 certificate") }
            var list = Array(fields)
            if let first = list.first, first.identifier == ASN1Identifier(tagWithNumber: 0, tagClass: .contextSpecific)
            {
                list.removeFirst()
            }
            guard list.count >= 6, list[5].identifier == .sequence else {
                throw SigilInputError("not an X.509 certificate")
            }
            return list[5].encodedBytes
        } catch let error as SigilInputError {
            throw error
        } catch {
            throw SigilInputError("the certificate does not parse as DER")
        }
    }
}
