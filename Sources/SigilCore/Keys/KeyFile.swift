import Crypto
import Foundation
import SwiftASN1

/// A key read from a file: a private key (which can also verify), a public key, or an HMAC secret.
public struct LoadedKey: Sendable {
    /// The signing key, when the file held a private key or a secret.
    public let signingKey: SigningKey?
    /// The key that verifies: the public half, or the secret.
    public let verificationKey: VerificationKey

    /// The algorithm the key is registered for.
    public var algorithm: SignatureAlgorithm { verificationKey.algorithm }
}

/// Key files of PROTOCOL.md section 1: PKCS#8 `PRIVATE KEY` and SubjectPublicKeyInfo `PUBLIC KEY` PEM
/// as `openssl` and Python's `cryptography` write them (ML-DSA in the RFC 9881 seed form), SEC1 and
/// PKCS#1 PEM for EC and RSA keys, and HMAC secrets as one line of standard base64.
public enum KeyFile {
    enum OID {
        static let ecPublicKey: ASN1ObjectIdentifier = [1, 2, 840, 10045, 2, 1]
        static let p256: ASN1ObjectIdentifier = [1, 2, 840, 10045, 3, 1, 7]
        static let p384: ASN1ObjectIdentifier = [1, 3, 132, 0, 34]
        static let ed25519: ASN1ObjectIdentifier = [1, 3, 101, 112]
        static let mlDSA65: ASN1ObjectIdentifier = [2, 16, 840, 1, 101, 3, 4, 3, 18]
        static let mlDSA87: ASN1ObjectIdentifier = [2, 16, 840, 1, 101, 3, 4, 3, 19]
        static func mlDSA(_ algorithm: SignatureAlgorithm) -> ASN1ObjectIdentifier {
            algorithm == .mlDSA65 ? mlDSA65 : mlDSA87
        }
    }

    /// Reads a key file's contents.
    ///
    /// - Parameters:
    ///   - contents: the file's bytes.
    ///   - algorithm: the algorithm the key is registered for; `nil` picks the kind's default
    ///     (P-256 → `ecdsa-p256-sha256`, RSA → `rsa-pss-sha512`, a secret → `hmac-sha256`).
    ///   - formats: the kinds read beyond the built-in ones (`.withRSA` from SigilRSA).
    /// - Throws: ``SigilInputError`` for anything that is not a usable key, `algorithm-mismatch`
    ///   when the key cannot be used for `algorithm`.
    public static func load(
        _ contents: some Collection<UInt8>,
        algorithm: SignatureAlgorithm? = nil,
        formats: KeyFormats = .builtIn
    ) throws -> LoadedKey {
        guard contents.count <= 1 << 20 else { throw SigilInputError("key file is larger than 1 MiB") }
        guard let text = String(validating: Array(contents), as: UTF8.self) else {
            throw SigilInputError("key file is not text (PEM or base64 expected)")
        }
        if text.contains("-----BEGIN") {
            let (label, der) = try PEM.decode(text)
            return try load(der: der, label: label, algorithm: algorithm, formats: formats)
        }
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !trimmed.isEmpty, !trimmed.contains(where: \.isWhitespace),
            let secret = Data(base64Encoded: trimmed)
        else {
            throw SigilInputError("key file is neither PEM nor a base64 HMAC secret")
        }
        if let algorithm, algorithm != .hmacSHA256 {
            throw SigilError(.algorithmMismatch, "an HMAC secret cannot be used for \(algorithm)")
        }
        let signing = try SigningKey(hmacSecret: secret)
        return LoadedKey(signingKey: signing, verificationKey: try signing.verificationKey)
    }

    static func load(der: [UInt8], label: String, algorithm: SignatureAlgorithm?, formats: KeyFormats) throws
        -> LoadedKey
    {
        let signing: SigningKey.Material?
        let verifying: VerificationKey.Material
        do {
            switch label {
            case "PRIVATE KEY":
                let material = try privateKeyFromPKCS8(der, formats: formats)
                signing = material
                verifying = publicMaterial(of: material)
            case "PUBLIC KEY":
                signing = nil
                verifying = try publicKeyFromSPKI(der, formats: formats)
            case "EC PRIVATE KEY":
                let material: SigningKey.Material
                if let key = try? P256.Signing.PrivateKey(derRepresentation: der) {
                    material = .p256(key)
                } else {
                    material = .p384(try P384.Signing.PrivateKey(derRepresentation: der))
                }
                signing = material
                verifying = publicMaterial(of: material)
            default:
                if let format = formats.format(forLabel: label) {
                    if label.contains("PRIVATE") {
                        let key = try format.privateKey(der: der, label: label)
                        signing = .external(key)
                        verifying = .external(key.publicKey)
                    } else {
                        signing = nil
                        verifying = .external(try format.publicKey(der: der, label: label))
                    }
                    break
                }
                throw SigilInputError("unsupported PEM block '\(label.prefix(40))'")
            }
        } catch let error as SigilInputError {
            throw error
        } catch {
            throw SigilInputError("the \(label.prefix(40)) in the key file does not parse")
        }
        let chosen = algorithm ?? VerificationKey.algorithms(for: verifying)[0]
        let verificationKey = try VerificationKey(material: verifying, algorithm: chosen)
        let signingKey = try signing.map { try SigningKey(material: $0, algorithm: chosen) }
        return LoadedKey(signingKey: signingKey, verificationKey: verificationKey)
    }

