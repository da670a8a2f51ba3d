import Foundation
import JWTKit
@_spi(Sigil) import SigilCore
import SigilServer

/// Access tokens as JWTs (RFC 9068 style), checked with jwt-kit: a configured key's signature, the
/// audience and issuer this server expects, `exp` (and `nbf`), a `sub`; `cnf.jkt` is read for the
/// DPoP binding (RFC 9449 §6.1).
public struct JWTAccessTokens: AccessTokenVerifier {
    let keys: JWTKeyCollection
    let audience: String
    let issuer: String
    let clock: any UnixClock

    /// Creates a verifier from the same keys enrollment JWTs use (``EnrollmentPolicy/jwtKeys(pemKeys:hs256Secrets:jwks:)``).
    public init(keys: JWTKeyCollection, audience: String, issuer: String, clock: any UnixClock = SystemUnixClock()) {
        self.keys = keys
        self.audience = audience
        self.issuer = issuer
        self.clock = clock
    }

    /// `cnf` (RFC 7800): the key the token is bound to, by its RFC 7638 thumbprint.
    public struct Confirmation: Codable, Sendable {
        public var jkt: String?
    }

    /// The claims read from an access token; an issuer (a test, a benchmark, a Swift authorization
    /// server) signs the same with jwt-kit.
    public struct Claims: JWTPayload {
        public var sub: SubjectClaim
        public var exp: ExpirationClaim
        public var aud: AudienceClaim?
        public var iss: IssuerClaim?
        public var nbf: NotBeforeClaim?
        public var iat: IssuedAtClaim?
        public var cnf: Confirmation?

        /// A token for `subject`, for `audience` from `issuer`, until `expiresAt` (Unix seconds), bound to
        /// the key of thumbprint `jkt` when given.
        public init(
            subject: String, audience: String, issuer: String, expiresAt: Int64, boundTo jkt: String?,
            issuedAt: Int64? = nil
        ) {
            sub = SubjectClaim(value: subject)
            iat = issuedAt.map { IssuedAtClaim(value: Date(timeIntervalSince1970: TimeInterval($0))) }
            exp = ExpirationClaim(value: Date(timeIntervalSince1970: TimeInterval(expiresAt)))
            aud = AudienceClaim(value: [audience])
            iss = IssuerClaim(value: issuer)
            cnf = jkt.map { Confirmation(jkt: $0) }
        }

        /// Nothing here: ``JWTAccessTokens/verify(_:)`` checks the claims against its configuration.
        public func verify(using algorithm: some JWTAlgorithm) throws {}
    }

    public func verify(_ token: String) async throws -> AccessToken {
        guard token.utf8.count <= 16_384 else { throw SigilError(.malformedSignature, "the access token is too long") }
        guard ClaimRules.hasAcceptableHeader(token) else {
            throw SigilError(.invalidSignature, "the access token's header names a critical extension or does not read")
        }
        let claims: Claims
        do {
            claims = try await keys.verify(token, as: Claims.self)
        } catch {
            throw SigilError(.invalidSignature, "the access token does not verify with a configured key")
        }
        let now = clock.now()
        guard let expiresAt = ClaimRules.seconds(claims.exp.value, rounded: .down),
            claims.nbf.map({ ClaimRules.seconds($0.value, rounded: .up) != nil }) ?? true,
            claims.iat.map({ ClaimRules.seconds($0.value, rounded: .down) != nil }) ?? true
        else { throw SigilError(.invalidSignature, "the access token's exp, nbf or iat is past year 9999") }
        guard expiresAt > now else {
            throw SigilError(.expired, "the access token expired")
        }
        if let nbf = claims.nbf.flatMap({ ClaimRules.seconds($0.value, rounded: .up) }), nbf > now {
            throw SigilError(.invalidSignature, "the access token is not valid yet")
        }
        // As they are, byte for byte (RFC 7519 §2): no equivalent spelling of another audience or issuer.
        guard let audiences = claims.aud, audiences.value.contains(where: { Identifiers.same($0, audience) }) else {
            throw SigilError(.invalidSignature, "the access token is not for this audience")
        }
        guard Identifiers.same(claims.iss?.value, issuer) else {
            throw SigilError(.invalidSignature, "the access token is not from the expected issuer")
        }
        guard ClaimRules.isUsableSubject(claims.sub.value) else {
            throw SigilError(.invalidSignature, "the access token has no usable sub")
        }
        return AccessToken(
            subject: claims.sub.value, boundThumbprint: claims.cnf?.jkt,
            expiresAt: expiresAt, issuedAt: claims.iat.flatMap { ClaimRules.seconds($0.value, rounded: .down) })
    }
}
