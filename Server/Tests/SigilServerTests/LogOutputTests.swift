import Logging
import Synchronization
import Testing

@testable import SigilStandalone

/// The `sigil` command's log handler writes the lines swift-log's `StreamLogHandler` writes, with
/// metadata merged in the same order, though it formats them only when a line is written.
@Suite("Log output")
struct LogOutputTests {
    /// Collects what a handler writes.
    final class Lines: TextOutputStream, Sendable {
        let written = Mutex("")
        func write(_ string: String) { written.withLock { $0 += string } }
        /// The lines without their timestamps (the first word), which two handlers may write a second apart.
        var undated: [String] {
            written.withLock { $0 }.split(separator: "\n").map { $0.drop { $0 != " " }.dropFirst() }.map(String.init)
        }
    }

    struct Stream: TextOutputStream, Sendable {
        let lines: Lines
        mutating func write(_ string: String) { lines.write(string) }
    }

    @Test(
        "the same lines as StreamLogHandler: the logger's metadata, a provider's over it and a line's over both, sorted; nothing below the level"
    )
    func sameLines() {
        let provider = Logger.MetadataProvider { ["provided": "p", "shared": "from the provider"] }
        let (deferred, stream) = (Lines(), Lines())
        var loggers = [
            Logger(label: "sigil.serve") { label in
                DeferredMetadataLogHandler(label: label, stream: Stream(lines: deferred), metadataProvider: provider)
            },
            Logger(label: "sigil.serve") { label in
                StreamLogHandler(label: label, stream: Stream(lines: stream), metadataProvider: provider)
            },
        ]
        for index in loggers.indices {
            loggers[index].logLevel = .info
            loggers[index][metadataKey: "hb.request.id"] = "7"
            loggers[index][metadataKey: "shared"] = "from the logger"
            loggers[index][metadataKey: "sigil.key-id"] = "k1"
            loggers[index].info("request refused", metadata: ["sigil.code": "replayed-nonce", "shared": "line"])
            loggers[index].warning("plain")
            loggers[index].debug("not written")
            loggers[index][metadataKey: "sigil.key-id"] = nil
            loggers[index].notice("after a key is removed")
        }
        #expect(deferred.undated.count == 3)
        #expect(deferred.undated == stream.undated)
        #expect(deferred.undated.first?.contains("shared=line") == true)
    }

    @Test("a logger without metadata or provider writes its lines as StreamLogHandler does")
    func noMetadata() {
        let (deferred, stream) = (Lines(), Lines())
        let plain = Logger(label: "") {
            DeferredMetadataLogHandler(label: $0, stream: Stream(lines: deferred), metadataProvider: nil)
        }
        let reference = Logger(label: "") {
            StreamLogHandler(label: $0, stream: Stream(lines: stream), metadataProvider: nil)
        }
        for logger in [plain, reference] {
            logger.info("one")
            logger.error("two", metadata: ["a": "1"])
        }
        #expect(deferred.undated == stream.undated && deferred.undated.count == 2)
    }
}
