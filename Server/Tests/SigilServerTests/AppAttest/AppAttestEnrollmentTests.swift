import AsyncHTTPClient
import Crypto
import Foundation
import HTTPTypes
import SigilAppAttest
import SigilClient
@_spi(Sigil) import SigilCore
import SigilHTTPClient
import SigilServer
import SigilStandalone
import SigilTLS
import Synchronization
import Testing

@testable import SigilTestSupport

/// Enrollment by attestation and `apple-appattest` requests against `sigil serve`, over TLS.
@Suite("App Attest enrollment")
struct AppAttestEnrollmentTests {

    @Test("challenge, attestation, an assertion-signed registration, then apple-appattest requests in both profiles")
    func enrollAndSign() async throws {
        let authority = try TestAppAttestAuthority(now: Date())
        try await AppAttestScaffold.serve(authority) { server, registration, verifier, transport in
            let discovery = try await registration.discover()
            #expect(discovery.algorithms.contains("apple-appattest"))
            let device = TestAppAttestDevice()
            let challenge = try await registration.attestationChallenge()
            let registered = try await registration.enroll(
                attestedBy: device, appAttestKeyID: device.appAttestKeyID,
                attestation: try AppAttestScaffold.attestation(
                    authority, device: device, challenge: challenge.challenge),
                challenge: challenge.challenge, server: verifier)
            #expect(registered.keyId == device.keyID)
            #expect(registered.alg == "apple-appattest")
            // The test authority's receipt is not Apple's: enrollment stands, nothing is kept.
            let records = try #require(server.prepared.directory as? any AppAttestStore)
            #expect(try await records.receipt(keyID: device.keyID) == nil)

            for profile in SignatureProfile.allCases {
                let session = SigilSession(
                    transport: transport,
                    signer: RequestSigner(
                        key: device, keyID: device.keyID, profile: profile, clock: registration.clock),
                    clock: registration.clock, responses: verifier, requireSignedResponses: true)
                let echo = try await session.send(SessionScaffold.echo(server), body: Array(#"{"a":1}"#.utf8))
                #expect(echo.head.status == .ok, "\(profile)")
                #expect(String(decoding: echo.body, as: UTF8.self).contains("apple-appattest"))
            }

            // A cloned key (its counter behind the server's) is refused, its signature otherwise good.
            device.rewind(to: 1)
            let session = SigilSession(
                transport: transport,
                signer: RequestSigner(key: device, keyID: device.keyID, clock: registration.clock),
                clock: registration.clock, responses: verifier, requireSignedResponses: false)
            let cloned = try await session.send(SessionScaffold.echo(server), body: [])
            #expect(cloned.refusal?.code == .replayedNonce)
            device.rewind(to: 100)
            #expect(try await session.send(SessionScaffold.echo(server), body: []).head.status == .ok)

            // An App Attest device does not rotate away from its attested key.
            let rotate = await #expect(throws: SigilError.self) {
                _ = try await registration.rotate(
                    from: device, keyID: device.keyID, to: try SigningKey.generate(.ed25519), server: verifier)
            }
            #expect(rotate?.code == .forbidden)
        }
    }

    @Test("DeviceEnrollment by attestation stores the key with no HMAC secret; the server issues it none")
    func deviceEnrollment() async throws {
        let authority = try TestAppAttestAuthority(now: Date())
        try await AppAttestScaffold.serve(authority) { server, registration, verifier, transport in
            let device = TestAppAttestDevice()
            let store = MemoryDeviceStore()
            let identity = try await DeviceEnrollment().enroll(
                attested: device, appAttestKeyID: device.appAttestKeyID,
                attest: { challenge in
                    try AppAttestScaffold.attestation(authority, device: device, challenge: challenge)
                },
                with: registration, store: store)
            #expect(identity.keyID == device.keyID)
            #expect(identity.algorithm == "apple-appattest")
            #expect(try store.secret() == nil)
            #expect(identity.secretKeyID == nil)
            // A secret would sign with no assertion from anywhere: refused.
            let refused = await #expect(throws: SigilError.self) {
                _ = try await registration.fetchSecret(key: device, keyID: device.keyID, server: verifier)
            }
            #expect(refused?.code == .forbidden)
            let session = SigilSession(
                transport: transport,
                signer: RequestSigner(key: device, keyID: device.keyID, clock: registration.clock),
                clock: registration.clock)
            #expect(try await session.send(SessionScaffold.echo(server), body: []).head.status == .ok)
        }
    }

