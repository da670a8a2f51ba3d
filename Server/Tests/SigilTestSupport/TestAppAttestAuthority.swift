import Crypto
import Foundation
import SigilAppAttest
@_spi(Sigil) import SigilCore
import SwiftASN1
import X509

/// Encodes a ``CBOR`` item (definite lengths, shortest heads), as a device's App Attest does.
enum CBOREncoder {
    static func encode(_ item: CBOR) -> [UInt8] {
        switch item {
        case .unsigned(let value): return head(0, value)
        case .negative(let value): return head(1, value)
        case .bytes(let bytes): return head(2, UInt64(bytes.count)) + bytes
        case .text(let text): return head(3, UInt64(text.utf8.count)) + Array(text.utf8)
        case .array(let items): return head(4, UInt64(items.count)) + items.flatMap(encode)
        case .map(let pairs): return head(5, UInt64(pairs.count)) + pairs.flatMap { encode($0.key) + encode($0.value) }
        case .tagged(let tag, let item): return head(6, tag) + encode(item)
        case .bool(let value): return [value ? 0xF5 : 0xF4]
        case .null: return [0xF6]
        }
    }

    static func head(_ major: UInt8, _ value: UInt64) -> [UInt8] {
        let type = major << 5
        switch value {
        case 0..<24: return [type | UInt8(value)]
        case 24..<256: return [type | 24, UInt8(value)]
        case 256..<65_536: return [type | 25] + bigEndian(value, 2)
        case 65_536..<4_294_967_296: return [type | 26] + bigEndian(value, 4)
        default: return [type | 27] + bigEndian(value, 8)
        }
    }

    static func bigEndian(_ value: UInt64, _ count: Int) -> [UInt8] {
        (0..<count).reversed().map { UInt8(truncatingIfNeeded: value >> (8 * UInt64($0))) }
    }

    static func map(_ pairs: [(String, CBOR)]) -> CBOR {
        .map(pairs.map { CBOR.Pair(key: .text($0.0), value: $0.1) })
    }
}

/// A stand-in for Apple's App Attest service: a root and an intermediate CA of its own, and a device
/// that makes attestations and assertions exactly as App Attest lays them out, with any one field
/// changeable for the tests of each validation step.
struct TestAppAttestAuthority: Sendable {
    let rootKey = P256.Signing.PrivateKey()
    let intermediateKey = P256.Signing.PrivateKey()
    let root: Certificate
    let intermediate: Certificate
    let now: Date

    static func name(_ commonName: String) throws -> DistinguishedName {
        try DistinguishedName { CommonName(commonName) }
    }

