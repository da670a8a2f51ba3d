import Foundation
import Synchronization
import X509

/// Google's attestation status list: the serial numbers of attestation certificates that are revoked
/// or suspended (https://android.googleapis.com/attestation/status), which an operator downloads and
/// gives the server (`--android-status FILE`).
///
/// ```json
/// {"entries": {"2c8cdddfd5e03bfc": {"status": "REVOKED", "reason": "KEY_COMPROMISE"}, …}}
/// ```
///
/// Any listed serial is refused, whatever its status (`REVOKED` or `SUSPENDED`) and reason, as
/// Google's verifier does. Serials compare as numbers: hex, case and leading zeros aside.
public struct AttestationStatusList: Sendable, Hashable {
    /// One listed certificate.
    public struct Entry: Sendable, Hashable {
        /// `REVOKED` or `SUSPENDED`.
        public let status: String
        /// `KEY_COMPROMISE`, `CA_COMPROMISE`, `SUPERSEDED`, `SOFTWARE_FLAW`, `UNSPECIFIED`, if given.
        public let reason: String?
    }

    /// The listed serials, normalized (lowercase hex, no leading zeros).
    public let entries: [String: Entry]

    /// The list of `entries`.
    public init(entries: [String: Entry]) {
        self.entries = Dictionary(entries.map { (Self.normalized($0.key), $0.value) }, uniquingKeysWith: { a, _ in a })
    }

    /// Reads the JSON Google publishes.
    ///
    /// - Throws: ``AndroidAttestationError`` `malformed` when it is not that shape.
    public init(json: Data) throws {
        guard let object = try? JSONSerialization.jsonObject(with: json) as? [String: Any],
            let listed = object["entries"] as? [String: Any]
        else { throw AndroidAttestationError(.malformed, "the status list is not {\"entries\": {…}}") }
        var entries: [String: Entry] = [:]
        for (serial, value) in listed {
            guard let fields = value as? [String: Any], let status = fields["status"] as? String,
                !serial.isEmpty, serial.allSatisfy({ $0.isASCII && $0.isHexDigit })
            else {
                throw AndroidAttestationError(.malformed, "the status list's entry \(serial.prefix(40)) is not usable")
            }
            entries[serial] = Entry(status: status, reason: fields["reason"] as? String)
        }
        self.init(entries: entries)
    }

    /// The entry of `certificate`, if it is listed.
    public func entry(for certificate: Certificate) -> Entry? {
        entries[Self.normalized(certificate.serialNumber.bytes.map { String(format: "%02x", $0) }.joined())]
    }

    static func normalized(_ serial: String) -> String {
        let trimmed = serial.lowercased().drop { $0 == "0" }
        return trimmed.isEmpty ? "0" : String(trimmed)
    }
}

/// Google's status list read from a file, and read again when the file changes, so an operator's
/// scheduled download takes effect without a restart. The file's modification time is looked at
/// most once per ``checkInterval`` (at the time the caller gives); a changed file that no longer
/// reads keeps the list read before (a list only grows) and says so in ``lastError``.
public final class AttestationStatusFile: Sendable {
    /// The file.
    public let path: String
    /// How often the file's modification time is looked at, in seconds.
    public let checkInterval: Int64

    struct State {
        var list: AttestationStatusList
        var modified: Date?
        var checkedAt: Int64
        var lastError: String?
    }
    let state: Mutex<State>

    /// Reads `path` now.
    ///
    /// - Throws: ``AndroidAttestationError`` `malformed` when the file cannot be read as a status list.
    public init(path: String, checkInterval: Int64 = 60, now: Int64) throws {
        self.path = path
        self.checkInterval = checkInterval
        let (list, modified) = try Self.read(path)
        state = Mutex(State(list: list, modified: modified, checkedAt: now))
    }

    /// The list as of `now`: the file read again first if it changed since it was last read.
    public func list(at now: Int64) -> AttestationStatusList {
        let (due, known) = state.withLock { state -> (Bool, Date?) in
            guard now - state.checkedAt >= checkInterval || now < state.checkedAt else { return (false, nil) }
            state.checkedAt = now
            return (true, state.modified)
        }
        guard due else { return state.withLock { $0.list } }
        let modified = Self.modified(path)
        guard modified != known else { return state.withLock { $0.list } }
        return state.withLock { state in
            do {
                let (list, modified) = try Self.read(path)
                state.list = list
                state.modified = modified
                state.lastError = nil
            } catch {
                state.modified = modified
                state.lastError = "\(path) no longer reads as a status list; the one read before stands"
            }
            return state.list
        }
    }

    /// Why the last change of the file was not taken, if it was not.
    public var lastError: String? { state.withLock { $0.lastError } }

    static func modified(_ path: String) -> Date? {
        (try? FileManager.default.attributesOfItem(atPath: path))?[.modificationDate] as? Date
    }

    static func read(_ path: String) throws -> (AttestationStatusList, Date?) {
        let modified = modified(path)
        guard let data = FileManager.default.contents(atPath: path) else {
            throw AndroidAttestationError(.malformed, "the status list \(path) cannot be read")
        }
        return (try AttestationStatusList(json: data), modified)
    }
}
