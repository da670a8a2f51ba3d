import HTTPTypes
import Metrics
@_spi(Sigil) import SigilCore

/// Verifies signed requests of either profile: PROTOCOL.md section 2.6 for sigil-v1 and the
/// section 3 policy for rfc9421, cheap checks first, the nonce store touched only by authentic requests.
///
/// ```swift
/// let verifier = RequestVerifier(keys: directory, nonces: MemoryNonceStore())
/// let identity = try await verifier.verify(request, body: body)
/// ```
public struct RequestVerifier: Sendable {
    /// The configuration.
    public let configuration: VerifierConfiguration
    let keys: any KeyDirectory
    let nonces: any NonceStore
    let clock: any UnixClock
    @usableFromInline let metrics: VerificationMetrics

    /// Creates a verifier.
    ///
    /// - Parameters:
    ///   - keys: where key IDs are looked up.
    ///   - nonces: where nonces are recorded; its failures refuse requests (`store-unavailable`).
    ///   - clock: the server's clock.
    ///   - metricsFactory: where the counters `sigil_verifications_total{outcome=…}` go.
    public init(
        keys: any KeyDirectory,
        nonces: any NonceStore,
        clock: any UnixClock = SystemUnixClock(),
        configuration: VerifierConfiguration = VerifierConfiguration(),
        metricsFactory: any MetricsFactory = MetricsSystem.factory
    ) {
        self.metrics = VerificationMetrics(factory: metricsFactory)
        self.keys = keys
        self.nonces = nonces
        self.clock = clock
        self.configuration = configuration
    }

    /// Verifies a request whose body has been read.
    ///
    /// - Throws: ``SigilError`` with the PROTOCOL.md code of the first check that failed.
    public func verify(_ request: HTTPRequest, body: [UInt8]) async throws -> VerifiedRequest {
        try await counted {
            let admitted = try await admit(request)
            try BodyReader.check(body.count, limit: configuration.bodyLimit)
            return try await complete(admitted, request: request, body: body, bodyWasAwaited: false)
        }
    }

    /// Verifies a request whose body arrives in chunks: the headers, the time window and the key are
    /// checked before any byte is read, then at most the body limit is read, then the window, the
    /// key's state and the restart rule are checked again at the time the body ended, since a client
    /// may stall between the two (a key revoked meanwhile is refused).
    ///
    /// A declared `Content-Length` over the limit is refused before the body is read.
    /// - Parameter limit: a lower body limit than the configuration's, for a caller (a web framework's
    ///   upload limit) that cannot take more; the smaller of the two applies.
    /// - Returns: the verified identity and the body.
    @inlinable
    public func verify<Chunks: AsyncSequence>(
        _ request: HTTPRequest,
        bodyChunks: Chunks,
        limit: Int? = nil
    ) async throws -> (VerifiedRequest, [UInt8]) where Chunks.Element: Collection<UInt8> {
        // Inlinable, so the body is read by code specialized for the caller's chunks.
        let admitted = try await admitBeforeBody(request)
        let body: [UInt8]
        do {
            body = try await BodyReader.collect(
                bodyChunks, declaredLength: request.headerFields[.contentLength].flatMap(Int.init),
                limit: min(limit ?? configuration.bodyLimit, configuration.bodyLimit))
        } catch {
            metrics.recordRefusal(error)
            throw error
        }
        return (try await completeAfterBody(admitted, request: request, body: body), body)
    }

    /// The first half of ``verify(_:bodyChunks:limit:)``: steps 1 to 3, a refusal counted.
    @usableFromInline
    func admitBeforeBody(_ request: HTTPRequest) async throws -> Admitted {
        do {
            return try await admit(request)
        } catch {
            metrics.recordRefusal(error)
            throw error
        }
    }

    /// The second half of ``verify(_:bodyChunks:limit:)``: the rest, counted; with fresh time and key
    /// when the body was `awaited` after the first half.
    @usableFromInline
    func completeAfterBody(_ admitted: Admitted, request: HTTPRequest, body: [UInt8], awaited: Bool = true)
        async throws -> VerifiedRequest
    {
        try await counted { try await complete(admitted, request: request, body: body, bodyWasAwaited: awaited) }
    }

    /// Whether `request` carries a signature of a profile this verifier takes (it may not verify).
    public func carriesSignature(_ request: HTTPRequest) -> Bool {
        SignatureProfile.verificationOrder.contains { profile in
            configuration.profiles.contains(profile) && profile.format.isPresent(in: request.headerFields)
        }
    }

    /// Runs one verification and counts its outcome.
    private func counted<Result>(_ body: () async throws -> Result) async throws -> Result {
        do {
            let result = try await body()
            metrics.recordValid()
            return result
        } catch {
            metrics.recordRefusal(error)
            throw error
        }
    }

