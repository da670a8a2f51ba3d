import Crypto

/// The sigil-v1 body-hash (PROTOCOL.md section 2.5).
public enum BodyHash {
    /// The body-hash of a body: empty for an empty body; otherwise lowercase hex SHA-256 of its JCS
    /// form when `canonicalJSON` is on, the media type is JSON and the body is I-JSON, else of the raw bytes.
    public static func compute(
        _ body: [UInt8],
        contentType: String?,
        canonicalJSON: Bool = true
    ) -> String {
        String(decoding: bytes(body, contentType: contentType, canonicalJSON: canonicalJSON), as: UTF8.self)
    }

    /// ``compute(_:contentType:canonicalJSON:)`` as UTF-8 bytes.
    public static func bytes(
        _ body: [UInt8],
        contentType: String?,
        canonicalJSON: Bool = true
    ) -> [UInt8] {
        if body.isEmpty { return [] }
        var out = [UInt8]()
        out.reserveCapacity(64)
        if canonicalJSON && isJSONMediaType(contentType),
            let digest = JSONCanonicalizer.withCanonicalForm(of: body, { SHA256.hash(data: $0) })
        {
            Hex.append(digest, to: &out)
        } else {
            Hex.append(SHA256.hash(data: body), to: &out)
        }
        return out
    }

    /// Whether a Content-Type's media type is `application/json` or `application/*+json`
    /// (case-insensitive, parameters ignored).
    public static func isJSONMediaType(_ contentType: String?) -> Bool {
        guard let contentType else { return false }
        var mediaType = contentType.utf8.prefix { $0 != UInt8(ascii: ";") }[...]
        while let first = mediaType.first, first == 0x20 || first == 0x09 { mediaType.removeFirst() }
        while let last = mediaType.last, last == 0x20 || last == 0x09 { mediaType.removeLast() }
        var lowered = [UInt8]()
        lowered.reserveCapacity(mediaType.count)
        for byte in mediaType {
            lowered.append((UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) ? byte | 0x20 : byte)
        }
        let prefix = Array("application/".utf8)
        guard lowered.starts(with: prefix) else { return false }
        let subtype = lowered[prefix.count...]
        return subtype.elementsEqual("json".utf8)
            || (subtype.count > 5 && subtype.suffix(5).elementsEqual("+json".utf8))
    }
}
