import SigilAndroidAttestation
import SigilAppAttest
import X509

/// The options of `sigil serve` by feature, each read by the part of ``SigilStandalone`` that
/// installs that feature.
extension SigilStandalone {
    /// JWT keys: what checks enrollment JWTs and DPoP access tokens.
    public struct JWTOptions: Sendable {
        /// PEM public keys (P-256 or RSA) that sign enrollment JWTs.
        public var keyFiles: [String] = []
        /// Files holding base64 HS256 secrets for enrollment JWTs.
        public var secretFiles: [String] = []
        /// JWKS files for enrollment JWTs.
        public var jwksFiles: [String] = []
        /// The audience enrollment JWTs must name; required with JWT keys.
        public var audience: String?
        /// The issuer enrollment JWTs must name; required with JWT keys.
        public var issuer: String?
        /// Let one enrollment JWT enroll many devices until it expires (each enrolls one by default).
        public var reuse = false

        /// None of it.
        public init() {}
    }

    /// DPoP-bound access tokens (RFC 9449).
    public struct DPoPOptions: Sendable {
        /// Accept DPoP-bound access tokens (RFC 9449) on protected routes, verified with the JWT keys,
        /// audience and issuer (``JWTOptions``): in place of a Sigil signature (`.alone`) or only with one
        /// (`.withSignature`); `nil` turns DPoP off.
        public var mode: DPoPMode?
        /// Require server-provided DPoP nonces (`DPoP-Nonce`, `use_dpop_nonce`).
        public var nonces = false
        /// The public origin (`https://api.example`) DPoP proofs' `htu` and rfc9421 `@authority` are checked
        /// against (PROTOCOL.md section 13.1); without it, the gateway's `--public-host`, else the
        /// connection's own.
        public var origin: String?

        /// None of it.
        public init() {}
    }

    /// Enrollment by App Attest.
    public struct AppAttestOptions: Sendable {
        /// App IDs (`TEAMID.bundle.id`) whose App Attest keys may enroll by attestation and sign as
        /// `apple-appattest`; none turns App Attest off.
        public var appIDs: [String] = []
        /// The environments whose App Attest keys are accepted.
        public var environments: Set<AppAttestVerifier.Environment> = [.production]
        /// The root attestations chain to: Apple's App Attestation Root CA unless a test names its own.
        public var root: Certificate?
        /// Files each holding a debug token (at least 128 bits, PROTOCOL.md section 7) whose debug attestations (App
        /// Attest's debug provider, for the simulator) are accepted beside Apple's; none: refused.
        public var debugTokenFiles: [String] = []
        /// Path prefixes whose routes take only requests signed by an App Attest assertion
        /// (`--require-assertion`): ``Exchange/assertionPaths``, published in discovery.
        public var requireAssertion: [String] = []

        /// None of it.
        public init() {}
    }

    /// Enrollment by Android Key Attestation.
    public struct AndroidOptions: Sendable {
        /// The policy Android Key Attestation enrollment holds chains to; `nil` turns it off (it is on
        /// when the policy names apps: `--android-app PACKAGE:SHA256`).
        public var policy: AndroidAttestationPolicy?
        /// Google's attestation status list, a file (`--android-status FILE`) read again when it changes;
        /// without one, `sigil serve` warns.
        public var statusFile: String?
        /// The roots Android chains end at: Google's hardware roots unless a test names its own.
        public var roots: [GoogleAttestationRoots.Root]?

        /// None of it.
        public init() {}
    }
}