    static func publicMaterial(of material: SigningKey.Material) -> VerificationKey.Material {
        switch material {
        case .hmac(let key): return .hmac(key)
        case .p256(let key): return .p256(key.publicKey)
        case .p384(let key): return .p384(key.publicKey)
        case .ed25519(let key): return .ed25519(key.publicKey)
        case .external(let key): return .external(key.publicKey)
        case .mlDSA(let key): return .mlDSA(key.publicKey)
        }
    }

    static func privateKeyFromPKCS8(_ der: [UInt8], formats: KeyFormats) throws -> SigningKey.Material {
        let root = try DER.parse(der)
        guard root.identifier == .sequence, case .constructed(let nodes) = root.content else {
            throw SigilInputError("PRIVATE KEY is not a PKCS#8 structure")
        }
        var iterator = nodes.makeIterator()
        guard let versionNode = iterator.next(), let algorithmNode = iterator.next(), let keyNode = iterator.next()
        else { throw SigilInputError("PRIVATE KEY is not a PKCS#8 structure") }
        _ = try Int(derEncoded: versionNode)
        let (oid, parameter) = try algorithmIdentifier(algorithmNode)
        let privateKey = try ASN1OctetString(derEncoded: keyNode).bytes
        switch oid {
        case OID.ecPublicKey:
            if parameter == OID.p384 { return .p384(try P384.Signing.PrivateKey(derRepresentation: der)) }
            guard parameter == OID.p256 else { throw SigilInputError("unsupported elliptic curve") }
            return .p256(try P256.Signing.PrivateKey(derRepresentation: der))
        case OID.ed25519:
            let inner = try ASN1OctetString(derEncoded: Array(privateKey)).bytes
            return .ed25519(try Curve25519.Signing.PrivateKey(rawRepresentation: inner))
        case OID.mlDSA65:
            return .mlDSA(try MLDSAPrivateKey(seed: try mlDSASeed(privateKey), algorithm: .mlDSA65))
        case OID.mlDSA87:
            return .mlDSA(try MLDSAPrivateKey(seed: try mlDSASeed(privateKey), algorithm: .mlDSA87))
        default:
            guard let format = formats.format(forOID: oid.description) else {
                throw SigilInputError("unsupported private key algorithm \(oid)")
            }
            return .external(try format.privateKey(der: der, label: "PRIVATE KEY"))
        }
    }

    /// The 32-byte seed of an ML-DSA private key: the `seed [0]` form, or the seed of the `both` form.
    static func mlDSASeed(_ privateKey: ArraySlice<UInt8>) throws -> ArraySlice<UInt8> {
        let node = try DER.parse(privateKey)
        if node.identifier == ASN1Identifier(tagWithNumber: 0, tagClass: .contextSpecific),
            case .primitive(let seed) = node.content, seed.count == 32
        {
            return seed
        }
        if node.identifier == .sequence, case .constructed(let nodes) = node.content,
            let first = nodes.first(where: { _ in true }),
            let seed = try? ASN1OctetString(derEncoded: first).bytes, seed.count == 32
        {
            return seed
        }
        throw SigilInputError("ML-DSA private key is not in the seed form (RFC 9881)")
    }

