@_spi(Sigil) import SigilCore

/// One page of a list operators read (devices, the audit trail), and the cursor of the next one.
public struct Page<Item: Sendable>: Sendable {
    /// The page's items.
    public var items: [Item]
    /// The cursor that asks for the next page (`after=` for devices, `before=` for the audit trail),
    /// or `nil` when this is the last one. Opaque to clients: sent back as it was given.
    public var next: String?

    /// Creates a page.
    public init(items: [Item], next: String? = nil) {
        self.items = items
        self.next = next
    }
}

extension Page: Equatable where Item: Equatable {}

/// The page rule of every list operators read, in `sigil admin`, the admin API and the console: at
/// most ``maximumLimit`` items a page, ``defaultLimit`` unless asked, each page naming the next by
/// an opaque cursor.
///
/// Devices come by device ID ascending (byte order, on every store), the cursor being the last
/// device ID of a page: the next page holds the devices after it. The audit trail comes newest page
/// first, oldest first within a page, the cursor being the oldest row's place in the trail (a row
/// sequence the store assigns as it writes): the next page holds the rows written before it, so
/// rows that share a second are neither skipped nor repeated.
public enum PageRule {
    /// Items a page when the caller names no limit.
    public static let defaultLimit = 100
    /// The most items a page holds.
    public static let maximumLimit = 1_000

    /// `limit`, checked: the default when `nil`.
    ///
    /// - Throws: `invalid-registration` for a limit outside 1...``maximumLimit``.
    public static func limit(_ limit: Int?) throws -> Int {
        guard let limit else { return defaultLimit }
        guard (1...maximumLimit).contains(limit) else { throw badLimit }
        return limit
    }

    /// A query's `limit` text, checked: the default when absent.
    ///
    /// - Throws: `invalid-registration` for anything but a number in 1...``maximumLimit``.
    public static func limit(parsing text: String?) throws -> Int {
        guard let text else { return defaultLimit }
        guard text.utf8.count <= 4, text.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }),
            let limit = Int(text)
        else { throw badLimit }
        return try self.limit(limit)
    }

    static let badLimit = SigilError(.invalidRegistration, "limit is a number from 1 to \(maximumLimit)")

    /// A devices cursor (`after`), checked: a device ID as a page ended with.
    ///
    /// - Throws: `invalid-registration` for an empty or over-long cursor, or one holding a control
    ///   character.
    public static func deviceCursor(_ text: String) throws -> String {
        guard !text.isEmpty, text.utf8.count <= 512,
            !text.unicodeScalars.contains(where: { $0.properties.generalCategory == .control })
        else { throw SigilError(.invalidRegistration, "after is the cursor a page of devices ended with") }
        return text
    }

    /// An audit cursor (`before`), checked: the row sequence it names.
    ///
    /// - Throws: `invalid-registration` for anything but the decimal cursor an audit page gave.
    public static func auditCursor(_ text: String) throws -> Int64 {
        guard (1...19).contains(text.utf8.count),
            text.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }),
            let sequence = Int64(text), sequence > 0
        else { throw SigilError(.invalidRegistration, "before is the cursor a page of the audit trail gave") }
        return sequence
    }

    /// The audit cursor naming the rows before `sequence`.
    public static func auditCursor(before sequence: Int64) -> String { String(sequence) }

    /// The first `limit` of `items` (asked for with one more), and whether there were more.
    static func cut<Item>(_ items: [Item], limit: Int) -> (items: [Item], more: Bool) {
        items.count > limit ? (Array(items.prefix(limit)), true) : (items, false)
    }

    /// `path?name=value&…` with each value percent-encoded (every byte but RFC 3986's unreserved
    /// ones), absent values left out: the target of a `Link: <…>; rel="next"` (RFC 8288).
    public static func link(_ path: String, _ parameters: KeyValuePairs<String, String?>) -> String {
        let query = parameters.compactMap { name, value in
            value.map { name + "=" + percentEncoded($0) }
        }
        return query.isEmpty ? path : path + "?" + query.joined(separator: "&")
    }

    /// `value` with every byte outside RFC 3986's unreserved set written `%XX`.
    static func percentEncoded(_ value: String) -> String {
        let hex = Array("0123456789ABCDEF".utf8)
        var out: [UInt8] = []
        for byte in value.utf8 {
            if PercentEncoding.isUnreserved(byte) {
                out.append(byte)
            } else {
                out += [UInt8(ascii: "%"), hex[Int(byte >> 4)], hex[Int(byte & 0x0F)]]
            }
        }
        return String(decoding: out, as: UTF8.self)
    }
}

/// Byte order of strings (what SQLite's and PostgreSQL's `"C"` collation compare by), the order
/// devices are paged in.
extension String {
    package func precedesInBytes(_ other: String) -> Bool { utf8.lexicographicallyPrecedes(other.utf8) }
}
