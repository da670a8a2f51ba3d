import Crypto

/// The sigil-v1 body-hash (PROTOCOL.md section 2.5).
public enum BodyHash {
    /// The body-hash of a body: empty for an empty body; with a `Content-Encoding`, the coding
    /// (lowercased, spaces and tabs removed), `:`, and the hex SHA-256 of the raw bytes, so the coding
    /// is signed; otherwise lowercase hex SHA-256 of its JCS form when `canonicalJSON` is on, the
    /// media type is JSON and the body is I-JSON, else of the raw bytes.
    public static func compute(
        _ body: [UInt8],
        contentType: String?,
        contentEncoding: String? = nil,
        canonicalJSON: Bool = true
    ) -> String {
        String(
            decoding: bytes(
                body, contentType: contentType, contentEncoding: contentEncoding, canonicalJSON: canonicalJSON),
            as: UTF8.self)
    }

    /// ``compute(_:contentType:contentEncoding:canonicalJSON:)`` as UTF-8 bytes.
    public static func bytes(
        _ body: [UInt8],
        contentType: String?,
        contentEncoding: String? = nil,
        canonicalJSON: Bool = true
    ) -> [UInt8] {
        if body.isEmpty { return [] }
        if let contentEncoding {
            return codingLabel(contentEncoding) + [UInt8(ascii: ":")]
                + SHA256.hash(data: body).withUnsafeBytes(Hex.bytes)
        }
        if canonicalJSON && isJSONMediaType(contentType),
            let digest = JSONCanonicalizer.withCanonicalForm(of: body, { SHA256.hash(data: $0) })
        {
            return digest.withUnsafeBytes(Hex.bytes)
        }
        return SHA256.hash(data: body).withUnsafeBytes(Hex.bytes)
    }

    /// A `Content-Encoding` value as signed: ASCII lowercased, spaces and tabs removed
    /// (`GZIP, Sigil-HPKE` → `gzip,sigil-hpke`).
    public static func codingLabel(_ contentEncoding: String) -> [UInt8] {
        var label = [UInt8]()
        label.reserveCapacity(contentEncoding.utf8.count)
        for byte in contentEncoding.utf8 where byte != 0x20 && byte != 0x09 {
            label.append(byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte | 0x20 : byte)
        }
        return label
    }

    /// Whether a Content-Type's media type is `application/json` or `application/*+json`
    /// (case-insensitive, parameters ignored).
    public static func isJSONMediaType(_ contentType: String?) -> Bool {
        guard var contentType else { return false }
        return contentType.withUTF8 { utf8 in
            var end = utf8.firstIndex(of: UInt8(ascii: ";")) ?? utf8.endIndex
            var start = utf8.startIndex
            while start < end, utf8[start] == 0x20 || utf8[start] == 0x09 { start += 1 }
            while end > start, utf8[end - 1] == 0x20 || utf8[end - 1] == 0x09 { end -= 1 }
            let mediaType = utf8[start..<end]
            // ASCII letters compare case-insensitively; the literals are lowercase.
            func matches(_ literal: StaticString, at offset: Int) -> Bool {
                guard offset >= 0, offset + literal.utf8CodeUnitCount <= mediaType.count else { return false }
                for index in 0..<literal.utf8CodeUnitCount {
                    var byte = mediaType[mediaType.startIndex + offset + index]
                    if byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") { byte |= 0x20 }
                    if byte != literal.utf8Start[index] { return false }
                }
                return true
            }
            guard matches("application/", at: 0) else { return false }
            let subtype = mediaType.count - 12
            return (subtype == 4 && matches("json", at: 12))
                || (subtype > 5 && matches("+json", at: mediaType.count - 5))
        }
    }
}
