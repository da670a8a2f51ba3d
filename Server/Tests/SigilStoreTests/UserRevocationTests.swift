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

/// A second attack review of issue 29's fixes (117466b and later): what it found, each now closed, as
/// PROTOCOL.md §13.2 promises.
@Suite("Second review of issue 29's fixes")
struct SecondReviewTests {
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

    // MARK: 1. A user's revocation time moves backwards when the user is revoked again

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

    // MARK: 2. PostgreSQL: a key stored before thumbprints were kept is no one's DPoP key

    /// A device key stored before the `jwk_thumbprint` column (schema ≤ 4, or written by a replica of
    /// that age during a rolling upgrade) has a NULL thumbprint. `sigil serve` backfills at start, but
    /// `Directory.init` does not, and nothing tells a library user to call
    /// `backfillThumbprints()`: `key(forThumbprint:)` answers nil for that key, so once its device is
    /// revoked, the key still proves DPoP requests as an "OAuth client" key with its token's sub.
    @Test(
        "PostgreSQL (library use): a revoked device's key whose row predates thumbprints is found as that key and refused",
        .enabled(if: ExternalServers.runPostgres))
    func postgresNullThumbprint() async throws {
        try await PostgresTestServer.with { server in
            let store = try await PostgresStore.open(
                try PostgresStore.Location(url: server.url), timeout: .seconds(10))
            defer { store.close() }
            let clock = ManualUnixClock(SigningSetup.start)
            let directory = try Directory.postgres(
                store: store, masterKey: SymmetricKey(size: .bits256), clock: clock, listensForChanges: false)
            let deviceKey = try SigningKey.generate(.ecdsaP256SHA256)
            let verification = try deviceKey.verificationKey
            let keyID = try #require(verification.derivedKeyID)
            try await directory.apply(
                DirectoryChange(
                    added: [RegisteredKey(keyID: keyID, key: verification, deviceID: "dev-old", userID: "alice")]))
            // The row as a build before the thumbprint column left it.
            _ = try await store.client.query("UPDATE sigil_keys SET jwk_thumbprint = NULL").collect()
            try await directory.apply(DirectoryChange(revokedDevices: ["dev-old"]))
            directory.cache.clear()
            #expect(try await directory.key(for: keyID)?.isUsable(at: clock.now()) == false)

            let prover = try DPoPProver(signer: deviceKey, clock: clock)
            let token = AccessToken(
                subject: "alice", boundThumbprint: prover.thumbprint, expiresAt: clock.now() + 600,
                issuedAt: clock.now())
            let exchange = Self.exchange(keys: directory, clock: clock, token: token)
            clock.advance(by: 1)  // past the nonce store's start
            let nulls = try await store.client.query(
                "SELECT count(*) FROM sigil_keys WHERE jwk_thumbprint IS NULL"
            ).collect().first?.decode(Int.self)
            #expect(nulls == 1)
            // Found all the same: the lookup fills missing thumbprints when it finds none.
            #expect(try await directory.key(forThumbprint: prover.thumbprint)?.keyID == keyID)
            do {
                let admitted = try await exchange.admit(try Self.dpopRequest(deviceKey, clock: clock), body: [])
                Issue.record(
                    "the revoked device's key proves DPoP: admitted as user \(admitted.identity?.userID ?? "-")")
            } catch let error as SigilError {
                #expect(error.code == .revokedKey, "\(error)")
            }
        }
    }
}
