import Foundation
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
                !serial.isEmpty, serial.utf8.allSatisfy({ $0 < 0x80 && Character(Unicode.Scalar($0)).isHexDigit })
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
