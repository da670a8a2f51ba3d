import HTTPTypes

/// An error raised by Sigil, carrying one of the wire protocol's error codes (PROTOCOL.md section 4).
///
/// Two errors are equal when their codes are equal; the ``detail`` is for people and never carries
/// key material.
public struct SigilError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A PROTOCOL.md section 4 error code.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        /// The code as it appears on the wire, for example `replayed-nonce`.
        public let rawValue: String

        private init(_ rawValue: String) { self.rawValue = rawValue }

        /// No signature headers at all.
        public static let missingSignature = Code("missing-signature")
        /// Signature headers present but incomplete, repeated or ill-formed.
        public static let malformedSignature = Code("malformed-signature")
        /// An algorithm Sigil does not implement.
        public static let unsupportedAlgorithm = Code("unsupported-algorithm")
        /// An `alg` that disagrees with the registered key, or a key used for the wrong algorithm.
        public static let algorithmMismatch = Code("algorithm-mismatch")
        /// A key ID nobody registered.
        public static let unknownKey = Code("unknown-key")
        /// A key that was revoked.
        public static let revokedKey = Code("revoked-key")
        /// A timestamp outside the accepted window.
        public static let timestampOutOfWindow = Code("timestamp-out-of-window")
        /// An rfc9421 signature past its `expires`.
        public static let expired = Code("expired")
        /// A signature that does not verify.
        public static let invalidSignature = Code("invalid-signature")
        /// A Content-Digest that does not match the body.
        public static let digestMismatch = Code("digest-mismatch")
        /// A component the policy requires is not covered, or a covered component is absent.
        public static let missingComponent = Code("missing-component")
        /// A nonce seen before within its retention.
        public static let replayedNonce = Code("replayed-nonce")
        /// A TLS client certificate naming a key of another device than the signer's.
        public static let certificateMismatch = Code("certificate-mismatch")
        /// Credentials of one request (a signature, a DPoP proof and its token, a client certificate)
        /// that name different devices or users.
        public static let credentialMismatch = Code("credential-mismatch")
        /// A body over the configured limit.
        public static let bodyTooLarge = Code("body-too-large")
        /// The nonce store did not answer; the request is refused.
        public static let storeUnavailable = Code("store-unavailable")
        /// The request's headers or body arrived too slowly.
        public static let requestTimeout = Code("request-timeout")
        /// A `sigil-hpke` sealed body that does not open.
        public static let sealedBodyInvalid = Code("sealed-body-invalid")
        /// `sigil gateway`: the upstream could not be reached, or its answer could not be forwarded.
        public static let upstreamUnavailable = Code("upstream-unavailable")
        /// `sigil gateway`: the upstream did not answer in time.
        public static let upstreamTimeout = Code("upstream-timeout")

        /// A registration, enrollment or certificate request whose content cannot be used: a garbage
        /// key, an algorithm the key cannot have, a private key where a public one belongs, a CSR for
        /// another key.
        public static let invalidRegistration = Code("invalid-registration")
        /// Enrollment without a valid bootstrap token or JWT.
        public static let enrollmentRefused = Code("enrollment-refused")
        /// A request target no route may be given: a path whose percent-escapes decode to no UTF-8,
        /// or, at `sigil gateway`, a backslash in a path, encoded or not.
        public static let invalidTarget = Code("invalid-target")
        /// A verified key acting beyond its rights: on another device, or managing its device while
        /// it is not the device's active key.
        public static let forbidden = Code("forbidden")

        /// Every code, in the order of PROTOCOL.md section 4.
        public static let all: [Code] = [
            .missingSignature, .malformedSignature, .unsupportedAlgorithm, .algorithmMismatch, .unknownKey,
            .revokedKey, .timestampOutOfWindow, .expired, .invalidSignature, .digestMismatch, .missingComponent,
            .replayedNonce, .certificateMismatch, .credentialMismatch, .invalidRegistration, .enrollmentRefused,
            .invalidTarget, .forbidden, .bodyTooLarge,
            .requestTimeout, .sealedBodyInvalid, .storeUnavailable, .upstreamUnavailable, .upstreamTimeout,
        ]

        /// Looks a code up by its wire name.
        public init?(rawValue: String) {
            guard let code = Code.all.first(where: { $0.rawValue == rawValue }) else { return nil }
            self = code
        }

        /// The HTTP status a refusal with this code carries.
        public var httpStatus: Int {
            switch self {
            case .bodyTooLarge: return 413
            case .requestTimeout: return 408
            case .storeUnavailable: return 503
            case .upstreamUnavailable: return 502
            case .upstreamTimeout: return 504
            case .invalidRegistration, .sealedBodyInvalid, .invalidTarget: return 400
            case .forbidden: return 403
            default: return 401
            }
        }

        /// A short human title for problem+json.
        public var title: String {
            switch self {
            case .missingSignature: return "Signature missing"
            case .malformedSignature: return "Signature malformed"
            case .unsupportedAlgorithm: return "Algorithm not supported"
            case .algorithmMismatch: return "Algorithm does not match the key"
            case .unknownKey: return "Unknown key"
            case .revokedKey: return "Key revoked"
            case .timestampOutOfWindow: return "Timestamp outside the accepted window"
            case .expired: return "Signature expired"
            case .invalidSignature: return "Signature invalid"
            case .digestMismatch: return "Content digest does not match"
            case .missingComponent: return "Required component not signed"
            case .replayedNonce: return "Nonce already used"
            case .certificateMismatch: return "Client certificate names another device"
            case .credentialMismatch: return "Credentials name different devices or users"
            case .bodyTooLarge: return "Body too large"
            case .requestTimeout: return "Request too slow"
            case .sealedBodyInvalid: return "Sealed body does not open"
            case .storeUnavailable: return "Store unavailable"
            case .upstreamUnavailable: return "Upstream unavailable"
            case .upstreamTimeout: return "Upstream did not answer in time"
            case .invalidRegistration: return "Registration input unusable"
            case .invalidTarget: return "Request target unusable"
            case .enrollmentRefused: return "Enrollment refused"
            case .forbidden: return "Not allowed for this key"
            default: return rawValue
            }
        }

        public var description: String { rawValue }
    }

    /// The protocol error code.
    public let code: Code
    /// A human explanation. Never contains key material.
    public let detail: String

    /// The signature base the verifier computed, when it got that far; shown only with the debug
    /// option, so a developer can diff it with the base the client signed. Never contains key material.
    public var signatureBase: String?

    /// Whether the refused request's signature verified before it was refused (a replayed nonce, a
    /// timestamp out of the window on an authentic request, a route's refusal of a verified request).
    ///
    /// Only then may the refusal be signed for the request's nonce (PROTOCOL.md section 2.7): a nonce
    /// alone is no proof that the request came from its client, and a signed refusal bound to a
    /// client's nonce tells that client its request was not carried out.
    public var requestVerified = false

    /// Whether this is a statement about the key the refused request names, true whoever sent the
    /// request: `unknown-key` or `revoked-key` for the key ID of the request's own signature, found
    /// inside the time window. Such a refusal is signed for the request it answers although its
    /// signature did not verify (PROTOCOL.md section 2.7), so a revoked device can trust it.
    public var statesRequestKey = false

    /// Whether the refusal may carry the server's signature for the request it answers: its signature
    /// verified (``requestVerified``), or it states a fact of the request's key (``statesRequestKey``).
    /// The one rule every refusal's signing follows.
    public var maySign: Bool { requestVerified || statesRequestKey }

    /// Fields the refusal's answer carries, added by the way of proving a request that refused it
    /// (a DPoP verifier's `WWW-Authenticate` challenge and `DPoP-Nonce`, RFC 9449 sections 7.1 and 9).
    public var fields = HTTPFields()

    /// Creates an error.
    public init(_ code: Code, _ detail: String, signatureBase: String? = nil) {
        self.code = code
        self.detail = detail
        self.signatureBase = signatureBase
    }

    /// This error, marked as the refusal of a request whose signature verified.
    public func ofVerifiedRequest() -> SigilError {
        var error = self
        error.requestVerified = true
        return error
    }

    /// This error, marked as a statement about the refused request's own key (``statesRequestKey``):
    /// only `unknown-key` and `revoked-key` are; any other code is returned unmarked.
    public func aboutRequestKey() -> SigilError {
        var error = self
        error.statesRequestKey = code == .unknownKey || code == .revokedKey
        return error
    }

    public static func == (lhs: SigilError, rhs: SigilError) -> Bool { lhs.code == rhs.code }
    public func hash(into hasher: inout Hasher) { hasher.combine(code) }

    public var description: String { "\(code.rawValue): \(detail)" }
}

/// An input Sigil cannot use at all: a key file, an argument or a raw message that does not parse.
///
/// Unlike ``SigilError`` it is not a verdict about a request; the `sigil` command exits 2 on it.
public struct SigilInputError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What is wrong, for people; never contains key material.
    public let message: String

    /// Creates an error.
    public init(_ message: String) { self.message = message }

    public var description: String { message }
}
