import Crypto
import HTTPTypes
@_spi(Sigil) import SigilCore
import Synchronization

/// An access token as a DPoP verifier needs it: whose it is, the key it is bound to, until when.
public struct AccessToken: Sendable, Hashable {
    /// `sub`.
    public var subject: String
    /// `cnf.jkt`: the RFC 7638 thumbprint of the key the token is bound to (RFC 9449 §6).
    public var boundThumbprint: String?
    /// `exp`, Unix seconds.
    public var expiresAt: Int64
    /// `iat`, Unix seconds (a fraction dropped), if the token says: a token of a revoked user issued at
    /// or before the revocation, or saying not when, is refused.
    public var issuedAt: Int64?

    /// Creates a token's facts.
    public init(subject: String, boundThumbprint: String?, expiresAt: Int64, issuedAt: Int64? = nil) {
        self.subject = subject
        self.boundThumbprint = boundThumbprint
        self.expiresAt = expiresAt
        self.issuedAt = issuedAt
    }
}

/// Checks access tokens: signature, audience, issuer, expiry (SigilJWT's `JWTAccessTokens` with jwt-kit).
public protocol AccessTokenVerifier: Sendable {
    /// The token's facts once it verified.
    ///
    /// - Throws: when it does not; the DPoP verifier refuses with `invalid_token` and the ``SigilError``'s
    ///   code (`expired` for a token past `exp`), `invalid-signature` for any other error.
    func verify(_ token: String) async throws -> AccessToken
}

/// What a DPoP request proved: the token's subject, the key that made the proof. DPoP signs no body.
public struct DPoPIdentity: Sendable, Hashable {
    /// The access token's `sub`.
    public let subject: String
    /// The proof key's RFC 7638 thumbprint (the token's `cnf.jkt`).
    public let thumbprint: String
    /// The proof's JOSE `alg` (`ES256`, `ES384`, `EdDSA`, `RS256`, `PS256`).
    public let algorithm: String
    /// The proof's `jti`, recorded once.
    public let proofID: String
    /// The access token's `iat`, if it has one.
    public let tokenIssuedAt: Int64?

    /// Creates what a DPoP request proved.
    public init(subject: String, thumbprint: String, algorithm: String, proofID: String, tokenIssuedAt: Int64? = nil) {
        self.subject = subject
        self.thumbprint = thumbprint
        self.algorithm = algorithm
        self.proofID = proofID
        self.tokenIssuedAt = tokenIssuedAt
    }
}

/// Accepts a request carrying `Authorization: DPoP <access token>` and `DPoP: <proof>` (RFC 9449 §4.3
/// and §7): the proof's form, key and signature, `htm`, `htu` (against the URI this server is reached
/// at), `iat` in the window, `ath`, the server's nonce when it gives them; then the access token
/// (signature, audience, issuer, expiry) and its binding (`cnf.jkt` is the proof key's thumbprint);
/// then the proof's `jti`, recorded once in the nonce store for its window (key ID
/// `dpop.<thumbprint>`, so replicas sharing the store refuse a replayed proof as they refuse a
/// replayed signature). Cheap checks first; only an authentic proof with an authentic token touches
/// the store.
///
/// Refusals are ``SigilError``s whose ``SigilError/fields`` carry RFC 9449's
/// `DPoP error="invalid_dpop_proof"|"invalid_token"|"use_dpop_nonce", algs="…"`.
public struct DPoPVerifier: Sendable {
    let tokens: any AccessTokenVerifier
    let nonces: any NonceStore
    let clock: any UnixClock
    /// The accepted `|now − iat|`, in seconds.
    public var maxSkew: Int64 = 300
    /// The scheme and authority clients reach this server at (`https://api.example`), which `htu`
    /// must name; without it, the request's own.
    public var origin: String?
    /// The key kinds a proof's `jwk` may be beyond the built-in ones (`.withRSA`).
    public var keyFormats: KeyFormats = .builtIn
    /// Access tokens verified before, by their SHA-256, until their `exp` (a token is sent with many
    /// requests; each then costs the proof's signature alone). `nil` checks every token every time.
    public var rememberedTokens: RememberedTokens? = RememberedTokens()
    /// Server-provided nonces (RFC 9449 §9): when set, a proof must carry a current one, and answers
    /// give the next in `DPoP-Nonce`.
    public var serverNonces: DPoPNonces?
    /// Whether a request must also carry a verified Sigil signature (sigil-v1 or rfc9421); without
    /// it, a DPoP proof may stand in for one.
    public var requiresSigilSignature = false

