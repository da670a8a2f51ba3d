import AsyncHTTPClient
import Crypto
import Foundation
import HTTPTypes
import SigilClient
@_spi(Sigil) import SigilCore
import SigilPostgres
import SigilServer
import SigilStandalone
import Synchronization
import Testing

@testable import SigilTestSupport

/// Three `sigil serve` replicas sharing PostgreSQL (and Redis for nonces): each signed request is
/// accepted once across all of them, a revocation on one is seen by the others within the cache
/// bound, and a store outage refuses everything until the store is back.
@Suite(
    "Replicas on shared stores", .enabled(if: ExternalServers.runPostgres && ExternalServers.runRedis), .externalServers
)
struct ReplicaTests {
    typealias Nonces = Replicas.Nonces

    /// An Ed25519 device registered directly in the shared directory.
    static func device(on server: TestServer, id: String) async throws -> TestDevice {
        let device = try TestDevice(.ed25519)
        try await server.prepared.directory.apply(
            DirectoryChange(added: [
                RegisteredKey(keyID: device.keyID, key: try device.key.verificationKey, deviceID: id)
            ]))
        return device
    }

    /// `request` as sent to `server` (sigil-v1 does not sign the authority).
    static func send(_ request: TestRequest, to server: TestServer, with client: HTTPClient) async throws
        -> TestResponse
    {
        var copy = request
        copy.head.authority = "localhost:\(server.port)"
        return try await copy.send(client)
    }

    @Test(
        "1,000 signed requests, each sent to all three replicas at once: 1,000 accepted, 2,000 replayed",
        arguments: Nonces.allCases)
    func eachRequestAcceptedOnce(_ nonces: Nonces) async throws {
        try await Replicas.withReplicas(nonces: nonces) { replicas, _, _ in
            let device = try await Self.device(on: replicas[0], id: "dev-replicas")
            try await replicas[0].client().using { client in
                let signer = device.signer(clock: replicas[0].clock)
                let outcomes = OutcomeTally()
                try await withThrowingTaskGroup(of: Void.self) { group in
                    var running = 0
                    for index in 0..<1000 {
                        var request = TestRequest(.post, "/v1/echo", server: replicas[0], json: #"{"n":\#(index)}"#)
                        try request.sign(with: signer)
                        let signed = request
                        for replica in replicas {
                            if running >= 48 {
                                try await group.next()
                                running -= 1
                            }
                            running += 1
                            group.addTask {
                                let response = try await Self.send(signed, to: replica, with: client)
                                let outcome =
                                    response.status == 200
                                    ? "accepted" : (response.code ?? "status \(response.status)")
                                outcomes.counts.withLock { $0[outcome, default: 0] += 1 }
                            }
                        }
                    }
                    try await group.waitForAll()
                }
                #expect(outcomes.counts.withLock { $0 } == ["accepted": 1000, "replayed-nonce": 2000])
            }
        }
    }

    @Test("a device revoked on replica A is refused on replica B within the cache bound (1 s)")
    func revocationReachesOtherReplicas() async throws {
        try await Replicas.withReplicas(nonces: .postgres) { replicas, _, _ in
            let device = try await Self.device(on: replicas[0], id: "dev-revoked")
            try await replicas[0].client().using { client in
                let signer = device.signer(clock: replicas[0].clock)
                var request = TestRequest(.post, "/v1/echo", server: replicas[1], json: #"{"n":1}"#)
                try request.sign(with: signer)
                // B accepts, and caches the key.
                #expect(try await Self.send(request, to: replicas[1], with: client).status == 200)

                try await replicas[0].prepared.directory.apply(DirectoryChange(revokedDevices: ["dev-revoked"]))
                replicas[0].clock.advance(by: 1)  // the bound: B's cached entry is at most this old
                var next = TestRequest(.post, "/v1/echo", server: replicas[1], json: #"{"n":2}"#)
                try next.sign(with: signer)
                let refused = try await Self.send(next, to: replicas[1], with: client)
                #expect(refused.code == "revoked-key")
            }
        }
    }

    @Test(
        "a store outage while requests flow: every request in it refused with 503, none accepted; then service resumes",
        arguments: Nonces.allCases)
    func outage(_ nonces: Nonces) async throws {
        try await Replicas.withReplicas(nonces: nonces, storeTimeout: .seconds(3)) { replicas, postgres, redis in
            let device = try await Self.device(on: replicas[0], id: "dev-outage")
            try await replicas[0].client().using { client in
                let signer = device.signer(clock: replicas[0].clock)
                func attempt(_ index: Int) async throws -> TestResponse {
                    var request = TestRequest(.post, "/v1/echo", server: replicas[0], json: #"{"n":\#(index)}"#)
                    try request.sign(with: signer)
                    return try await Self.send(request, to: replicas[index % 3], with: client)
                }
                for index in 0..<6 { #expect(try await attempt(index).status == 200) }
                if let redis { await redis.stop() } else { await postgres.stop() }
                for index in 100..<112 {
                    let response = try await attempt(index)
                    #expect(response.status == 503)
                    #expect(response.code == "store-unavailable")
                }
                if let redis { try await redis.resume() } else { try await postgres.resume() }
                var recovered = 0
                for index in 200..<260 where recovered < 6 {
                    if try await attempt(index).status == 200 {
                        recovered += 1
                    } else {
                        try await Task.sleep(for: .milliseconds(200))
                    }
                }
                #expect(recovered == 6)
            }
        }
    }
}

/// Outcomes counted from concurrent tasks.
final class OutcomeTally: Sendable {
    let counts = Mutex<[String: Int]>([:])
}

extension ReplicaTests {
    @Test(
        "a DPoP proof sent to three replicas at once is accepted once, on PostgreSQL and on Redis nonces",
        arguments: Nonces.allCases)
    func dpopProofAcceptedOnce(_ nonces: Nonces) async throws {
        let issuer = try await TestTokenIssuer.make()
        let origin = "https://api.example"
        let configure: @Sendable (inout SigilStandalone.Options) -> Void = { options in
            issuer.configure(&options)
            options.dpop.origin = origin
        }
        try await Replicas.withReplicas(nonces: nonces, configure: configure) { replicas, _, _ in
            try await replicas[0].client().using { client in
                let prover = try DPoPProver(signer: try SigningKey.generate(.ecdsaP256SHA256), clock: replicas[0].clock)
                let token = try await issuer.token(
                    boundTo: prover.thumbprint, expiresAt: replicas[0].clock.now() + 600)
                var accepted = 0
                var replayed = 0
                for index in 0..<20 {
                    var request = TestRequest(.post, "/v1/echo", server: replicas[0], json: #"{"n":\#(index)}"#)
                    try request.addDPoP(prover, token: token, origin: origin)
                    let signed = request
                    try await withThrowingTaskGroup(of: TestResponse.self) { group in
                        for replica in replicas {
                            group.addTask {
                                var copy = signed
                                copy.head.authority = "localhost:\(replica.port)"
                                return try await copy.send(client)
                            }
                        }
                        for try await response in group {
                            if response.status == 200 { accepted += 1 }
                            if response.code == "replayed-nonce" { replayed += 1 }
                        }
                    }
                }
                #expect(accepted == 20 && replayed == 40)
            }
        }
    }
}