    /// A request whose signature passed the checks that need no body (section 2.6 steps 1 to 3).
    @usableFromInline
    struct Admitted: Sendable {
        /// The parsed signature, in its profile.
        let signature: any ProfileFormat
        let key: RegisteredKey
        /// The window or `expires` refusal, decided once the signature is checked: signed for an
        /// authentic request (its client may re-sync and resend), unsigned for any other.
        let timeRefusal: SigilError?
    }

    /// Steps 1 to 3: the signature headers parse, the window is judged, the key is known.
    ///
    /// A request out of the window is still refused with `timestamp-out-of-window` (or `expired`), but
    /// only once its signature is checked, so the refusal can be signed when the request is authentic
    /// (its client then re-syncs and resends) and left unsigned when it is not.
    func admit(_ request: HTTPRequest) async throws -> Admitted {
        let fields = request.headerFields
        let now = clock.now()
        for profile in SignatureProfile.verificationOrder where configuration.profiles.contains(profile) {
            let format = profile.format
            guard format.isPresent(in: fields) else { continue }
            let signature = try format.parse(fields, configuration: configuration)
            let timeRefusal = timeRefusal(signature.timestamp, expires: signature.expires, now: now)
            return Admitted(
                signature: signature,
                key: try await lookUp(
                    signature.keyID, declaredAlgorithm: signature.declaredAlgorithm, now: now,
                    byThumbprint: profile == .rfc9421, orRefuse: timeRefusal),
                timeRefusal: timeRefusal
            )
        }
        throw SigilError(.missingSignature, "the request is not signed")
    }

    /// Steps 4 to 6: the body (its hash or Content-Digest), the signature, then the nonce.
    ///
    /// When the body was awaited, the time and the key checked by ``admit(_:)`` are facts of a moment
    /// that has passed: they are checked again with a fresh clock and a fresh lookup, and the nonce is
    /// recorded at that time.
    func complete(
        _ admitted: Admitted,
        request: HTTPRequest,
        body: [UInt8],
        bodyWasAwaited: Bool
    ) async throws -> VerifiedRequest {
        let now = clock.now()
        let signature = admitted.signature
        var registered = admitted.key
        var timeRefusal = admitted.timeRefusal
        if bodyWasAwaited {
            timeRefusal = timeRefusal ?? self.timeRefusal(signature.timestamp, expires: signature.expires, now: now)
            registered = try await lookUp(
                signature.keyID, declaredAlgorithm: signature.declaredAlgorithm, now: now,
                byThumbprint: type(of: signature).profile == .rfc9421, orRefuse: timeRefusal)
        }
        let profile = type(of: signature).profile
        let base: [UInt8]
        do {
            base = try signature.base(of: request, body: body, configuration: configuration)
        } catch {
            throw timeRefusal ?? error
        }
        guard registered.key.isValidSignature(signature.signature, for: base, profile: profile) else {
            throw timeRefusal
                ?? SigilError(
                    .invalidSignature,
                    "the signature does not verify with key \(signature.keyID)",
                    signatureBase: String(decoding: base, as: UTF8.self)
                )
        }
        // From here on the request is authentic: its refusals may be signed for it, and its key named.
        RequestRecord.note(verified: registered, profile: profile.rawValue)
        if let timeRefusal { throw timeRefusal.ofVerifiedRequest() }
        // Before the nonce is recorded: the request as the client sent it may still arrive.
        if profile == .sigilV1,
            configuration.requiresCanonicalSigilV1Path || configuration.requiresUnambiguousSigilV1Query
        {
            try checkSigilV1Target(request.path ?? "/")
        }
        do {
            try await record(keyID: registered.keyID, nonce: signature.nonce, timestamp: signature.timestamp, now: now)
            // Every key of a device a debug token let in (its App Attest key, the key it vouched for).
            guard registered.isUsable(at: now, acceptingDebugKeys: configuration.acceptsAppAttestDebugKeys) else {
                throw SigilError(
                    .revokedKey,
                    "key \(registered.keyID) was enrolled with an App Attest debug token, not accepted here")
            }
            if registered.key.algorithm == .appleAppAttest {
                try await acceptAssertion(signature.signature, keyID: registered.keyID)
            }
        } catch let error as SigilError {
            throw error.ofVerifiedRequest()
        }
        configuration.usage?.used(registered.keyID, at: now)
        return VerifiedRequest(
            keyID: registered.keyID,
            algorithm: registered.key.algorithm,
            profile: profile,
            timestamp: signature.timestamp,
            nonce: signature.nonce,
            deviceID: registered.deviceID,
            userID: registered.userID,
            label: signature.label,
            binding: signature.binding,
            coversAuthority: signature.coversAuthority,
            deviceAttestation: registered.deviceAttestation
        )
    }

