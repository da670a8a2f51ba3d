import HTTPTypes
@_spi(Sigil) import SigilCore

/// Decides who may register a device (`POST /v1/devices`), from the request's credentials.
///
/// SigilJWT's `EnrollmentPolicy` accepts a bootstrap token and enrollment JWTs; an app may supply its
/// own (its session cookie, its login token).
public protocol EnrollmentAuthorizer: Sendable {
    /// Checks `request`'s credentials.
    ///
    /// - Returns: the user the device will belong to, or `nil`.
    /// - Throws: ``SigilError`` `enrollment-refused`.
    func authorize(_ request: HTTPRequest) async throws -> String?

    /// What the request's credential uses up once the registration's own signature verified, if it
    /// may enroll one device only (an enrollment JWT): recorded once through the nonce store.
    func singleUse(of request: HTTPRequest) async throws -> SingleUseCredential?
}

extension EnrollmentAuthorizer {
    /// No credential is used up.
    public func singleUse(of request: HTTPRequest) async throws -> SingleUseCredential? { nil }
}

/// A credential that enrolls one device (an enrollment JWT, an attestation challenge): its ID (the
/// hash of a JWT's `jti`, say) is recorded in the key directory, in the registration's own
/// transaction, until it expires; a second registration with it is `enrollment-refused`, on any
/// replica and after a restart (``DirectoryChange/spent``).
public struct SingleUseCredential: Sendable, Hashable {
    /// The ID recorded, `[A-Za-z0-9._~-]{16,128}`.
    public let id: String
    /// When the credential expires (Unix seconds): it is remembered until then.
    public let expiresAt: Int64
    /// What it is, for the refusal (`enrollment credential`, `attestation challenge`).
    public let what: String

    /// Names a credential.
    public init(id: String, expiresAt: Int64, what: String = "enrollment credential") {
        self.id = id
        self.expiresAt = expiresAt
        self.what = what
    }
}
