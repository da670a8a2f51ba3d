@_spi(Sigil) import SigilCore

/// Path prefixes a policy applies under (sealed bodies, monitor mode), matched in every form a router
/// could read a request's path in: canonical (section 2.3: letters lowercased, dot segments removed,
/// one trailing `/` dropped, empty segments and `;` parameters dropped), then with every
/// percent-triplet decoded and canonicalized again until nothing changes. `/API/Account/`,
/// `/api/./account`, `/api//account;x`, `/api%2Faccount` and `/x/..%2Fapi/account` are all read as
/// `/api/account` by some router.
///
/// Which side is safe depends on the policy: a rule that refuses more (sealed bodies only) applies when
/// *any* reading falls under its prefix (``anyReading(of:)``); one that lets more through (monitor
/// mode) only when *every* reading falls under the same prefix (``everyReading(of:)``).
public struct PathPrefixes: Sendable, Hashable {
    /// The prefixes as configured.
    public let prefixes: [String]
    /// Each prefix in its comparable form.
    let comparable: [[UInt8]]
    /// Each prefix as configured, without a trailing `/`: what a router that routes on the raw segments
    /// (Hummingbird's, Vapor's: no dot segment removed, no letter lowercased) matches.
    let raw: [[UInt8]]

    /// Prefixes as configured (`/api/account`).
    public init(_ prefixes: [String]) {
        self.prefixes = prefixes
        self.comparable = prefixes.map { Self.readings(of: $0).last ?? [UInt8(ascii: "/")] }
        self.raw = prefixes.map { prefix in
            var bytes = Array(prefix.utf8)
            while bytes.count > 1, bytes.last == UInt8(ascii: "/") { bytes.removeLast() }
            return bytes
        }
    }

    /// Whether `prefix` can fall under ``everyReading(of:)`` at all: it starts with `/` and is its own
    /// canonical reading (lowercase, no dot segment, nothing encoded). `v1` or `/V1` would be accepted
    /// and never match: every request under them would still be enforced.
    public static func isMonitorable(_ prefix: String) -> Bool {
        let single = PathPrefixes([prefix])
        return prefix.hasPrefix("/") && single.raw[0] == single.comparable[0]
    }

    /// Whether no prefix is configured.
    public var isEmpty: Bool { prefixes.isEmpty }

    /// The configured prefix (the longest) some reading of `path` falls under, the raw path as sent
    /// among them (`/v1/pay/..` canonicalizes out of `/v1/pay`, but a router matching raw segments may
    /// route it under it), or `nil`.
    public func anyReading(of path: String) -> String? {
        guard !prefixes.isEmpty else { return nil }
        let readings = Self.readings(of: path)
        let sent = Array(path.utf8.prefix { $0 != UInt8(ascii: "?") && $0 != UInt8(ascii: "#") })
        return longest { index in
            Self.falls(sent, under: raw[index]) || readings.contains { Self.falls($0, under: comparable[index]) }
        }
    }

    /// The configured prefix (the longest) every reading of `path` falls under, the raw path as sent
    /// among them (segments as a router matches them, `..`, `;` parameters and case kept), or `nil`.
    public func everyReading(of path: String) -> String? {
        guard !prefixes.isEmpty else { return nil }
        let readings = Self.readings(of: path)
        let sent = Array(path.utf8.prefix { $0 != UInt8(ascii: "?") && $0 != UInt8(ascii: "#") })
        return longest { index in
            Self.falls(sent, under: raw[index]) && readings.allSatisfy { Self.falls($0, under: comparable[index]) }
        }
    }

    func longest(where matches: (Int) -> Bool) -> String? {
        var found: (prefix: String, length: Int)?
        for index in prefixes.indices where matches(index) && comparable[index].count > (found?.length ?? -1) {
            found = (prefixes[index], comparable[index].count)
        }
        return found?.prefix
    }

    static func falls(_ path: [UInt8], under prefix: [UInt8]) -> Bool {
        prefix == [UInt8(ascii: "/")] || path == prefix || path.starts(with: prefix + [UInt8(ascii: "/")])
    }

    /// The forms of a path (query and fragment dropped): canonicalized, then decoded and canonicalized
    /// again until stable (at most eight rounds).
    static func readings(of path: String) -> [[UInt8]] {
        let raw = Array(path.utf8.prefix { $0 != UInt8(ascii: "?") && $0 != UInt8(ascii: "#") })
        var readings = [simplified(CanonicalTarget.canonicalPath(raw[...]))]
        for _ in 0..<8 {
            let current = readings[readings.count - 1]
            let decoded = PercentEncoding.decode(current[...])
            let next = simplified(CanonicalTarget.canonicalPath(decoded[...]))
            if next == current { break }
            readings.append(next)
        }
        return readings
    }

    /// `path` without empty segments and without each segment's `;` parameters.
    static func simplified(_ path: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        for segment in path.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: true) {
            let kept = segment.prefix { $0 != UInt8(ascii: ";") }
            guard !kept.isEmpty else { continue }
            out.append(UInt8(ascii: "/"))
            out += kept
        }
        return out.isEmpty ? [UInt8(ascii: "/")] : out
    }
}
