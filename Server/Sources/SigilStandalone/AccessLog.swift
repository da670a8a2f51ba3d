import Dispatch
import Foundation
import HTTPTypes
import Hummingbird
@_spi(Sigil) import SigilCore
import SigilHummingbird
import SigilServer
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// `--access-log PATH|-`: one JSON line per request, accepted or refused (README, "Operating Sigil"):
/// `time`, `method`, `path` (query values dropped), `status`, `outcome` (`verified` or the PROTOCOL.md
/// code), `profile`, `keyId`, `deviceId`, `userId` (of a signature that verified, even when the
/// request was refused after it), `client`, `requestId`, `durationMs`, `bodyBytes`. Never a secret, a
/// token, a signature or a body; every value is a JSON string or number, so what a client sends
/// cannot start a line of its own. A file is opened for appending (owner-only when created) and
/// reopened on SIGHUP, for log rotation. Lines are written in batches, within 200 ms.
public final class AccessLog: Sendable {
    /// The file, or `nil` for standard output.
    public let path: String?
    let descriptor: Mutex<Int32>
    /// The SIGHUP source, set once by ``reopenOnHangup()`` before the server runs, cancelled by ``close()``.
    nonisolated(unsafe) var hangups: (any DispatchSourceSignal)?
    /// Writes what is pending every ``flushInterval``, until ``close()``.
    nonisolated(unsafe) var flusher: (any DispatchSourceTimer)?

    /// Opens `path` (`-` for standard output).
    ///
    /// - Throws: ``SigilInputError`` naming the file when it cannot be opened.
    public init(path: String) throws {
        self.path = path == "-" ? nil : path
        descriptor = Mutex(try Self.open(self.path))
        let timer = DispatchSource.makeTimerSource(queue: .global())
        timer.schedule(deadline: .now() + Self.flushInterval, repeating: Self.flushInterval)
        timer.setEventHandler { [weak self] in self?.flush() }
        timer.resume()
        flusher = timer
    }

    static func open(_ path: String?) throws -> Int32 {
        guard let path else { return STDOUT_FILENO }
        // Never through a link (someone's file elsewhere), and owner-only even when it existed before.
        let descriptor = Glibc.open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard descriptor >= 0 else {
            throw SigilInputError("cannot open the access log \(path): \(String(cString: strerror(errno)))")
        }
        var status = stat()
        guard fstat(descriptor, &status) == 0, status.st_mode & S_IFMT == S_IFREG, fchmod(descriptor, 0o600) == 0 else {
            Glibc.close(descriptor)
            throw SigilInputError("the access log \(path) is not a regular file this server can keep owner-only")
        }
        return descriptor
    }

    /// Reopens the file (after a rotation moved it away); on failure the old one stays in use.
    public func reopen() throws {
        guard path != nil else { return }
        flush()
        let reopened = try Self.open(path)
        let old = descriptor.withLock { descriptor in
            defer { descriptor = reopened }
            return descriptor
        }
        _ = Glibc.close(old)
    }

    /// Reopens the file on every SIGHUP from now on (and keeps SIGHUP from ending the process).
    public func reopenOnHangup() {
        signal(SIGHUP, SIG_IGN)
        let source = DispatchSource.makeSignalSource(signal: SIGHUP, queue: .global())
        source.setEventHandler { [weak self] in try? self?.reopen() }
        source.resume()
        hangups = source
    }

    /// Lines not yet written, and the time last formatted (a second's text is made once).
    struct Pending {
        var bytes: [UInt8] = []
        var second: Int64 = .min
        var secondText = ""
    }
    let pending = Mutex(Pending())
    /// Writes what is pending at least this often.
    static let flushInterval = DispatchTimeInterval.milliseconds(200)
    /// Writes at once past this many bytes pending.
    static let flushSize = 32 << 10