    @Test("an assertion for another App ID, or a key of a server no longer taking App Attest, is refused")
    func requestRefusals() async throws {
        let authority = try TestAppAttestAuthority(now: Date())
        let data = TestServer.temporaryDirectory()
        let device = TestAppAttestDevice()
        try await TestServer.with(
            dataDirectory: data,
            configure: {
                $0.appAttest.appIDs = [TestAppAttestAuthority.appID]
                $0.appAttest.root = authority.root
            }
        ) { server in
            try await server.client().using { client in
                let transport = AsyncHTTPClientTransport(client: client)
                let clock = ServerClock(local: server.clock)
                let registration = DeviceRegistration(
                    transport: transport, authority: "localhost:\(server.port)", clock: clock)
                let verifier = try await registration.discover().responseVerifier(clock: clock)
                let challenge = try await registration.attestationChallenge().challenge
                _ = try await registration.enroll(
                    attestedBy: device, appAttestKeyID: device.appAttestKeyID,
                    attestation: try AppAttestScaffold.attestation(authority, device: device, challenge: challenge),
                    challenge: challenge, server: verifier)
                // The same key asserting for another app (rpIdHash of another App ID).
                let elsewhere = TestAppAttestDevice(key: device.key, appID: "TEAM999999.dev.other")
                elsewhere.rewind(to: 50)
                let session = SigilSession(
                    transport: transport, signer: RequestSigner(key: elsewhere, keyID: device.keyID, clock: clock),
                    clock: clock, requireSignedResponses: false)
                let refused = try await session.send(SessionScaffold.echo(server), body: [])
                #expect(refused.refusal?.code == .invalidSignature)
            }
        }
        // The same data directory, App Attest off: the stored key signs nothing.
        try await TestServer.with(dataDirectory: data) { server in
            try await server.client().using { client in
                // Past the restart horizon of the data directory's nonce store.
                server.clock.advance(by: 10)
                let clock = ServerClock(local: server.clock)
                device.rewind(to: 60)
                let session = SigilSession(
                    transport: AsyncHTTPClientTransport(client: client),
                    signer: RequestSigner(key: device, keyID: device.keyID, clock: clock), clock: clock,
                    requireSignedResponses: false)
                let refused = try await session.send(SessionScaffold.echo(server), body: [])
                #expect(refused.refusal?.code == .unsupportedAlgorithm)
            }
        }
    }

