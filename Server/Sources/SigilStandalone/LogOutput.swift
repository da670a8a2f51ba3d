import Logging

/// The log handler of the `sigil` command: swift-log's own `StreamLogHandler` on standard error,
/// the same lines, except that a logger's metadata is formatted when a line is written instead of each
/// time an entry is set.
///
/// `StreamLogHandler` formats its whole metadata again at every set. Hummingbird sets `hb.request.id`
/// on each request's logger and the Sigil middleware `sigil.key-id` on each verified one, so at
/// `info`, where neither request logs a line, that formatting was a microsecond or two of every
/// request spent on text nobody reads.
public struct DeferredMetadataLogHandler: LogHandler {
    /// Writes the lines; holds no metadata of its own, so it never formats any ahead of a line.
    private var stream: StreamLogHandler
    /// The metadata every line of this logger carries.
    public var metadata: Logger.Metadata = [:]
    /// Adds metadata to every line, below the logger's own and the line's.
    public var metadataProvider: Logger.MetadataProvider?

    /// A handler writing to standard error, as `StreamLogHandler.standardError` does.
    public init(label: String, metadataProvider: Logger.MetadataProvider? = LoggingSystem.metadataProvider) {
        self.stream = StreamLogHandler.standardError(label: label, metadataProvider: nil)
        self.metadataProvider = metadataProvider
    }

    /// A handler writing to `stream`.
    public init(
        label: String, stream: any TextOutputStream & Sendable,
        metadataProvider: Logger.MetadataProvider? = LoggingSystem.metadataProvider
    ) {
        self.stream = StreamLogHandler(label: label, stream: stream, metadataProvider: nil)
        self.metadataProvider = metadataProvider
    }

    public var logLevel: Logger.Level {
        get { stream.logLevel }
        set { stream.logLevel = newValue }
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    /// Writes `event` with the logger's metadata, the provider's over it and the line's over both, as
    /// `StreamLogHandler` merges them.
    public func log(event: LogEvent) {
        var event = event
        let provided = metadataProvider?.get() ?? [:]
        if !metadata.isEmpty || !provided.isEmpty {
            var merged = metadata
            merged.merge(provided) { $1 }
            if let explicit = event.metadata { merged.merge(explicit) { $1 } }
            event.metadata = merged
        }
        stream.log(event: event)
    }
}