    /// Creates a verifier.
    public init(tokens: any AccessTokenVerifier, nonces: any NonceStore, clock: any UnixClock = SystemUnixClock()) {
        self.tokens = tokens
        self.nonces = nonces
        self.clock = clock
    }

    static let proofField = HTTPField.Name("DPoP")!

    /// Whether `request` is a DPoP request (it names the scheme in `Authorization` or carries a proof).
    public static func isPresent(in fields: HTTPFields) -> Bool {
        fields.has(proofField) || fields.values(.authorization).contains(where: namesDPoP)
    }

    /// Whether an `Authorization` value is of the DPoP scheme (`DPoP <token>`, any case).
    static func namesDPoP(_ authorization: String) -> Bool {
        let bytes = Array(authorization.utf8.prefix(5))
        guard bytes.count == 5, authorization.utf8.count > 5, bytes[4] == UInt8(ascii: " ") else { return false }
        return zip(bytes.prefix(4), "dpop".utf8).allSatisfy { ($0 | 0x20) == $1 }
    }

    /// The challenge a refusal of a request that carried no proof at all gets.
    public var challenge: String { "DPoP algs=\"\(DPoPProof.algorithms.joined(separator: " "))\"" }

    /// The current server nonce, for `DPoP-Nonce` on an answer; `nil` when nonces are off.
    public func currentNonce() -> String? { serverNonces?.current(at: clock.now()) }

    /// Verifies `request`.
    ///
    /// - Throws: ``SigilError`` carrying RFC 9449's challenge.
    public func verify(_ request: HTTPRequest) async throws -> DPoPIdentity {
        let fields = request.headerFields
        let authorizations = fields.values(.authorization)
        let proofs = fields.values(Self.proofField)
        guard authorizations.count == 1, let authorization = authorizations.first, Self.namesDPoP(authorization),
            proofs.count == 1
        else {
            throw refusal(
                SigilError(.missingSignature, "a DPoP request has one Authorization: DPoP and one DPoP proof"),
                "invalid_dpop_proof")
        }
        let token = String(authorization.utf8.dropFirst(5).drop { $0 == 0x20 || $0 == 0x09 }) ?? ""
        let now = clock.now()
        let digest = SHA256.hash(data: Array(token.utf8))
        let proof: DPoPProof
        do {
            proof = try DPoPProof.parse(proofs[0], formats: keyFormats)
            guard let origin = self.origin ?? request.authority.map({ "\(request.scheme ?? "https")://\($0)" }) else {
                throw SigilError(.invalidSignature, "the request names no authority for the DPoP proof's htu")
            }
            try proof.check(
                method: request.method.rawValue, uri: origin + (request.path ?? "/"), now: now, maxSkew: maxSkew,
                accessTokenHash: Base64URL.encode(Array(digest)))
        } catch let error as SigilError {
            throw refusal(error, "invalid_dpop_proof")
        }
        if let serverNonces, !serverNonces.accepts(proof.nonce, at: now) {
            throw refusal(
                SigilError(.missingComponent, "the DPoP proof must carry the server's current nonce"),
                "use_dpop_nonce")
        }
        let accessToken: AccessToken
        if let remembered = rememberedTokens?.token(digest, now: now) {
            accessToken = remembered
        } else {
            do {
                accessToken = try await tokens.verify(token)
            } catch let error as SigilError {
                throw refusal(error, "invalid_token")
            } catch {
                throw refusal(SigilError(.invalidSignature, "the access token does not verify"), "invalid_token")
            }
            rememberedTokens?.remember(accessToken, digest: digest, now: now)
        }
        guard accessToken.expiresAt > now else {
            throw refusal(SigilError(.expired, "the access token expired"), "invalid_token")
        }
        guard accessToken.boundThumbprint == proof.thumbprint else {
            throw refusal(
                SigilError(.invalidSignature, "the access token is not bound to the proof's key"), "invalid_token")
        }
        let keyID = "dpop." + proof.thumbprint
        let nonce = SHA256.hash(data: Array(proof.id.utf8)).withUnsafeBytes { Hex.encode(Array($0)) }
        let outcome = await nonces.record(
            keyID: keyID, nonce: nonce, timestamp: proof.issuedAt, expiresAt: proof.issuedAt + maxSkew + 1, now: now)
        if let refused = outcome.refusal(keyID: keyID) {
            throw refusal(
                refused.code == .replayedNonce ? SigilError(.replayedNonce, "the DPoP proof was used before") : refused,
                "invalid_dpop_proof")
        }
        return DPoPIdentity(
            subject: accessToken.subject, thumbprint: proof.thumbprint, algorithm: proof.algorithm,
            proofID: proof.id, tokenIssuedAt: accessToken.issuedAt)
    }