    @Test("a reused, forged, expired or other challenge, another App ID or root, a signer not attested: refused")
    func refusals() async throws {
        let authority = try TestAppAttestAuthority(now: Date())
        let stranger = try TestAppAttestAuthority(now: Date())
        try await AppAttestScaffold.serve(authority) { server, registration, verifier, _ in
            func refusal(
                _ device: TestAppAttestDevice = TestAppAttestDevice(), signer: TestAppAttestDevice? = nil,
                challenge: String, attestedChallenge: String? = nil, authority: TestAppAttestAuthority = authority,
                change: (inout TestAppAttestAuthority.Attestation) -> Void = { _ in }
            ) async throws -> SigilError.Code? {
                let attestation = try AppAttestScaffold.attestation(
                    authority, device: device, challenge: attestedChallenge ?? challenge, change: change)
                // Refused before the registration's signature verified: unsigned, its code a claim; a
                // challenge used already is refused after it verified: signed, the server's word.
                let error = await #expect(throws: (any Error).self) {
                    _ = try await registration.enroll(
                        attestedBy: signer ?? device, appAttestKeyID: device.appAttestKeyID,
                        attestation: attestation, challenge: challenge, server: verifier)
                }
                if let claimed = error as? SigilClientError {
                    #expect(claimed.kind == .untrustedRefusal)
                    return claimed.claimedCode
                }
                return (error as? SigilError)?.code
            }
            let used = try await registration.attestationChallenge().challenge
            let first = TestAppAttestDevice()
            _ = try await registration.enroll(
                attestedBy: first, appAttestKeyID: first.appAttestKeyID,
                attestation: try AppAttestScaffold.attestation(authority, device: first, challenge: used),
                challenge: used,
                server: verifier)
            #expect(try await refusal(challenge: used) == .enrollmentRefused)
            let forged = Base64URL.encode([UInt8](repeating: 7, count: 40))
            #expect(try await refusal(challenge: forged) == .enrollmentRefused)
            let other = try await registration.attestationChallenge().challenge
            #expect(
                try await refusal(
                    challenge: try await registration.attestationChallenge().challenge, attestedChallenge: other)
                    == .enrollmentRefused)
            #expect(
                try await refusal(challenge: try await registration.attestationChallenge().challenge) {
                    $0.appID = "TEAM999999.dev.other"
                } == .enrollmentRefused)
            #expect(
                try await refusal(
                    challenge: try await registration.attestationChallenge().challenge, authority: stranger)
                    == .enrollmentRefused)
            // The request is signed by another key than the one attested: its proof fails, and the
            // challenge is not spent (an on-path party cannot burn it with a bad signature).
            let kept = try await registration.attestationChallenge().challenge
            let third = TestAppAttestDevice()
            #expect(try await refusal(third, signer: TestAppAttestDevice(), challenge: kept) == .invalidSignature)
            _ = try await registration.enroll(
                attestedBy: third, appAttestKeyID: third.appAttestKeyID,
                attestation: try AppAttestScaffold.attestation(authority, device: third, challenge: kept),
                challenge: kept,
                server: verifier)
            // A challenge spent on an attestation that fails is not used up.
            let retried = try await registration.attestationChallenge().challenge
            #expect(try await refusal(challenge: retried, authority: stranger) == .enrollmentRefused)
            let second = TestAppAttestDevice()
            _ = try await registration.enroll(
                attestedBy: second, appAttestKeyID: second.appAttestKeyID,
                attestation: try AppAttestScaffold.attestation(authority, device: second, challenge: retried),
                challenge: retried,
                server: verifier)
            let late = try await registration.attestationChallenge().challenge
            server.clock.advance(by: 301)
            #expect(try await refusal(challenge: late) == .enrollmentRefused)
            #expect(try await server.prepared.directory.keyIDs() == [first.keyID, second.keyID, third.keyID].sorted())
        }
    }

    @Test("a server without App Attest issues no challenge and refuses attested enrollment and apple-appattest")
    func off() async throws {
        let authority = try TestAppAttestAuthority(now: Date())
        try await AppAttestScaffold.serve(authority, appIDs: []) { server, registration, verifier, _ in
            let algorithms = try await registration.discover().algorithms
            #expect(!algorithms.contains("apple-appattest"))
            let error = await #expect(throws: SigilClientError.self) {
                _ = try await registration.attestationChallenge()
            }
            #expect(error?.claimedCode == .forbidden)
            let device = TestAppAttestDevice()
            let refused = await #expect(throws: SigilClientError.self) {
                _ = try await registration.enroll(
                    attestedBy: device, appAttestKeyID: device.appAttestKeyID,
                    attestation: try AppAttestScaffold.attestation(authority, device: device, challenge: "c"),
                    challenge: "c",
                    server: verifier)
            }
            #expect(refused?.claimedCode == .enrollmentRefused)
        }
    }
}
