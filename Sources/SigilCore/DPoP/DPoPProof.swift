import Crypto
import Foundation

/// A DPoP proof (RFC 9449 §4): a compact JWS of `typ: dpop+jwt`, signed with an asymmetric key it
/// carries as a public `jwk`, naming the request it is for (`htm`, `htu`), when (`iat`), once (`jti`),
/// and the access token it goes with (`ath`).
///
/// ``parse(_:formats:)`` checks the form and the signature (RFC 9449 §4.3, steps 1–7);
/// ``check(method:uri:now:maxSkew:accessToken:nonce:)`` checks it against the request (steps 8–12).
/// Recording `jti` once is the caller's (a nonce store).
public struct DPoPProof: Sendable {
    /// The largest proof read, in bytes.
    public static let maximumSize = 8_192
    /// The JOSE algorithms accepted, for `WWW-Authenticate: DPoP algs="…"`.
    public static let algorithms = AlgorithmEntry.all.filter(\.inDPoP).compactMap(\.jose)

    /// The proof's JOSE `alg` (one of ``algorithms``).
    public let algorithm: String
    /// The proof's public key.
    public let key: VerificationKey
    /// The key's RFC 7638 thumbprint (what an access token's `cnf.jkt` names).
    public let thumbprint: String
    /// `htm`.
    public let method: String
    /// `htu`.
    public let uri: String
    /// `iat`.
    public let issuedAt: Int64
    /// `jti`.
    public let id: String
    /// `ath`, if present.
    public let accessTokenHash: String?
    /// `nonce`, if present.
    public let nonce: String?

    /// Reads a proof and checks its signature with the key it carries.
    ///
    /// - Throws: ``SigilError``: `malformed-signature` (not one compact JWS of `dpop+jwt` with the
    ///   claims RFC 9449 requires, or a `jwk` that is not a public key of its `alg`),
    ///   `unsupported-algorithm` (`none`, `HS*` or any other), `invalid-signature`.
    public static func parse(_ compact: String, formats: KeyFormats = .builtIn) throws -> DPoPProof {
        let bytes = Array(compact.utf8)
        guard bytes.count <= maximumSize else {
            throw malformed("the DPoP proof is larger than \(maximumSize) bytes")
        }
        guard let first = bytes.firstIndex(of: UInt8(ascii: ".")),
            let second = bytes[(first + 1)...].firstIndex(of: UInt8(ascii: ".")),
            !bytes[(second + 1)...].contains(UInt8(ascii: "."))
        else { throw malformed("the DPoP proof is not one compact JWS") }
        let headerBytes = Array(bytes[..<first])
        let decoded = bytes.withUnsafeBufferPointer { buffer in
            (
                Base64URL.decode(UnsafeBufferPointer(rebasing: buffer[(first + 1)..<second])),
                Base64URL.decode(UnsafeBufferPointer(rebasing: buffer[(second + 1)...]))
            )
        }
        guard let claimsJSON = decoded.0, let signature = decoded.1, !signature.isEmpty,
            let claims = StrictJSON.object(claimsJSON)
        else { throw malformed("the DPoP proof's parts do not decode") }
        // A client proves with one key for many requests: the header's checks and its parsed key are
        // kept by the header's exact bytes (which fix `typ`, `alg` and `jwk`).
        let known: KnownKeys.Entry
        if let entry = KnownKeys.shared.entry(headerBytes),
            entry.isBuiltIn || formats.format(for: entry.key.algorithm) != nil
        {
            known = entry
        } else {
            known = try header(headerBytes, formats: formats)
            KnownKeys.shared.keep(headerBytes, known)
        }
        guard let htm = claims["htm"]?.string, let htu = claims["htu"]?.string, let iat = claims["iat"]?.integer,
            let jti = claims["jti"]?.string, !jti.isEmpty, jti.utf8.count <= 256
        else { throw malformed("the DPoP proof lacks htm, htu, iat or jti") }
        let ath = claims["ath"]
        let nonce = claims["nonce"]
        guard ath == nil || ath?.string != nil, nonce == nil || nonce?.string != nil else {
            throw malformed("the DPoP proof's ath or nonce is not a string")
        }
        // The JWS signing input, signed in JOSE's encoding (ECDSA as r‖s, as rfc9421 has it).
        let signingInput = Array(bytes[..<second])
        guard known.isValidSignature(signature, for: signingInput) else {
            throw SigilError(.invalidSignature, "the DPoP proof's signature does not verify with its jwk")
        }
        return DPoPProof(
            algorithm: known.jose, key: known.key, thumbprint: known.thumbprint, method: htm, uri: htu,
            issuedAt: iat, id: jti, accessTokenHash: ath?.string, nonce: nonce?.string)
    }

    /// The protected header's checks: `typ`, an accepted `alg`, a public `jwk` of that algorithm.
    static func header(_ encoded: [UInt8], formats: KeyFormats) throws -> KnownKeys.Entry {
        guard let json = Base64URL.decode(String(decoding: encoded, as: UTF8.self)),
            let header = StrictJSON.object(json)
        else { throw malformed("the DPoP proof's parts do not decode") }
        guard header["typ"]?.string == "dpop+jwt" else { throw malformed("the DPoP proof's typ is not dpop+jwt") }
        // RFC 7515 section 4.1.11: an extension this verifier does not know must not be ignored.
        guard header["crit"] == nil else { throw malformed("the DPoP proof names critical extensions") }
        // The key is read as its entry's (PS256, which has no Sigil algorithm, as an RSA key's).
        guard let name = header["alg"]?.string, let entry = AlgorithmEntry.jose(name), entry.inDPoP else {
            throw SigilError(
                .unsupportedAlgorithm, "the DPoP proof's alg must be one of \(algorithms.joined(separator: ", "))")
        }
        guard let members = header["jwk"]?.stringMembers else { throw malformed("the DPoP proof carries no jwk") }
        do {
            let key = try JWK.verificationKey(members, algorithm: entry.key, formats: formats)
            return KnownKeys.Entry(
                key: key, thumbprint: try JWK(key).thumbprint, jose: name, checkedByName: entry.sigil == nil)
        } catch {
            throw malformed("the DPoP proof's jwk is not a public key for \(name)")
        }
    }

