import Foundation
import HTTPTypes
import SigilClient
@_spi(Sigil) import SigilCore
import SigilServer
import Testing

@testable import SigilTestSupport

@Suite("Replay protection")
struct ReplayTests {
    @Test func concurrentCopiesOfOneRequestAcceptOnce() async throws {
        let setup = try await SigningSetup(.hmacSHA256)
        var (request, body) = SigningSetup.jsonPost()
        try setup.signer(.sigilV1).sign(&request, body: body)
        let signed = request
        let signedBody = body
        let accepted = await withTaskGroup(of: Bool.self) { group in
            for _ in 0..<1000 {
                group.addTask { (try? await setup.verifier.verify(signed, body: signedBody)) != nil }
            }
            return await group.reduce(0) { $0 + ($1 ? 1 : 0) }
        }
        #expect(accepted == 1)
    }

    @Test func futureDatedNonceOutlivesItsArrival() async throws {
        let setup = try await SigningSetup(.ed25519)
        var (request, body) = SigningSetup.jsonPost()
        // Signed by a client whose clock is 299 s ahead.
        let fastClock = ManualUnixClock(SigningSetup.start + 299)
        let signer = RequestSigner(key: setup.key, keyID: setup.keyID, clock: fastClock)
        try signer.sign(&request, body: body)
        _ = try await setup.verifier.verify(request, body: body)
        setup.clock.advance(by: 590)
        #expect(await setup.verifier.failure(request, body: body) == .replayedNonce)
        setup.clock.advance(by: 10)  // 600 s: now outside the window, refused by time instead
        #expect(await setup.verifier.failure(request, body: body) == .timestampOutOfWindow)
    }

    @Test func restartRefusesRequestsOlderThanTheStore() async throws {
        let setup = try await SigningSetup(.ecdsaP256SHA256)
        var (request, body) = SigningSetup.jsonPost()
        try setup.signer(.sigilV1).sign(&request, body: body)
        _ = try await setup.verifier.verify(request, body: body)
        // The process restarts 5 s later with an empty store: the old request is not replayable.
        setup.clock.advance(by: 5)
        let restarted = RequestVerifier(
            keys: setup.directory,
            nonces: MemoryNonceStore(clock: setup.clock),
            clock: setup.clock
        )
        #expect(await restarted.failure(request, body: body) == .timestampOutOfWindow)
        // So is one dated in the second the store started, which the old process may have accepted too.
        var sameSecond = SigningSetup.jsonPost().0
        try setup.signer(.sigilV1).sign(&sameSecond, body: body)
        #expect(await restarted.failure(sameSecond, body: body) == .timestampOutOfWindow)
        // A fresh request (the client re-syncs from serverTime) goes through.
        setup.clock.advance(by: 1)
        var fresh = SigningSetup.jsonPost().0
        try setup.signer(.sigilV1).sign(&fresh, body: body)
        _ = try await restarted.verify(fresh, body: body)
    }

    struct BrokenStore: NonceStore {
        func insert(keyID: String, nonce: String, timestamp: Int64, expiresAt: Int64, now: Int64) async throws
            -> Bool
        {
            throw SigilInputError("connection refused")
        }
        var oldestAcceptableTimestamp: Int64? { nil }
    }

    /// A store that answers but cannot vouch for anything before a moment (it lost its data).
    struct HorizonStore: NonceStore {
        let oldest: Int64
        func insert(keyID: String, nonce: String, timestamp: Int64, expiresAt: Int64, now: Int64) async throws
            -> Bool
        { true }
        var oldestAcceptableTimestamp: Int64? { oldest }
    }

    @Test("a store that lost its data refuses by time (signed timestamp-out-of-window), not as unavailable")
    func storeHorizonRefusesByTime() async throws {
        let setup = try await SigningSetup(.hmacSHA256)
        let verifier = RequestVerifier(
            keys: setup.directory, nonces: HorizonStore(oldest: setup.clock.now() + 1), clock: setup.clock)
        var (request, body) = SigningSetup.jsonPost()
        try setup.signer(.sigilV1).sign(&request, body: body)
        do {
            _ = try await verifier.verify(request, body: body)
            Issue.record("accepted")
        } catch let error as SigilError {
            #expect(error.code == .timestampOutOfWindow)
            #expect(error.requestVerified)  // so its refusal is signed, and the client re-syncs
        }
    }

    @Test func storeFailureRefuses() async throws {
        let setup = try await SigningSetup(.hmacSHA256)
        let verifier = RequestVerifier(keys: setup.directory, nonces: BrokenStore(), clock: setup.clock)
        var (request, body) = SigningSetup.jsonPost()
        try setup.signer(.sigilV1).sign(&request, body: body)
        #expect(await verifier.failure(request, body: body) == .storeUnavailable)
        #expect(SigilError.Code.storeUnavailable.httpStatus == 503)
    }

