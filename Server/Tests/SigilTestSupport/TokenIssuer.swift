import AsyncHTTPClient
import Foundation
import HTTPTypes
import JWTKit
import SigilClient
@_spi(Sigil) import SigilCore
import SigilJWT
import SigilServer
import SigilStandalone
import Testing

/// An issuer of DPoP-bound access tokens: an ES256 key whose public half `sigil serve --jwt-key` reads.
struct TestTokenIssuer: Sendable {
    let keys: JWTKeyCollection
    let publicKeyFile: String
    static let audience = "sigil-test"
    static let issuer = "https://issuer.test"

    static func make() async throws -> TestTokenIssuer {
        let key = ES256PrivateKey()
        let keys = JWTKeyCollection()
        await keys.add(ecdsa: key)
        let file = TestServer.temporaryDirectory() + "-issuer.pem"
        try key.publicKey.pemRepresentation.write(toFile: file, atomically: true, encoding: .utf8)
        return TestTokenIssuer(keys: keys, publicKeyFile: file)
    }

    /// A token for `subject` bound to the key whose thumbprint is `jkt`.
    func token(subject: String = "user-1", boundTo jkt: String, expiresAt: Int64) async throws -> String {
        try await keys.sign(
            JWTAccessTokens.Claims(
                subject: subject, audience: Self.audience, issuer: Self.issuer, expiresAt: expiresAt, boundTo: jkt))
    }

    /// `sigil serve` options for these tokens.
    func configure(_ options: inout SigilStandalone.Options, mode: SigilStandalone.DPoPMode = .alone) {
        options.jwt.keyFiles = [publicKeyFile]
        options.jwt.audience = Self.audience
        options.jwt.issuer = Self.issuer
        options.dpop.mode = mode
    }
}

extension TestRequest {
    /// This request with `Authorization: DPoP` and a proof made by `prover` for the URI the server
    /// is reached at (`origin`, or the request's own).
    mutating func addDPoP(_ prover: DPoPProver, token: String, origin: String? = nil, nonce: String? = nil) throws {
        var named = head
        if let origin, let url = URL(string: origin) {
            named.scheme = url.scheme
            named.authority = url.host.map { host in url.port.map { "\(host):\($0)" } ?? host }
        }
        head.headerFields[.authorization] = "DPoP " + token
        head.headerFields[DPoPProver.field] = try prover.proof(for: named, accessToken: token, nonce: nonce)
    }
}
