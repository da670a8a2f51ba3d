/// WebAuthn authenticator data as App Attest fills it: `rpIdHash` (32), flags (1), counter (4, big
/// endian), then, in an attestation, the attested credential: AAGUID (16), credential ID length (2),
/// credential ID, and the credential's COSE key.
public struct AuthenticatorData: Sendable, Hashable {
    /// SHA-256 of the App ID.
    public let rpIDHash: [UInt8]
    /// The flags byte.
    public let flags: UInt8
    /// The signature counter.
    public let counter: UInt32
    /// The AAGUID, in an attestation.
    public let aaguid: [UInt8]?
    /// The credential ID, in an attestation.
    public let credentialID: [UInt8]?
    /// The bytes as received.
    public let bytes: [UInt8]

    /// Parses `bytes`.
    ///
    /// - Throws: ``AppAttestError`` `malformed` when they are too short for what they announce.
    public init(_ bytes: [UInt8]) throws {
        guard bytes.count >= 37 else { throw AppAttestError(.malformed, "authenticator data is shorter than 37 bytes") }
        self.bytes = bytes
        rpIDHash = Array(bytes[0..<32])
        flags = bytes[32]
        counter = bytes[33..<37].reduce(0) { $0 << 8 | UInt32($1) }
        // Bit 6 (AT): attested credential data follows. App Attest sets it in assertions too, with
        // nothing after the counter: only bytes that are there are read as a credential.
        guard flags & 0x40 != 0, bytes.count > 37 else {
            aaguid = nil
            credentialID = nil
            return
        }
        guard bytes.count >= 55 else { throw AppAttestError(.malformed, "attested credential data is truncated") }
        aaguid = Array(bytes[37..<53])
        let length = Int(bytes[53]) << 8 | Int(bytes[54])
        guard bytes.count >= 55 + length else { throw AppAttestError(.malformed, "the credential ID is truncated") }
        credentialID = Array(bytes[55..<(55 + length)])
    }
}
