import Foundation
import HTTPTypes
@_spi(Sigil) import SigilCore

/// Sealed request bodies on the server's side (PROTOCOL.md section 6): opened once the request's
/// signature verified (forged traffic costs no decryption), handed to the handler as plaintext with
/// its own `Content-Type`, and the answer sealed to the request that was sealed.
///
/// Every framework adapter uses it the same way: ``open(_:body:verified:)`` after verification, the
/// route runs on ``Opened/request`` and ``Opened/body``, then ``Opened/seal(_:body:)`` before the
/// answer is signed (its signature covers the sealed bytes).
public struct SealedBodies: Sendable {
    let fixedKeys: [SealingPrivateKey]
    let fixedRetired: [SealingPrivateKey]
    /// The server's keys, when they rotate.
    public let ring: ServerKeyRing?

    /// The keys discovery publishes, the current one first, then the next one clients will move to.
    public var keys: [SealingPrivateKey] {
        guard let phase = ring?.phase(.sealing) else { return fixedKeys }
        return ([phase.current] + phase.next).compactMap(\.sealing) + fixedKeys
    }
    /// Keys no longer published whose bodies still open (the previous key, during an overlap).
    public var retired: [SealingPrivateKey] {
        guard let phase = ring?.phase(.sealing) else { return fixedRetired }
        return [phase.previous?.sealing].compactMap { $0 } + fixedRetired
    }
    /// Paths under which a body that is not sealed is refused (`sealed-body-invalid`): `/v1/pay`
    /// covers `/v1/pay` and `/v1/pay/…`, `/` every path.
    public var sealedPaths: [String]

    /// Creates the component.
    public init(keys: [SealingPrivateKey], retired: [SealingPrivateKey] = [], sealedPaths: [String] = []) {
        self.fixedKeys = keys
        self.fixedRetired = retired
        self.ring = nil
        self.sealedPaths = sealedPaths
    }

    /// Creates the component on the sealing keys of `ring`, following its rotations; `extraKeys` and
    /// `extraRetired` (keys kept in files) are used beside them.
    public init(
        ring: ServerKeyRing, extraKeys: [SealingPrivateKey] = [], extraRetired: [SealingPrivateKey] = [],
        sealedPaths: [String] = []
    ) {
        self.fixedKeys = extraKeys
        self.fixedRetired = extraRetired
        self.ring = ring
        self.sealedPaths = sealedPaths
    }

    /// Whether a body sent to `path` (a request target) must be sealed: when any reading of it a
    /// router could make falls under one of ``sealedPaths`` (``PathPrefixes/anyReading(of:)``).
    /// Matching more paths than a router would is the safe side: a body is refused, never let through.
    public func requiresSealed(_ path: String) -> Bool {
        PathPrefixes(sealedPaths).anyReading(of: path) != nil
    }

    /// The entries discovery publishes, the current key first.
    public var discoveryKeys: [Registration.Discovery.SealingKey] { keys.map { .init($0.publicKey) } }

    /// A request as its handler reads it.
    public struct Opened: Sendable {
        /// The request, without the `sigil-hpke` coding and with the plaintext's length.
        public let request: HTTPRequest
        /// The body, opened.
        public let body: [UInt8]
        /// Seals the answer, when the request was sealed.
        public let sealer: SealedResponseSealer?
        /// The key the body was sealed to, when it was.
        public let keyID: String?

        /// Seals `body` and marks `response` so, when the request was sealed; else leaves both.
        public func seal(_ response: inout HTTPResponse, body: inout [UInt8]) throws {
            guard let sealer else { return }
            body = try sealer.seal(body)
            response.headerFields[.contentEncoding] = Sealing.contentEncoding
            if response.headerFields[.contentLength] != nil {
                response.headerFields[.contentLength] = String(body.count)
            }
        }
    }

    /// Opens the body of a verified request when it is sealed (`Content-Encoding: sigil-hpke`, the
    /// only coding), for the request's signer and nonce.
    ///
    /// - Throws: `sealed-body-invalid` (the request's own signature verified, so the refusal may be
    ///   signed) when the body does not open, names a key this server does not hold, is sealed under
    ///   another coding too, or is not sealed under one of ``sealedPaths``.
    public func open(_ request: HTTPRequest, body: [UInt8], verified: VerifiedRequest) throws -> Opened {
        let codings = Sealing.codings(request.headerFields)
        do {
            guard codings.contains(Sealing.contentEncoding) else {
                if !body.isEmpty && requiresSealed(request.path ?? "/") {
                    throw SigilError(
                        .sealedBodyInvalid, "this server takes sealed bodies only (Content-Encoding: sigil-hpke)")
                }
                return Opened(request: request, body: body, sealer: nil, keyID: nil)
            }
            guard codings == [Sealing.contentEncoding] else {
                throw SigilError(.sealedBodyInvalid, "sigil-hpke must be the only content coding")
            }
            let keyID = try Sealing.keyID(ofSealedRequest: body)
            let (plaintext, sealer) = try Sealing.openRequest(
                body, with: keys + retired, keyID: verified.keyID, nonce: verified.nonce)
            var opened = request
            opened.headerFields[.contentEncoding] = nil
            if opened.headerFields[.contentLength] != nil {
                opened.headerFields[.contentLength] = String(plaintext.count)
            }
            return Opened(request: opened, body: plaintext, sealer: sealer, keyID: keyID)
        } catch let error as SigilError {
            throw error.ofVerifiedRequest()
        }
    }
}
