@_spi(Sigil) import SigilCore

/// Reads a streamed body up to a limit: the one implementation the verifier and every route use.
public enum BodyReader {
    /// Collects `chunks`, refusing with `body-too-large` when `declaredLength` (the request's
    /// `Content-Length`) is over `limit`, before reading, or as soon as the body passes `limit`.
    @inlinable
    public static func collect<Chunks: AsyncSequence>(
        _ chunks: Chunks,
        declaredLength: Int?,
        limit: Int
    ) async throws -> [UInt8] where Chunks.Element: Collection<UInt8> {
        if let declaredLength { try check(declaredLength, limit: limit) }
        var body = [UInt8]()
        // A declared length is the sender's word: reserve at most 64 KiB on it, so headers alone
        // (before any signature is checked) cannot set large allocations aside.
        if let declaredLength { body.reserveCapacity(min(declaredLength, Self.trustedReservation)) }
        for try await chunk in chunks {
            try check(body.count + chunk.count, limit: limit)
            body.append(contentsOf: chunk)
        }
        return body
    }

    /// The most reserved on a declared `Content-Length` before the bytes arrive.
    public static let trustedReservation = 64 << 10

    /// Refuses `count` bytes over `limit` with `body-too-large`.
    public static func check(_ count: Int, limit: Int) throws {
        guard count <= limit else {
            throw SigilError(.bodyTooLarge, "the body is larger than \(limit) bytes")
        }
    }
}
