import Crypto
import Foundation
import HTTPTypes
import JWTKit
@_spi(Sigil) import SigilCore
import SigilServer

/// Who may register a device: holders of the bootstrap token, holders of a bearer JWT signed by a
/// configured key for this server (whose `sub` becomes the device's user), or anyone when enrollment
/// is explicitly open.
public struct EnrollmentPolicy: EnrollmentAuthorizer {
    /// Enrollment JWTs: the keys that sign them, and the audience and issuer they must name, so a
    /// token the same identity provider issued for another service does not enroll here.
    public struct JWTRules: Sendable {
        /// The keys that sign enrollment JWTs (HS256, ES256, RS256, or a JWKS).
        public var keys: JWTKeyCollection
        /// The `aud` an enrollment JWT must include.
        public var audience: String
        /// The `iss` an enrollment JWT must carry.
        public var issuer: String
        /// Let one enrollment JWT enroll any number of devices until it expires. Off by default: each
        /// JWT (by its `jti`, else the whole token) enrolls one device, so a token that leaks from a
        /// log or a proxy enrolls nothing more.
        public var allowsReuse = false

        /// Creates the rules.
        public init(keys: JWTKeyCollection, audience: String, issuer: String) {
            self.keys = keys
            self.audience = audience
            self.issuer = issuer
        }
    }

    /// The bootstrap token, sent as `Authorization: Bearer <token>`.
    public var bootstrapToken: String?
    /// Enrollment JWTs, when accepted.
    public var jwt: JWTRules?
    /// Anyone may register. The server logs a warning at start.
    public var isOpen: Bool
    let clock: any UnixClock

    /// Creates a policy; with nothing set, nobody can enroll.
    public init(
        bootstrapToken: String? = nil,
        jwt: JWTRules? = nil,
        isOpen: Bool = false,
        clock: any UnixClock = SystemUnixClock()
    ) {
        self.bootstrapToken = bootstrapToken
        self.jwt = jwt
        self.isOpen = isOpen
        self.clock = clock
    }

    /// The claims Sigil reads from an enrollment JWT: `sub`, `exp`, `aud` and `iss` (required),
    /// `nbf`, `jti`.
    struct Claims: JWTPayload {
        var sub: SubjectClaim
        var exp: ExpirationClaim
        var jti: IDClaim?
        var aud: AudienceClaim?
        var iss: IssuerClaim?
        var nbf: NotBeforeClaim?
        /// A confirmation (RFC 7800): present on sender-constrained tokens, which never enroll.
        var cnf: [String: String]?

        func verify(using algorithm: some JWTAlgorithm) throws {}
    }

    /// Checks the request's credentials.
    ///
    /// - Returns: the user the device will belong to (the JWT's `sub`), or `nil`.
    /// - Throws: `enrollment-refused`.
    public func authorize(_ request: HTTPRequest) async throws -> String? {
        let credential = Self.bearer(request.headerFields[.authorization])
        if let credential, let bootstrapToken, Self.constantTimeEqual(credential, bootstrapToken) { return nil }
        if let credential, let jwt, credential.split(separator: ".").count == 3 {
            guard ClaimRules.hasAcceptableHeader(credential) else {
                throw SigilError(
                    .enrollmentRefused, "the enrollment JWT's header names a critical extension or does not read")
            }
            let claims: Claims
            do {
                claims = try await jwt.keys.verify(credential, as: Claims.self)
            } catch {
                throw SigilError(.enrollmentRefused, "the enrollment JWT does not verify with a configured key")
            }
            guard ClaimRules.seconds(claims.exp.value, rounded: .down) != nil,
                claims.nbf.map({ ClaimRules.seconds($0.value, rounded: .up) != nil }) ?? true
            else { throw SigilError(.enrollmentRefused, "the enrollment JWT's exp or nbf is past year 9999") }
            let now = Date(timeIntervalSince1970: TimeInterval(clock.now()))
            do {
                try claims.exp.verifyNotExpired(currentDate: now)
                try claims.nbf?.verifyNotBefore(currentDate: now)
            } catch {
                throw SigilError(.enrollmentRefused, "the enrollment JWT is expired or not yet valid")
            }
            // As they are, byte for byte (RFC 7519 §2): no equivalent spelling of another audience or issuer.
            guard let audience = claims.aud, audience.value.contains(where: { Identifiers.same($0, jwt.audience) })
            else {
                throw SigilError(.enrollmentRefused, "the enrollment JWT is not for this server's audience")
            }
            guard Identifiers.same(claims.iss?.value, jwt.issuer) else {
                throw SigilError(.enrollmentRefused, "the enrollment JWT is not from the expected issuer")
            }
            guard ClaimRules.isUsableSubject(claims.sub.value) else {
                throw SigilError(.enrollmentRefused, "the enrollment JWT has no usable sub")
            }
            // A DPoP-bound access token (from the same issuer, with `--dpop`) is useless without its
            // key; as an enrollment token it would be a bearer token again.
            guard claims.cnf == nil else {
                throw SigilError(.enrollmentRefused, "a sender-constrained token (cnf) is not an enrollment JWT")
            }
            return claims.sub.value
        }
        if isOpen { return nil }
        throw SigilError(
            .enrollmentRefused,
            credential == nil
                ? "enrollment requires Authorization: Bearer <token>" : "the enrollment token is not valid"
        )
    }

