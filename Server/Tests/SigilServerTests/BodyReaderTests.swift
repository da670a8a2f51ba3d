@_spi(Sigil) import SigilCore
import SigilServer
import Testing

@testable import SigilTestSupport

@Suite("Body reader")
struct BodyReaderTests {
    /// One chunk of bytes, as an async sequence.
    struct OneChunk: AsyncSequence, Sendable {
        let bytes: [UInt8]
        struct AsyncIterator: AsyncIteratorProtocol {
            var bytes: [UInt8]?
            mutating func next() async -> [UInt8]? {
                defer { bytes = nil }
                return bytes
            }
        }
        func makeAsyncIterator() -> AsyncIterator { AsyncIterator(bytes: bytes) }
    }

    @Test("a declared Content-Length sets at most 64 KiB aside before the bytes arrive, and over the limit is refused")
    func declaredLengthIsNotTrusted() async throws {
        let limit = 8 << 20
        let body = try await BodyReader.collect(OneChunk(bytes: [0x7B]), declaredLength: limit, limit: limit)
        #expect(body == [0x7B])
        #expect(body.capacity < 2 * BodyReader.trustedReservation)  // what malloc rounds 64 KiB to, not 8 MiB
        await #expect(throws: SigilError(.bodyTooLarge, "")) {
            _ = try await BodyReader.collect(OneChunk(bytes: [0x7B]), declaredLength: limit + 1, limit: limit)
        }
        await #expect(throws: SigilError(.bodyTooLarge, "")) {
            _ = try await BodyReader.collect(
                OneChunk(bytes: [UInt8](repeating: 0, count: 11)), declaredLength: nil, limit: 10)
        }
    }
}
