import Foundation
@_spi(Sigil) import SigilCore

/// What every JWT Sigil reads must hold beyond its signature, whichever decoder read it: times Sigil
/// can compute with, and a `sub` it can keep and show.
enum ClaimRules {
    /// The last second of year 9999: a NumericDate past it (or before its negative) is no time an
    /// issuer means, and converting it to `Int64` would trap.
    static let latest: Double = 253_402_300_799

    /// A NumericDate (RFC 7519 section 2) as Unix seconds rounded by `rule`, or `nil` when it lies
    /// past year 9999 either way.
    static func seconds(_ date: Date, rounded rule: FloatingPointRoundingRule) -> Int64? {
        let seconds = date.timeIntervalSince1970.rounded(rule)
        guard seconds.isFinite, abs(seconds) <= latest else { return nil }
        return Int64(seconds)
    }

    /// Whether the token's protected header can be honoured: it reads as one strict JSON object and
    /// names no critical extension (`crit`, RFC 7515 section 4.1.11: a recipient that does not
    /// understand one must refuse the token; Sigil understands none, and jwt-kit does not look).
    static func hasAcceptableHeader(_ token: String) -> Bool {
        guard let end = token.utf8.firstIndex(of: UInt8(ascii: ".")),
            let json = Base64URL.decode(String(token[..<end])),
            let header = StrictJSON.object(json, limits: .document)
        else { return false }
        return header["crit"] == nil
    }

    /// Whether `sub` can name a user: 1 to 256 bytes and no control character. It is stored in the
    /// directory, written in the audit trail, shown by the console and sent to a backend in a header;
    /// a NUL would also read back differently from different SQLite readers.
    static func isUsableSubject(_ sub: String) -> Bool {
        !sub.isEmpty && sub.utf8.count <= 256
            && !sub.unicodeScalars.contains { $0.properties.generalCategory == .control }
    }
}
