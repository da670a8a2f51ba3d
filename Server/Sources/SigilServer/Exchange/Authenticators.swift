import HTTPTypes
@_spi(Sigil) import SigilCore

/// What a request's credentials proved, each as its authenticator verified it, before
/// ``IdentityResolver`` resolves them to one identity.
@usableFromInline
struct Credentials: Sendable {
    /// The Sigil signature checked as far as its head goes (section 2.6 steps 1 to 3), until the body is read.
    var signatureHead: RequestVerifier.Admitted?
    /// The Sigil signature, verified over the body.
    var signature: VerifiedRequest?
    /// The DPoP proof and its access token.
    var dpop: DPoPIdentity?
    /// The TLS client certificate.
    var certificate: ClientCertificateIdentity?

    @usableFromInline init() {}
}

/// One way a request proves who sent it: a Sigil signature, a DPoP proof with its access token, a
/// TLS client certificate. The exchange asks each in turn, as hummingbird-auth asks its
/// authenticators, and each answers in its own terms: its own refusal fields (RFC 9449's challenge
/// beside Sigil's code) and its own fields on answers (`DPoP-Nonce`). What the credentials name
/// together is decided in one place, ``IdentityResolver`` (PROTOCOL.md section 13.2).
@usableFromInline
protocol RequestAuthenticator: Sendable {
    /// What refusals call the credential: `Sigil signature`, `DPoP proof`.
    var credential: String { get }
    /// Whether every request must carry this credential.
    var isRequired: Bool { get }
    /// Whether this credential admits a request on its own (a client certificate does not: it names a
    /// device, and proves nothing of the request).
    var provesRequest: Bool { get }
    /// Whether `head` carries this credential (it may not verify).
    func isCarried(by head: HTTPRequest) -> Bool
    /// Verifies the credential as far as the head goes, before any byte of the body is read.
    func authenticate(_ head: HTTPRequest, into credentials: inout Credentials) async throws
    /// Verifies what covers the body, once it is read; `awaited` when it arrived after the head was checked.
    func authenticate(_ head: HTTPRequest, body: [UInt8], awaited: Bool, into credentials: inout Credentials)
        async throws
    /// A refusal of a request that lacks this credential where one is needed: with this scheme's challenge.
    func challenge(_ error: SigilError) -> SigilError
    /// A refusal of a request that carried this credential, for what the credentials name together.
    func refusal(of error: SigilError) -> SigilError
    /// The fields an answer to a request that carried this credential gets.
    func answerFields() -> HTTPFields
}

extension RequestAuthenticator {
    func authenticate(_ head: HTTPRequest, body: [UInt8], awaited: Bool, into credentials: inout Credentials)
        async throws
    {}
    func challenge(_ error: SigilError) -> SigilError { error }
    func refusal(of error: SigilError) -> SigilError { error }
    func answerFields() -> HTTPFields { [:] }
}

/// A Sigil signature (sigil-v1 or rfc9421): the headers, the window and the key before the body, then
/// the signature over the body and the nonce (``RequestVerifier``).
struct SignatureAuthenticator: RequestAuthenticator {
    let verifier: RequestVerifier
    /// Whether a DPoP proof may stand in for it.
    let dpopStandsIn: Bool

    var credential: String { "Sigil signature" }
    var isRequired: Bool { !dpopStandsIn }
    var provesRequest: Bool { true }

    func isCarried(by head: HTTPRequest) -> Bool { verifier.carriesSignature(head) }

    func authenticate(_ head: HTTPRequest, into credentials: inout Credentials) async throws {
        credentials.signatureHead = try await verifier.admitBeforeBody(head)
    }

    func authenticate(_ head: HTTPRequest, body: [UInt8], awaited: Bool, into credentials: inout Credentials)
        async throws
    {
        guard let signatureHead = credentials.signatureHead else { return }
        credentials.signature = try await verifier.completeAfterBody(
            signatureHead, request: head, body: body, awaited: awaited)
    }
}

/// A DPoP proof and the access token it is bound to (RFC 9449, ``DPoPVerifier``). A proof signs no body:
/// alone, it is checked before the body is read; beside a Sigil signature, once the signature has
/// verified, so that its refusal (a `DPoP-Nonce` to use) is signed for the client to trust.
struct DPoPAuthenticator: RequestAuthenticator {
    let dpop: DPoPVerifier

    var credential: String { "DPoP proof" }
    var isRequired: Bool { dpop.requiresSigilSignature }
    var provesRequest: Bool { !dpop.requiresSigilSignature }

    func isCarried(by head: HTTPRequest) -> Bool { DPoPVerifier.isPresent(in: head.headerFields) }

    func authenticate(_ head: HTTPRequest, into credentials: inout Credentials) async throws {
        guard credentials.signatureHead == nil else { return }
        credentials.dpop = try await dpop.verify(head)
    }

    func authenticate(_ head: HTTPRequest, body: [UInt8], awaited: Bool, into credentials: inout Credentials)
        async throws
    {
        guard credentials.dpop == nil, credentials.signature != nil else { return }
        credentials.dpop = try await dpop.verify(head)
    }

    func challenge(_ error: SigilError) -> SigilError { dpop.refusal(error, nil) }

    /// The token, or its key, is what is refused (`invalid_token`); a directory that did not answer
    /// refuses nothing of the token.
    func refusal(of error: SigilError) -> SigilError {
        error.code == .storeUnavailable ? error : dpop.refusal(error, "invalid_token")
    }

    func answerFields() -> HTTPFields {
        guard let nonce = dpop.currentNonce() else { return [:] }
        return [DPoPNonces.field: nonce]
    }
}

/// The TLS connection's client certificate, read by the adapter. It names a device when it names a
/// Sigil key (`urn:sigil:key:`), and proves nothing of the request on its own. It is read last, once
/// a signature has verified, so that a certificate refused beside one is that request's signed refusal.
struct ClientCertificateAuthenticator: RequestAuthenticator {
    /// Reads the connection's certificate (`nil` for none); one that cannot be read throws
    /// `certificate-mismatch`.
    let read: @Sendable () async throws -> ClientCertificateIdentity?

    var credential: String { "client certificate" }
    var isRequired: Bool { false }
    var provesRequest: Bool { false }

    func isCarried(by head: HTTPRequest) -> Bool { true }

    func authenticate(_ head: HTTPRequest, into credentials: inout Credentials) async throws {}

    func authenticate(_ head: HTTPRequest, body: [UInt8], awaited: Bool, into credentials: inout Credentials)
        async throws
    {
        credentials.certificate = try await read()
    }
}
