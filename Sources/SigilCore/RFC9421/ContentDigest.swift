import Crypto
import Foundation
import HTTPTypes
import RawStructuredFieldValues

/// Content-Digest (RFC 9530) with `sha-256` and `sha-512`.
public enum ContentDigest {
    /// A digest algorithm.
    public enum Algorithm: String, Sendable, CaseIterable {
        /// SHA-256.
        case sha256 = "sha-256"
        /// SHA-512.
        case sha512 = "sha-512"

        func digest(_ body: [UInt8]) -> [UInt8] {
            switch self {
            case .sha256: return Array(SHA256.hash(data: body))
            case .sha512: return Array(SHA512.hash(data: body))
            }
        }
    }

    /// The field value for a body: `sha-256=:…:`.
    public static func fieldValue(for body: [UInt8], algorithm: Algorithm = .sha256) -> String {
        "\(algorithm.rawValue)=:\(Base64.encode(algorithm.digest(body))):"
    }

    /// Prepares a message with a body for signing: sets `Content-Digest` (sha-256) of `body` in
    /// `fields` unless one is there, and adds `content-digest` to `components` unless covered. The one
    /// place requests, responses and the command add it.
    ///
    /// - Returns: the field value set, or `nil` when the body is empty or a Content-Digest was present.
    @discardableResult
    public static func cover(
        _ body: [UInt8],
        in fields: inout HTTPFields,
        components: inout [ComponentIdentifier]
    ) -> String? {
        guard !body.isEmpty else { return nil }
        if !components.contains(.contentDigest) { components.append(.contentDigest) }
        guard !fields.has(MessageSignatures.contentDigestField) else { return nil }
        let value = fieldValue(for: body)
        fields[MessageSignatures.contentDigestField] = value
        return value
    }

    /// ``cover(_:in:components:)`` for a body known by its digest (streamed from a file).
    @discardableResult
    public static func cover(
        _ digest: BodyDigest,
        in fields: inout HTTPFields,
        components: inout [ComponentIdentifier]
    ) -> String? {
        guard digest.count > 0 else { return nil }
        if !components.contains(.contentDigest) { components.append(.contentDigest) }
        guard !fields.has(MessageSignatures.contentDigestField) else { return nil }
        fields[MessageSignatures.contentDigestField] = digest.contentDigest
        return digest.contentDigest
    }

    /// Checks the Content-Digest fields against `body`: every supported algorithm present must
    /// match, and at least one must be present.
    ///
    /// - Throws: `missing-component` when there is no Content-Digest, `digest-mismatch` when it
    ///   does not match, names no supported algorithm, or does not parse.
    public static func verify(_ fields: HTTPFields, body: [UInt8]) throws {
        let values = fields.values(MessageSignatures.contentDigestField)
        guard !values.isEmpty else { throw SigilError(.missingComponent, "Content-Digest is missing") }
        let combined = values.count == 1 ? values[0] : values.joined(separator: ", ")
        guard let dictionary = try? StructuredFields.parseDictionary(Array(combined.utf8)) else {
            throw SigilError(.digestMismatch, "Content-Digest is not a valid Structured Field dictionary")
        }
        var checked = 0
        for (name, member) in dictionary {
            guard let algorithm = Algorithm(rawValue: name) else { continue }
            guard case .item(let item) = member, case .undecodedByteSequence(let base64) = item.bareItem,
                let expected = Base64.decode(base64)
            else {
                throw SigilError(.digestMismatch, "Content-Digest \(name) is not a byte sequence")
            }
            guard expected == algorithm.digest(body) else {
                throw SigilError(.digestMismatch, "Content-Digest \(name) does not match the body")
            }
            checked += 1
        }
        guard checked > 0 else {
            throw SigilError(.digestMismatch, "Content-Digest names no supported algorithm (sha-256, sha-512)")
        }
    }
}