    /// An enrollment JWT enrolls one device (unless ``JWTRules/allowsReuse``): its `jti`, or the token
    /// itself when it has none, hashed, is recorded until the JWT expires.
    public func singleUse(of request: HTTPRequest) async throws -> SingleUseCredential? {
        guard let jwt, !jwt.allowsReuse, let credential = Self.bearer(request.headerFields[.authorization]),
            credential.split(separator: ".").count == 3,
            let claims = try? await jwt.keys.verify(credential, as: Claims.self)
        else { return nil }
        // The signed part only: a signature has other spellings (base64url's unused low bits, ECDSA's
        // (r, n − s)) that verify as well, and each would otherwise count as a new token.
        let signed = credential.split(separator: ".", omittingEmptySubsequences: false).prefix(2).joined(separator: ".")
        let named =
            claims.jti.map { "jti\u{0}" + (claims.iss?.value ?? "") + "\u{0}" + $0.value } ?? "jwt\u{0}" + signed
        let digest = SHA256.hash(data: Array(named.utf8)).map { String(format: "%02x", $0) }.joined()
        guard let expiresAt = ClaimRules.seconds(claims.exp.value, rounded: .down) else {
            throw SigilError(.enrollmentRefused, "the enrollment JWT's exp is past year 9999")
        }
        return SingleUseCredential(id: digest, expiresAt: expiresAt)
    }

    static func bearer(_ value: String?) -> String? {
        guard let value, value.count > 7, value.prefix(7).lowercased() == "bearer " else { return nil }
        return String(value.dropFirst(7)).trimmingCharacters(in: .whitespaces)
    }

    static func constantTimeEqual(_ lhs: String, _ rhs: String) -> Bool {
        // Compare SHA-256 digests so neither the content nor the length leaks through timing.
        Array(SHA256.hash(data: Array(lhs.utf8))) == Array(SHA256.hash(data: Array(rhs.utf8)))
    }

    /// Adds a JWT verification key from a PEM file's text: a public key (ES256 or RS256 by its type)
    /// or, with `hs256`, an HMAC secret.
    public static func jwtKeys(pemKeys: [String], hs256Secrets: [[UInt8]], jwks: [String]) async throws
        -> JWTKeyCollection?
    {
        guard !(pemKeys.isEmpty && hs256Secrets.isEmpty && jwks.isEmpty) else { return nil }
        // Every token's header and claims, and the JWK Sets, are read by Sigil's strict decoder.
        let parser = DefaultJWTParser(jsonDecoder: StrictJWTDecoder())
        let keys = JWTKeyCollection(defaultJWTParser: parser)
        for secret in hs256Secrets {
            guard secret.count >= 32 else { throw SigilInputError("an HS256 secret must be at least 32 bytes") }
            await keys.add(hmac: HMACKey(key: SymmetricKey(data: secret)), digestAlgorithm: .sha256, parser: parser)
        }
        for pem in pemKeys {
            if let key = try? ES256PublicKey(pem: pem) {
                await keys.add(ecdsa: key, parser: parser)
            } else if let key = try? Insecure.RSA.PublicKey(pem: pem) {
                await keys.add(rsa: key, digestAlgorithm: .sha256, parser: parser)
            } else {
                throw SigilInputError("a JWT key must be a P-256 or RSA public key in PEM")
            }
        }
        for json in jwks {
            do {
                try await keys.add(jwksJSON: json)
            } catch {
                throw SigilInputError("the JWKS file does not parse")
            }
        }
        return keys
    }
}
