/// The SPKI pins a client accepts for one host, with TrustKit's rules: at least two (one a backup, on
/// a key not in use yet) unless the single pin is explicitly waived through; optionally for the
/// host's subdomains too; optionally until a date, after which they are no longer enforced (so an app
/// nobody updated does not lock itself out when the server's keys move on; the system's trust still
/// applies).
public struct PinSet: Sendable, Hashable {
    /// The host the pins are for, normalized (``normalizedHost(_:)``).
    public let host: String
    /// `sha256/<base64 of SHA-256(SPKI DER)>` values.
    public let pins: Set<String>
    /// Whether the pins apply to the host's subdomains too (`api.example.com` for `example.com`).
    public var includesSubdomains = false
    /// When the pins stop being enforced (Unix seconds), or `nil` for never. Judged by the device's own
    /// clock, which its user (or a forged time source) can move forward: an expiry trades that risk for
    /// an app that keeps working unupdated.
    public var expires: Int64?

    /// Creates a pin set.
    ///
    /// - Parameters:
    ///   - allowSinglePin: accept one pin with no backup; a key change then locks clients out.
    ///   - includesSubdomains: the pins apply to the host's subdomains too.
    ///   - expires: when the pins stop being enforced (Unix seconds).
    /// - Throws: ``SigilInputError`` for a malformed pin, or a single pin without the waiver.
    public init(
        host: String, pins: [String], allowSinglePin: Bool = false, includesSubdomains: Bool = false,
        expires: Int64? = nil
    ) throws {
        self.includesSubdomains = includesSubdomains
        self.expires = expires
        for pin in pins {
            guard pin.hasPrefix("sha256/"), Base64.decode(String(pin.dropFirst(7)))?.count == 32 else {
                throw SigilInputError("a pin is sha256/<base64 of 32 bytes>: \(pin.prefix(60))")
            }
        }
        let unique = Set(pins)
        guard !unique.isEmpty else { throw SigilInputError("no pin for \(host)") }
        guard unique.count >= 2 || allowSinglePin else {
            throw SigilInputError("pin \(host) with a backup pin too (a second key), or waive it explicitly")
        }
        self.host = Self.normalizedHost(host)
        self.pins = unique
    }

    /// A host as pins are looked up by: ASCII lowercased, one trailing `.` removed, so that
    /// `API.Example.com.` finds the pins of `api.example.com` rather than passing as unpinned.
    public static func normalizedHost(_ host: String) -> String {
        var host = host.lowercased()
        if host.count > 1, host.hasSuffix(".") { host.removeLast() }
        return host
    }
}

extension PinSet {
    /// What a check of a presented chain against pin sets finds.
    public enum Verdict: Sendable, Hashable {
        /// A pinned key is in the chain.
        case matched
        /// No pinned key is in the chain: refuse (or report, in report-only mode).
        case mismatch(expected: [String])
        /// No pin set applies to the host (none names it, or the one that does has expired): the
        /// system's trust decides alone.
        case unpinned
    }

    /// Whether these pins apply to `host` (normalized) at `now`.
    public func applies(to host: String, at now: Int64) -> Bool {
        if let expires, now >= expires { return false }
        let host = Self.normalizedHost(host)
        return host == self.host || (includesSubdomains && host.hasSuffix("." + self.host))
    }

    /// The verdict for a chain whose keys' pins are `presented`, for `host` at `now`: the most specific
    /// set that applies (the host's own before a parent domain's) decides.
    public static func verdict(
        host: String, presented: some Sequence<String>, in sets: [PinSet], at now: Int64
    ) -> Verdict {
        let applicable = sets.filter { $0.applies(to: host, at: now) }
        guard let longest = applicable.map(\.host.count).max() else { return .unpinned }
        let expected = applicable.filter { $0.host.count == longest }.reduce(into: Set<String>()) {
            $0.formUnion($1.pins)
        }
        return expected.isDisjoint(with: presented) ? .mismatch(expected: expected.sorted()) : .matched
    }
}
