import HTTPTypes
@_spi(Sigil) import SigilCore

/// Signs responses so the app can check them, bound to the request they answer.
public struct ResponseSigner: Sendable {
    let fixedSigner: any SignatureProvider
    let fixedKeyID: String
    /// The server's keys, when they rotate: the current response key signs.
    public let ring: ServerKeyRing?
    let clock: any UnixClock
    /// Whether response body hashes canonicalize JSON (sigil-v1).
    public var canonicalJSON = true

    /// Creates a signer with one key.
    public init(signer: any SignatureProvider, keyID: String, clock: any UnixClock = SystemUnixClock()) {
        self.fixedSigner = signer
        self.fixedKeyID = keyID
        self.ring = nil
        self.clock = clock
    }

    /// Creates a signer that signs with the current response key of `ring`, following its rotations.
    ///
    /// - Throws: when the ring holds no response key.
    public init(ring: ServerKeyRing, clock: any UnixClock = SystemUnixClock()) throws {
        guard let current = ring.phase(.response)?.current, let signing = current.signing else {
            throw SigilError(.storeUnavailable, "the store holds no response key")
        }
        self.fixedSigner = signing
        self.fixedKeyID = current.stored.keyID
        self.ring = ring
        self.clock = clock
    }

    /// The key that signs now and its ID, read once per signature.
    var active: (signer: any SignatureProvider, keyID: String) {
        if let current = ring?.current(.response), let signing = current.signing {
            return (signing, current.stored.keyID)
        }
        return (fixedSigner, fixedKeyID)
    }

    /// The signing key's provider now.
    var signer: any SignatureProvider { active.signer }
    /// The key ID clients know the current response key by.
    public var keyID: String { active.keyID }
    /// The public key responses are verified with now (published in discovery), or `nil` for an HMAC secret.
    public var publicKey: VerificationKey? { signer.publicKey }

    /// The response keys discovery publishes: the current one, then any next one, each with its state.
    public var publishedKeys: [(keyID: String, key: VerificationKey, state: String)] {
        guard let ring, let phase = ring.phase(.response) else {
            return publicKey.map { [(fixedKeyID, $0, "current")] } ?? []
        }
        return ([(phase.current, "current")] + phase.next.map { ($0, "next") }).compactMap { key, state in
            guard let verification = try? key.signing?.verificationKey else { return nil }
            return (key.stored.keyID, verification, state)
        }
    }

    /// The keys that sign discovery: the current one, and the previous one during the overlap after a
    /// promotion, so a client that trusts only the previous key still learns the current one.
    public var discoverySigners: [(keyID: String, signer: any SignatureProvider)] {
        guard let ring, let phase = ring.phase(.response) else { return [(fixedKeyID, fixedSigner)] }
        return [phase.current, phase.previous].compactMap { key in
            key.flatMap { key in key.signing.map { (key.stored.keyID, $0 as any SignatureProvider) } }
        }
    }

    /// The response key IDs a device's rotation proof may name: the current, next and previous keys.
    public var acceptedKeyIDs: Set<String> {
        guard let ring, let phase = ring.phase(.response) else { return [fixedKeyID] }
        return Set(([phase.current] + phase.next + [phase.previous].compactMap { $0 }).map(\.stored.keyID))
    }

    /// sigil-v1 (PROTOCOL.md section 2.7): the `X-Timestamp`, `X-Key-ID` and `X-Signature` to add to
    /// a response to `request` (its key ID, nonce and signature as sent).
    public func sigilV1Fields(
        for response: HTTPResponse, body: [UInt8], answering request: SigilV1.AnsweredRequest
    ) throws -> HTTPFields {
        let (signer, keyID) = active
        let timestamp = String(clock.now())
        let base = SigilV1.responseBase(
            for: response,
            body: body,
            timestamp: timestamp,
            answering: request,
            canonicalJSON: canonicalJSON
        )
        let signature = try signer.signature(for: base, profile: .sigilV1)
        return HTTPFields([
            HTTPField(name: SigilV1.timestampField, value: timestamp),
            HTTPField(name: SigilV1.keyIDField, value: keyID),
            HTTPField(name: SigilV1.signatureField, value: Base64URL.encode(signature)),
        ])
    }

    /// A sealed secret as a push to the device `deviceID`, signed with the response key and dated
    /// when it was issued, for delivery by APNs.
    ///
    /// - Throws: ``SigilInputError`` for a secret in the clear, or when the payload would pass APNs'
    ///   4 KB (an ML-DSA response key's signature does not fit).
    public func secretPush(_ issued: Registration.IssuedSecret, deviceID: String) throws -> Registration.SecretPush {
        try Registration.SecretPush(
            issued, deviceID: deviceID, issuedAt: issued.issuedAt ?? clock.now(), signer: signer)
    }

