import Crypto
import HTTPTypes
import SigilClient
@_spi(Sigil) import SigilCore
import SigilServer
import Testing

@testable import SigilTestSupport

/// The exchange asks each authenticator in turn (PROTOCOL.md section 13): what a request lacks is
/// refused before anything is verified, a proof alone is checked before its body is read, and a proof
/// beside a signature after the signature, so that its refusal is signed.
@Suite("Authenticators")
struct AuthenticatorTests {
    /// An exchange over a signing setup, with DPoP in `mode` (none when `nil`), tokens bound to `prover`.
    static func exchange(
        _ setup: SigningSetup, prover: DPoPProver, mode requiresSignature: Bool?, nonces: Bool = false
    ) -> Exchange {
        let tokens = IdentityAttackTests.FixedTokens(
            token: AccessToken(
                subject: "user-1", boundThumbprint: prover.thumbprint, expiresAt: setup.clock.now() + 600))
        let dpop = requiresSignature.map { requiresSignature in
            var dpop = DPoPVerifier(tokens: tokens, nonces: setup.store, clock: setup.clock)
            dpop.requiresSigilSignature = requiresSignature
            if nonces { dpop.serverNonces = DPoPNonces(key: SymmetricKey(size: .bits256)) }
            return dpop
        }
        return Exchange(verifier: setup.verifier, bodyTimeout: .seconds(20), dpop: dpop)
    }

    static func addDPoP(_ prover: DPoPProver, to head: inout HTTPRequest, path: String? = nil) throws {
        head.headerFields[.authorization] = "DPoP token"
        var proved = head
        if let path { proved.path = path }
        head.headerFields[DPoPProver.field] = try prover.proof(for: proved, accessToken: "token")
    }

    @Test("a DPoP proof alone is checked before its body is read: a stalled body gets the proof's refusal at once")
    func proofBeforeBody() async throws {
        let setup = try await SigningSetup(.ed25519)
        let prover = try DPoPProver(signer: try SigningKey.generate(.ecdsaP256SHA256), clock: setup.clock)
        let exchange = Self.exchange(setup, prover: prover, mode: false)
        let (request, body) = SigningSetup.jsonPost()

        // A proof made for another path; the body never comes. Read first, it would time out.
        var forged = request
        try Self.addDPoP(prover, to: &forged, path: "/v1/elsewhere")
        let never = StallingBody(first: [], rest: body)
        let refused = await #expect(throws: SigilError.self) {
            _ = try await exchange.admit(forged, bodyChunks: never)
        }
        #expect(refused?.code == .invalidSignature)
        #expect(refused?.fields[.wwwAuthenticate]?.hasPrefix(#"DPoP error="invalid_dpop_proof""#) == true)

        // A good proof waits for its body, and the route reads all of it.
        var proved = request
        try Self.addDPoP(prover, to: &proved)
        let gate = StallingBody(first: Array(body.prefix(5)), rest: Array(body.dropFirst(5)))
        async let admitted = exchange.admit(proved, bodyChunks: gate)
        await gate.waitUntilStalled()
        gate.resume()
        let admission = try await admitted
        #expect(admission.body == body)
        #expect(admission.identity?.profile == "dpop" && admission.identity?.userID == "user-1")
    }

    @Test(
        "a request lacking a credential it needs is refused before anything is verified, with the challenge of each scheme it lacks"
    )
    func lackingCredentials() async throws {
        let setup = try await SigningSetup(.ed25519)
        let prover = try DPoPProver(signer: try SigningKey.generate(.ecdsaP256SHA256), clock: setup.clock)
        let (request, body) = SigningSetup.jsonPost()

        // No DPoP on: an unsigned request lacks the signature alone, and no scheme challenges.
        let plain = Self.exchange(setup, prover: prover, mode: nil)
        let unsigned = await #expect(throws: SigilError.self) { _ = try await plain.admit(request, body: body) }
        #expect(unsigned?.code == .missingSignature && unsigned?.fields[.wwwAuthenticate] == nil)

        // DPoP alone: neither credential; DPoP's bare challenge (no error: nothing invalid was sent).
        let alone = Self.exchange(setup, prover: prover, mode: false)
        let neither = await #expect(throws: SigilError.self) { _ = try await alone.admit(request, body: body) }
        #expect(neither?.code == .missingSignature)
        #expect(neither?.fields[.wwwAuthenticate]?.hasPrefix("DPoP algs=") == true)

        // with-signature: a signed request without its proof is refused before its signature is
        // verified (its nonce is not spent: the same request with the proof is admitted after).
        let both = Self.exchange(setup, prover: prover, mode: true)
        var signed = request
        try setup.signer(.sigilV1).sign(&signed, body: body)
        let noProof = await #expect(throws: SigilError.self) { _ = try await both.admit(signed, body: body) }
        #expect(noProof?.code == .missingSignature && noProof?.requestVerified == false)
        #expect(noProof?.fields[.wwwAuthenticate]?.hasPrefix("DPoP algs=") == true)
        var proofOnly = request
        try Self.addDPoP(prover, to: &proofOnly)
        let noSignature = await #expect(throws: SigilError.self) { _ = try await both.admit(proofOnly, body: body) }
        #expect(noSignature?.code == .missingSignature)
        try Self.addDPoP(prover, to: &signed)
        let admitted = try await both.admit(signed, body: body)
        #expect(admitted.identity?.keyID == setup.keyID && admitted.identity?.dpop?.subject == "user-1")
    }

    @Test(
        "with-signature: a proof refused beside a verified signature is that request's refusal, signed with its DPoP-Nonce; a proof refused alone is not"
    )
    func proofAfterSignature() async throws {
        let setup = try await SigningSetup(.ed25519)
        let prover = try DPoPProver(signer: try SigningKey.generate(.ecdsaP256SHA256), clock: setup.clock)
        let (request, body) = SigningSetup.jsonPost()

        // The proof carries no server nonce: use_dpop_nonce.
        let both = Self.exchange(setup, prover: prover, mode: true, nonces: true)
        var signed = request
        try setup.signer(.rfc9421).sign(&signed, body: body)
        try Self.addDPoP(prover, to: &signed)
        let beside = await #expect(throws: SigilError.self) { _ = try await both.admit(signed, body: body) }
        #expect(beside?.requestVerified == true, "the signature verified: the client may trust the nonce")
        #expect(beside?.fields[.wwwAuthenticate]?.hasPrefix(#"DPoP error="use_dpop_nonce""#) == true)
        #expect(beside?.fields[DPoPNonces.field] != nil)

        let alone = Self.exchange(setup, prover: prover, mode: false, nonces: true)
        var proved = request
        try Self.addDPoP(prover, to: &proved)
        let refused = await #expect(throws: SigilError.self) { _ = try await alone.admit(proved, body: body) }
        #expect(refused?.requestVerified == false && refused?.fields[DPoPNonces.field] != nil)
    }
}
