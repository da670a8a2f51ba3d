import Crypto
import HTTPTypes
import SigilCore
import Synchronization

/// An access token as a DPoP verifier needs it: whose it is, the key it is bound to, until when.
public struct AccessToken: Sendable, Hashable {
    /// `sub`.
    public var subject: String
    /// `cnf.jkt`: the RFC 7638 thumbprint of the key the token is bound to (RFC 9449 §6).
    public var boundThumbprint: String?
    /// `exp`, Unix seconds.
    public var expiresAt: Int64

    /// Creates a token's facts.
    public init(subject: String, boundThumbprint: String?, expiresAt: Int64) {
        self.subject = subject
        self.boundThumbprint = boundThumbprint
        self.expiresAt = expiresAt
    }
}

/// Checks access tokens: signature, audience, issuer, expiry (SigilJWT's `JWTAccessTokens` with jwt-kit).
public protocol AccessTokenVerifier: Sendable {
    /// The token's facts once it verified.
    ///
    /// - Throws: any error when it does not; the DPoP verifier refuses with `invalid_token`.
    func verify(_ token: String) async throws -> AccessToken
}

/// What a DPoP request proved: the token's subject, the key that made the proof. DPoP signs no body.
public struct DPoPIdentity: Sendable, Hashable {
    /// The access token's `sub`.
    public let subject: String
    /// The proof key's RFC 7638 thumbprint (the token's `cnf.jkt`).
    public let thumbprint: String
    /// The proof's `jti`, recorded once.
    public let proofID: String
}

/// A refused DPoP request: the Sigil refusal, and the `WWW-Authenticate` challenge RFC 9449 §7.1 gives it.
public struct DPoPRefusal: Error, Sendable {
    /// The Sigil refusal (its code and status).
    public let error: SigilError
    /// `DPoP error="invalid_dpop_proof"|"invalid_token", algs="…"`.
    public let challenge: String
}

/// Accepts a request carrying `Authorization: DPoP <access token>` and `DPoP: <proof>` (RFC 9449 §4.3
/// and §7): the proof's form, key and signature, `htm`, `htu` (against the URI this server is reached
/// at), `iat` in the window, `ath`; then the access token (signature, audience, issuer, expiry) and its
/// binding (`cnf.jkt` is the proof key's thumbprint); then the proof's `jti`, recorded once in the
/// nonce store for its window (key ID `dpop.<thumbprint>`, so replicas sharing the store refuse a
/// replayed proof as they refuse a replayed signature). Cheap checks first; only an authentic proof
/// with an authentic token touches the store.
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

    /// Creates a verifier.
    public init(tokens: any AccessTokenVerifier, nonces: any NonceStore, clock: any UnixClock = SystemUnixClock()) {
        self.tokens = tokens
        self.nonces = nonces
        self.clock = clock
    }

    static let proofField = HTTPField.Name("DPoP")!

    /// Whether `request` is a DPoP request (it names the scheme in `Authorization` or carries a proof).
    public static func isPresent(in fields: HTTPFields) -> Bool {
        fields[proofField] != nil || fields[.authorization]?.lowercased().hasPrefix("dpop ") == true
    }

    /// Verifies `request`.
    ///
    /// - Throws: ``DPoPRefusal``.
    public func verify(_ request: HTTPRequest) async throws -> DPoPIdentity {
        let fields = request.headerFields
        let authorizations = fields[values: .authorization]
        let proofs = fields[values: Self.proofField]
        guard authorizations.count == 1, let authorization = authorizations.first,
            authorization.lowercased().hasPrefix("dpop "), proofs.count == 1
        else {
            throw proofRefusal(
                SigilError(.missingSignature, "a DPoP request has one Authorization: DPoP and one DPoP proof"))
        }
        let token = String(authorization.dropFirst(5)).trimmingCharacters(in: .whitespaces)
        let now = clock.now()
        let proof: DPoPProof
        do {
            proof = try DPoPProof.parse(proofs[0], formats: keyFormats)
            let origin = self.origin ?? "\(request.scheme ?? "https")://\(request.authority ?? "")"
            try proof.check(
                method: request.method.rawValue, uri: origin + (request.path ?? "/"), now: now, maxSkew: maxSkew,
                accessToken: token)
        } catch let error as SigilError {
            throw proofRefusal(error)
        }
        let accessToken: AccessToken
        let digest = SHA256.hash(data: Array(token.utf8))
        if let remembered = rememberedTokens?.token(digest, now: now) {
            accessToken = remembered
        } else {
            do {
                accessToken = try await tokens.verify(token)
            } catch {
                throw tokenRefusal("the access token does not verify")
            }
            rememberedTokens?.remember(accessToken, digest: digest, now: now)
        }
        guard accessToken.expiresAt > now else { throw tokenRefusal("the access token expired") }
        guard accessToken.boundThumbprint == proof.thumbprint else {
            throw tokenRefusal("the access token is not bound to the proof's key")
        }
        let keyID = "dpop." + proof.thumbprint
        let nonce = SHA256.hash(data: Array(proof.id.utf8)).withUnsafeBytes { Hex.encode(Array($0)) }
        let outcome = await nonces.record(
            keyID: keyID, nonce: nonce, timestamp: proof.issuedAt, expiresAt: proof.issuedAt + maxSkew + 1, now: now)
        if let refusal = outcome.refusal(keyID: keyID) {
            throw proofRefusal(
                refusal.code == .replayedNonce ? SigilError(.replayedNonce, "the DPoP proof was used before") : refusal)
        }
        return DPoPIdentity(subject: accessToken.subject, thumbprint: proof.thumbprint, proofID: proof.id)
    }

    func proofRefusal(_ error: SigilError) -> DPoPRefusal {
        DPoPRefusal(
            error: error,
            challenge: "DPoP error=\"invalid_dpop_proof\", algs=\"\(DPoPProof.algorithms.joined(separator: " "))\"")
    }

    func tokenRefusal(_ detail: String) -> DPoPRefusal {
        DPoPRefusal(
            error: SigilError(.invalidSignature, detail),
            challenge: "DPoP error=\"invalid_token\", algs=\"\(DPoPProof.algorithms.joined(separator: " "))\"")
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
