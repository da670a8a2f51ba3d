import Crypto

extension Registration {
    /// The signatures of a discovery document (`Sigil-Discovery-Signature`), by which a client that
    /// trusts one response key learns the next one from the server itself.
    ///
    /// The field lists `<keyID>=<base64url signature>` entries separated by `, `; each signs
    /// `"sigil-discovery-v1" LF <keyID> LF <hex SHA-256 of the body as sent>` with that response key, in
    /// the sigil-v1 signature encoding. The server signs with its current key, and with its previous
    /// key during the overlap after a promotion.
    public enum DiscoverySignature {
        /// The header field.
        public static let field = "Sigil-Discovery-Signature"

        /// The signed message for `keyID` over `body`.
        public static func message(keyID: String, body: [UInt8]) -> [UInt8] {
            let digest = SHA256.hash(data: body).withUnsafeBytes { Hex.bytes($0) }
            return Array("sigil-discovery-v1\n\(keyID)\n".utf8) + digest
        }

        /// The field's value: each signer's signature over `body`.
        public static func value(body: [UInt8], signers: [(keyID: String, signer: any SignatureProvider)]) throws
            -> String
        {
            try signers.map { keyID, signer in
                keyID + "="
                    + Base64URL.encode(try signer.signature(for: message(keyID: keyID, body: body), profile: .sigilV1))
            }.joined(separator: ", ")
        }

        /// The key IDs of `trusted` whose signature in `value` verifies over `body`.
        public static func verifiedSigners(_ value: String?, body: [UInt8], trusted: [String: VerificationKey])
            -> [String]
        {
            guard let value, value.utf8.count <= 16_384 else { return [] }
            return value.split(separator: ",").compactMap { entry -> String? in
                let parts = entry.trimmingASCIISpaces.split(separator: "=", maxSplits: 1)
                guard parts.count == 2, let key = trusted[String(parts[0])],
                    let signature = Base64URL.decode(String(parts[1])),
                    key.isValidSignature(
                        signature, for: message(keyID: String(parts[0]), body: body), profile: .sigilV1)
                else { return nil }
                return String(parts[0])
            }
        }
    }
}

extension Substring {
    fileprivate var trimmingASCIISpaces: Substring {
        var text = self
        while text.first == " " || text.first == "\t" { text.removeFirst() }
        while text.last == " " || text.last == "\t" { text.removeLast() }
        return text
    }
}