    /// The path and query rules a server that routes on the raw target asks of sigil-v1.
    func checkSigilV1Target(_ target: String) throws {
        let bytes = Array(target.utf8)
        let queryStart = bytes.firstIndex(of: UInt8(ascii: "?"))
        if configuration.requiresCanonicalSigilV1Path,
            !CanonicalTarget.isCanonicalPath(bytes[..<(queryStart ?? bytes.endIndex)])
        {
            throw SigilError(
                .forbidden,
                "the path is not in its canonical form (PROTOCOL.md section 2.3), which this server requires of sigil-v1"
            ).ofVerifiedRequest()
        }
        if configuration.requiresUnambiguousSigilV1Query, let queryStart,
            !CanonicalTarget.isUnambiguousQuery(bytes[(queryStart + 1)...])
        {
            throw SigilError(
                .forbidden,
                "the query has a repeated name, a '+' or a piece without '=', which sigil-v1's signature does not tell apart"
            ).ofVerifiedRequest()
        }
    }

    // MARK: Shared steps

    /// The refusal of the window (section 2.6 step 2), the restart rule or rfc9421 `expires` at
    /// `now`, if any. It is thrown once the signature is checked, or as soon as a later check fails.
    func timeRefusal(_ timestamp: Int64, expires: Int64?, now: Int64) -> SigilError? {
        if let refusal = TimeWindow(maxSkew: configuration.maxSkew).refusal(of: timestamp, at: now) {
            return refusal
        }
        if let oldest = nonces.oldestAcceptableTimestamp, timestamp < oldest {
            return SigilError(.timestampOutOfWindow, "the timestamp is not after the verifier's start")
        }
        if let expires, expires <= now {
            return SigilError(.expired, "the signature expired at \(expires)")
        }
        return nil
    }

    /// The key as the directory has it now: known, usable at `now`, and of the declared algorithm.
    ///
    /// - Parameter refusal: a refusal already decided (the window), thrown instead of this step's own.
    func lookUp(
        _ keyID: String,
        declaredAlgorithm: SignatureAlgorithm?,
        now: Int64,
        byThumbprint: Bool = false,
        orRefuse refusal: SigilError? = nil
    ) async throws -> RegisteredKey {
        do {
            return try await lookUp(keyID, declaredAlgorithm: declaredAlgorithm, now: now, byThumbprint: byThumbprint)
        } catch {
            throw refusal ?? error
        }
    }

    /// The key `keyID` names: by its Sigil key ID, else (rfc9421, `byThumbprint`) by its RFC 7638
    /// thumbprint. Either way the key found keeps its Sigil key ID, which its nonces are recorded
    /// under: a request replayed under the other name is still a replay.
    func lookUp(_ keyID: String, declaredAlgorithm: SignatureAlgorithm?, now: Int64, byThumbprint: Bool = false)
        async throws -> RegisteredKey
    {
        let found: RegisteredKey?
        do {
            found =
                if let key = try await keys.key(for: keyID) {
                    key
                } else if byThumbprint, JWK.isThumbprintShaped(keyID) {
                    try await keys.key(forThumbprint: keyID)
                } else {
                    nil
                }
        } catch {
            throw SigilError(.storeUnavailable, "the key directory did not answer")
        }
        // Statements about the key the request names, true whoever sent it: signed for the request
        // (PROTOCOL.md section 2.7), so the device whose key it is can act on them, when this verifier
        // looks keys up in the server's own directory (a registration's proof looks in one of its own).
        guard let registered = found else {
            let refusal = SigilError(.unknownKey, "no key is registered as \(keyID)")
            throw configuration.statesKeyFacts ? refusal.aboutRequestKey() : refusal
        }
        guard registered.isUsable(at: now) else {
            let refusal = SigilError(.revokedKey, "key \(keyID) is revoked")
            throw configuration.statesKeyFacts ? refusal.aboutRequestKey() : refusal
        }
        if let declaredAlgorithm, declaredAlgorithm != registered.key.algorithm {
            throw SigilError(
                .algorithmMismatch,
                "alg \(declaredAlgorithm) disagrees with the key's \(registered.key.algorithm)"
            )
        }
        return registered
    }

    /// An App Attest assertion's App ID and counter, after its signature verified.
    func acceptAssertion(_ signature: [UInt8], keyID: String) async throws {
        guard let policy = configuration.assertions else {
            throw SigilError(.unsupportedAlgorithm, "this server does not accept App Attest assertions")
        }
        guard let assertion = AppAttestAssertion(signature) else {
            throw SigilError(.malformedSignature, "the signature is not an App Attest assertion")
        }
        try await policy.accept(assertion, keyID: keyID)
    }

    func record(keyID: String, nonce: String, timestamp: Int64, now: Int64) async throws {
        let outcome = await nonces.record(
            keyID: keyID,
            nonce: nonce,
            timestamp: timestamp,
            expiresAt: timestamp + configuration.maxSkew + configuration.nonceGrace,
            now: now
        )
        if let refusal = outcome.refusal(keyID: keyID) { throw refusal }
    }
}
