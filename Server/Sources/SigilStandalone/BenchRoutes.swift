import HTTPTypes
import Hummingbird
import NIOCore
@_spi(Sigil) import SigilCore
import SigilHummingbird
import SigilServer

/// The raw signature check every bench holds a verification against: swift-crypto's check alone, over
/// bases of 150 bytes (a request's sigil-v1 base), 64 signatures in turn, since a check's time varies
/// with the signature (ECDSA's is variable-time) and one signature checked again and again is checked
/// faster than any server sees.
package struct RawChecks: Sendable {
    package static let bases = (0..<64).map { index in
        Array(repeating: UInt8(ascii: "a") + UInt8(index % 26), count: 150)
    }
    let signatures: [[UInt8]]
    let key: VerificationKey
    let profile: SignatureProfile

    package init(signer: any SignatureProvider, key: VerificationKey, profile: SignatureProfile) throws {
        signatures = try Self.bases.map { try signer.signature(for: $0, profile: profile) }
        self.key = key
        self.profile = profile
    }

    /// The check of turn `turn`'s signature (turns go round the 64).
    package func check(_ turn: Int) -> Bool {
        key.isValidSignature(signatures[turn & 63], for: Self.bases[turn & 63], profile: profile)
    }
}

/// `POST /bench/floor/hmac` and `/bench/floor/ecdsa`, on bench servers only: the fields route's
/// request and answer, plus what the protocol asks of any server in a signed exchange and nothing of
/// Sigil's own pipeline. The request body's canonical form and SHA-256, one raw check of a signature
/// (HMAC-SHA256 or ECDSA P-256, ``RawChecks``), the answer's canonical form and SHA-256, and a real
/// Ed25519 signature of a 150-byte base holding both hashes. No header is parsed beyond picking the
/// check's turn, no key looked up, no nonce recorded: a verified row can come near this one, never
/// above it, so it is the ceiling any implementation has on this machine.
struct FloorRoutes: Sendable {
    let hmac: RawChecks
    let ecdsa: RawChecks
    /// The answers' key: a key of the response key's algorithm made for these routes, never the
    /// server's own (these bases are not answers' bases), named by its own key ID.
    let answerKey: SigningKey
    let answerKeyID: String
    let signer: ResponseSigner?

    init(signer: ResponseSigner?) throws {
        let secret = try SigningKey.generate(.hmacSHA256)
        hmac = try RawChecks(signer: secret, key: try secret.verificationKey, profile: .sigilV1)
        let device = try SigningKey.generate(.ecdsaP256SHA256)
        ecdsa = try RawChecks(signer: device, key: try device.verificationKey, profile: .sigilV1)
        answerKey = try SigningKey.generate(.ed25519)
        answerKeyID = try answerKey.verificationKey.derivedKeyID ?? ""
        self.signer = signer
    }

    func add(to router: Router<SigilBasicRequestContext>, echo: EchoRoutes) {
        router.post("bench/floor/hmac") { request, _ in try await answer(request, check: hmac, echo: echo) }
        router.post("bench/floor/ecdsa") { request, _ in try await answer(request, check: ecdsa, echo: echo) }
    }

    func answer(_ request: Request, check: RawChecks, echo: EchoRoutes) async throws -> Response {
        let body = try await echo.body(of: request)
        let contentType = request.headers[.contentType]
        let requestHash = BodyHash.bytes(body, contentType: contentType)
        // The turn from the nonce's first byte: no shared counter, no random draw (a system call).
        let nonce = request.headers[SigilV1.nonceField] ?? ""
        guard check.check(Int(nonce.utf8.first ?? 0)) else {
            throw HTTPError(.internalServerError)
        }
        let answer = try Registration.json(EchoRoutes.unverifiedEcho(of: body))
        // A base of a signed answer's size (150 bytes with two bodies): a status line, both body hashes.
        var base = Array("sigil-v1-response\n200\n".utf8)
        base += requestHash
        base += BodyHash.bytes(answer, contentType: "application/json")
        let signature = try answerKey.signature(for: base, profile: .sigilV1)
        var headers: HTTPFields = [.contentType: "application/json"]
        headers[SigilV1.timestampField] = request.headers[SigilV1.timestampField]
        headers[SigilV1.keyIDField] = answerKeyID
        headers[SigilV1.signatureField] = Base64URL.encode(signature)
        headers[ResponseSigner.keysField] = signer?.ring?.keysTag
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: answer)))
    }
}
