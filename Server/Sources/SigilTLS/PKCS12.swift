import Crypto
import Foundation
@_spi(Sigil) import SigilCore
import SwiftASN1
import _CryptoExtras

/// Writes PKCS#12 bundles (RFC 7292) for clients that need a certificate and its key in one file:
/// the key in a PBES2 shrouded key bag (PBKDF2-HMAC-SHA256, AES-256-CBC), the certificates in cert
/// bags, and an HMAC-SHA256 integrity MAC, as OpenSSL 3 writes them by default.
public enum PKCS12 {
    /// PBKDF2 and MAC iterations.
    public static let iterations = 600_000

    /// A bundle of `privateKeyDER` (PKCS#8) and `certificatesDER` (leaf first) under `password`.
    ///
    /// - Throws: ``SigilInputError`` for an empty password.
    public static func bundle(
        privateKeyDER: [UInt8],
        certificatesDER: [[UInt8]],
        password: String,
        iterations: Int = PKCS12.iterations
    ) throws -> [UInt8] {
        guard !password.isEmpty else { throw SigilInputError("a PKCS#12 bundle needs a password") }
        let localKeyID = Array(SHA256.hash(data: certificatesDER.first ?? privateKeyDER).prefix(20))
        let keyBag = try safeBag(
            OID.shroudedKeyBag, value: try shroudedKey(privateKeyDER, password: password, iterations: iterations),
            localKeyID: localKeyID)
        var certificateBags: [[UInt8]] = []
        for (index, certificate) in certificatesDER.enumerated() {
            let certBag = try der { coder in
                try coder.appendConstructedNode(identifier: .sequence) { coder in
                    try coder.serialize(OID.x509Certificate)
                    try coder.appendConstructedNode(identifier: .init(tagWithNumber: 0, tagClass: .contextSpecific)) {
                        try $0.serialize(ASN1OctetString(contentBytes: ArraySlice(certificate)))
                    }
                }
            }
            certificateBags.append(try safeBag(OID.certBag, value: certBag, localKeyID: index == 0 ? localKeyID : nil))
        }
        let authenticatedSafe = try der { coder in
            try coder.appendConstructedNode(identifier: .sequence) { coder in
                try dataContentInfo(sequenceOf(certificateBags), into: &coder)
                try dataContentInfo(sequenceOf([keyBag]), into: &coder)
            }
        }
        let macSalt = randomBytes(16)
        let macKey = pkcs12KDF(password: password, salt: macSalt, id: 3, iterations: iterations, count: 32)
        let mac = Array(HMAC<SHA256>.authenticationCode(for: authenticatedSafe, using: SymmetricKey(data: macKey)))
        return try der { coder in
            try coder.appendConstructedNode(identifier: .sequence) { coder in
                try coder.serialize(3)
                try dataContentInfo(authenticatedSafe, into: &coder)
                try coder.appendConstructedNode(identifier: .sequence) { coder in
                    try coder.appendConstructedNode(identifier: .sequence) { coder in
                        try algorithm(OID.sha256, into: &coder)
                        try coder.serialize(ASN1OctetString(contentBytes: ArraySlice(mac)))
                    }
                    try coder.serialize(ASN1OctetString(contentBytes: ArraySlice(macSalt)))
                    try coder.serialize(iterations)
                }
            }
        }
    }

    // MARK: Pieces

    enum OID {
        static let data: ASN1ObjectIdentifier = [1, 2, 840, 113_549, 1, 7, 1]
        static let shroudedKeyBag: ASN1ObjectIdentifier = [1, 2, 840, 113_549, 1, 12, 10, 1, 2]
        static let certBag: ASN1ObjectIdentifier = [1, 2, 840, 113_549, 1, 12, 10, 1, 3]
        static let x509Certificate: ASN1ObjectIdentifier = [1, 2, 840, 113_549, 1, 9, 22, 1]
        static let localKeyID: ASN1ObjectIdentifier = [1, 2, 840, 113_549, 1, 9, 21]
        static let pbes2: ASN1ObjectIdentifier = [1, 2, 840, 113_549, 1, 5, 13]
        static let pbkdf2: ASN1ObjectIdentifier = [1, 2, 840, 113_549, 1, 5, 12]
        static let hmacWithSHA256: ASN1ObjectIdentifier = [1, 2, 840, 113_549, 2, 9]
        static let aes256CBC: ASN1ObjectIdentifier = [2, 16, 840, 1, 101, 3, 4, 1, 42]
        static let sha256: ASN1ObjectIdentifier = [2, 16, 840, 1, 101, 3, 4, 2, 1]
    }