    /// Queues one line; it is written within ``flushInterval``, or at once past ``flushSize`` bytes.
    /// The line is written as bytes straight into what is pending, under the one lock.
    func write(_ entry: Entry) {
        let path = Self.withoutQueryValues(entry.path)
        let full = pending.withLock { pending -> [UInt8]? in
            if pending.second != entry.time {
                pending.second = entry.time
                pending.secondText = Date(timeIntervalSince1970: TimeInterval(entry.time)).formatted(.iso8601)
            }
            entry.append(to: &pending.bytes, time: pending.secondText, path: path)
            pending.bytes.append(UInt8(ascii: "\n"))
            guard pending.bytes.count >= Self.flushSize else { return nil }
            defer { pending.bytes.removeAll(keepingCapacity: true) }
            return pending.bytes
        }
        if let full { writeOut(full) }
    }

    /// Writes what is pending.
    public func flush() {
        let bytes = pending.withLock { pending in
            defer { pending.bytes.removeAll(keepingCapacity: true) }
            return pending.bytes
        }
        if !bytes.isEmpty { writeOut(bytes) }
    }

    /// Writes `bytes` whole (a write interrupted by a signal is resumed; a failing one drops the rest).
    func writeOut(_ bytes: [UInt8]) {
        descriptor.withLock { descriptor in
            guard descriptor >= 0 else { return }
            var written = 0
            while written < bytes.count {
                let result = bytes.withUnsafeBytes { buffer in
                    Glibc.write(descriptor, buffer.baseAddress! + written, buffer.count - written)
                }
                if result < 0 && errno == EINTR { continue }
                guard result > 0 else { return }
                written += result
            }
        }
    }

    /// Closes the file.
    public func close() {
        flusher?.cancel()
        hangups?.cancel()
        flush()
        guard path != nil else { return }
        // Never again written to: the number may name another file once it is closed.
        descriptor.withLock { descriptor in
            _ = Glibc.close(descriptor)
            descriptor = -1
        }
    }

    /// One request's line.
    struct Entry {
        var time: Int64
        var method: String
        var path: String
        var status: Int
        var facts: RequestRecord.Facts
        var client: String?
        var requestID: String?
        var duration: Duration

        /// The line, without its newline; `time` is ``time`` as text.
        func line(time: String) -> String {
            var bytes: [UInt8] = []
            append(to: &bytes, time: time, path: AccessLog.withoutQueryValues(path))
            return String(decoding: bytes, as: UTF8.self)
        }

