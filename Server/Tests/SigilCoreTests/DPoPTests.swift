import Foundation
import HTTPTypes
import SigilClient
@_spi(Sigil) import SigilCore
import SigilJWT
import SigilRSA
import SigilServer
import Synchronization
import Testing

@testable import SigilTestSupport

/// DPoP proofs (RFC 9449) made by outside code (joserfc, `Tests/Interop/dpop_proofs.py`): the valid
/// ones pass, each single change is refused with its code.
@Suite("DPoP proofs")
struct DPoPTests {
    typealias TokenCase = DPoPScaffold.TokenCase
    typealias TokenCases = DPoPScaffold.TokenCases

    static let url = "https://localhost:8443/v1/echo"
    static let token = "an-access-token.with.three-parts"

    struct Case: Decodable {
        let proof: String
        let expect: String
    }

    /// The outside proofs, or `nil` (and a note) where Python with joserfc is not here.
    static func outsideProofs(now: Int64) throws -> [String: Case]? {
        let script = TestPaths.tests.appendingPathComponent("Interop/dpop_proofs.py").path
        let interpreter = PythonHPKE.interpreter.flatMap { python in
            (try? PythonHPKE.run(python, ["-c", "import joserfc"])) != nil ? python : nil
        }
        guard let interpreter else {
            #expect(!ExternalServers.isCI, "no python3 with joserfc")
            return nil
        }
        let output = try PythonHPKE.run(interpreter, [script, String(now), url, token])
        return try JSONDecoder().decode([String: Case].self, from: Data(output))
    }

    @Test("proofs made by joserfc: ES256, EdDSA, RS256, PS256 pass; each single change is refused with its code")
    func outside() throws {
        let now = SigningSetup.start
        guard let cases = try Self.outsideProofs(now: now) else { return }
        #expect(cases.count == 16)
        for (name, entry) in cases.sorted(by: { $0.key < $1.key }) {
            var outcome = "ok"
            do {
                let proof = try DPoPProof.parse(entry.proof, formats: .withRSA)
                try proof.check(method: "POST", uri: Self.url, now: now, maxSkew: 300, accessToken: Self.token)
                #expect(proof.thumbprint == proof.key.jwkThumbprint)
            } catch let error as SigilError {
                outcome = error.code.rawValue
            }
            #expect(outcome == entry.expect, "\(name)")
        }
    }

    @Test("the URI is compared as the server is reached: case, default port, query and dot segments aside")
    func uriComparison() {
        let same = [
            "https://LOCALHOST:443/v1/echo", "https://localhost/v1/./echo?x=1", "https://localhost/v1/echo#f",
        ]
        for uri in same {
            #expect(DPoPProof.comparableURI(uri) == DPoPProof.comparableURI("https://localhost/v1/echo"), "\(uri)")
        }
        for other in ["http://localhost/v1/echo", "https://localhost:8443/v1/echo", "https://evil/v1/echo", "/v1/echo"]
        {
            #expect(DPoPProof.comparableURI(other) != DPoPProof.comparableURI("https://localhost/v1/echo"), "\(other)")
        }
    }

    @Test("bad input is refused quickly, never crashes: 100 KB, 10,000 segments, non-JSON headers")
    func badInput() {
        let inputs = [
            String(repeating: "a", count: 100_000), String(repeating: "a.", count: 10_000), "not-json.not-json.sig",
            Base64URL.encode(Array("[1,2]".utf8)) + ".e30.c2ln", "", "..", "a.b.c.d",
        ]
        for input in inputs {
            #expect(throws: SigilError.self) { try DPoPProof.parse(input) }
        }
    }