    /// Signs `response` in the profile of the request it answers: sigil-v1 over the request's nonce
    /// (section 2.7), or rfc9421 covering the request with `;req`.
    public func sign(
        _ response: inout HTTPResponse,
        body: [UInt8],
        answering request: HTTPRequest,
        binding: ResponseBinding
    ) throws {
        // Which keys the server holds now (a tag each rotation and promotion changes): a client that
        // sees a new one re-reads the signed discovery. Not signed, and needs not be: it only prompts
        // a read of a document that is (a proxy that strips it delays the news, one that adds it costs
        // a read).
        if let ring { response.headerFields[Self.keysField] = ring.keysTag }
        try binding.profile.format.sign(&response, body: body, answering: request, binding: binding, signer: self)
    }

    /// `Sigil-Keys`: the server's ``ServerKeyRing/keysTag`` on every signed answer.
    public static let keysField = HTTPField.Name(Registration.keysTagField)!

    /// rfc9421: signs `response` with `;req` components of `request`, the request's own signature and
    /// its parameters (`"signature";req;key="<label>"`, `"signature-input";req;key="<label>"`), so the
    /// response is bound to that request and the key ID it named.
    ///
    /// Adds `Content-Digest` when there is a body, then `Signature-Input` and `Signature`.
    public func signRFC9421(
        _ response: inout HTTPResponse,
        body: [UInt8],
        answering request: HTTPRequest,
        requestLabel: String?,
        label: String = "sig1"
    ) throws {
        var components: [ComponentIdentifier] = [.status]
        response.headerFields[MessageSignatures.contentDigestField] = nil  // the digest is of this body
        ContentDigest.cover(body, in: &response.headerFields, components: &components)
        if response.headerFields[.contentType] != nil { components.append(ComponentIdentifier("content-type")) }
        if response.headerFields[.contentEncoding] != nil { components.append(.contentEncoding) }
        components += [
            ComponentIdentifier("@method", parameters: [("req", .bool(true))]),
            ComponentIdentifier("@authority", parameters: [("req", .bool(true))]),
            ComponentIdentifier("@path", parameters: [("req", .bool(true))]),
        ]
        if let requestLabel {
            // The request's signature and its parameters (keyid, nonce, created): a refusal of a request
            // whose signature did not verify (`unknown-key`, `revoked-key`) is bound to the key ID it
            // named, which its signature bytes alone do not fix (PROTOCOL.md section 2.7).
            components += ["signature", "signature-input"].map { name in
                ComponentIdentifier(name, parameters: [("req", .bool(true)), ("key", .string(requestLabel))])
            }
        }
        let (signer, keyID) = active
        let input = SignatureInput(components: components, created: clock.now(), keyID: keyID)
        let message = RFC9421Message(response: response, answering: request)
        let (inputMember, signatureMember) = try RFC9421.sign(message, input: input, label: label, signer: signer)
        response.headerFields[MessageSignatures.signatureInputField] = inputMember
        response.headerFields[MessageSignatures.signatureField] = signatureMember
    }
}

/// What binds a response to the request it answers: the request's profile, its key ID and nonce,
/// and its signature (sigil-v1: the `X-Signature` text as sent; rfc9421: the label of its signature,
/// covered as `"signature";req;key="<label>"`). A nonce is unique per key only, so a binding never
/// names the nonce alone (PROTOCOL.md section 2.7).
public struct ResponseBinding: Sendable, Hashable {
    /// The request's profile, which the response is signed in.
    public let profile: SignatureProfile
    /// The request's key ID.
    public let keyID: String
    /// The request's nonce.
    public let nonce: String
    /// sigil-v1: the request's `X-Signature` value as sent.
    public let signature: String?
    /// rfc9421: the label of the request's signature, when the request carries one under it.
    public let label: String?

    /// Creates a binding.
    public init(profile: SignatureProfile, keyID: String, nonce: String, signature: String?, label: String?) {
        self.profile = profile
        self.keyID = keyID
        self.nonce = nonce
        self.signature = signature
        self.label = label
    }

    /// The binding of a verified request.
    public init(_ verified: VerifiedRequest) { self = verified.binding }

    /// sigil-v1: the request as an answer's base names it.
    var answered: SigilV1.AnsweredRequest? {
        signature.map { SigilV1.AnsweredRequest(keyID: keyID, nonce: nonce, signature: $0) }
    }
}
