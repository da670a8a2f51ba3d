import Foundation
import HTTPTypes
import JWTKit
import SigilClient
@_spi(Sigil) import SigilCore
import SigilJWT
import SigilServer
import SigilStandalone

/// DPoP verification (RFC 9449) beside raw ES256 verification, in one run: a request with a token
/// verified before (its proof's signature, the rest of the checks, the jti recorded), and one with a
/// fresh token (two signatures: the token by jwt-kit, then the proof). Raw verifications run in
/// slices alternating with the DPoP batches, so a machine whose speed drifts moves both alike.
enum DPoPBench {
    struct Figures {
        let raw: Double
        let remembered: Double
        let fresh: Double
        /// Each DPoP rate over the raw rate measured beside it.
        let rememberedRatio: Double
        let freshRatio: Double
        /// Raw ES256 checks of each request's own proof (its signing input and signature taken out of
        /// the header beforehand), a second slice beside each batch: the same data read once, as the
        /// verifier reads it, where ``raw`` keeps 64 signatures warm.
        let rawOwn: Double
        let rememberedOwnRatio: Double
        let freshOwnRatio: Double
    }

    /// An issuer, a device's prover and a verifier made as `sigil serve --dpop` makes it, on a frozen clock.
    struct Setup {
        let clock: ManualUnixClock
        let issuer: JWTKeyCollection
        let prover: DPoPProver
        let device: SigningKey
        var verifier: DPoPVerifier
        var request = HTTPRequest(method: .post, scheme: "https", authority: "api.example", path: "/v1/orders")

        init() async throws {
            clock = ManualUnixClock(SystemUnixClock().now())
            let nonces = MemoryNonceStore(clock: clock)
            clock.advance(by: 2)  // proofs dated after the store's start
            issuer = JWTKeyCollection()
            let issuerKey = ES256PrivateKey()
            await issuer.add(ecdsa: issuerKey)
            // The verifier's keys are made as `sigil serve --jwt-key` makes them.
            guard
                let verifierKeys = try await EnrollmentPolicy.jwtKeys(
                    pemKeys: [issuerKey.publicKey.pemRepresentation], hs256Secrets: [], jwks: [])
            else { preconditionFailure("a key was given") }
            device = try SigningKey.generate(.ecdsaP256SHA256)
            prover = try DPoPProver(signer: device, clock: clock)
            verifier = DPoPVerifier(
                tokens: JWTAccessTokens(
                    keys: verifierKeys, audience: "api", issuer: "https://issuer.example", clock: clock),
                nonces: nonces, clock: clock)
            verifier.origin = "https://api.example"
        }

        func token() async throws -> String {
            try await issuer.sign(
                JWTAccessTokens.Claims(
                    subject: "user-1", audience: "api", issuer: "https://issuer.example",
                    expiresAt: clock.now() + 3_600, boundTo: prover.thumbprint))
        }

        /// `count` requests, each with a fresh proof, and with its own token when `freshTokens`.
        mutating func requests(_ count: Int, freshTokens: Bool) async throws -> [HTTPRequest] {
            let shared = try await token()
            var batch: [HTTPRequest] = []
            for _ in 0..<count {
                let accessToken = freshTokens ? try await token() : shared
                request.headerFields[.authorization] = "DPoP " + accessToken
                request.headerFields[DPoPProver.field] = try prover.proof(for: request, accessToken: accessToken)
                batch.append(request)
            }
            return batch
        }
    }

    /// The loop `scripts/instructions --dpop` counts under callgrind: 20 requests to warm up, then
    /// `count` of `pool` prepared beforehand (whatever `count` is, so preparing cancels out between two
    /// counts), each token fresh (`freshTokens`) or the one verified during the warm-up.
    static func counted(freshTokens: Bool, count: Int, pool: Int) async throws {
        var setup = try await Setup()
        if freshTokens { setup.verifier.rememberedTokens = nil }
        let requests = try await setup.requests(20 + pool, freshTokens: freshTokens)
        countFromHere()
        for request in requests.prefix(20 + count) { _ = try await setup.verifier.verify(request) }
    }

    static func run(seconds: Double) async throws -> Figures {
        var setup = try await Setup()
        // The raw ES256 check as `sigil bench core` and `scripts/instructions --dpop` make it: 64
        // signatures in turn in JOSE's encoding (r‖s, rfc9421's). One signature checked again and again
        // ran faster than any verifier sees, and held DPoP to a higher bar in time than in instructions.
        let checks = try RawChecks(signer: setup.device, key: try setup.device.verificationKey, profile: .rfc9421)
        precondition(checks.check(0))

        /// Requests verified per second, proofs (and tokens) made ahead in batches, outside the clock;
        /// and raw verifications per second, a slice of them after each batch.
        let deviceKey = try setup.device.verificationKey
        func measure(freshTokens: Bool) async throws -> (dpop: Double, raw: Double, own: Double) {
            var verified = 0
            var spent: UInt64 = 0
            var rawSpent: UInt64 = 0
            var ownSpent: UInt64 = 0
            while Double(spent) / 1e9 < seconds {
                let batch = try await setup.requests(1_000, freshTokens: freshTokens)
                let proofs = try batch.map { try ownProof(of: $0) }
                let start = Stopwatch.now()
                for request in batch { _ = try await setup.verifier.verify(request) }
                spent += Stopwatch.now() - start
                verified += batch.count
                let rawStart = Stopwatch.now()
                for turn in 0..<1_000 { precondition(checks.check(turn)) }
                rawSpent += Stopwatch.now() - rawStart
                let ownStart = Stopwatch.now()
                for proof in proofs {
                    precondition(deviceKey.isValidSignature(proof.signature, for: proof.input, profile: .rfc9421))
                }
                ownSpent += Stopwatch.now() - ownStart
            }
            let rate = { (spent: UInt64) in Double(verified) / (Double(spent) / 1e9) }
            return (rate(spent), rate(rawSpent), rate(ownSpent))
        }
        let remembered = try await measure(freshTokens: false)
        setup.verifier.rememberedTokens = nil
        let fresh = try await measure(freshTokens: true)
        return Figures(
            raw: (remembered.raw + fresh.raw) / 2, remembered: remembered.dpop, fresh: fresh.dpop,
            rememberedRatio: remembered.dpop / remembered.raw, freshRatio: fresh.dpop / fresh.raw,
            rawOwn: (remembered.own + fresh.own) / 2, rememberedOwnRatio: remembered.dpop / remembered.own,
            freshOwnRatio: fresh.dpop / fresh.own)
    }

    /// A request's DPoP proof as a raw check takes it: the JWS signing input (`header.payload`) and
    /// the signature's bytes.
    static func ownProof(of request: HTTPRequest) throws -> (input: [UInt8], signature: [UInt8]) {
        let proof = request.headerFields[DPoPProver.field] ?? ""
        let parts = proof.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let signature = Base64URL.decode(String(parts[2])) else {
            throw SigilInputError("a DPoP proof is not a JWS")
        }
        return (Array(proof.utf8.prefix(parts[0].utf8.count + 1 + parts[1].utf8.count)), signature)
    }
}
