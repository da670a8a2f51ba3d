import Foundation

/// Text that users and devices supply (user IDs, device and key IDs, reasons, actors, client
/// addresses, attestation words), made safe to print where an operator reads it: `sigil admin`'s
/// lines, the server's log lines.
///
/// A user ID from an enrollment JWT, say, could otherwise hold a newline and a whole line of its own
/// choosing (a fake revocation by an operator), or terminal escape sequences.
public enum OperatorText {
    /// When ``escaped(_:quoting:)`` puts its result in double quotes.
    public enum Quoting: Sendable {
        /// When it is empty or holds a space: a field of a space-separated line stays one field.
        case asNeeded
        /// Always (a free-text field such as a reason).
        case always
        /// Never (text inside a sentence).
        case never
    }

    /// A Unix time as operators read it everywhere (`sigil admin devices`, `audit`, `keys`): ISO 8601
    /// in UTC, to the second (`2026-11-25T10:00:00Z`).
    public static func time(_ unixSeconds: Int64) -> String {
        iso8601.format(Date(timeIntervalSince1970: TimeInterval(unixSeconds)))
    }

    private static let iso8601 = Date.ISO8601FormatStyle()

    /// `text` with everything a terminal would act on, or a reader could mistake, made visible:
    /// `\n`, `\r`, `\t`, `\"`, `\\`, and `\u{…}` (hex) for every other control character and every
    /// scalar outside printable ASCII. Printable ASCII (`/` included) is kept as it is.
    public static func escaped(_ text: String, quoting: Quoting = .asNeeded) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        var spaced = false
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case " ":
                spaced = true
                out += " "
            case _ where scalar.value >= 0x21 && scalar.value <= 0x7E: out.unicodeScalars.append(scalar)
            default: out += "\\u{" + String(scalar.value, radix: 16) + "}"
            }
        }
        switch quoting {
        case .always: return "\"" + out + "\""
        case .asNeeded where spaced || out.isEmpty: return "\"" + out + "\""
        default: return out
        }
    }
}
