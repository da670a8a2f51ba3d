import Foundation
import HTTPTypes
import SigilClient
@_spi(Sigil) import SigilCore
import SigilServer
import Testing

@testable import SigilTestSupport

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

@Suite("Round trips and tampering")
struct RoundTripTests {
    static let everyAlgorithmAndProfile = SignatureAlgorithm.generatable.flatMap { algorithm in
        SignatureProfile.allCases.map { (algorithm, $0) }
    }

    @Test("sign then verify", arguments: everyAlgorithmAndProfile)
    func roundTrip(_ algorithm: SignatureAlgorithm, _ profile: SignatureProfile) async throws {
        let setup = try await SigningSetup(algorithm)
        var (request, body) = SigningSetup.jsonPost()
        let nonce = try setup.signer(profile).sign(&request, body: body)
        let verified = try await setup.verifier.verify(request, body: body)
        #expect(verified.algorithm == algorithm)
        #expect(verified.profile == profile)
        #expect(verified.keyID == setup.keyID)
        #expect(verified.nonce == nonce)
    }

    /// Each way of changing a signed request after signing.
    static let tamperings: [(String, @Sendable (inout HTTPRequest, inout [UInt8]) -> Void)] = [
        ("method", { request, _ in request.method = .put }),
        ("path", { request, _ in request.path = "/v1/transfer?a=1" }),
        ("query", { request, _ in request.path = "/v1/transfers?a=2" }),
        ("query added", { request, _ in request.path = "/v1/transfers?a=1&admin=true" }),
        ("authority", { request, _ in request.authority = "evil.example.com" }),
        ("body", { _, body in body = Array(#"{"to":"acct_2","amount":"2500.00"}"#.utf8) }),
        ("content type", { request, _ in request.headerFields[.contentType] = "text/plain" }),
    ]

    @Test(
        "changing any signed part fails",
        arguments: [SignatureProfile.sigilV1, .rfc9421],
        0..<tamperings.count
    )
    func tampering(_ profile: SignatureProfile, _ index: Int) async throws {
        let (name, change) = Self.tamperings[index]
        let setup = try await SigningSetup(.ecdsaP256SHA256)
        var (request, body) = SigningSetup.jsonPost()
        try setup.signer(profile).sign(&request, body: body)
        change(&request, &body)
        let code = await setup.verifier.failure(request, body: body)
        if profile == .sigilV1 && name == "authority" {
            #expect(code == nil)  // sigil-v1 does not sign the authority (PROTOCOL.md 2.2)
        } else if profile == .rfc9421 && name == "content type" {
            #expect(code == nil)  // rfc9421's default components do not include content-type
        } else if profile == .rfc9421 && name == "body" {
            #expect(code == .digestMismatch)
        } else {
            #expect(code == .invalidSignature, "tampered \(name)")
        }
    }

    @Test func signedHeadersTampered() async throws {
        let setup = try await SigningSetup(.ed25519)
        var (request, body) = SigningSetup.jsonPost()
        try setup.signer(.sigilV1).sign(&request, body: body)
        var later = request
        later.headerFields[SigilV1.timestampField] = String(SigningSetup.start + 1)
        #expect(await setup.verifier.failure(later, body: body) == .invalidSignature)
        var otherNonce = request
        otherNonce.headerFields[SigilV1.nonceField] = "another-nonce-000001"
        #expect(await setup.verifier.failure(otherNonce, body: body) == .invalidSignature)
        var otherKey = request
        otherKey.headerFields[SigilV1.keyIDField] = "0000000000000000"
        #expect(await setup.verifier.failure(otherKey, body: body) == .unknownKey)
    }

    @Test func hmacSecretNeverVerifiesECDSAAndTheReverse() async throws {
        let ecdsa = try SigningKey.generate(.ecdsaP256SHA256)
        let hmac = try SigningKey.generate(.hmacSHA256)
        let clock = ManualUnixClock(SigningSetup.start)
        for (registered, signing) in [(hmac, ecdsa), (ecdsa, hmac)] {
            let directory = MemoryKeyDirectory()
            try await directory.add(try registered.verificationKey, keyID: "shared-id")
            let verifier = RequestVerifier(
                keys: directory, nonces: MemoryNonceStore(clock: ManualUnixClock(0)), clock: clock)
            for profile in SignatureProfile.allCases {
                var (request, body) = SigningSetup.jsonPost()
                try RequestSigner(key: signing, keyID: "shared-id", profile: profile, clock: clock).sign(
                    &request, body: body)
                #expect(await verifier.failure(request, body: body) == .invalidSignature)
            }
        }
    }

    @Test func disagreeingAlgIsAlgorithmMismatch() async throws {
        let setup = try await SigningSetup(.ecdsaP256SHA256)
        // Signed with SHA-512 and says so; the key is registered for SHA-256.
        var signer = RequestSigner(
            key: try setup.key.registered(for: .ecdsaP256SHA512),
            keyID: setup.keyID,
            profile: .rfc9421,
            clock: setup.clock
        )
        signer.includeAlgorithm = true
        var (request, body) = SigningSetup.jsonPost()
        try signer.sign(&request, body: body)
        #expect(await setup.verifier.failure(request, body: body) == .algorithmMismatch)
        // An alg nobody implements.
        var (other, otherBody) = SigningSetup.jsonPost()
        try setup.signer(.rfc9421).sign(&other, body: otherBody)
        other.headerFields[MessageSignatures.signatureInputField] = other.headerFields[
            MessageSignatures.signatureInputField
        ]!.replacingOccurrences(of: ";nonce", with: ";alg=\"rsa-sha1\";nonce")
        otherBody = body
        #expect(await setup.verifier.failure(other, body: otherBody) == .unsupportedAlgorithm)
    }

    @Test func rfc9421PolicyRequiresComponentsAndParameters() async throws {
        let setup = try await SigningSetup(.ed25519)
        var signer = setup.signer(.rfc9421)
        signer.components = [.method, .path]
        var (request, body) = SigningSetup.jsonPost()
        try signer.sign(&request, body: body)
        #expect(await setup.verifier.failure(request, body: body) == .missingComponent)
        #expect(
            setup.verifier.configuration.acceptSignature
                == #"sig1=("@method" "@authority" "@path" "@query" "content-digest");created;keyid;nonce"#
        )
    }

    @Test func rfc9421ExpiresIsHonoured() async throws {
        let setup = try await SigningSetup(.ed25519)
        var (request, body) = SigningSetup.jsonPost()
        let input = SignatureInput(
            components: [.method, .authority, .path, .query],
            created: SigningSetup.start,
            expires: SigningSetup.start + 10,
            keyID: setup.keyID,
            nonce: "nonce-expires-000001"
        )
        body = []
        request.headerFields[.contentType] = nil
        let (inputMember, signatureMember) = try RFC9421.sign(
            RFC9421Message(request: request),
            input: input,
            label: "sig1",
            signer: setup.key
        )
        request.headerFields[MessageSignatures.signatureInputField] = inputMember
        request.headerFields[MessageSignatures.signatureField] = signatureMember
        setup.clock.advance(by: 10)
        #expect(await setup.verifier.failure(request, body: body) == .expired)
    }

    @Test func revokedKeyIsRefusedFromTheNextRequest() async throws {
        let setup = try await SigningSetup(.ecdsaP256SHA256)
        var (request, body) = SigningSetup.jsonPost()
        try setup.signer(.sigilV1).sign(&request, body: body)
        await setup.directory.revoke(setup.keyID)
        #expect(await setup.verifier.failure(request, body: body) == .revokedKey)
    }

    @Test("signed responses round trip", arguments: SignatureProfile.allCases)
    func responses(_ profile: SignatureProfile) async throws {
        let serverKey = try SigningKey.generate(.ed25519)
        let serverKeyID = try #require(try serverKey.verificationKey.derivedKeyID)
        let clock = ManualUnixClock(SigningSetup.start)
        let responseSigner = ResponseSigner(signer: serverKey, keyID: serverKeyID, clock: clock)
        let client = ResponseVerifier(key: try serverKey.verificationKey, keyID: serverKeyID, clock: clock)
        let setup = try await SigningSetup(.hmacSHA256)
        var (request, requestBody) = SigningSetup.jsonPost()
        try setup.signer(profile).sign(&request, body: requestBody)
        _ = try await setup.verifier.verify(request, body: requestBody)
        requestBody = []
        var response = HTTPResponse(status: .ok)
        response.headerFields[.contentType] = "application/json"
        let body = Array(#"{"status":"ok"}"#.utf8)
        switch profile {
        case .sigilV1:
            let answered = try #require(SigilV1.AnsweredRequest(request.headerFields))
            response.headerFields.append(
                contentsOf: try responseSigner.sigilV1Fields(for: response, body: body, answering: answered))
            try client.verifySigilV1(response, body: body, answering: answered)
            #expect(throws: SigilError(.invalidSignature, "")) {
                try client.verifySigilV1(response, body: Array(#"{"status":"no"}"#.utf8), answering: answered)
            }
        case .rfc9421:
            try responseSigner.signRFC9421(&response, body: body, answering: request, requestLabel: "sig1")
            try client.verifyRFC9421(response, body: body, answering: request)
            var otherRequest = request
            otherRequest.path = "/v1/other"
            #expect(throws: SigilError(.invalidSignature, "")) {
                try client.verifyRFC9421(response, body: body, answering: otherRequest)
            }
            var changedStatus = response
            changedStatus.status = .created
            #expect(throws: SigilError(.invalidSignature, "")) {
                try client.verifyRFC9421(changedStatus, body: body, answering: request)
            }
        }
    }

    @Test func urlRequestSigning() async throws {
        let setup = try await SigningSetup(.hmacSHA256)
        var urlRequest = URLRequest(url: URL(string: "https://api.example.com/v1/transfers?a=1")!)
        urlRequest.httpMethod = "POST"
        urlRequest.setValue("application/json", forHTTPHeaderField: "Content-Type")
        urlRequest.httpBody = Data(#"{"b":1,"a":2}"#.utf8)
        try setup.signer(.sigilV1).sign(&urlRequest)
        var request = HTTPRequest(
            method: .post, scheme: "https", authority: "api.example.com", path: "/v1/transfers?a=1")
        for (name, value) in urlRequest.allHTTPHeaderFields ?? [:] {
            request.headerFields.append(HTTPField(name: HTTPField.Name(name)!, value: value))
        }
        _ = try await setup.verifier.verify(request, body: Array(urlRequest.httpBody!))
    }

    @Test func serverClockPlacesTheSignedTimeInTheRoundTrip() {
        let clock = ServerClock(local: ManualUnixClock(1_000_000))
        #expect(clock.synchronize(serverTime: 2_000_010, sentAt: 1_000_000, receivedAt: 1_000_020))
        #expect(clock.offsetSeconds == 1_000_000)
        // An answer held back longer than the limit teaches nothing: a delay cannot move the clock far.
        #expect(!clock.synchronize(serverTime: 5, sentAt: 1_000_000, receivedAt: 1_000_000 + 121))
        #expect(!clock.synchronize(serverTime: 5, sentAt: 1_000_010, receivedAt: 1_000_000))
        #expect(clock.offsetSeconds == 1_000_000)
    }

    @Test func serverClockKeepsTheLearntOffset() {
        let local = ManualUnixClock(1_000_000)
        let clock = ServerClock(local: local)
        clock.synchronize(serverTime: 1_000_300)
        #expect(clock.offsetSeconds == 300)
        local.advance(by: 5)
        #expect(clock.now() == 1_000_305)
    }
}
