import Crypto
import HTTPTypes
import MetricsTestKit
import SigilClient
@_spi(Sigil) import SigilCore
import SigilServer
import Testing

@testable import SigilTestSupport

/// The attacks a review tried on the authenticators asked in turn, each asserting what the exchange does.
@Suite("Authenticator attack review")
struct AuthenticatorAttackReviewTests {
    static func exchange(
        _ setup: SigningSetup, prover: DPoPProver, mode: Bool?, bodyTimeout: Duration = .seconds(20),
        verifier: RequestVerifier? = nil
    ) -> Exchange {
        let tokens = IdentityAttackTests.FixedTokens(
            token: AccessToken(
                subject: "user-1", boundThumbprint: prover.thumbprint, expiresAt: setup.clock.now() + 600))
        let dpop = mode.map { requires -> DPoPVerifier in
            var dpop = DPoPVerifier(tokens: tokens, nonces: setup.store, clock: setup.clock)
            dpop.requiresSigilSignature = requires
            return dpop
        }
        return Exchange(verifier: verifier ?? setup.verifier, bodyTimeout: bodyTimeout, dpop: dpop)
    }

    static func refusal(_ body: () async throws -> Void) async -> SigilError? {
        do {
            try await body()
            return nil
        } catch let error as SigilError {
            return error
        } catch {
            Issue.record("not a SigilError: \(error)")
            return nil
        }
    }

    static func prover(_ setup: SigningSetup) throws -> DPoPProver {
        try DPoPProver(signer: try SigningKey.generate(.ecdsaP256SHA256), clock: setup.clock)
    }

