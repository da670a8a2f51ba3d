import HTTPTypes
import Hummingbird
import NIOCore
@_spi(Sigil) import SigilCore
import SigilServer

/// Collects a response body so it can be signed.
final class BodyCollector: @unchecked Sendable {
    private(set) var bytes: [UInt8] = []

    struct Writer: ResponseBodyWriter {
        let collector: BodyCollector
        mutating func write(_ buffer: ByteBuffer) async throws { collector.bytes += buffer.readableBytesView }
        consuming func finish(_ trailingHeaders: HTTPFields?) async throws {}
    }

    var writer: Writer { Writer(collector: self) }
}