    /// Checks the proof against the request it came with.
    ///
    /// - Parameters:
    ///   - method: the request's method.
    ///   - uri: the request's URI as this server is reached (the scheme and authority it is configured
    ///     with); query and fragment are ignored on both sides, paths compared canonically.
    ///   - accessToken: the access token sent with it (`Authorization: DPoP <token>`), whose hash
    ///     `ath` must be; `nil` where no token goes with the proof.
    /// - Throws: ``SigilError``: `invalid-signature` (another method, URI or token),
    ///   `timestamp-out-of-window` (`iat`).
    public func check(method: String, uri: String, now: Int64, maxSkew: Int64, accessToken: String?) throws {
        try check(
            method: method, uri: uri, now: now, maxSkew: maxSkew,
            accessTokenHash: accessToken.map { Base64URL.encode(Array(SHA256.hash(data: Array($0.utf8)))) })
    }

    /// ``check(method:uri:now:maxSkew:accessToken:)`` with the token's hash computed by the caller.
    public func check(method: String, uri: String, now: Int64, maxSkew: Int64, accessTokenHash: String?) throws {
        guard self.method == method else {
            throw SigilError(.invalidSignature, "the DPoP proof is for another method")
        }
        // The common case, a client naming the URI exactly as the server sees it, needs no parsing.
        let path = uri.utf8.firstIndex { $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#") }.map { uri[..<$0] }
        guard
            self.uri == path ?? uri[...]
                || Self.comparableURI(uri).map({ $0 == Self.comparableURI(self.uri) }) == true
        else {
            throw SigilError(.invalidSignature, "the DPoP proof is for another URI")
        }
        if let refusal = TimeWindow(maxSkew: maxSkew).refusal(of: issuedAt, at: now, what: "the DPoP proof's iat") {
            throw refusal
        }
        if let accessTokenHash, accessTokenHash != self.accessTokenHash {
            throw SigilError(.invalidSignature, "the DPoP proof's ath is not the access token's hash")
        }
    }

    /// `uri` for comparison: scheme and host lowercased, a default port dropped, query and fragment
    /// dropped, the path canonical (PROTOCOL.md section 2.3); `nil` when it is no absolute http(s) URI.
    @_spi(Sigil) public static func comparableURI(_ uri: String) -> String? {
        guard let components = URLComponents(string: uri), let scheme = components.scheme?.lowercased(),
            scheme == "https" || scheme == "http", let host = components.host?.lowercased(), !host.isEmpty
        else { return nil }
        let port = components.port.flatMap {
            (scheme == "https" && $0 == 443) || (scheme == "http" && $0 == 80) ? nil : $0
        }
        let path = components.percentEncodedPath.isEmpty ? "/" : components.percentEncodedPath
        let canonical = String(decoding: CanonicalTarget.canonicalPath(Array(path.utf8)[...]), as: UTF8.self)
        return "\(scheme)://\(host)\(port.map { ":\($0)" } ?? "")\(canonical)"
    }

    static func malformed(_ detail: String) -> SigilError { SigilError(.malformedSignature, detail) }
}

/// Parsed proof keys by the exact bytes of the protected header that carried them (which fix `alg`
/// and `jwk`), at most 4,096 at once. Bytes, not a `String`: strings compare by canonical equivalence,
/// and a header that differs from a cached one by a Kelvin sign must be read, and refused, on its own.
final class KnownKeys: Sendable {
    struct Entry: Sendable {
        let key: VerificationKey
        let thumbprint: String
        /// The header's `alg`.
        let jose: String
        /// Whether the signature is checked by the JOSE name, for an algorithm with no Sigil one (`PS256`).
        let checkedByName: Bool

        /// Checks the JWS signature (ECDSA as JOSE's `r‖s`, as rfc9421 has it).
        func isValidSignature(_ signature: [UInt8], for signingInput: [UInt8]) -> Bool {
            if checkedByName {
                guard case .external(let external) = key.material else { return false }
                return external.isValidSignature(signature, for: signingInput, jose: jose)
            }
            return key.isValidSignature(signature, for: signingInput, profile: .rfc9421)
        }

        /// Whether the key is of a kind SigilCore builds in (an RSA key needs `.withRSA` to be accepted).
        var isBuiltIn: Bool {
            if case .external = key.material { return false }
            return true
        }
    }

    /// A header's exact bytes as a key, hashed in one pass (an array of bytes hashes byte by byte,
    /// which cost a DPoP request more than the rest of its lookup).
    struct Header: Hashable, Sendable {
        let bytes: [UInt8]

        func hash(into hasher: inout Hasher) { bytes.withUnsafeBytes { hasher.combine(bytes: $0) } }
    }

    static let shared = KnownKeys()
    let entries = Locked<[Header: Entry]>([:])

    func entry(_ header: [UInt8]) -> Entry? {
        let key = Header(bytes: header)
        return entries.withLock { $0[key] }
    }

    func keep(_ header: [UInt8], _ entry: Entry) {
        entries.withLock { entries in
            if entries.count >= 4_096 { entries.removeAll() }
            entries[Header(bytes: header)] = entry
        }
    }
}
