import Foundation
import SwiftASN1
@_spi(CMS) import X509

/// An App Attest receipt: a PKCS#7 (CMS) signed container, signed by Apple's fraud receipt key
/// under Apple Root CA - G3, holding fields about an attested key. The attestation carries the first
/// one; each refresh of the fraud metric returns a newer one.
public struct AppAttestReceipt: Sendable, Hashable {
    /// The App ID.
    public let appID: String
    /// The attested key's credential certificate, DER.
    public let attestedCertificate: [UInt8]
    /// The client data hash of the attestation, or the receipt it refreshed.
    public let clientHash: [UInt8]
    /// An opaque token Apple uses for the device.
    public let token: String
    /// `ATTEST` (from an attestation) or `RECEIPT` (from a refresh).
    public let type: String
    /// `sandbox` or `production`, when present.
    public let environment: String?
    /// When Apple made the receipt.
    public let creationTime: Date
    /// The fraud metric: how many attested keys of this app the device has made in 30 days (a
    /// `RECEIPT` only).
    public let riskMetric: Int?
    /// The earliest time to ask for a refresh (a `RECEIPT` only).
    public let notBefore: Date?
    /// When the receipt expires.
    public let expirationTime: Date

    /// The largest receipt accepted (Apple's are about 4 KB).
    public static let maximumSize = 64 << 10
    /// The common name of the certificate that signs receipts.
    public static let signerName = "Application Attestation Fraud Receipt Signing"
    /// The common name of the CA that issues it, under Apple Root CA - G3.
    public static let issuerName = "Apple Application Integration CA 5 - G1"

    static func commonName(_ name: DistinguishedName) -> String? {
        name.lazy.flatMap { $0 }.first { $0.type == .RDNAttributeType.commonName }?.value.description
    }

    /// Verifies a receipt's signature and chain to `root` at `time`, then reads its fields.
    ///
    /// - Throws: ``AppAttestError`` `receipt-invalid`, or `malformed` for fields that do not read.
    public static func verify(
        _ receipt: [UInt8], at time: Date = Date(), root: Certificate = AppAttestVerifier.appleRootCAG3
    )
        async throws -> AppAttestReceipt
    {
        guard !receipt.isEmpty, receipt.count <= maximumSize else {
            throw AppAttestError(.receiptInvalid, "the receipt is empty or larger than 64 KiB")
        }
        let definite = try definiteEncoding(receipt)
        let result = await CMS.isValidAttachedSignature(
            signatureBytes: definite, trustRoots: CertificateStore([root])
        ) {
            RFC5280Policy(validationTime: time)
        }
        guard case .success(let valid) = result else {
            throw AppAttestError(.receiptInvalid, "the receipt is not signed by Apple's receipt key at \(time)")
        }
        // G3 anchors many Apple CAs: the signer must be App Attest's receipt key under its own CA.
        guard Self.commonName(valid.signer.subject) == signerName, Self.commonName(valid.signer.issuer) == issuerName
        else {
            throw AppAttestError(.receiptInvalid, "the receipt is not signed by Apple's App Attest receipt key")
        }
        return try AppAttestReceipt(fields: try content(of: definite))
    }

    /// The receipt with definite lengths, its content in one primitive OCTET STRING, its
    /// certificates in DER's SET order and its digest algorithms without NULL parameters: Apple
    /// writes BER (indefinite lengths, the content in chunks, the chain leaf first), which
    /// swift-certificates' CMS reads only in part. Nodes already in
    /// definite form (each certificate, the signed attributes) are copied byte for byte, so every
    /// signature still covers the bytes it was made over.
    static func definiteEncoding(_ receipt: [UInt8]) throws -> [UInt8] {
        let root: ASN1Node
        do {
            root = try BER.parse(receipt)
        } catch {
            throw AppAttestError(.receiptInvalid, "the receipt is not BER")
        }
        guard root.encodedBytes.count == receipt.count else {
            throw AppAttestError(.receiptInvalid, "bytes after the receipt")
        }
        return try encode(root)
    }

    static func isIndefinite(_ node: ASN1Node) -> Bool {
        node.encodedBytes.count > 1 && node.encodedBytes[node.encodedBytes.startIndex + 1] == 0x80
    }

    /// SHA-2 digest algorithm identifiers with NULL parameters, as Apple writes them, and without,
    /// as swift-certificates compares them (neither is covered by the signature).
    static let digestIdentifiers: [[UInt8]: [UInt8]] = Dictionary(
        uniqueKeysWithValues: [UInt8(1), 2, 3].map { sha in
            let oid: [UInt8] = [0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, sha]
            return ([0x30, 0x0D] + oid + [0x05, 0x00], [0x30, 0x0B] + oid)
        })

    static func needsRewrite(_ node: ASN1Node) -> Bool {
        guard case .constructed(let children) = node.content else { return false }
        return isIndefinite(node) || node.identifier == .octetString
            || digestIdentifiers[Array(node.encodedBytes)] != nil || children.contains(where: needsRewrite)
    }

