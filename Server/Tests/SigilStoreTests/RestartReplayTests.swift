import Crypto
import Foundation
import HTTPTypes
import SigilClient
@_spi(Sigil) import SigilCore
import SigilSQLite
import SigilServer
import Testing

@testable import SigilTestSupport

/// A restart of `sigil serve` opens no replay window: neither for requests dated at the server's time
/// nor for requests dated ahead of it.
@Suite("Restart and replay")
struct RestartReplayTests {
    @Test("sigil serve: requests accepted before a restart, future-dated ones included, are refused after it")
    func replayAcrossRestart() async throws {
        let dataDirectory = TestServer.temporaryDirectory()
        let clock = ManualUnixClock(SigningSetup.start)
        let device = try TestDevice()
        let (futureDated, current) = try await TestServer.with(dataDirectory: dataDirectory, clock: clock) { server in
            try await server.client().using { client in
                #expect(try await DeviceSteps.register(device, on: server, client: client).status == 201)
                let ahead = ManualUnixClock(clock.now() + 200)
                let (early, _, futureDated) = try await DeviceSteps.echo(
                    "dated +200 s", signer: device.signer(clock: ahead), server: server, client: client)
                #expect(early.status == 200, "\(early.text)")
                let (now, _, current) = try await DeviceSteps.echo(
                    "dated now", signer: device.signer(clock: clock), server: server, client: client)
                #expect(now.status == 200, "\(now.text)")
                return (futureDated, current)
            }
        }
        clock.advance(by: 5)
        try await TestServer.with(dataDirectory: dataDirectory, clock: clock) { server in
            try await server.client().using { client in
                // The restarted server listens on another port; sigil-v1 does not sign the authority.
                var futureReplay = futureDated
                futureReplay.head.authority = "localhost:\(server.port)"
                var currentReplay = current
                currentReplay.head.authority = "localhost:\(server.port)"
                #expect(try await futureReplay.send(client, to: server).code == "replayed-nonce")
                #expect(try await currentReplay.send(client, to: server).code == "timestamp-out-of-window")
                let (fresh, _, _) = try await DeviceSteps.echo(
                    "after the restart", signer: device.signer(clock: clock), server: server, client: client)
                #expect(fresh.status == 200, "\(fresh.text)")
            }
        }
    }

    @Test("the SQLite nonce store keeps its horizon and future-dated nonces across a reopen")
    func storeReopens() async throws {
        let path = TestServer.temporaryDirectory() + ".sqlite"
        let clock = ManualUnixClock(SigningSetup.start)
        let now = clock.now()
        let store = try await SQLiteNonceStore.open(path: path, clock: clock)
        #expect(store.oldestAcceptableTimestamp == 1)  // a new file vouches for everything
        #expect(try await store.insert(keyID: "k", nonce: "n-now", timestamp: now, expiresAt: now + 360, now: now))
        #expect(
            try await store.insert(keyID: "k", nonce: "n-ahead", timestamp: now + 250, expiresAt: now + 610, now: now))
        #expect(
            !(try await store.insert(keyID: "k", nonce: "n-now", timestamp: now, expiresAt: now + 360, now: now)))
        try await store.close()

        clock.advance(by: 10)
        let reopened = try await SQLiteNonceStore.open(path: path, clock: clock)
        let oldest = try #require(reopened.oldestAcceptableTimestamp)
        #expect(oldest > now)
        #expect(oldest <= now + SQLiteNonceStore.horizonLead + 1)
        #expect(
            !(try await reopened.insert(
                keyID: "k", nonce: "n-ahead", timestamp: now + 250, expiresAt: now + 610, now: clock.now())))
        try await reopened.close()

        // Past their retention, nonces are dropped at the next open, and the horizon rises to their
        // timestamps: a server restarted with a wider window still refuses them by time.
        clock.advance(by: 700)
        let later = try await SQLiteNonceStore.open(path: path, clock: clock)
        #expect(try #require(later.oldestAcceptableTimestamp) > now + 250)
        #expect(
            try await later.insert(
                keyID: "k", nonce: "n-ahead", timestamp: clock.now(), expiresAt: clock.now() + 360, now: clock.now()))
        try await later.close()
    }
}
