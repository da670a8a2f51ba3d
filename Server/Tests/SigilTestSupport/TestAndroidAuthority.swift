import Crypto
import Foundation
import SigilAndroidAttestation
import SwiftASN1
import X509

/// A test authority laid out as Google's (a root, an intermediate, the device's attestation key) that
/// issues an attested key's certificate carrying a Key Description the test writes: a genuine chain
/// for a root the test trusts, and every field a policy checks in the test's hands.
struct TestAndroidAuthority {
    let now: Date
    let rootKey = P384.Signing.PrivateKey()
    let intermediateKey = P256.Signing.PrivateKey()
    let deviceKey = P256.Signing.PrivateKey()
    let root: Certificate
    let intermediate: Certificate
    let device: Certificate

    /// The root as a trust anchor.
    var anchor: GoogleAttestationRoots.Root {
        GoogleAttestationRoots.Root(name: "test-attestation-root", certificate: root)
    }

    /// What the Key Description says.
    struct Fields {
        var challenge: [UInt8]
        var attestationVersion = 400
        var securityLevel: KeyDescription.SecurityLevel = .trustedEnvironment
        var algorithm: Int? = 3
        var ecCurve: Int? = 1
        var purposes: [Int] = [2, 3]
        var origin: Int? = 0
        var bootState: RootOfTrust.BootState = .verified
        /// The encoded BOOLEAN's byte: DER's `0xFF`, BER's `0x01`, or `0x00`.
        var lockedByte: UInt8 = 0xFF
        /// Whether the root of trust carries `verifiedBootHash` (attestation version 3 on).
        var hasBootHash = true
        var osPatchLevel: Int? = 202_610
        var packages: [(String, Int)] = [("com.example.app", 7)]
        var signatureDigests: [[UInt8]] = [TestAndroidAuthority.appDigest]
        /// Extra tags in hardwareEnforced, encoded as given (`[tag: DER of the element]`).
        var extraHardwareTags: [(UInt, [UInt8])] = []
    }

    /// SHA-256 of the test app's signing certificate.
    static let appDigest = Array(SHA256.hash(data: Array("test app signing certificate".utf8)))
    /// `com.example.app:<digest>`.
    static var app: AndroidAttestationPolicy.App {
        AndroidAttestationPolicy.App(package: "com.example.app", signingCertificateDigest: appDigest)
    }

