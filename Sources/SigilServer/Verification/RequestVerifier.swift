import HTTPTypes
import SigilCore

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

    /// Creates a verifier.
    ///
    /// - Parameters:
    ///   - keys: where key IDs are looked up.
    ///   - nonces: where nonces are recorded; its failures refuse requests (`store-unavailable`).
    ///   - clock: the server's clock.
    public init(
        keys: any KeyDirectory,
        nonces: any NonceStore,
        clock: any UnixClock = SystemUnixClock(),
        configuration: VerifierConfiguration = VerifierConfiguration()
    ) {
        self.keys = keys
        self.nonces = nonces
        self.clock = clock
        self.configuration = configuration
    }

    /// Verifies a request whose body has been read.
    ///
    /// - Throws: ``SigilError`` with the PROTOCOL.md code of the first check that failed.
    public func verify(_ request: HTTPRequest, body: [UInt8]) async throws -> VerifiedRequest {
        let fields = request.headerFields
        if configuration.profiles.contains(.sigilV1)
            && (fields[SigilV1.signatureField] != nil || fields[SigilV1.timestampField] != nil
                || fields[SigilV1.nonceField] != nil || fields[SigilV1.keyIDField] != nil)
        {
            return try await verifySigilV1(request, body: body)
        }
        if configuration.profiles.contains(.rfc9421)
            && (fields[MessageSignatures.signatureInputField] != nil || fields[MessageSignatures.signatureField] != nil)
        {
            return try await verifyRFC9421(request, body: body)
        }
        throw SigilError(.missingSignature, "the request is not signed")
    }

    /// Verifies a request whose body arrives in chunks, reading at most the body limit.
    ///
    /// A declared `Content-Length` over the limit is refused before any byte is read.
    public func verify<Chunks: AsyncSequence>(
        _ request: HTTPRequest,
        bodyChunks: Chunks
    ) async throws -> (VerifiedRequest, [UInt8]) where Chunks.Element: Collection<UInt8> {
        if let length = request.headerFields[.contentLength].flatMap(Int.init), length > configuration.bodyLimit {
            throw SigilError(.bodyTooLarge, "the body is larger than \(configuration.bodyLimit) bytes")
        }
        var body = [UInt8]()
        for try await chunk in bodyChunks {
            guard body.count + chunk.count <= configuration.bodyLimit else {
                throw SigilError(.bodyTooLarge, "the body is larger than \(configuration.bodyLimit) bytes")
            }
            body.append(contentsOf: chunk)
        }
        return (try await verify(request, body: body), body)
    }

    // MARK: sigil-v1

    func verifySigilV1(_ request: HTTPRequest, body: [UInt8]) async throws -> VerifiedRequest {
        let headers = try SigilV1.parseRequestHeaders(request.headerFields)
        let now = clock.now()
        try checkWindow(headers.timestamp, now: now)
        let registered = try await lookUp(headers.keyID, now: now)
        try checkBodyLimit(body)
        let base = SigilV1.requestBase(
            for: request,
            body: body,
            timestamp: headers.timestampText,
            nonce: headers.nonce,
            canonicalJSON: configuration.canonicalJSON
        )
        guard registered.key.isValidSignature(headers.signature, for: base, profile: .sigilV1) else {
            throw SigilError(
                .invalidSignature,
                "the signature does not verify with key \(headers.keyID)",
                signatureBase: String(decoding: base, as: UTF8.self)
            )
        }
        try await record(keyID: headers.keyID, nonce: headers.nonce, timestamp: headers.timestamp, now: now)
        return VerifiedRequest(
            keyID: headers.keyID,
            algorithm: registered.key.algorithm,
            profile: .sigilV1,
            timestamp: headers.timestamp,
            nonce: headers.nonce,
            deviceID: registered.deviceID,
            userID: registered.userID,
            label: nil
        )
    }

    // MARK: rfc9421

    func verifyRFC9421(_ request: HTTPRequest, body: [UInt8]) async throws -> VerifiedRequest {
        let signatures = try MessageSignatures(request.headerFields)
        let entry: MessageSignatures.Entry
        if let label = configuration.label {
            guard let found = signatures.entry(label: label) else {
                throw SigilError(.missingSignature, "no signature labelled '\(label)'")
            }
            entry = found
        } else {
            guard let first = signatures.entries.first else {
                throw SigilError(.malformedSignature, "Signature-Input is empty")
            }
            entry = first
        }
        let input = entry.input
        var required = configuration.requiredComponents
        if !body.isEmpty { required.append(.contentDigest) }
        for component in required where !input.components.contains(component) {
            throw SigilError(.missingComponent, "the signature must cover \(component.serialized)")
        }
        guard let created = try input.created else { throw SigilError(.missingComponent, "created is required") }
        guard let keyID = try input.keyID else { throw SigilError(.missingComponent, "keyid is required") }
        guard let nonce = try input.nonce else { throw SigilError(.missingComponent, "nonce is required") }
        guard KeyID.isValid(keyID) else {
            throw SigilError(.malformedSignature, "keyid must match [A-Za-z0-9._~-]{1,128}")
        }
        guard SigilV1.isValidNonce(nonce) else {
            throw SigilError(.malformedSignature, "nonce must match [A-Za-z0-9._~-]{16,128}")
        }
        let declaredAlgorithm = try input.algorithm.map(SignatureAlgorithm.named)
        let now = clock.now()
        try checkWindow(created, now: now)
        if let expires = try input.expires, expires <= now {
            throw SigilError(.expired, "the signature expired at \(expires)")
        }
        let registered = try await lookUp(keyID, now: now)
        if let declaredAlgorithm, declaredAlgorithm != registered.key.algorithm {
            throw SigilError(
                .algorithmMismatch, "alg \(declaredAlgorithm) disagrees with the key's \(registered.key.algorithm)")
        }
        try checkBodyLimit(body)
        if input.components.contains(.contentDigest) {
            try ContentDigest.verify(request.headerFields, body: body)
        }
        let base = try RFC9421.signatureBase(for: input, message: RFC9421Message(request: request))
        guard registered.key.isValidSignature(entry.signature, for: base, profile: .rfc9421) else {
            throw SigilError(
                .invalidSignature,
                "the signature '\(entry.label)' does not verify with key \(keyID)",
                signatureBase: String(decoding: base, as: UTF8.self)
            )
        }
        try await record(keyID: keyID, nonce: nonce, timestamp: created, now: now)
        return VerifiedRequest(
            keyID: keyID,
            algorithm: registered.key.algorithm,
            profile: .rfc9421,
            timestamp: created,
            nonce: nonce,
            deviceID: registered.deviceID,
            userID: registered.userID,
            label: entry.label
        )
    }

    // MARK: Shared steps

    func checkWindow(_ timestamp: Int64, now: Int64) throws {
        let skew = timestamp > now ? timestamp - now : now - timestamp
        guard skew <= configuration.maxSkew else {
            throw SigilError(.timestampOutOfWindow, "the timestamp is \(skew) s from the server's time")
        }
        if let oldest = nonces.oldestAcceptableTimestamp, timestamp < oldest {
            throw SigilError(.timestampOutOfWindow, "the timestamp is older than the verifier's start")
        }
    }

    func lookUp(_ keyID: String, now: Int64) async throws -> RegisteredKey {
        let found: RegisteredKey?
        do {
            found = try await keys.key(for: keyID)
        } catch {
            throw SigilError(.storeUnavailable, "the key directory did not answer")
        }
        guard let registered = found else { throw SigilError(.unknownKey, "no key is registered as \(keyID)") }
        guard registered.isUsable(at: now) else { throw SigilError(.revokedKey, "key \(keyID) is revoked") }
        return registered
    }

    func checkBodyLimit(_ body: [UInt8]) throws {
        guard body.count <= configuration.bodyLimit else {
            throw SigilError(.bodyTooLarge, "the body is larger than \(configuration.bodyLimit) bytes")
        }
    }

    func record(keyID: String, nonce: String, timestamp: Int64, now: Int64) async throws {
        let isNew: Bool
        do {
            isNew = try await nonces.insert(
                keyID: keyID,
                nonce: nonce,
                expiresAt: timestamp + configuration.maxSkew + configuration.nonceGrace,
                now: now
            )
        } catch {
            throw SigilError(.storeUnavailable, "the nonce store did not answer; the request is refused")
        }
        guard isNew else { throw SigilError(.replayedNonce, "nonce already used with key \(keyID)") }
    }
}