    static func publicKeyFromSPKI(_ der: [UInt8], formats: KeyFormats) throws -> VerificationKey.Material {
        let root = try DER.parse(der)
        guard root.identifier == .sequence, case .constructed(let nodes) = root.content else {
            throw SigilInputError("PUBLIC KEY is not a SubjectPublicKeyInfo")
        }
        var iterator = nodes.makeIterator()
        guard let algorithmNode = iterator.next(), let keyNode = iterator.next() else {
            throw SigilInputError("PUBLIC KEY is not a SubjectPublicKeyInfo")
        }
        let (oid, parameter) = try algorithmIdentifier(algorithmNode)
        let bits = try ASN1BitString(derEncoded: keyNode)
        guard bits.paddingBits == 0 else { throw SigilInputError("PUBLIC KEY bit string is not whole bytes") }
        let raw = bits.bytes
        switch oid {
        case OID.ecPublicKey:
            if parameter == OID.p384 { return .p384(try P384.Signing.PublicKey(derRepresentation: der)) }
            guard parameter == OID.p256 else { throw SigilInputError("unsupported elliptic curve") }
            return .p256(try P256.Signing.PublicKey(derRepresentation: der))
        case OID.ed25519:
            return .ed25519(try Curve25519.Signing.PublicKey(rawRepresentation: raw))
        case OID.mlDSA65:
            return .mlDSA(try MLDSAPublicKey(rawRepresentation: raw, algorithm: .mlDSA65))
        case OID.mlDSA87:
            return .mlDSA(try MLDSAPublicKey(rawRepresentation: raw, algorithm: .mlDSA87))
        default:
            guard let format = formats.format(forOID: oid.description) else {
                throw SigilInputError("unsupported public key algorithm \(oid)")
            }
            return .external(try format.publicKey(der: der, label: "PUBLIC KEY"))
        }
    }

    static func algorithmIdentifier(_ node: ASN1Node) throws -> (ASN1ObjectIdentifier, ASN1ObjectIdentifier?) {
        guard node.identifier == .sequence, case .constructed(let nodes) = node.content else {
            throw SigilInputError("malformed AlgorithmIdentifier")
        }
        var iterator = nodes.makeIterator()
        guard let oidNode = iterator.next() else { throw SigilInputError("malformed AlgorithmIdentifier") }
        let oid = try ASN1ObjectIdentifier(derEncoded: oidNode)
        let parameter = iterator.next().flatMap { try? ASN1ObjectIdentifier(derEncoded: $0) }
        return (oid, parameter)
    }

    // MARK: Writing

    /// The PEM (or, for an HMAC secret, base64 line) a key file holds for `key`.
    ///
    /// - Warning: the result is secret; write it to a file with owner-only permissions.
    public static func privateKeyFile(for key: SigningKey) throws -> String {
        switch key.material {
        case .hmac(let secret):
            return secret.key.withUnsafeBytes { Data($0).base64EncodedString() } + "\n"
        case .p256(let key): return key.pemRepresentation + "\n"
        case .p384(let key): return key.pemRepresentation + "\n"
        case .ed25519(let key):
            let der = DERWriter.sequence(
                DERWriter.integer0 + DERWriter.sequence(DERWriter.oid(OID.ed25519))
                    + DERWriter.octetString(DERWriter.octetString(Array(key.rawRepresentation)))
            )
            return PEM.encode(der, label: "PRIVATE KEY")
        case .external(let key): return PEM.encode(key.pkcs8, label: "PRIVATE KEY")
        case .mlDSA(let key):
            return PEM.encode(
                mlDSAPrivateDER(oid: OID.mlDSA(key.algorithm), seed: try key.seed()), label: "PRIVATE KEY")
        }
    }

    /// The SubjectPublicKeyInfo PEM of a public key; `nil` for an HMAC secret.
    public static func publicKeyFile(for key: VerificationKey) -> String? {
        switch key.material {
        case .hmac: return nil
        case .p256(let key): return key.pemRepresentation + "\n"
        case .p384(let key): return key.pemRepresentation + "\n"
        case .ed25519(let key): return PEM.encode(spki(OID.ed25519, Array(key.rawRepresentation)), label: "PUBLIC KEY")
        case .external(let key): return PEM.encode(key.subjectPublicKeyInfo, label: "PUBLIC KEY")
        case .mlDSA(let key):
            return PEM.encode(spki(OID.mlDSA(key.algorithm), key.rawRepresentation), label: "PUBLIC KEY")
        }
    }

    static func spki(_ oid: ASN1ObjectIdentifier, _ raw: [UInt8]) -> [UInt8] {
        DERWriter.sequence(DERWriter.sequence(DERWriter.oid(oid)) + DERWriter.bitString(raw))
    }

    static func mlDSAPrivateDER(oid: ASN1ObjectIdentifier, seed: [UInt8]) -> [UInt8] {
        // OneAsymmetricKey with privateKey = OCTET STRING { seed [0] IMPLICIT OCTET STRING } (RFC 9881).
        let seedChoice = DERWriter.tlv(0x80, seed)
        return DERWriter.sequence(
            DERWriter.integer0 + DERWriter.sequence(DERWriter.oid(oid)) + DERWriter.octetString(seedChoice)
        )
    }
}

/// The few DER encodings key files need.
enum DERWriter {
    static let integer0: [UInt8] = [0x02, 0x01, 0x00]

