import HTTPTypes
import Hummingbird
import NIOCore
@_spi(Sigil) import SigilCore
import SigilServer

/// Collects a response body so it can be signed (and, for `sigil bench request`, as the server
/// writes it out).
package final class BodyCollector: @unchecked Sendable {
    package private(set) var bytes: [UInt8] = []

    package init() {}

    package struct Writer: ResponseBodyWriter {
        let collector: BodyCollector
        package mutating func write(_ buffer: ByteBuffer) async throws {
            collector.bytes += buffer.readableBytesView
        }
        package consuming func finish(_ trailingHeaders: HTTPFields?) async throws {}
    }

    package var writer: Writer { Writer(collector: self) }
}