    @Test func forgedRequestsDoNotConsumeNonces() async throws {
        let setup = try await SigningSetup(.hmacSHA256)
        var (request, body) = SigningSetup.jsonPost()
        try setup.signer(.sigilV1, nonce: "nonce-forged-0000001").sign(&request, body: body)
        #expect(await setup.verifier.failure(request, body: Array("{}".utf8)) == .invalidSignature)
        _ = try await setup.verifier.verify(request, body: body)
    }

    @Test func rfc9421NoncesAreRecordedWithCreated() async throws {
        let setup = try await SigningSetup(.ecdsaP256SHA256)
        var (request, body) = SigningSetup.jsonPost()
        try setup.signer(.rfc9421).sign(&request, body: body)
        _ = try await setup.verifier.verify(request, body: body)
        #expect(await setup.verifier.failure(request, body: body) == .replayedNonce)
    }

    @Test func expiredEntriesAreEvictedAsTheStoreFills() {
        let store = MemoryNonceStore(clock: ManualUnixClock(0), shardCount: 1)
        var now: Int64 = 1000
        for round in 0..<50 {
            for index in 0..<2000 {
                #expect(store.insertSync(keyID: "k", nonce: "n-\(round)-\(index)", expiresAt: now + 60, now: now))
            }
            now += 61  // everything inserted so far has expired
        }
        // 2,000 live nonces at a time: the table never grows past what 2,000 need.
        #expect(store.allocatedBytes <= 8192 * 24)
        #expect(!store.insertSync(keyID: "k", nonce: "n-49-0", expiresAt: now + 60, now: now - 61))
    }
}

@Suite("Canonical sigil-v1 paths")
struct CanonicalPathPolicyTests {
    @Test(
        "with requiresCanonicalSigilV1Path, a sigil-v1 path that is not canonical is refused, signed, its nonce unused")
    func canonicalPaths() async throws {
        var strict = VerifierConfiguration()
        strict.requiresCanonicalSigilV1Path = true
        let setup = try await SigningSetup(.ed25519, configuration: strict)
        let lenient = RequestVerifier(keys: setup.directory, nonces: setup.store, clock: setup.clock)
        for (path, canonical) in [
            ("/v1/users/q9xk", true), ("/v1/users/Q9XK", false), ("/v1/users/q9xk/", false), ("/v1/%71", false),
            ("/v1/a%2fb", true), ("/v1/a%2Fb", true), ("/v1/./a", false), ("/v1/caf%C3%A9?Q=1", true),
        ] {
            var request = HTTPRequest(method: .get, scheme: "https", authority: "api.example.com", path: path)
            try setup.signer(.sigilV1).sign(&request, body: [])
            if canonical {
                _ = try await setup.verifier.verify(request, body: [])
                continue
            }
            let error = await #expect(throws: SigilError.self, "\(path)") {
                try await setup.verifier.verify(request, body: [])
            }
            #expect(error?.code == .forbidden)
            #expect(error?.requestVerified == true)
            // The nonce was not recorded: the request is still the client's to send.
            _ = try await lenient.verify(request, body: [])
        }
        // The query: what a router reading the raw query could take for another request is refused.
        var queries = VerifierConfiguration()
        queries.requiresUnambiguousSigilV1Query = true
        let queryVerifier = RequestVerifier(
            keys: setup.directory, nonces: setup.store, clock: setup.clock, configuration: queries)
        for (query, unambiguous) in [
            ("limit=10&cursor=abc", true), ("q=a%2Bb", true), ("q=a%20b", true), ("", true),
            ("a=1&a=2", false), ("q=a+b", false), ("debug", false), ("a=1&&b=2", false), ("a=1&%61=2", false),
        ] {
            var request = HTTPRequest(
                method: .get, scheme: "https", authority: "api.example.com", path: "/v1/search?" + query)
            try setup.signer(.sigilV1).sign(&request, body: [])
            if unambiguous {
                _ = try await queryVerifier.verify(request, body: [])
                continue
            }
            let error = await #expect(throws: SigilError.self, "\(query)") {
                try await queryVerifier.verify(request, body: [])
            }
            #expect(error?.code == .forbidden)
            #expect(error?.requestVerified == true)
            _ = try await lenient.verify(request, body: [])
        }
        // rfc9421 signs the path exactly: nothing to require.
        var request = HTTPRequest(method: .get, scheme: "https", authority: "api.example.com", path: "/v1/Users/Q9")
        try setup.signer(.rfc9421).sign(&request, body: [])
        _ = try await setup.verifier.verify(request, body: [])
    }
}
