import Crypto

/// The signature algorithms of PROTOCOL.md section 1, by their wire names.
public enum SignatureAlgorithm: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// HMAC-SHA256 with a per-device secret of 32 bytes or more.
    case hmacSHA256 = "hmac-sha256"
    /// ECDSA over P-256 with SHA-256.
    case ecdsaP256SHA256 = "ecdsa-p256-sha256"
    /// ECDSA over P-256 with SHA-512 (what iOS's `kSecKeyAlgorithmECDSASignatureMessageX962SHA512` makes).
    case ecdsaP256SHA512 = "ecdsa-p256-sha512"
    /// ECDSA over P-384 with SHA-384.
    case ecdsaP384SHA384 = "ecdsa-p384-sha384"
    /// Ed25519.
    case ed25519 = "ed25519"
    /// RSASSA-PSS with SHA-512 (salt length 64).
    case rsaPSSSHA512 = "rsa-pss-sha512"
    /// RSASSA-PKCS1-v1_5 with SHA-256.
    case rsaV15SHA256 = "rsa-v1_5-sha256"
    /// ML-DSA-65 (FIPS 204, empty context).
    case mlDSA65 = "ml-dsa-65"
    /// ML-DSA-87 (FIPS 204, empty context).
    case mlDSA87 = "ml-dsa-87"
    /// An App Attest assertion (README, "App Attest"): a P-256 key in the Secure Enclave that only
    /// the genuine app can use signs SHA-256(authenticatorData ‖ SHA-256(signature base)); the
    /// signature is the CBOR assertion. Its key is registered by attestation, never generated here.
    case appleAppAttest = "apple-appattest"

    public var description: String { rawValue }

    /// Whether the algorithm uses a shared secret rather than a key pair.
    public var isSymmetric: Bool { self == .hmacSHA256 }

    /// The algorithms whose keys Sigil can make and hold (all but App Attest's, which only the
    /// device's App Attest service makes).
    public static var generatable: [SignatureAlgorithm] { allCases.filter { $0 != .appleAppAttest } }

    /// Parses a wire name, throwing `unsupported-algorithm` for anything else.
    public static func named(_ name: String) throws -> SignatureAlgorithm {
        guard let algorithm = SignatureAlgorithm(rawValue: name) else {
            throw SigilError(.unsupportedAlgorithm, "algorithm '\(name.prefix(64))' is not supported")
        }
        return algorithm
    }
}

/// The two wire profiles, which differ in how ECDSA signatures are encoded.
public enum SignatureProfile: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// The header profile: `X-Timestamp`, `X-Nonce`, `X-Key-ID`, `X-Signature`; ECDSA in DER.
    case sigilV1 = "sigil-v1"
    /// HTTP Message Signatures (RFC 9421); ECDSA as raw r‖s.
    case rfc9421 = "rfc9421"

    public var description: String { rawValue }
}

extension SignatureProfile {
    /// The wire form of a signature a ``SignatureProvider`` made: ECDSA's raw `r‖s` becomes DER in
    /// sigil-v1 and stays `r‖s` in rfc9421; every other algorithm's signature is sent as it is.
    ///
    /// - Throws: ``SigilInputError`` when an ECDSA provider returned anything but `r‖s` of its curve's size.
    public func wireSignature(_ signature: [UInt8], algorithm: SignatureAlgorithm) throws -> [UInt8] {
        do {
            switch (self, algorithm) {
            case (.sigilV1, .ecdsaP256SHA256), (.sigilV1, .ecdsaP256SHA512):
                return Array(try P256.Signing.ECDSASignature(rawRepresentation: signature).derRepresentation)
            case (.sigilV1, .ecdsaP384SHA384):
                return Array(try P384.Signing.ECDSASignature(rawRepresentation: signature).derRepresentation)
            case (.rfc9421, .ecdsaP256SHA256), (.rfc9421, .ecdsaP256SHA512):
                guard signature.count == 64 else { break }
                return signature
            case (.rfc9421, .ecdsaP384SHA384):
                guard signature.count == 96 else { break }
                return signature
            default:
                return signature
            }
        } catch {}
        throw SigilInputError("an \(algorithm) signature provider must return r‖s, not \(signature.count) bytes")
    }
}
