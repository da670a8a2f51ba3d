@_spi(Sigil) import SigilCore

/// What a ``RequestVerifier`` accepts.
public struct VerifierConfiguration: Sendable {
    /// The largest accepted `|now − timestamp|`, in seconds (default 300).
    public var maxSkew: Int64 = 300
    /// Extra retention of a nonce after its timestamp can no longer be accepted (PROTOCOL.md: 60 s).
    public var nonceGrace: Int64 = 60
    /// The largest body read (default 8 MiB); larger bodies get `body-too-large`.
    public var bodyLimit: Int = 8 << 20
    /// Whether sigil-v1 body hashes canonicalize JSON (RFC 8785); on by default.
    public var canonicalJSON = true
    /// The profiles accepted.
    public var profiles: Set<SignatureProfile> = [.sigilV1, .rfc9421]
    /// rfc9421: components every signature must cover (`content-digest` is added when there is a body).
    public var requiredComponents: [ComponentIdentifier] = [.method, .authority, .path, .query]
    /// rfc9421: the label to verify; `nil` verifies the first signature of `Signature-Input`.
    public var label: String?
    /// sigil-v1: refuse (403 `forbidden`, signed, the nonce left unused) an authentic request whose
    /// path is not its own canonical path (``CanonicalTarget/isCanonicalPath(_:)``). sigil-v1 signs the
    /// canonical path, so `/users/Q9` and `/users/q9` carry the same signature; PROTOCOL.md section 2.3
    /// asks a server to route on the canonical path or have no routes and path parameters that differ
    /// by case, a trailing `/` or percent-encoding. A server that routes on the raw path (Vapor,
    /// Hummingbird, an OpenAPI router) and has case-sensitive identifiers in paths turns this on, so a
    /// request altered on the way in a way the signature does not see is refused. Off by default, as
    /// the contract and its vectors accept such paths.
    public var requiresCanonicalSigilV1Path = false
    /// sigil-v1: refuse (403 `forbidden`, signed, the nonce left unused) an authentic request whose
    /// query a router could read otherwise than its signature does
    /// (``CanonicalTarget/isUnambiguousQuery(_:)``: a repeated name, a literal `+`, a piece without
    /// `=`). sigil-v1 signs the sorted canonical query, so a server that reads the raw query (Vapor's
    /// `req.query`, Hummingbird's `uri.queryParameters`) turns this on with
    /// ``requiresCanonicalSigilV1Path``.
    public var requiresUnambiguousSigilV1Query = false
    /// What `apple-appattest` assertions are held to beyond their signature (their App ID, their
    /// counter), as SigilAppAttest's `AppAttestAssertions` checks; without it such keys are refused
    /// (`unsupported-algorithm`).
    public var assertions: (any AssertionPolicy)?
    /// Whether keys enrolled with an App Attest debug token (device attestation
    /// ``RegisteredKey/appAttestDebug``) may sign; off, they are refused as `revoked-key`, so removing
    /// `--app-attest-debug-token` cuts off every device it let in.
    public var acceptsAppAttestDebugKeys = false
    /// Where each key's last verified use is noted (at most one write a minute per key), if anywhere.
    public var usage: KeyUsageTracker?
    /// How many `unknown-key` and `revoked-key` refusals of requests whose signature did not verify
    /// are signed each second, at most (``KeyRefusalBudget``); the rest go unsigned.
    public var keyRefusals = KeyRefusalBudget()
    /// Whether this verifier's `unknown-key` and `revoked-key` state facts of the server's directory
    /// (``SigilError/statesRequestKey``), so their refusals may be signed: true for the verifier of the
    /// server's routes; false for one that looks keys up elsewhere (a registration's proof, whose one
    /// key is the key being registered: its "unknown" says nothing of the server's directory, and a
    /// proxy could dress a device's request as a registration to get a signed `unknown-key` for it).
    public var statesKeyFacts = true

    /// The default configuration.
    public init() {}

    /// The `Accept-Signature` value that names what this verifier requires (RFC 9421 section 5.1).
    public var acceptSignature: String {
        let input = SignatureInput(
            components: requiredComponents + [.contentDigest],
            parameters: [("created", .bool(true)), ("keyid", .bool(true)), ("nonce", .bool(true))]
        )
        return (try? MessageSignatures.signatureInputMember(label: label ?? "sig1", input: input)) ?? ""
    }
}

