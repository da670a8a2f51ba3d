/// The SPKI pins a client accepts for one host: at least two (one a backup, on a key not in use yet)
/// unless the single pin is explicitly waived through.
public struct PinSet: Sendable, Hashable {
    /// The host the pins are for, normalized (``normalizedHost(_:)``).
    public let host: String
    /// `sha256/<base64 of SHA-256(SPKI DER)>` values.
    public let pins: Set<String>

    /// Creates a pin set.
    ///
    /// - Parameter allowSinglePin: accept one pin with no backup; a key change then locks clients out.
    /// - Throws: ``SigilInputError`` for a malformed pin, or a single pin without the waiver.
    public init(host: String, pins: [String], allowSinglePin: Bool = false) throws {
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
