import Crypto
import Foundation
import HTTPTypes
import HTTPTypesFoundation
@_spi(Sigil) import SigilCore

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Makes DPoP proofs (RFC 9449 §4.2) with any ``SignatureProvider`` whose algorithm JOSE names
/// (ES256, ES384, EdDSA, RS256): a Secure Enclave P-256 key as well as a software key.
///
/// ```swift
/// let prover = try DPoPProver(signer: key, clock: serverClock)
/// request.headerFields[.authorization] = "DPoP \(accessToken)"
/// request.headerFields[DPoPProver.field] = try prover.proof(for: request, accessToken: accessToken)
/// ```
public struct DPoPProver: Sendable {
    /// The `DPoP` header field.
    public static let field = HTTPField.Name("DPoP")!

    let signer: any SignatureProvider
    let clock: any UnixClock
    let nonces: any NonceSource
    /// The proof's protected header: `typ`, `alg` and the public `jwk`, encoded once.
    let encodedHeader: String
    /// The key's RFC 7638 thumbprint, which an access token bound to it names as `cnf.jkt`.
    public let thumbprint: String

    /// Creates a prover.
    ///
    /// - Throws: ``SigilInputError`` for a key with no JOSE algorithm (an HMAC secret, `ecdsa-p256-sha512`).
    public init(
        signer: any SignatureProvider, clock: any UnixClock = SystemUnixClock(),
        nonces: any NonceSource = RandomNonceSource()
    ) throws {
        guard let key = signer.publicKey, let entry = AlgorithmEntry.of(signer.algorithm), entry.inDPoP,
            let alg = entry.jose
        else { throw SigilInputError("DPoP needs an ES256, ES384, EdDSA or RS256 key") }
        let jwk = try JWK(key)
        self.signer = signer
        self.clock = clock
        self.nonces = nonces
        self.thumbprint = jwk.thumbprint
        encodedHeader = Base64URL.encode(Array(Self.header(alg: alg, jwk: jwk).utf8))
    }

    /// `{"alg":…,"jwk":{…},"typ":"dpop+jwt"}`: the JWK's members only (no `kid`).
    static func header(alg: String, jwk: JWK) -> String {
        "{\"alg\":\"\(alg)\",\"jwk\":\(jwk.canonicalJSON),\"typ\":\"dpop+jwt\"}"
    }

    /// A proof for `request` (its method, and its URI without query and fragment), with `ath` for
    /// `accessToken` and the server's `nonce` when it asked for one (`DPoP-Nonce`).
    public func proof(for request: HTTPRequest, accessToken: String?, nonce: String? = nil) throws -> String {
        var uri = "\(request.scheme ?? "https")://\(request.authority ?? "")"
        uri += String((request.path ?? "/").prefix { $0 != "?" && $0 != "#" })
        var claims: [String: Any] = [
            "htm": request.method.rawValue, "htu": uri, "iat": clock.now(), "jti": nonces.next(),
        ]
        if let accessToken {
            claims["ath"] = Base64URL.encode(Array(SHA256.hash(data: Array(accessToken.utf8))))
        }
        if let nonce { claims["nonce"] = nonce }
        let payload = Base64URL.encode(
            Array(try JSONSerialization.data(withJSONObject: claims, options: [.sortedKeys, .withoutEscapingSlashes])))
        let signingInput = encodedHeader + "." + payload
        // JOSE encodes ECDSA as r‖s, as rfc9421 does.
        let signature = try signer.signature(for: Array(signingInput.utf8), profile: .rfc9421)
        return signingInput + "." + Base64URL.encode(signature)
    }
}

/// An access token bound to a ``DPoPProver``'s key, and the server's latest nonce: what a client
/// adds to each request (`Authorization: DPoP <token>`, a fresh `DPoP` proof), and what it learns
/// from each answer (`DPoP-Nonce`). Shared by the requests of one session.
///
/// ```swift
/// let dpop = DPoPAuthorization(prover: try DPoPProver(signer: key), accessToken: token)
/// let (data, response) = try await dpop.data(for: urlRequest, session: .shared)  // retried once on use_dpop_nonce
/// ```
///
/// `SigilSession` takes one too (``SigilSession/dpop``), for servers that want a Sigil signature and DPoP.
public final class DPoPAuthorization: Sendable {
    /// The `DPoP-Nonce` field.
    public static let nonceField = HTTPField.Name("DPoP-Nonce")!

    /// Makes the proofs.
    public let prover: DPoPProver
    let state: Locked<(token: String, nonce: String?)>

    /// Creates the authorization of `accessToken`, bound to `prover`'s key (its `cnf.jkt`).
    public init(prover: DPoPProver, accessToken: String) {
        self.prover = prover
        self.state = Locked((accessToken, nil))
    }

    /// Replaces the access token (after a refresh); the nonce is kept.
    public func update(accessToken: String) { state.withLock { $0.token = accessToken } }

    /// The access token sent.
    public var accessToken: String { state.withLock { $0.token } }
    /// The server's nonce, as last learnt.
    public var nonce: String? { state.withLock { $0.nonce } }

    /// Adds `Authorization: DPoP` and a proof made now for `request`, with the nonce last learnt.
    public func authorize(_ request: inout HTTPRequest) throws {
        let (token, nonce) = state.withLock { ($0.token, $0.nonce) }
        request.headerFields[.authorization] = "DPoP " + token
        request.headerFields[DPoPProver.field] = try prover.proof(for: request, accessToken: token, nonce: nonce)
    }

    /// Learns the server's nonce from an answer (RFC 9449 §8.2, §9).
    ///
    /// - Returns: whether the answer refused the request for want of that nonce (`401` with
    ///   `WWW-Authenticate: DPoP error="use_dpop_nonce"`), so it may be sent once more.
    @discardableResult
    public func learn(from response: HTTPResponse) -> Bool {
        if let nonce = response.headerFields[Self.nonceField], !nonce.isEmpty, nonce.utf8.count <= 256 {
            state.withLock { $0.nonce = nonce }
        }
        return response.status.code == 401
            && response.headerFields[values: .wwwAuthenticate].contains { challenge in
                challenge.hasPrefix("DPoP") && challenge.contains("error=\"use_dpop_nonce\"")
            }
    }

    /// Sends `request` authorized with a fresh proof, and once more with a new proof when the server
    /// asks for its nonce (as RFC 9449 §8 has clients do).
    public func data(for request: URLRequest, session: URLSession) async throws -> (Data, HTTPURLResponse) {
        var attempt = 0
        while true {
            attempt += 1
            guard var head = request.httpRequest else {
                throw SigilInputError("the request needs a scheme, an authority and a path")
            }
            try authorize(&head)
            guard var sent = URLRequest(httpRequest: head) else {
                throw SigilInputError("the request needs a scheme, an authority and a path")
            }
            sent.httpBody = request.httpBody
            let (data, response) = try await session.data(for: sent)
            guard let http = response as? HTTPURLResponse, let answer = http.httpResponse else {
                throw SigilInputError("not an HTTP response")
            }
            if learn(from: answer), attempt == 1 { continue }
            return (data, http)
        }
    }
}