/// A request that passed verification: who signed it and how.
public struct VerifiedRequest: Sendable, Hashable {
    /// The fields, held once and shared by every copy: a verified request is copied into the
    /// credentials, the identity and the admission of every request, and a copy is then one reference.
    private struct Fields: Sendable, Hashable {
        let keyID: String
        let algorithm: SignatureAlgorithm
        let profile: SignatureProfile
        let timestamp: Int64
        let nonce: String
        let deviceID: String?
        let userID: String?
        let label: String?
        let binding: ResponseBinding
        let coversAuthority: Bool
        var deviceAttestation: String?
    }
    private var box: Shared<Fields>

    init(
        keyID: String, algorithm: SignatureAlgorithm, profile: SignatureProfile, timestamp: Int64, nonce: String,
        deviceID: String?, userID: String?, label: String?, binding: ResponseBinding, coversAuthority: Bool,
        deviceAttestation: String? = nil
    ) {
        box = Shared(
            Fields(
                keyID: keyID, algorithm: algorithm, profile: profile, timestamp: timestamp, nonce: nonce,
                deviceID: deviceID, userID: userID, label: label, binding: binding, coversAuthority: coversAuthority,
                deviceAttestation: deviceAttestation))
    }

    /// The key ID that signed.
    public var keyID: String { box.value.keyID }
    /// The algorithm, as the registered key decides.
    public var algorithm: SignatureAlgorithm { box.value.algorithm }
    /// The profile used.
    public var profile: SignatureProfile { box.value.profile }
    /// The signed timestamp (`X-Timestamp` or `created`).
    public var timestamp: Int64 { box.value.timestamp }
    /// The nonce recorded.
    public var nonce: String { box.value.nonce }
    /// The device of the key, if registered.
    public var deviceID: String? { box.value.deviceID }
    /// The user of the device, if registered.
    public var userID: String? { box.value.userID }
    /// The rfc9421 label verified.
    public var label: String? { box.value.label }
    /// What binds an answer to this request (its key ID, nonce and signature).
    public var binding: ResponseBinding { box.value.binding }
    /// Whether the signature covers the request's authority (rfc9421 `@authority`). A sigil-v1
    /// request's `Host` is not signed: nothing should be decided on it.
    public var coversAuthority: Bool { box.value.coversAuthority }
    /// The attestation the key's device enrolled with (``RegisteredKey/deviceAttestation``:
    /// `app-attest`, `android-key,…`), `nil` for a device enrolled otherwise; an `apple-appattest`
    /// key's request is App Attest's own assertion whatever this says.
    public var deviceAttestation: String? {
        get { box.value.deviceAttestation }
        set { box = box.changed { $0.deviceAttestation = newValue } }
    }

    public static func == (left: VerifiedRequest, right: VerifiedRequest) -> Bool {
        left.box === right.box || left.box.value == right.box.value
    }

    public func hash(into hasher: inout Hasher) { hasher.combine(box.value) }
}

/// What an App Attest assertion carries beyond its signature: the App ID it was made for and a
/// counter that must grow. The verifier hands it every `apple-appattest` request whose signature
/// verified and whose nonce it recorded.
public protocol AssertionPolicy: Sendable {
    /// Accepts `assertion`, signed by `keyID`, recording its counter atomically.
    ///
    /// - Throws: ``SigilError``: `invalid-signature` for another App ID, `replayed-nonce` for a
    ///   counter not above the stored one, `store-unavailable` when the counters cannot be read.
    func accept(_ assertion: AppAttestAssertion, keyID: String) async throws
}

/// What the server keeps of App Attest keys, by Sigil key ID: the counter of their assertions and
/// their latest receipt. ``advance(keyID:to:)`` is the one atomic step assertions need: of two
/// assertions carrying one counter, exactly one advances it.
public protocol AppAttestStore: Sendable {
    /// Sets the counter of `keyID` to `counter` if that is greater than the stored one (a key with
    /// none stored counts as 0), atomically.
    ///
    /// - Returns: whether it did.
    func advance(keyID: String, to counter: UInt32) async throws -> Bool
    /// Keeps `receipt` as the latest of `keyID` (the attestation's, then each refreshed one).
    func keepReceipt(_ receipt: [UInt8], keyID: String) async throws
    /// The latest receipt of `keyID`, for the fraud-metric refresh.
    func receipt(keyID: String) async throws -> [UInt8]?
}
