import Crypto
import SwiftASN1

/// A public key as a JSON Web Key (RFC 7517), and its RFC 7638 thumbprint.
///
/// | key | `kty` | members |
/// |---|---|---|
/// | P-256, P-384 (ECDSA, App Attest) | `EC` | `crv` (`P-256`, `P-384`), `x`, `y` |
/// | Ed25519 | `OKP` | `crv` (`Ed25519`), `x` (RFC 8037) |
/// | RSA | `RSA` | `n`, `e` |
/// | ML-DSA-65, ML-DSA-87 | `AKP` | `alg` (`ML-DSA-65`, `ML-DSA-87`), `pub` (the JOSE/COSE ML-DSA drafts) |
///
/// Values are base64url without padding (coordinates at their full size, `n` and `e` without leading
/// zero bytes). An HMAC secret has no public JWK. A JWK never holds a private member.
public struct JWK: Sendable, Hashable {
    /// The members RFC 7638 (and the AKP draft) name for the thumbprint, by name.
    public let requiredMembers: [String: String]

    /// The JWK of `key`.
    ///
    /// - Throws: ``SigilInputError`` for an HMAC secret or a key kind with no JWK form.
    public init(_ key: VerificationKey) throws {
        switch key.material {
        case .hmac:
            throw SigilInputError("an HMAC secret has no public JWK")
        case .p256(let key):
            let point = Array(key.x963Representation.dropFirst())
            requiredMembers = Self.ec("P-256", point)
        case .p384(let key):
            let point = Array(key.x963Representation.dropFirst())
            requiredMembers = Self.ec("P-384", point)
        case .ed25519(let key):
            requiredMembers = ["kty": "OKP", "crv": "Ed25519", "x": Base64URL.encode(Array(key.rawRepresentation))]
        case .mlDSA(let key):
            requiredMembers = ["kty": "AKP", "alg": key.name, "pub": Base64URL.encode(key.rawRepresentation)]
        case .external(let external):
            guard external.kindName == "RSA" else {
                throw SigilInputError("a \(external.kindName) key has no JWK form")
            }
            let (modulus, exponent) = try Self.rsaPrimitives(pkcs1: external.rawRepresentation)
            requiredMembers = ["kty": "RSA", "n": Base64URL.encode(modulus), "e": Base64URL.encode(exponent)]
        }
    }

    static func ec(_ curve: String, _ point: [UInt8]) -> [String: String] {
        let half = point.count / 2
        return [
            "kty": "EC", "crv": curve, "x": Base64URL.encode(Array(point[..<half])),
            "y": Base64URL.encode(Array(point[half...])),
        ]
    }

    /// `n` and `e` of a PKCS#1 `RSAPublicKey`, unsigned big-endian without leading zeros.
    static func rsaPrimitives(pkcs1 der: [UInt8]) throws -> ([UInt8], [UInt8]) {
        do {
            let node = try DER.parse(der)
            return try DER.sequence(node, identifier: .sequence) { nodes in
                let modulus = try ArraySlice<UInt8>(derEncoded: &nodes)
                let exponent = try ArraySlice<UInt8>(derEncoded: &nodes)
                return (Array(modulus.drop { $0 == 0 }), Array(exponent.drop { $0 == 0 }))
            }
        } catch {
            throw SigilInputError("the RSA key does not read as PKCS#1")
        }
    }

    /// The required members as RFC 7638 hashes them: sorted by name, no whitespace.
    public var canonicalJSON: String { Self.object(requiredMembers.map { ($0.key, "\"\($0.value)\"") }) }

    /// The RFC 7638 thumbprint: base64url of SHA-256 over ``canonicalJSON``.
    public var thumbprint: String { Base64URL.encode(Array(SHA256.hash(data: Array(canonicalJSON.utf8)))) }

    /// The JWK with `kid` (the thumbprint unless given) and more members (`use`, `alg`, `nbf`…), as
    /// one JSON object with sorted members. Values of `extra` are JSON already (quote strings).
    public func json(kid: String? = nil, extra: [String: String] = [:]) -> String {
        var members = requiredMembers.map { ($0.key, "\"\($0.value)\"") }
        members.append(("kid", "\"\(kid ?? thumbprint)\""))
        for (name, value) in extra where requiredMembers[name] == nil && name != "kid" { members.append((name, value)) }
        return Self.object(members)
    }

    /// `{"a":…,"b":…}` with members sorted by name (UTF-16 code units; names here are ASCII).
    static func object(_ members: [(String, String)]) -> String {
        "{" + members.sorted { $0.0 < $1.0 }.map { "\"\($0.0)\":\($0.1)" }.joined(separator: ",") + "}"
    }