    /// EncryptedPrivateKeyInfo with PBES2: PBKDF2-HMAC-SHA256 and AES-256-CBC.
    static func shroudedKey(_ privateKeyDER: [UInt8], password: String, iterations: Int) throws -> [UInt8] {
        let salt = randomBytes(16)
        let iv = randomBytes(16)
        let key = try KDF.Insecure.PBKDF2.deriveKey(
            from: Array(password.utf8), salt: salt, using: .sha256, outputByteCount: 32,
            unsafeUncheckedRounds: iterations)
        let encrypted = try AES._CBC.encrypt(privateKeyDER, using: key, iv: try AES._CBC.IV(ivBytes: iv))
        return try der { coder in
            try coder.appendConstructedNode(identifier: .sequence) { coder in
                try coder.appendConstructedNode(identifier: .sequence) { coder in
                    try coder.serialize(OID.pbes2)
                    try coder.appendConstructedNode(identifier: .sequence) { coder in
                        try coder.appendConstructedNode(identifier: .sequence) { coder in
                            try coder.serialize(OID.pbkdf2)
                            try coder.appendConstructedNode(identifier: .sequence) { coder in
                                try coder.serialize(ASN1OctetString(contentBytes: ArraySlice(salt)))
                                try coder.serialize(iterations)
                                try algorithm(OID.hmacWithSHA256, into: &coder)
                            }
                        }
                        try coder.appendConstructedNode(identifier: .sequence) { coder in
                            try coder.serialize(OID.aes256CBC)
                            try coder.serialize(ASN1OctetString(contentBytes: ArraySlice(iv)))
                        }
                    }
                }
                try coder.serialize(ASN1OctetString(contentBytes: ArraySlice(encrypted)))
            }
        }
    }

    /// SafeBag with an optional localKeyId attribute.
    static func safeBag(_ type: ASN1ObjectIdentifier, value: [UInt8], localKeyID: [UInt8]?) throws -> [UInt8] {
        try der { coder in
            try coder.appendConstructedNode(identifier: .sequence) { coder in
                try coder.serialize(type)
                try coder.appendConstructedNode(identifier: .init(tagWithNumber: 0, tagClass: .contextSpecific)) {
                    $0.serializeRawBytes(value)
                }
                if let localKeyID {
                    try coder.appendConstructedNode(identifier: .set) { coder in
                        try coder.appendConstructedNode(identifier: .sequence) { coder in
                            try coder.serialize(OID.localKeyID)
                            try coder.appendConstructedNode(identifier: .set) {
                                try $0.serialize(ASN1OctetString(contentBytes: ArraySlice(localKeyID)))
                            }
                        }
                    }
                }
            }
        }
    }

    static func sequenceOf(_ elements: [[UInt8]]) throws -> [UInt8] {
        try der { coder in
            try coder.appendConstructedNode(identifier: .sequence) { coder in
                for element in elements { coder.serializeRawBytes(element) }
            }
        }
    }

    /// ContentInfo of type data around `content`.
    static func dataContentInfo(_ content: [UInt8], into coder: inout DER.Serializer) throws {
        try coder.appendConstructedNode(identifier: .sequence) { coder in
            try coder.serialize(OID.data)
            try coder.appendConstructedNode(identifier: .init(tagWithNumber: 0, tagClass: .contextSpecific)) {
                try $0.serialize(ASN1OctetString(contentBytes: ArraySlice(content)))
            }
        }
    }

    static func algorithm(_ oid: ASN1ObjectIdentifier, into coder: inout DER.Serializer) throws {
        try coder.appendConstructedNode(identifier: .sequence) { coder in
            try coder.serialize(oid)
            try coder.serialize(ASN1Null())
        }
    }

    static func der(_ body: (inout DER.Serializer) throws -> Void) throws -> [UInt8] {
        var coder = DER.Serializer()
        try body(&coder)
        return coder.serializedBytes
    }

    static func randomBytes(_ count: Int) -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        return (0..<count).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
    }

    /// The PKCS#12 key derivation of RFC 7292 appendix B.2 with SHA-256 (u = 32, v = 64).
    static func pkcs12KDF(password: String, salt: [UInt8], id: UInt8, iterations: Int, count: Int) -> [UInt8] {
        let v = 64
        var passwordBytes: [UInt8] = []
        for unit in password.utf16 { passwordBytes += [UInt8(unit >> 8), UInt8(unit & 0xFF)] }
        passwordBytes += [0, 0]
        func stretch(_ bytes: [UInt8]) -> [UInt8] {
            guard !bytes.isEmpty else { return [] }
            let length = v * ((bytes.count + v - 1) / v)
            return (0..<length).map { bytes[$0 % bytes.count] }
        }
        let diversifier = [UInt8](repeating: id, count: v)
        var input = stretch(salt) + stretch(passwordBytes)
        var output: [UInt8] = []
        while output.count < count {
            var block = Array(SHA256.hash(data: diversifier + input))
            for _ in 1..<iterations { block = Array(SHA256.hash(data: block)) }
            output += block
            guard output.count < count else { break }
            let b = stretch(block)
            for start in stride(from: 0, to: input.count, by: v) {
                var carry = 1
                for offset in (0..<v).reversed() {
                    let sum = Int(input[start + offset]) + Int(b[offset]) + carry
                    input[start + offset] = UInt8(sum & 0xFF)
                    carry = sum >> 8
                }
            }
        }
        return Array(output.prefix(count))
    }
}