    @Test("forged signature + valid proof: invalid-signature, unsigned, the proof not spent", arguments: [false, true])
    func forgedSignatureValidProof(_ mode: Bool) async throws {
        let setup = try await SigningSetup(.ed25519)
        let prover = try Self.prover(setup)
        let exchange = Self.exchange(setup, prover: prover, mode: mode)
        let (request, body) = SigningSetup.jsonPost()
        var proved = request
        try AuthenticatorTests.addDPoP(prover, to: &proved)
        var forged = proved
        try setup.signer(.sigilV1).sign(&forged, body: body)
        let tampered = Array(#"{"to":"acct_9","amount":"99.00"}"#.utf8)
        let refused = await Self.refusal { _ = try await exchange.admit(forged, body: tampered) }
        #expect(refused?.code == .invalidSignature && refused?.requestVerified == false)
        let streamed = await Self.refusal {
            _ = try await exchange.admit(forged, bodyChunks: BodyReaderTests.OneChunk(bytes: tampered))
        }
        #expect(streamed?.code == .invalidSignature && streamed?.requestVerified == false)
        if !mode {
            // alone: the proof was not spent by the forgery
            let admitted = try await exchange.admit(proved, body: body)
            #expect(admitted.identity?.profile == "dpop")
        }
    }

    @Test(
        "valid signature + forged or replayed proof: refused, signed, with DPoP's challenge", arguments: [false, true])
    func validSignatureBadProof(_ mode: Bool) async throws {
        let setup = try await SigningSetup(.ed25519)
        let prover = try Self.prover(setup)
        let exchange = Self.exchange(setup, prover: prover, mode: mode)
        let (request, body) = SigningSetup.jsonPost()
        var signed = request
        try setup.signer(.rfc9421).sign(&signed, body: body)
        try AuthenticatorTests.addDPoP(prover, to: &signed, path: "/v1/elsewhere")
        let refused = await Self.refusal { _ = try await exchange.admit(signed, body: body) }
        #expect(refused?.code == .invalidSignature && refused?.requestVerified == true)
        #expect(refused?.fields[.wwwAuthenticate]?.contains("invalid_dpop_proof") == true)

        // a proof already used, beside a fresh signature
        var first = request
        try setup.signer(.sigilV1).sign(&first, body: body)
        try AuthenticatorTests.addDPoP(prover, to: &first)
        _ = try await exchange.admit(first, body: body)
        var second = request
        try setup.signer(.sigilV1).sign(&second, body: body)
        second.headerFields[.authorization] = first.headerFields[.authorization]
        second.headerFields[DPoPProver.field] = first.headerFields[DPoPProver.field]
        let replay = await Self.refusal { _ = try await exchange.admit(second, body: body) }
        #expect(replay?.code == .replayedNonce && replay?.requestVerified == true)
        // a replayed signature with a fresh proof: the proof is not reached
        var third = first
        try AuthenticatorTests.addDPoP(prover, to: &third)
        let replayedSig = await Self.refusal { _ = try await exchange.admit(third, body: body) }
        #expect(replayedSig?.code == .replayedNonce && replayedSig?.requestVerified == true)
        #expect(replayedSig?.fields[.wwwAuthenticate] == nil)
    }

    @Test("a signature of a profile not accepted + a proof")
    func unacceptedProfile() async throws {
        var configuration = VerifierConfiguration()
        configuration.profiles = [.sigilV1]
        let setup = try await SigningSetup(.ed25519, configuration: configuration)
        let prover = try Self.prover(setup)
        let (request, body) = SigningSetup.jsonPost()
        var signed = request
        try setup.signer(.rfc9421).sign(&signed, body: body)
        try AuthenticatorTests.addDPoP(prover, to: &signed)
        let with = Self.exchange(setup, prover: prover, mode: true)
        let refused = await Self.refusal { _ = try await with.admit(signed, body: body) }
        #expect(refused?.code == .missingSignature && refused?.requestVerified == false)
        let alone = Self.exchange(setup, prover: prover, mode: false)
        let admitted = try await alone.admit(signed, body: body)
        #expect(admitted.identity?.request == nil && admitted.identity?.profile == "dpop")
    }

    @Test("a sealed body with a proof alone; a DPoP header without Authorization; two Authorization fields")
    func malformedDPoP() async throws {
        let setup = try await SigningSetup(.ed25519)
        let prover = try Self.prover(setup)
        let exchange = Self.exchange(setup, prover: prover, mode: false)
        let (request, body) = SigningSetup.jsonPost()

        var sealed = request
        sealed.headerFields[.contentEncoding] = "sigil-hpke"
        try AuthenticatorTests.addDPoP(prover, to: &sealed)
        let s = await Self.refusal {
            _ = try await exchange.admit(sealed, bodyChunks: BodyReaderTests.OneChunk(bytes: body))
        }
        #expect(s?.code == .sealedBodyInvalid && s?.requestVerified == false)

        var proofOnly = request
        try AuthenticatorTests.addDPoP(prover, to: &proofOnly)
        proofOnly.headerFields[.authorization] = nil
        let p = await Self.refusal { _ = try await exchange.admit(proofOnly, body: body) }
        #expect(p?.code == .missingSignature && p?.requestVerified == false)
        #expect(p?.fields[.wwwAuthenticate]?.contains("invalid_dpop_proof") == true)

        var signedProofOnly = proofOnly
        try setup.signer(.sigilV1).sign(&signedProofOnly, body: body)
        let sp = await Self.refusal { _ = try await exchange.admit(signedProofOnly, body: body) }
        #expect(sp?.code == .missingSignature && sp?.requestVerified == true)

        var twoAuth = request
        try AuthenticatorTests.addDPoP(prover, to: &twoAuth)
        twoAuth.headerFields.append(HTTPField(name: .authorization, value: "Bearer other"))
        let t = await Self.refusal { _ = try await exchange.admit(twoAuth, body: body) }
        #expect(t?.code == .missingSignature && t?.requestVerified == false)

        var bearerOnly = request
        try AuthenticatorTests.addDPoP(prover, to: &bearerOnly)
        bearerOnly.headerFields[.authorization] = "Bearer token"
        let b = await Self.refusal { _ = try await exchange.admit(bearerOnly, body: body) }
        #expect(b?.code == .missingSignature && b?.requestVerified == false)
    }

    @Test("a stalled body: nothing spent for a signature (+ proof); a proof alone spent", arguments: [false, true])
    func stalledBody(_ mode: Bool) async throws {
        let setup = try await SigningSetup(.ed25519)
        let prover = try Self.prover(setup)
        let exchange = Self.exchange(setup, prover: prover, mode: mode, bodyTimeout: .milliseconds(300))
        let (request, body) = SigningSetup.jsonPost()
        var signed = request
        try setup.signer(.sigilV1).sign(&signed, body: body)
        try AuthenticatorTests.addDPoP(prover, to: &signed)
        let stalled = await Self.refusal {
            _ = try await exchange.admit(signed, bodyChunks: ExchangeScaffold.StalledBody())
        }
        #expect(stalled?.code == .requestTimeout && stalled?.requestVerified == false)
        let admitted = try await exchange.admit(signed, body: body)
        #expect(admitted.identity?.request != nil && admitted.identity?.dpop != nil)
        if !mode {
            var proved = request
            try AuthenticatorTests.addDPoP(prover, to: &proved)
            let alone = await Self.refusal {
                _ = try await exchange.admit(proved, bodyChunks: ExchangeScaffold.StalledBody())
            }
            #expect(alone?.code == .requestTimeout && alone?.requestVerified == false)
            let again = await Self.refusal { _ = try await exchange.admit(proved, body: body) }
            #expect(again?.code == .replayedNonce)  // spent in the head phase, before the body
        }
    }

    @Test("a client certificate that cannot be read, beside a valid signature")
    func unreadableCertificate() async throws {
        let metrics = TestMetrics()
        let setup = try await SigningSetup(.ed25519)
        let verifier = RequestVerifier(
            keys: setup.directory, nonces: setup.store, clock: setup.clock, metricsFactory: metrics)
        let prover = try Self.prover(setup)
        let exchange = Self.exchange(setup, prover: prover, mode: nil, verifier: verifier)
        var (request, body) = SigningSetup.jsonPost()
        try setup.signer(.sigilV1).sign(&request, body: body)
        let refused = await Self.refusal {
            _ = try await exchange.admit(
                request, body: body,
                clientCertificate: { throw SigilError(.certificateMismatch, "cannot be read") })
        }
        // Read once the signature verified: the refusal is that request's, signed, its nonce spent.
        #expect(refused?.code == .certificateMismatch && refused?.requestVerified == true)
        let label = "sigil_verifications_total"
        #expect(try metrics.expectCounter(label, [("outcome", "valid")]).totalValue == 1)
        let again = await Self.refusal { _ = try await exchange.admit(request, body: body) }
        #expect(again?.code == .replayedNonce)
    }

    @Test("a body over the limit sent with a proof alone is refused before the proof is spent")
    func oversizedBodyKeepsTheProof() async throws {
        let setup = try await SigningSetup(.ed25519)
        let prover = try Self.prover(setup)
        let exchange = Self.exchange(setup, prover: prover, mode: false)
        var (request, body) = SigningSetup.jsonPost()
        try AuthenticatorTests.addDPoP(prover, to: &request)
        let large = [UInt8](repeating: 0x20, count: setup.verifier.configuration.bodyLimit + 1)
        let refused = await Self.refusal { _ = try await exchange.admit(request, body: large) }
        #expect(refused?.code == .bodyTooLarge)
        let admitted = try await exchange.admit(request, body: body)
        #expect(admitted.identity?.profile == "dpop")
    }

    @Test("a revoked key's certificate beside a proof alone; a revoked device's own key as DPoP key")
    func revokedCredentials() async throws {
        let setup = try await SigningSetup(.ed25519)
        let deviceKey = try SigningKey.generate(.ecdsaP256SHA256)
        let deviceKeyID = try #require(try deviceKey.verificationKey.derivedKeyID)
        await setup.directory.add(
            RegisteredKey(
                keyID: deviceKeyID, key: try deviceKey.verificationKey, state: .revoked, deviceID: "dev-x",
                userID: "user-1"))
        let oauth = try Self.prover(setup)
        let exchange = Self.exchange(setup, prover: oauth, mode: false)
        let (request, body) = SigningSetup.jsonPost()
        var proved = request
        try AuthenticatorTests.addDPoP(oauth, to: &proved)
        let refused = await Self.refusal {
            _ = try await exchange.admit(
                proved, body: body,
                clientCertificate: {
                    ClientCertificateIdentity(
                        commonName: deviceKeyID, subject: "CN=x", sigilKeyID: deviceKeyID, pin: "sha256/x")
                })
        }
        #expect(refused?.code == .revokedKey && refused?.requestVerified == false)

        let deviceProver = try DPoPProver(signer: deviceKey, clock: setup.clock)
        let deviceExchange = Self.exchange(setup, prover: deviceProver, mode: false)
        var byDevice = request
        try AuthenticatorTests.addDPoP(deviceProver, to: &byDevice)
        let r2 = await Self.refusal { _ = try await deviceExchange.admit(byDevice, body: body) }
        #expect(r2?.code == .revokedKey && r2?.requestVerified == false)
    }
}