    @Test("a proof's JSON: duplicate member names, more than 64 members, or nesting deeper than 4 is malformed")
    func strictJSON() throws {
        let key = try SigningKey.generate(.ecdsaP256SHA256)
        let header = "{\"typ\":\"dpop+jwt\",\"alg\":\"ES256\",\"jwk\":\(try JWK(key.verificationKey).json())}"
        func proof(_ claims: String, header: String = header) throws -> String {
            let input = Base64URL.encode(Array(header.utf8)) + "." + Base64URL.encode(Array(claims.utf8))
            return input + "." + Base64URL.encode(try key.signature(for: Array(input.utf8), profile: .rfc9421))
        }
        let base = #""htm":"POST","htu":"https://a.example/x","iat":1700000000,"jti":"j""#
        #expect(try DPoPProof.parse(try proof("{\(base)}")).method == "POST")
        let extra = (0..<60).map { "\"m\($0)\":\($0)" }.joined(separator: ",")
        #expect(try DPoPProof.parse(try proof("{\(base),\(extra)}")).id == "j")
        let tooMany = (0..<61).map { "\"m\($0)\":\($0)" }.joined(separator: ",")
        let nested = #""x":{"a":{"b":{"c":{}}}}"#
        for claims in [
            "{\(base),\"htm\":\"GET\"}", "{\(base),\(tooMany)}", "{\(base),\(nested)}", "{\(base)", "{\(base)}x",
        ] {
            #expect(throws: SigilError.self, "\(claims.suffix(40))") { try DPoPProof.parse(try proof(claims)) }
        }
        #expect(throws: SigilError.self) {
            try DPoPProof.parse(
                try proof(
                    "{\(base)}", header: header.replacingOccurrences(of: "{\"typ", with: "{\"alg\":\"ES256\",\"typ")))
        }
    }

    @Test(
        "a DPoP request with joserfc's proof and access token is accepted once; a token bound elsewhere, expired or for another audience is invalid_token"
    )
    func requests() async throws {
        let now = SigningSetup.start
        let script = TestPaths.tests.appendingPathComponent("Interop/dpop_proofs.py").path
        guard
            let interpreter = PythonHPKE.interpreter.flatMap({ python in
                (try? PythonHPKE.run(python, ["-c", "import joserfc"])) != nil ? python : nil
            })
        else {
            #expect(!ExternalServers.isCI, "no python3 with joserfc")
            return
        }
        // Proofs made after the nonce store started (it refuses what is dated before its start).
        let clock = ManualUnixClock(now)
        let nonces = MemoryNonceStore(clock: clock)
        clock.advance(by: 5)
        let output = try PythonHPKE.run(interpreter, [script, String(clock.now()), Self.url, "-"])
        let made = try JSONDecoder().decode(TokenCases.self, from: Data(output))
        let keys = try #require(try await EnrollmentPolicy.jwtKeys(pemKeys: [made.issuer], hs256Secrets: [], jwks: []))
        var verifier = DPoPVerifier(
            tokens: JWTAccessTokens(keys: keys, audience: "sigil-test", issuer: "https://issuer.test", clock: clock),
            nonces: nonces, clock: clock)
        verifier.origin = "https://localhost:8443"
        verifier.keyFormats = .withRSA
        func request(_ entry: TokenCase) -> HTTPRequest {
            var head = HTTPRequest(method: .post, scheme: "https", authority: "localhost:8443", path: "/v1/echo?x=1")
            head.headerFields[.authorization] = "DPoP " + entry.token
            head.headerFields[HTTPField.Name("DPoP")!] = entry.proof
            return head
        }
        #expect(made.cases.count == 8)
        for (name, entry) in made.cases.sorted(by: { $0.key < $1.key }) {
            do {
                let identity = try await verifier.verify(request(entry))
                #expect(entry.expect == "ok", "\(name)")
                #expect(identity.subject == "user-1")
                if name == "ps256" || name == "rs256" { #expect(identity.algorithm == name.uppercased()) }
            } catch let refusal as SigilError {
                #expect(
                    refusal.fields[.wwwAuthenticate]?.contains("error=\"\(entry.expect)\"") == true,
                    "\(name): \(refusal.fields[.wwwAuthenticate] ?? "no challenge") \(refusal)")
            }
        }
        // The same proof again: a replay, refused as a proof.
        let replay = try #require(made.cases["es256"])
        await #expect(throws: SigilError.self) { try await verifier.verify(request(replay)) }
        // Bearer or missing parts: refused before any signature.
        var bearer = request(replay)
        bearer.headerFields[.authorization] = "Bearer " + replay.token
        await #expect(throws: SigilError.self) { try await verifier.verify(bearer) }
    }

    @Test(
        "the client's DPoPProver makes proofs Sigil's verifier and joserfc accept",
        arguments: [
            SignatureAlgorithm.ecdsaP256SHA256, .ecdsaP384SHA384, .ed25519, .rsaV15SHA256,
        ])
    func prover(algorithm: SignatureAlgorithm) throws {
        let clock = ManualUnixClock(SigningSetup.start)
        let key = try SigningKey.generate(algorithm, formats: .withRSA)
        let prover = try DPoPProver(signer: key, clock: clock)
        var request = HTTPRequest(method: .post, scheme: "https", authority: "localhost:8443", path: "/v1/echo?x=1")
        request.headerFields[.contentType] = "application/json"
        let proof = try prover.proof(for: request, accessToken: Self.token, nonce: "server-nonce")
        let parsed = try DPoPProof.parse(proof, formats: .withRSA)
        try parsed.check(method: "POST", uri: Self.url, now: clock.now(), maxSkew: 300, accessToken: Self.token)
        #expect(parsed.nonce == "server-nonce")
        #expect(parsed.thumbprint == prover.thumbprint)
        #expect(parsed.uri == "https://localhost:8443/v1/echo")
        #expect(
            try DPoPProof.parse(try prover.proof(for: request, accessToken: nil), formats: .withRSA).id != parsed.id)
        // joserfc reads it as a valid JWS signed by the jwk it carries.
        guard
            let python = PythonHPKE.interpreter.flatMap({ python in
                (try? PythonHPKE.run(python, ["-c", "import joserfc"])) != nil ? python : nil
            })
        else { return }
        let check = """
            import json, sys, base64
            from joserfc import jws
            from joserfc.jwk import import_key
            token = sys.stdin.read().strip()
            head = json.loads(base64.urlsafe_b64decode(token.split(".")[0] + "=="))
            key = import_key(head["jwk"], head["jwk"]["kty"])
            registry = jws.JWSRegistry(algorithms=[head["alg"]])
            registry.max_header_length = 4096  # an RSA jwk in the header passes joserfc's default 512
            try:
                jws.deserialize_compact(token, key, registry=registry)
                print("ok")
            except Exception as error:
                print("refused", type(error).__name__, error)
            """
        let output = try PythonHPKE.run(python, ["-c", check], input: Array(proof.utf8))
        #expect(String(decoding: output, as: UTF8.self).hasPrefix("ok"), "\(String(decoding: output, as: UTF8.self))")
    }

    @Test("a key JOSE does not name cannot make proofs")
    func proverRefusesOtherKeys() throws {
        for algorithm in [SignatureAlgorithm.hmacSHA256, .ecdsaP256SHA512, .mlDSA65] {
            #expect(throws: SigilInputError.self) { try DPoPProver(signer: try SigningKey.generate(algorithm)) }
        }
    }

    /// Counts the tokens it is asked to verify; each verifies, bound to `thumbprint`, until `expiresAt`.
    final class CountingTokens: AccessTokenVerifier, @unchecked Sendable {
        let thumbprint: String
        let expiresAt: Int64
        let count = Mutex(0)

        init(thumbprint: String, expiresAt: Int64) {
            self.thumbprint = thumbprint
            self.expiresAt = expiresAt
        }

        func verify(_ token: String) async throws -> AccessToken {
            count.withLock { $0 += 1 }
            return AccessToken(subject: "user-1", boundThumbprint: thumbprint, expiresAt: expiresAt)
        }
    }

    @Test(
        "a token verified before is remembered by its hash until its exp; the proof and the binding are checked every time"
    )
    func rememberedTokens() async throws {
        let clock = ManualUnixClock(SigningSetup.start)
        let nonces = MemoryNonceStore(clock: clock)
        clock.advance(by: 2)
        let prover = try DPoPProver(signer: try SigningKey.generate(.ecdsaP256SHA256), clock: clock)
        let tokens = CountingTokens(thumbprint: prover.thumbprint, expiresAt: clock.now() + 60)
        let verifier = DPoPVerifier(tokens: tokens, nonces: nonces, clock: clock)
        func request(token: String, prover: DPoPProver) throws -> HTTPRequest {
            var head = HTTPRequest(method: .get, scheme: "https", authority: "api.example", path: "/v1/orders")
            head.headerFields[.authorization] = "DPoP " + token
            head.headerFields[DPoPProver.field] = try prover.proof(for: head, accessToken: token)
            return head
        }
        for _ in 0..<3 { _ = try await verifier.verify(try request(token: "token-a", prover: prover)) }
        #expect(tokens.count.withLock { $0 } == 1)
        // Another key's proof with the remembered token: the binding is checked anyway.
        let stranger = try DPoPProver(signer: try SigningKey.generate(.ecdsaP256SHA256), clock: clock)
        await #expect(throws: SigilError.self) {
            try await verifier.verify(try request(token: "token-a", prover: stranger))
        }
        // Past its exp, the token is not remembered, and refused.
        clock.advance(by: 61)
        await #expect(throws: SigilError.self) {
            try await verifier.verify(try request(token: "token-a", prover: prover))
        }
        #expect(tokens.count.withLock { $0 } == 2)
    }
}
