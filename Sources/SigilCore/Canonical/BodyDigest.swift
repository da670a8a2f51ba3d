import Crypto
import Foundation

/// The SHA-256 of a body too large to hold in memory, read from a file as it streams: what both
/// profiles sign of a body (sigil-v1's body-hash, RFC 9421's Content-Digest) without the body.
public struct BodyDigest: Sendable, Hashable {
    /// SHA-256 of the body's bytes.
    public let sha256: [UInt8]
    /// The body's length in bytes.
    public let count: Int

    /// The digest of `body`.
    public init(_ body: [UInt8]) {
        sha256 = Array(SHA256.hash(data: body))
        count = body.count
    }

    /// The digest of the file at `url`, read a chunk at a time (1 MiB), never whole.
    ///
    /// - Throws: ``SigilInputError`` when the file cannot be opened or read.
    public init(file url: URL) throws {
        guard let handle = try? FileHandle(forReadingFrom: url) else {
            throw SigilInputError("\(url.path) cannot be opened")
        }
        defer { try? handle.close() }
        var hasher = SHA256()
        var count = 0
        while true {
            let chunk: Data?
            do {
                chunk = try handle.read(upToCount: 1 << 20)
            } catch {
                throw SigilInputError("\(url.path) cannot be read")
            }
            guard let chunk, !chunk.isEmpty else { break }
            hasher.update(data: chunk)
            count += chunk.count
        }
        sha256 = Array(hasher.finalize())
        self.count = count
    }

    /// The sigil-v1 body-hash (PROTOCOL.md section 2.5) of the body this digests, as
    /// ``BodyHash/bytes(_:contentType:contentEncoding:canonicalJSON:)`` computes it from the bytes.
    ///
    /// - Throws: ``SigilInputError`` for a JSON body with `canonicalJSON` on: its body-hash is of its
    ///   canonical form, which needs the whole document (send it from memory).
    public func bodyHash(contentType: String?, contentEncoding: String?, canonicalJSON: Bool) throws -> [UInt8] {
        if count == 0 { return [] }
        if let contentEncoding {
            return BodyHash.codingLabel(contentEncoding) + [UInt8(ascii: ":")] + sha256.withUnsafeBytes(Hex.bytes)
        }
        if canonicalJSON && BodyHash.isJSONMediaType(contentType) {
            throw SigilInputError(
                "a JSON body is signed in its canonical form, which needs the whole document: send it from memory")
        }
        return sha256.withUnsafeBytes(Hex.bytes)
    }

    /// The RFC 9530 `Content-Digest` value, `sha-256=:…:`.
    public var contentDigest: String { "sha-256=:\(Base64.encode(sha256)):" }
}