        /// Appends the line, without its newline, to `out`; `time` is ``time`` as text, `path` is
        /// ``path`` without its values (``AccessLog/withoutQueryValues(_:)``).
        func append(to out: inout [UInt8], time: String, path: String) {
            func field(_ name: StaticString) {
                out.append(contentsOf: UnsafeBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount))
            }
            field(#"{"time":"#)
            Problem.appendQuoted(time, to: &out)
            field(#","method":"#)
            Problem.appendQuoted(method, to: &out)
            field(#","path":"#)
            Problem.appendQuoted(path, to: &out)
            field(#","status":"#)
            out.append(contentsOf: String(status).utf8)
            let strings: [(StaticString, String?)] = [
                (#","outcome":"#, facts.outcome), (#","profile":"#, facts.profile), (#","keyId":"#, facts.keyID),
                (#","deviceId":"#, facts.deviceID), (#","userId":"#, facts.userID),
                (#","attestation":"#, facts.attestation), (#","client":"#, client), (#","requestId":"#, requestID),
            ]
            for (name, value) in strings {
                guard let value else { continue }
                field(name)
                Problem.appendQuoted(value, to: &out)
            }
            // Milliseconds with three decimals, from whole microseconds.
            let (seconds, attoseconds) = duration.components
            let micros = max(0, seconds * 1_000_000 + attoseconds / 1_000_000_000_000)
            field(#","durationMs":"#)
            out.append(contentsOf: String(micros / 1_000).utf8)
            let fraction = micros % 1_000
            out.append(contentsOf: [
                UInt8(ascii: "."), 0x30 + UInt8(fraction / 100), 0x30 + UInt8(fraction / 10 % 10),
                0x30 + UInt8(fraction % 10),
            ])
            if let bytes = facts.bodyBytes {
                field(#","bodyBytes":"#)
                out.append(contentsOf: String(bytes).utf8)
            }
            out.append(UInt8(ascii: "}"))
        }
    }

    /// `path` with the value of every query parameter and path parameter dropped (`/a;s=1?x=1&y` →
    /// `/a;s?x&_`): values may carry tokens or personal data; the names say what was asked. A name that
    /// holds an encoded `=` is cut there too; a parameter with no `=` at all is all value (`?<token>`),
    /// written `_`; a fragment is dropped.
    ///
    /// It reads bytes, as a router does: a mark combined with `?` or `;` into one `Character` still
    /// separates (`?\u{301}token=…` keeps no value), and nothing but these ASCII bytes does.
    static func withoutQueryValues(_ path: String) -> String {
        let bytes = path.utf8.prefix { $0 != UInt8(ascii: "#") }
        // A path with no query and no path parameter is logged as it is, less any fragment.
        guard bytes.contains(where: { $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: ";") }) else {
            return bytes.count == path.utf8.count ? path : String(decoding: bytes, as: UTF8.self)
        }
        let target = Array(bytes)
        var out: [UInt8] = []
        out.reserveCapacity(target.count)
        /// Where `text` holds an encoded `=` (`%3d`, either case), if it does.
        func encodedEquals(_ text: ArraySlice<UInt8>) -> Int? {
            text.indices.first { index in
                index + 2 < text.endIndex && text[index] == UInt8(ascii: "%") && text[index + 1] == UInt8(ascii: "3")
                    && text[index + 2] | 0x20 == UInt8(ascii: "d")
            }
        }
        func names(_ text: ArraySlice<UInt8>, separator: UInt8) {
            for (index, parameter) in text.split(separator: separator, omittingEmptySubsequences: false).enumerated() {
                if index > 0 { out.append(separator) }
                let equals = parameter.firstIndex(of: UInt8(ascii: "="))
                guard equals != nil || encodedEquals(parameter) != nil else {
                    if !parameter.isEmpty { out.append(UInt8(ascii: "_")) }
                    continue
                }
                let name = parameter[..<(equals ?? parameter.endIndex)]
                out.append(contentsOf: name[..<(encodedEquals(name) ?? name.endIndex)])
            }
        }
        let mark = target.firstIndex(of: UInt8(ascii: "?")) ?? target.endIndex
        for (index, segment) in target[..<mark].split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false)
            .enumerated()
        {
            if index > 0 { out.append(UInt8(ascii: "/")) }
            guard let semicolon = segment.firstIndex(of: UInt8(ascii: ";")) else {
                out.append(contentsOf: segment)
                continue
            }
            out.append(contentsOf: segment[...semicolon])
            names(segment[(semicolon + 1)...], separator: UInt8(ascii: ";"))
        }
        if mark < target.endIndex {
            out.append(UInt8(ascii: "?"))
            names(target[(mark + 1)...], separator: UInt8(ascii: "&"))
        }
        return String(decoding: out, as: UTF8.self)
    }
}

/// Writes the access log's line for every request that reaches the router, after its answer (or
/// refusal) is made.
struct AccessLogMiddleware: RouterMiddleware {
    typealias Context = SigilBasicRequestContext
    let log: AccessLog
    let clock: any UnixClock

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        let started = ContinuousClock.now
        let record = RequestRecord()
        func entry(_ status: Int) -> AccessLog.Entry {
            AccessLog.Entry(
                time: clock.now(), method: request.method.rawValue, path: request.head.path ?? "/", status: status,
                facts: record.facts, client: GatewayRoutes.clientAddress(context.channel), requestID: context.id,
                duration: ContinuousClock.now - started)
        }
        do {
            let response = try await RequestRecord.$current.withValue(record) { try await next(request, context) }
            log.write(entry(Int(response.status.code)))
            return response
        } catch {
            if let refusal = error as? SigilHTTPError {
                // A route's refusal of an admitted request names its own code.
                record.update { $0.outcome = refusal.error.code.rawValue }
            }
            log.write(entry(Int((error as? any HTTPResponseError)?.status.code ?? 500)))
            throw error
        }
    }
}
