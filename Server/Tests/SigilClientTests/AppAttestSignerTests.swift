import AsyncHTTPClient
import Crypto
import Foundation
import HTTPTypes
import SigilClient
@_spi(Sigil) import SigilCore
import SigilHTTPClient
import SigilServer
import Synchronization
import Testing

@testable import SigilTestSupport

/// App Attest as `DCAppAttestService` behaves, over the test authority `sigil serve` trusts: keys,
/// attestations, and assertions whose counter grows as they are made. `failures` are thrown, in
/// order, by the next assertions; `delays` hold each assertion's answer back (nanoseconds), as a busy
/// system service would, so requests signed at once would reach the server out of counter order.
final class TestAppAttestProvider: AppAttestProvider, Sendable {
    let authority: TestAppAttestAuthority
    let state = Mutex<(keys: [String: P256.Signing.PrivateKey], counter: UInt32, failures: [AppAttestFailure])>(
        ([:], 0, []))
    let assertions = Atomic<Int>(0)
    let delays: @Sendable (UInt32) -> UInt64

    init(authority: TestAppAttestAuthority, delays: @escaping @Sendable (UInt32) -> UInt64 = { _ in 0 }) {
        self.authority = authority
        self.delays = delays
    }

    var isSupported: Bool { true }

    func generateKey() async throws -> String {
        let key = P256.Signing.PrivateKey()
        let id = Data(SHA256.hash(data: key.publicKey.x963Representation)).base64EncodedString()
        state.withLock { $0.keys[id] = key }
        return id
    }

    func attestKey(_ keyID: String, clientDataHash: Data) async throws -> Data {
        let key = try #require(state.withLock { $0.keys[keyID] })
        return Data(try authority.object(authority.attestation(clientDataHash: Array(clientDataHash), key: key)))
    }

    func generateAssertion(_ keyID: String, clientDataHash: Data) async throws -> Data {
        assertions.add(1, ordering: .relaxed)
        let (key, counter, failure) = state.withLock { state -> (P256.Signing.PrivateKey?, UInt32, AppAttestFailure?) in
            if !state.failures.isEmpty { return (nil, 0, state.failures.removeFirst()) }
            state.counter += 1
            return (state.keys[keyID], state.counter, nil)
        }
        if let failure { throw failure }
        guard let key else { throw AppAttestFailure.keyInvalidated }
        let assertion = try TestAppAttestAuthority.assertion(
            key: key, clientDataHash: Array(clientDataHash), counter: counter)
        try await Task.sleep(nanoseconds: delays(counter))
        return Data(assertion)
    }

    func fail(_ failures: AppAttestFailure...) { state.withLock { $0.failures += failures } }
}

@Suite("App Attest signer")
struct AppAttestSignerTests {
    /// An App Attest key enrolled by attestation with `sigil serve`, and a session signing with it.
    static func enrolled(
        delays: @escaping @Sendable (UInt32) -> UInt64 = { _ in 0 },
        _ body: (TestServer, AppAttestSigner, TestAppAttestProvider, SigilSession) async throws -> Void
    ) async throws {
        let authority = try TestAppAttestAuthority(now: Date())
        try await AppAttestScaffold.serve(authority) { server, registration, _, transport in
            let provider = TestAppAttestProvider(authority: authority, delays: delays)
            var signer = try await AppAttestSigner.generate(provider: provider)
            signer.retryDelays = [.milliseconds(1), .milliseconds(1)]
            let identity = try await signer.enroll(with: registration, store: MemoryDeviceStore())
            #expect(identity.keyID == signer.keyID)
            let session = try SigilSession(
                identity: identity, transport: transport,
                signer: RequestSigner(key: signer, keyID: identity.keyID, clock: registration.clock),
                clock: registration.clock)
            try await body(server, signer, provider, session)
        }
    }

    @Test("requests sent at once go one at a time, so assertions made out of order are never refused as replays")
    func orderedUnderConcurrency() async throws {
        // Early assertions answer last: signed at once, the later counters would arrive first.
        try await Self.enrolled(delays: { counter in UInt64(max(0, 12 - Int(counter))) * 5_000_000 }) {
            server, _, provider, session in
            let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                for index in 0..<8 {
                    group.addTask {
                        try await session.send(SessionScaffold.echo(server), body: Array("{\"n\":\(index)}".utf8))
                            .head.status.code
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(statuses == Array(repeating: 200, count: 8))
            #expect(provider.assertions.load(ordering: .relaxed) == 9)  // the registration's, and eight
        }
    }

    @Test("a transient failure is tried again with the same key; a refused key is keyInvalidated, not retried")
    func transientAndInvalidated() async throws {
        try await Self.enrolled(delays: { _ in 0 }) { server, signer, provider, session in
            provider.fail(.transient, .transient)
            let answer = try await session.send(SessionScaffold.echo(server), body: [])
            #expect(answer.head.status == .ok)
            #expect(provider.assertions.load(ordering: .relaxed) == 4)  // registration, two failures, one

            provider.fail(.transient, .transient, .transient)
            await #expect(throws: AppAttestFailure.transient) {
                _ = try await session.send(SessionScaffold.echo(server), body: [])
            }

            provider.fail(.keyInvalidated)
            let before = provider.assertions.load(ordering: .relaxed)
            await #expect(throws: AppAttestFailure.keyInvalidated) {
                _ = try await session.send(SessionScaffold.echo(server), body: [])
            }
            #expect(provider.assertions.load(ordering: .relaxed) == before + 1)

            // Signing synchronously would hold a thread while App Attest answers: refused.
            #expect(throws: SigilInputError.self) { _ = try signer.signature(for: [1, 2, 3]) }
        }
    }
}
