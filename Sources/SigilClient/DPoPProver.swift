import Crypto
import Foundation
import HTTPTypes
import SigilCore

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
        guard let key = signer.publicKey, let alg = JWK.joseAlgorithm(signer.algorithm),
            JWK.algorithm(jose: alg) == signer.algorithm
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