    init(now: Date = Date(timeIntervalSince1970: 1_790_000_000)) throws {
        self.now = now
        let rootName = try DistinguishedName { CommonName("Test Key Attestation CA1") }
        root = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: .init(rootKey.publicKey),
            notValidBefore: now - 86_400 * 365, notValidAfter: now + 86_400 * 365 * 10, issuer: rootName,
            subject: rootName, signatureAlgorithm: .ecdsaWithSHA384,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: nil))
                Critical(KeyUsage(keyCertSign: true))
            },
            issuerPrivateKey: .init(rootKey))
        intermediate = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: .init(intermediateKey.publicKey),
            notValidBefore: now - 86_400 * 7, notValidAfter: now + 86_400 * 7, issuer: rootName,
            subject: try DistinguishedName { CommonName("Test Attestation Intermediate") },
            signatureAlgorithm: .ecdsaWithSHA384,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: nil))
                Critical(KeyUsage(keyCertSign: true))
            },
            issuerPrivateKey: .init(rootKey))
        device = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: .init(deviceKey.publicKey),
            notValidBefore: now - 86_400 * 7, notValidAfter: now + 86_400 * 7, issuer: intermediate.subject,
            subject: try DistinguishedName { CommonName("Test Device Attestation Key") },
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 0))
                Critical(KeyUsage(keyCertSign: true))
            },
            issuerPrivateKey: .init(intermediateKey))
    }

    /// The chain (DER, leaf first, root last) of `key`'s certificate carrying `keyDescription` (DER).
    func chain(for key: Certificate.PublicKey, keyDescription: [UInt8], criticalOID: ASN1ObjectIdentifier? = nil)
        throws -> [[UInt8]]
    {
        let leaf = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: key, notValidBefore: now - 3600,
            notValidAfter: now + 86_400 * 365 * 20, issuer: device.subject,
            subject: try DistinguishedName { CommonName("Android Keystore Key") }, signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Certificate.Extension(oid: KeyDescription.oid, critical: false, value: keyDescription[...])
                if let criticalOID { Certificate.Extension(oid: criticalOID, critical: true, value: [0x05, 0x00]) }
            },
            issuerPrivateKey: .init(deviceKey))
        return try [leaf, device, intermediate, root].map { Array(try $0.serializeAsDER()) }
    }

    /// The chain of `key` with a Key Description of `fields`.
    func chain(for key: P256.Signing.PublicKey, _ fields: Fields) throws -> [[UInt8]] {
        try chain(for: .init(key), keyDescription: Self.keyDescription(fields))
    }

    /// A Key Description's DER.
    static func keyDescription(_ fields: Fields) throws -> [UInt8] {
        var serializer = DER.Serializer()
        try serializer.appendConstructedNode(identifier: .sequence) { coder in
            try coder.serialize(fields.attestationVersion)
            try fields.securityLevel.rawValue.serialize(into: &coder, withIdentifier: .enumerated)
            try coder.serialize(fields.attestationVersion)
            try fields.securityLevel.rawValue.serialize(into: &coder, withIdentifier: .enumerated)
            try coder.serialize(ASN1OctetString(contentBytes: fields.challenge[...]))
            try coder.serialize(ASN1OctetString(contentBytes: []))
            // softwareEnforced: creation time and the application.
            try coder.appendConstructedNode(identifier: .sequence) { list in
                try list.serialize(1_790_000_000_000, explicitlyTaggedWithTagNumber: 701, tagClass: .contextSpecific)
                var application = DER.Serializer()
                try application.appendConstructedNode(identifier: .sequence) { id in
                    try id.appendConstructedNode(identifier: .set) { set in
                        for (name, version) in fields.packages {
                            try set.appendConstructedNode(identifier: .sequence) { info in
                                try info.serialize(ASN1OctetString(contentBytes: Array(name.utf8)[...]))
                                try info.serialize(version)
                            }
                        }
                    }
                    try id.appendConstructedNode(identifier: .set) { set in
                        for digest in fields.signatureDigests {
                            try set.serialize(ASN1OctetString(contentBytes: digest[...]))
                        }
                    }
                }
                try list.serialize(
                    ASN1OctetString(contentBytes: application.serializedBytes[...]),
                    explicitlyTaggedWithTagNumber: 709, tagClass: .contextSpecific)
            }
            // hardwareEnforced: the key and the device.
            try coder.appendConstructedNode(identifier: .sequence) { list in
                try list.serialize(explicitlyTaggedWithTagNumber: 1, tagClass: .contextSpecific) { tagged in
                    try tagged.appendConstructedNode(identifier: .set) { set in
                        for purpose in fields.purposes { try set.serialize(purpose) }
                    }
                }
                if let algorithm = fields.algorithm {
                    try list.serialize(algorithm, explicitlyTaggedWithTagNumber: 2, tagClass: .contextSpecific)
                }
                try list.serialize(256, explicitlyTaggedWithTagNumber: 3, tagClass: .contextSpecific)
                if let curve = fields.ecCurve {
                    try list.serialize(curve, explicitlyTaggedWithTagNumber: 10, tagClass: .contextSpecific)
                }
                if let origin = fields.origin {
                    try list.serialize(origin, explicitlyTaggedWithTagNumber: 702, tagClass: .contextSpecific)
                }
                try list.serialize(explicitlyTaggedWithTagNumber: 704, tagClass: .contextSpecific) { tagged in
                    try tagged.appendConstructedNode(identifier: .sequence) { root in
                        try root.serialize(ASN1OctetString(contentBytes: [UInt8](repeating: 0xAB, count: 32)[...]))
                        root.appendPrimitiveNode(identifier: .boolean) { $0.append(fields.lockedByte) }
                        try fields.bootState.rawValue.serialize(into: &root, withIdentifier: .enumerated)
                        if fields.hasBootHash {
                            try root.serialize(ASN1OctetString(contentBytes: [UInt8](repeating: 0xCD, count: 32)[...]))
                        }
                    }
                }
                try list.serialize(160_000, explicitlyTaggedWithTagNumber: 705, tagClass: .contextSpecific)
                if let level = fields.osPatchLevel {
                    try list.serialize(level, explicitlyTaggedWithTagNumber: 706, tagClass: .contextSpecific)
                }
                for (tag, element) in fields.extraHardwareTags {
                    list.appendConstructedNode(
                        identifier: ASN1Identifier(tagWithNumber: tag, tagClass: .contextSpecific)
                    ) {
                        $0.serializeRawBytes(element)
                    }
                }
            }
        }
        return serializer.serializedBytes
    }
}

extension Certificate {
    /// The certificate's DER.
    func serializeAsDER() throws -> [UInt8] {
        var serializer = DER.Serializer()
        try serializer.serialize(self)
        return serializer.serializedBytes
    }
}