    static func encode(_ node: ASN1Node) throws -> [UInt8] {
        if let bare = digestIdentifiers[Array(node.encodedBytes)] { return bare }
        guard needsRewrite(node), case .constructed(let children) = node.content else {
            return Array(node.encodedBytes)
        }
        guard let identifier = node.encodedBytes.first, identifier & 0x1F != 0x1F else {
            throw AppAttestError(.receiptInvalid, "the receipt uses a long-form tag")
        }
        if node.identifier == .octetString {
            func octets(_ node: ASN1Node) -> [UInt8] {
                switch node.content {
                case .primitive(let bytes): return Array(bytes)
                case .constructed(let nodes): return nodes.flatMap(octets)
                }
            }
            let value = octets(node)
            return [0x04] + length(value.count) + value
        }
        var encoded = try children.map(encode)
        // A SET OF (the certificates' `[0] IMPLICIT SET`, outside every signature) in DER order.
        if identifier == 0x31 || identifier == 0xA0 || identifier == 0xA1 {
            encoded.sort { $0.lexicographicallyPrecedes($1) }
        }
        let value = encoded.flatMap { $0 }
        return [identifier] + length(value.count) + value
    }

    static func length(_ count: Int) -> [UInt8] {
        guard count >= 0x80 else { return [UInt8(count)] }
        var bytes: [UInt8] = []
        var rest = count
        while rest > 0 {
            bytes.insert(UInt8(rest & 0xFF), at: 0)
            rest >>= 8
        }
        return [0x80 | UInt8(bytes.count)] + bytes
    }

    /// The signed content of a CMS `ContentInfo` (BER): `[0] SignedData { …, encapContentInfo { type, [0] OCTET STRING } }`.
    static func content(of receipt: [UInt8]) throws -> [UInt8] {
        func children(_ node: ASN1Node) throws -> [ASN1Node] {
            guard case .constructed(let nodes) = node.content else {
                throw AppAttestError(.malformed, "the receipt's structure is not CMS")
            }
            return Array(nodes)
        }
        func octets(_ node: ASN1Node) throws -> [UInt8] {
            switch node.content {
            case .primitive(let bytes): return Array(bytes)
            case .constructed(let nodes): return try nodes.flatMap { try octets($0) }
            }
        }
        do {
            let contentInfo = try children(try BER.parse(receipt))
            guard contentInfo.count == 2 else { throw AppAttestError(.malformed, "not a CMS ContentInfo") }
            let signedData = try children(try children(contentInfo[1]).first.orMalformed())
            let encapsulated = try children(try signedData.dropFirst(2).first.orMalformed())
            guard encapsulated.count == 2 else { throw AppAttestError(.malformed, "the receipt has no content") }
            return try octets(try children(encapsulated[1]).first.orMalformed())
        } catch let error as AppAttestError {
            throw error
        } catch {
            throw AppAttestError(.malformed, "the receipt is not BER")
        }
    }

    /// The fields of a receipt's content: `SET OF SEQUENCE { type INTEGER, version INTEGER, value OCTET STRING }`.
    init(fields content: [UInt8]) throws {
        var fields: [Int: [UInt8]] = [:]
        do {
            let set = try DER.parse(content)
            guard case .constructed(let entries) = set.content else { throw AppAttestError(.malformed, "no fields") }
            for entry in entries {
                guard case .constructed(let parts) = entry.content else { continue }
                let items = Array(parts)
                guard items.count == 3, case .primitive(let value) = items[2].content else { continue }
                let type = try Int(derEncoded: items[0])
                fields[type] = Array(value)
            }
        } catch let error as AppAttestError {
            throw error
        } catch {
            throw AppAttestError(.malformed, "the receipt's fields are not DER")
        }
        func text(_ type: Int) -> String? { fields[type].map { String(decoding: $0, as: UTF8.self) } }
        func date(_ type: Int) throws -> Date? {
            guard let value = text(type) else { return nil }
            guard let date = Self.date(value) else { throw AppAttestError(.malformed, "field \(type) is not a time") }
            return date
        }
        guard let appID = text(2), let certificate = fields[3], let clientHash = fields[4], let token = text(5),
            let type = text(6), let creation = try date(12), let expiration = try date(21)
        else {
            throw AppAttestError(.malformed, "the receipt lacks a required field")
        }
        self.appID = appID
        attestedCertificate = certificate
        self.clientHash = clientHash
        self.token = token
        self.type = type
        environment = text(7)
        creationTime = creation
        riskMetric = text(17).flatMap { Int($0) }
        notBefore = try date(19)
        expirationTime = expiration
    }

    /// An ISO 8601 time with or without fractional seconds.
    package static func date(_ text: String) -> Date? {
        let fractional = ISO8601DateFormatter()
        fractional.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return fractional.date(from: text) ?? ISO8601DateFormatter().date(from: text)
    }
}

extension Optional {
    func orMalformed() throws -> Wrapped {
        guard let self else { throw AppAttestError(.malformed, "the receipt's structure is not CMS") }
        return self
    }
}