    static func tlv(_ tag: UInt8, _ content: [UInt8]) -> [UInt8] {
        var out: [UInt8] = [tag]
        let length = content.count
        if length < 0x80 {
            out.append(UInt8(length))
        } else {
            var lengthBytes: [UInt8] = []
            var remaining = length
            while remaining > 0 {
                lengthBytes.insert(UInt8(remaining & 0xFF), at: 0)
                remaining >>= 8
            }
            out.append(0x80 | UInt8(lengthBytes.count))
            out += lengthBytes
        }
        return out + content
    }

    static func sequence(_ content: [UInt8]) -> [UInt8] { tlv(0x30, content) }
    static func octetString(_ content: [UInt8]) -> [UInt8] { tlv(0x04, content) }
    static func bitString(_ content: [UInt8]) -> [UInt8] { tlv(0x03, [0] + content) }

    static func oid(_ oid: ASN1ObjectIdentifier) -> [UInt8] {
        var serializer = DER.Serializer()
        // Serializing an OID cannot fail.
        try? serializer.serialize(oid)
        return serializer.serializedBytes
    }
}

/// PEM (RFC 7468) encoding and decoding of a single block.
@_spi(Sigil) public enum PEM {
    /// Decodes the first PEM block of `text`, returning its label and DER bytes.
    @_spi(Sigil) public static func decode(_ text: String) throws -> (label: String, der: [UInt8]) {
        // Byte by byte: every marker is ASCII, and so is base64 (a key read from a store on every
        // cache miss is decoded here, so Foundation's string search is too slow for it).
        let bytes = Array(text.utf8)
        guard let begin = find(Array("-----BEGIN ".utf8), in: bytes, from: 0),
            let labelEnd = find(Array("-----".utf8), in: bytes, from: begin.upperBound)
        else { throw SigilInputError("no PEM block found") }
        let label = String(decoding: bytes[begin.upperBound..<labelEnd.lowerBound], as: UTF8.self)
        guard let end = find(Array("-----END \(label)-----".utf8), in: bytes, from: labelEnd.upperBound) else {
            throw SigilInputError("PEM block '\(label.prefix(40))' has no END line")
        }
        // ASCII whitespace goes; anything else not base64 fails the decoding below.
        let body = bytes[labelEnd.upperBound..<end.lowerBound].filter {
            !($0 == 0x20 || (0x09...0x0D).contains($0))
        }
        guard !body.isEmpty, let data = Data(base64Encoded: Data(body)) else {
            throw SigilInputError("PEM block '\(label.prefix(40))' is not valid base64")
        }
        return (label, Array(data))
    }

    /// The first place `pattern` occurs in `bytes` at or after `start`.
    static func find(_ pattern: [UInt8], in bytes: [UInt8], from start: Int) -> Range<Int>? {
        guard !pattern.isEmpty, bytes.count >= pattern.count, start <= bytes.count - pattern.count else { return nil }
        var index = start
        while index <= bytes.count - pattern.count {
            if bytes[index] == pattern[0], bytes[index..<(index + pattern.count)].elementsEqual(pattern) {
                return index..<(index + pattern.count)
            }
            index += 1
        }
        return nil
    }

    /// The DER of every `CERTIFICATE` block of `text`, in order.
    ///
    /// - Throws: ``SigilInputError`` for a block without its END line or not in base64, or when
    ///   `text` has no certificate.
    @_spi(Sigil) public static func certificates(_ text: String) throws -> [[UInt8]] {
        var certificates: [[UInt8]] = []
        var rest = Substring(text)
        while let begin = rest.range(of: "-----BEGIN CERTIFICATE-----") {
            guard let end = rest.range(of: "-----END CERTIFICATE-----", range: begin.upperBound..<rest.endIndex) else {
                throw SigilInputError("certificate PEM block has no END line")
            }
            certificates.append(try decode(String(rest[begin.lowerBound..<end.upperBound])).der)
            rest = rest[end.upperBound...]
        }
        guard !certificates.isEmpty else { throw SigilInputError("no CERTIFICATE block found") }
        return certificates
    }

    /// Encodes DER bytes as a PEM block with 64-character lines.
    @_spi(Sigil) public static func encode(_ der: [UInt8], label: String) -> String {
        let base64 = Data(der).base64EncodedString()
        var lines = ["-----BEGIN \(label)-----"]
        var index = base64.startIndex
        while index < base64.endIndex {
            let next = base64.index(index, offsetBy: 64, limitedBy: base64.endIndex) ?? base64.endIndex
            lines.append(String(base64[index..<next]))
            index = next
        }
        lines.append("-----END \(label)-----")
        return lines.joined(separator: "\n") + "\n"
    }
}
