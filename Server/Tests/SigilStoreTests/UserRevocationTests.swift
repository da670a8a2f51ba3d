import Crypto
import Foundation
import HTTPTypes
import SigilClient
@_spi(Sigil) import SigilCore
import SigilPostgres
import SigilSQLite
import SigilServer
import Testing

@testable import SigilTestSupport

/// A user's revocation time never moves back (PROTOCOL.md §13.2): an access token a first revocation
/// refused stays refused when the user is revoked again from a clock behind.
@Suite("A user's revocation time, revoked again from a clock behind")
struct UserRevocationTests {
    /// Any token is the one the test says (the token's own checks are not under attack here).
    struct StubTokens: AccessTokenVerifier {
        let token: AccessToken
        func verify(_ token: String) async throws -> AccessToken { self.token }
    }

    /// An exchange over `keys` accepting DPoP alone, with tokens as `token` says.
    static func exchange(keys: any KeyDirectory, clock: ManualUnixClock, token: AccessToken) -> Exchange {
        let nonces = MemoryNonceStore(clock: clock)
        var dpop = DPoPVerifier(tokens: StubTokens(token: token), nonces: nonces, clock: clock)
        dpop.rememberedTokens = nil
        return Exchange(
            verifier: RequestVerifier(keys: keys, nonces: nonces, clock: clock), dpop: dpop,
            origin: "https://api.example")
    }

    /// A DPoP-alone request to `https://api.example/v1/echo` proved by `key`.
    static func dpopRequest(_ key: SigningKey, clock: ManualUnixClock) throws -> HTTPRequest {
        var head = HTTPRequest(method: .get, scheme: "https", authority: "api.example", path: "/v1/echo")
        let prover = try DPoPProver(signer: key, clock: clock)
        head.headerFields[.authorization] = "DPoP token"
        head.headerFields[DPoPProver.field] = try prover.proof(for: head, accessToken: "token")
        return head
    }

    /// Replica A revokes OAuth user `u` at T. An operator revokes `u` again (the CLI on a laptop, or
    /// a replica) whose clock is 20 minutes behind: `ON CONFLICT DO UPDATE SET revoked_at =
    /// EXCLUDED.revoked_at` writes T − 1200, and a token issued 10 minutes before the first revocation,
    /// refused until then, is admitted again.
    @Test("SQLite: revoking a user again with an earlier clock does not re-admit tokens the first revocation refused")
    func reRevocationMovesBackwards() async throws {
        let path = TestServer.temporaryDirectory() + ".sqlite"
        let master = SymmetricKey(size: .bits256)
        let t = SigningSetup.start + 10_000
        let clockA = ManualUnixClock(t)
        let clockB = ManualUnixClock(t - 1_200)
        let replicaA = try await Directory.sqlite(path: path, masterKey: master, clock: clockA)
        let replicaB = try await Directory.sqlite(path: path, masterKey: master, clock: clockB)
        _ = try await Administration(directory: replicaA, serverKeys: nil, clock: clockA).revoke(.user("u"), by: "ops")
        #expect(try await replicaA.revocationOfUser("u") == t)

        let oauthKey = try SigningKey.generate(.ecdsaP256SHA256)
        let prover = try DPoPProver(signer: oauthKey, clock: clockA)
        let stolen = AccessToken(
            subject: "u", boundThumbprint: prover.thumbprint, expiresAt: t + 3_600, issuedAt: t - 600)
        let exchange = Self.exchange(keys: replicaA, clock: clockA, token: stolen)
        clockA.advance(by: 1)  // past the nonce store's start
        await #expect(throws: SigilError(.revokedKey, "")) {
            _ = try await exchange.admit(try Self.dpopRequest(oauthKey, clock: clockA), body: [])
        }

        // Revoked again, from a clock 20 minutes behind.
        clockA.advance(by: 1)
        _ = try await Administration(directory: replicaB, serverKeys: nil, clock: clockB).revoke(.user("u"), by: "ops")
        replicaA.cache.clear()
        let revokedAt = try await replicaA.revocationOfUser("u")
        #expect(revokedAt ?? 0 >= t, "the revocation moved back to \(String(describing: revokedAt)), before \(t)")
        await #expect(
            throws: SigilError(.revokedKey, ""), "a token issued before the first revocation is admitted again"
        ) {
            _ = try await exchange.admit(try Self.dpopRequest(oauthKey, clock: clockA), body: [])
        }
        try await replicaB.close()
        try await replicaA.close()
    }

    /// The memory directory overwrites the same way (one process, a clock stepped back by NTP).
    @Test("memory: revoking a user again after the clock stepped back keeps the first revocation")
    func reRevocationMovesBackwardsInMemory() async throws {
        let t = SigningSetup.start + 10_000
        let clock = ManualUnixClock(t)
        let directory = Directory.inMemory(clock: clock)
        try await directory.apply(DirectoryChange(revokedUsers: ["u"]))
        clock.set(t - 1_200)
        try await directory.apply(DirectoryChange(revokedUsers: ["u"]))
        let revokedAt = try await directory.revocationOfUser("u")
        #expect(revokedAt ?? 0 >= t, "the revocation moved back to \(String(describing: revokedAt))")
    }
}