    /// `error` with RFC 9449's challenge (`error`, when given, and `algs`) and a fresh nonce when
    /// nonces are on: the fields DPoP adds to a refusal, beside Sigil's own code.
    func refusal(_ error: SigilError, _ code: String?) -> SigilError {
        var refused = error
        refused.fields[.wwwAuthenticate] = code.map { "DPoP error=\"\($0)\", " + challenge.dropFirst(5) } ?? challenge
        if let nonce = currentNonce() { refused.fields[DPoPNonces.field] = nonce }
        return refused
    }
}

/// Server-provided DPoP nonces (RFC 9449 §9) that need no store: a nonce names a time slot and is
/// keyed with a secret, so replicas sharing the secret accept each other's. One is accepted in its
/// slot and the next (``lifetime`` to twice that). A nonce proves freshness only; a proof is still
/// accepted once, by its `jti`.
public struct DPoPNonces: Sendable {
    /// The `DPoP-Nonce` field.
    public static let field = HTTPField.Name("DPoP-Nonce")!

    let key: SymmetricKey
    /// The length of a slot, in seconds.
    public let lifetime: Int64

    /// Creates nonces keyed with `key` (derive it from the server's master key so replicas agree).
    public init(key: SymmetricKey, lifetime: Int64 = 300) {
        self.key = key
        self.lifetime = max(lifetime, 1)
    }

    /// The nonce of the slot `now` falls in.
    public func current(at now: Int64) -> String { nonce(slot: now.dividingFloor(by: lifetime)) }

    /// Whether `nonce` is this slot's or the previous one's.
    public func accepts(_ nonce: String?, at now: Int64) -> Bool {
        guard let nonce, nonce.utf8.count <= 64 else { return false }
        let slot = now.dividingFloor(by: lifetime)
        return constantTimeEquals(nonce, self.nonce(slot: slot))
            || constantTimeEquals(nonce, self.nonce(slot: slot - 1))
    }

    func nonce(slot: Int64) -> String {
        var message = Array("sigil dpop nonce ".utf8)
        withUnsafeBytes(of: slot.bigEndian) { message += $0 }
        let tag = HMAC<SHA256>.authenticationCode(for: message, using: key)
        return Base64URL.encode(Array(tag.prefix(18)))
    }

    func constantTimeEquals(_ a: String, _ b: String) -> Bool {
        let left = Array(a.utf8)
        let right = Array(b.utf8)
        guard left.count == right.count else { return false }
        return zip(left, right).reduce(0) { $0 | ($1.0 ^ $1.1) } == 0
    }
}

extension Int64 {
    fileprivate func dividingFloor(by divisor: Int64) -> Int64 {
        let quotient = self / divisor
        return (self % divisor != 0 && (self < 0) != (divisor < 0)) ? quotient - 1 : quotient
    }
}

/// Access tokens that verified, by their SHA-256 (never the token itself), each until its `exp`; at
/// most ``capacity`` at once (full, it forgets those expired, then all).
public final class RememberedTokens: Sendable {
    let entries = Mutex<[SHA256Digest: AccessToken]>([:])
    /// The most tokens remembered at once.
    public let capacity: Int

    /// Creates an empty memory.
    public init(capacity: Int = 10_000) { self.capacity = capacity }

    func token(_ digest: SHA256Digest, now: Int64) -> AccessToken? {
        entries.withLock { entries in
            guard let token = entries[digest] else { return nil }
            guard token.expiresAt > now else {
                entries[digest] = nil
                return nil
            }
            return token
        }
    }

    func remember(_ token: AccessToken, digest: SHA256Digest, now: Int64) {
        entries.withLock { entries in
            if entries.count >= capacity {
                entries = entries.filter { $0.value.expiresAt > now }
                if entries.count >= capacity { entries.removeAll() }
            }
            entries[digest] = token
        }
    }
}
