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
/// reopened on SIGHUP, for log rotation.
public final class AccessLog: Sendable {
    /// The file, or `nil` for standard output.
    public let path: String?
    let descriptor: Mutex<Int32>
    /// The SIGHUP source, set once by ``reopenOnHangup()`` before the server runs, cancelled by ``close()``.
    nonisolated(unsafe) var hangups: (any DispatchSourceSignal)?

    /// Opens `path` (`-` for standard output).
    ///
    /// - Throws: ``SigilInputError`` naming the file when it cannot be opened.
    public init(path: String) throws {
        self.path = path == "-" ? nil : path
        descriptor = Mutex(try Self.open(self.path))
    }

    static func open(_ path: String?) throws -> Int32 {
        guard let path else { return STDOUT_FILENO }
        let descriptor = Glibc.open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            throw SigilInputError("cannot open the access log \(path): \(String(cString: strerror(errno)))")
        }
        return descriptor
    }

    /// Reopens the file (after a rotation moved it away); on failure the old one stays in use.
    public func reopen() throws {
        guard path != nil else { return }
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

    /// Writes one line.
    func write(_ line: String) {
        var bytes = Array(line.utf8)
        bytes.append(UInt8(ascii: "\n"))
        descriptor.withLock { descriptor in
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
        hangups?.cancel()
        guard path != nil else { return }
        descriptor.withLock { _ = Glibc.close($0) }
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

        var line: String {
            var json =
                "{\"time\":" + Problem.quoted(Date(timeIntervalSince1970: TimeInterval(time)).formatted(.iso8601))
            json += ",\"method\":" + Problem.quoted(method)
            json += ",\"path\":" + Problem.quoted(AccessLog.withoutQueryValues(path))
            json += ",\"status\":\(status)"
            let strings: [(String, String?)] = [
                ("outcome", facts.outcome), ("profile", facts.profile), ("keyId", facts.keyID),
                ("deviceId", facts.deviceID), ("userId", facts.userID), ("client", client), ("requestId", requestID),
            ]
            for (name, value) in strings {
                if let value { json += ",\"\(name)\":" + Problem.quoted(value) }
            }
            let (seconds, attoseconds) = duration.components
            json += ",\"durationMs\":" + String(format: "%.3f", Double(seconds) * 1e3 + Double(attoseconds) / 1e15)
            if let bytes = facts.bodyBytes { json += ",\"bodyBytes\":\(bytes)" }
            return json + "}"
        }
    }

    /// `path` with every query parameter's value dropped (`/a?x=1&y` → `/a?x&y`): values may carry
    /// tokens or personal data; the names say what was asked.
    static func withoutQueryValues(_ path: String) -> String {
        guard let mark = path.firstIndex(of: "?") else { return path }
        let names = path[path.index(after: mark)...].split(separator: "&", omittingEmptySubsequences: false).map {
            $0.prefix { $0 != "=" }
        }
        return String(path[..<mark]) + "?" + names.joined(separator: "&")
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
            log.write(entry(Int(response.status.code)).line)
            return response
        } catch {
            if let refusal = error as? SigilHTTPError {
                // A route's refusal of an admitted request names its own code.
                record.update { $0.outcome = refusal.error.code.rawValue }
            }
            log.write(entry(Int((error as? any HTTPResponseError)?.status.code ?? 500)).line)
            throw error
        }
    }
}