    /// The JOSE `alg` of a Sigil algorithm, where JOSE has one (``AlgorithmEntry``): `ES256`, `ES384`,
    /// `EdDSA`, `PS512`, `RS256`, `ML-DSA-65`, `ML-DSA-87`; `nil` for HMAC (no public key),
    /// `ecdsa-p256-sha512` and App Attest (no JOSE name).
    public static func joseAlgorithm(_ algorithm: SignatureAlgorithm) -> String? {
        AlgorithmEntry.of(algorithm)?.jose
    }
}

extension VerificationKey {
    /// The RFC 7638 JWK thumbprint, or `nil` for an HMAC secret.
    public var jwkThumbprint: String? { (try? JWK(self))?.thumbprint }
}

extension JWK {
    /// The public key a JWK's members describe, for `algorithm` (a JOSE `alg` picks it: see
    /// ``algorithm(jose:)``). A member that would make it private (`d`, `p`, `q`, `dp`, `dq`, `qi`,
    /// `k`, `priv`) is refused, as is any key of another kind than `algorithm` needs.
    ///
    /// - Throws: ``SigilInputError``.
    public static func verificationKey(
        _ members: [String: String], algorithm: SignatureAlgorithm, formats: KeyFormats = .builtIn
    ) throws -> VerificationKey {
        let privateMembers: Set<String> = ["d", "p", "q", "dp", "dq", "qi", "k", "priv", "oth"]
        guard privateMembers.isDisjoint(with: members.keys) else {
            throw SigilInputError("a public JWK must not hold a private member")
        }
        func bytes(_ name: String, count: Int? = nil) throws -> [UInt8] {
            guard let value = members[name], let decoded = Base64URL.decode(value),
                count.map({ decoded.count == $0 }) ?? true
            else { throw SigilInputError("the JWK's \(name) is missing or of the wrong length") }
            return decoded
        }
        do {
            switch (members["kty"], members["crv"], algorithm) {
            case ("EC", "P-256", .ecdsaP256SHA256):
                let key = try P256.Signing.PublicKey(
                    x963Representation: [0x04] + bytes("x", count: 32) + bytes("y", count: 32))
                return try VerificationKey(material: .p256(key), algorithm: algorithm)
            case ("EC", "P-384", .ecdsaP384SHA384):
                let key = try P384.Signing.PublicKey(
                    x963Representation: [0x04] + bytes("x", count: 48) + bytes("y", count: 48))
                return try VerificationKey(material: .p384(key), algorithm: algorithm)
            case ("OKP", "Ed25519", .ed25519):
                let key = try Curve25519.Signing.PublicKey(rawRepresentation: bytes("x", count: 32))
                return try VerificationKey(material: .ed25519(key), algorithm: algorithm)
            case ("RSA", nil, .rsaV15SHA256), ("RSA", nil, .rsaPSSSHA512):
                var serializer = DER.Serializer()
                // DER INTEGERs: minimal, positive (a zero byte before a high bit).
                func integer(_ name: String) throws -> ArraySlice<UInt8> {
                    let magnitude = try bytes(name).drop { $0 == 0 }
                    guard let first = magnitude.first else { throw SigilInputError("the JWK's \(name) is zero") }
                    return first & 0x80 == 0 ? ArraySlice(magnitude) : ArraySlice([0] + magnitude)
                }
                let (modulus, exponent) = (try integer("n"), try integer("e"))
                try serializer.appendConstructedNode(identifier: .sequence) { coder in
                    try coder.serialize(modulus)
                    try coder.serialize(exponent)
                }
                let pkcs1 = serializer.serializedBytes
                let pem = "-----BEGIN RSA PUBLIC KEY-----\n\(Base64.encode(pkcs1))\n-----END RSA PUBLIC KEY-----\n"
                return try KeyFile.load(Array(pem.utf8), algorithm: algorithm, formats: formats).verificationKey
            default:
                throw SigilInputError("the JWK is not a key for \(algorithm)")
            }
        } catch let error as SigilInputError {
            throw error
        } catch {
            throw SigilInputError("the JWK does not describe a valid public key")
        }
    }

    /// The Sigil algorithm of a JOSE `alg` (``AlgorithmEntry``): `ES256`, `ES384`, `EdDSA` (and
    /// `Ed25519`), `PS512`, `RS256`, `ML-DSA-65`, `ML-DSA-87`; `nil` for anything else (`none`, `HS*`,
    /// `PS256`, which has no Sigil algorithm).
    public static func algorithm(jose: String) -> SignatureAlgorithm? {
        AlgorithmEntry.jose(jose)?.sigil
    }
}