    init(now: Date = Date(timeIntervalSince1970: 1_763_769_600)) throws {
        self.now = now
        root = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: .init(rootKey.publicKey),
            notValidBefore: now - 86_400 * 365, notValidAfter: now + 86_400 * 365 * 10,
            issuer: try Self.name("Test App Attestation Root CA"),
            subject: try Self.name("Test App Attestation Root CA"),
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: nil))
                Critical(KeyUsage(keyCertSign: true))
            },
            issuerPrivateKey: .init(rootKey))
        intermediate = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: .init(intermediateKey.publicKey),
            notValidBefore: now - 86_400 * 30, notValidAfter: now + 86_400 * 365,
            issuer: root.subject, subject: try Self.name("Test App Attestation CA 1"),
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 0))
                Critical(KeyUsage(keyCertSign: true))
            },
            issuerPrivateKey: .init(rootKey))
    }

    /// A verifier trusting this authority's root.
    func verifier(appIDs: [String] = [Self.appID], environments: Set<AppAttestVerifier.Environment> = [.production])
        -> AppAttestVerifier
    {
        AppAttestVerifier(appIDs: appIDs, environments: environments, root: root)
    }

    static let appID = "TEAM123456.dev.sigil.tests"

    /// The fields of one attestation, each changeable before ``object()``.
    struct Attestation {
        var key: P256.Signing.PrivateKey
        var appID = TestAppAttestAuthority.appID
        var aaguid = AppAttestVerifier.Environment.production.aaguid
        var counter: UInt32 = 0
        var clientDataHash: [UInt8]
        var credentialID: [UInt8]?
        /// The nonce the credential certificate carries: `nil` computes it, `[]` leaves it out.
        var nonce: [UInt8]?
        var notValidAfter: Date?
        var fmt = "apple-appattest"

        var keyID: [UInt8] { Array(SHA256.hash(data: key.publicKey.x963Representation)) }

        var authenticatorData: [UInt8] {
            let credential = credentialID ?? keyID
            return Array(SHA256.hash(data: Array(appID.utf8))) + [0x40]
                + CBOREncoder.bigEndian(UInt64(counter), 4) + aaguid
                + CBOREncoder.bigEndian(UInt64(credential.count), 2) + credential
                + CBOREncoder.encode(Self.coseKey(key.publicKey))
        }

        static func coseKey(_ key: P256.Signing.PublicKey) -> CBOR {
            let raw = Array(key.rawRepresentation)
            return .map([
                .init(key: .unsigned(1), value: .unsigned(2)), .init(key: .unsigned(3), value: .negative(6)),
                .init(key: .negative(0), value: .unsigned(1)),
                .init(key: .negative(1), value: .bytes(Array(raw[..<32]))),
                .init(key: .negative(2), value: .bytes(Array(raw[32...]))),
            ])
        }
    }

    /// A device key's attestation for `clientDataHash`.
    func attestation(clientDataHash: [UInt8], key: P256.Signing.PrivateKey = .init()) -> Attestation {
        Attestation(key: key, clientDataHash: clientDataHash)
    }

    /// The attestation object (CBOR) of `fields`, its credential certificate issued now.
    func object(_ fields: Attestation, flipChainByte: Bool = false) throws -> [UInt8] {
        let authenticatorData = fields.authenticatorData
        let nonce = fields.nonce ?? Array(SHA256.hash(data: authenticatorData + fields.clientDataHash))
        let leaf = try Certificate(
            version: .v3, serialNumber: .init(), publicKey: .init(fields.key.publicKey),
            notValidBefore: now - 3600, notValidAfter: fields.notValidAfter ?? now + 3 * 86_400,
            issuer: intermediate.subject, subject: try Self.name(Hex.encode(fields.keyID)),
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.notCertificateAuthority)
                Critical(KeyUsage(digitalSignature: true, nonRepudiation: true, keyEncipherment: true))
                if !nonce.isEmpty {
                    Certificate.Extension(
                        oid: AppAttestVerifier.nonceExtensionOID, critical: false,
                        value: ArraySlice([0x30, 0x24, 0xA1, 0x22, 0x04, 0x20] + nonce))
                }
            },
            issuerPrivateKey: .init(intermediateKey))
        var leafDER = try Self.der(leaf)
        if flipChainByte { leafDER[leafDER.count - 1] ^= 0x01 }
        return CBOREncoder.encode(
            CBOREncoder.map([
                ("fmt", .text(fields.fmt)),
                (
                    "attStmt",
                    CBOREncoder.map([
                        ("x5c", .array([.bytes(leafDER), .bytes(try Self.der(intermediate))])),
                        ("receipt", .bytes(Array("test receipt".utf8))),
                    ])
                ),
                ("authData", .bytes(authenticatorData)),
            ]))
    }

    /// An assertion as `generateAssertion(_:clientDataHash:)` makes it: the signature over
    /// SHA-256(authenticatorData ‖ SHA-256(clientData)), DER.
    static func assertion(
        key: P256.Signing.PrivateKey, clientData: [UInt8], counter: UInt32, appID: String = appID,
        flipSignature: Bool = false
    ) throws -> [UInt8] {
        try assertion(
            key: key, clientDataHash: Array(SHA256.hash(data: clientData)), counter: counter, appID: appID,
            flipSignature: flipSignature)
    }

    /// An assertion over `clientDataHash`, as `DCAppAttestService.generateAssertion` takes it.
    static func assertion(
        key: P256.Signing.PrivateKey, clientDataHash: [UInt8], counter: UInt32, appID: String = appID,
        flipSignature: Bool = false
    ) throws -> [UInt8] {
        let authenticatorData =
            Array(SHA256.hash(data: Array(appID.utf8))) + [0x00] + CBOREncoder.bigEndian(UInt64(counter), 4)
        let nonce = Array(SHA256.hash(data: authenticatorData + clientDataHash))
        var signature = Array(try key.signature(for: nonce).derRepresentation)
        if flipSignature { signature[signature.count - 1] ^= 0x01 }
        return CBOREncoder.encode(
            CBOREncoder.map([("signature", .bytes(signature)), ("authenticatorData", .bytes(authenticatorData))]))
    }

    static func der(_ certificate: Certificate) throws -> [UInt8] {
        var serializer = DER.Serializer()
        try serializer.serialize(certificate)
        return serializer.serializedBytes
    }
}
