import AsyncHTTPClient
import Crypto
import Foundation
import HTTPTypes
import SigilAppAttest
@_spi(Sigil) import SigilCore
import SigilFiles
import SigilServer
import SigilStandalone
import Testing

@testable import SigilClient
@testable import SigilTestSupport

/// App Attest vouches for a key once (PROTOCOL.md section 7): the attestation's `clientDataHash` commits
/// to the challenge and to a Secure Enclave key, which then signs any number of requests at once;
/// assertions are made only where the server asks (`--require-assertion`) and for a rotation.
@Suite("App Attest with a key: attested once, then signing freely")
struct AppAttestKeyTests {
    static let appID = TestAppAttestAuthority.appID

    /// `sigil serve` enrolling by App Attest (the debug token too), with `requireAssertion`.
    static func withServer(
        requireAssertion: [String] = [],
        _ body: (TestServer, @escaping @Sendable (String, [String]) throws -> any SigilTransport) async throws -> Void
    ) async throws {
        let authority = try TestAppAttestAuthority(now: Date())
        let tokenFile = TestServer.temporaryDirectory() + "-debug-token"
        try SecureFile.write(AppAttestDebugTests.token, to: tokenFile)
        defer { try? FileManager.default.removeItem(atPath: tokenFile) }
        try await DeviceScaffold.withServer(configure: { options in
            options.appAttest.appIDs = [Self.appID]
            options.appAttest.root = authority.root
            options.appAttest.debugTokenFiles = [tokenFile]
            options.appAttest.requireAssertion = requireAssertion
        }) { server, transport, _ in try await body(server, transport) }
    }

    /// A device enrolled with a software P-256 key (a Secure Enclave key on a phone) the debug
    /// provider's App Attest key vouched for.
    static func enrolled(
        _ server: TestServer, _ transport: @escaping @Sendable (String, [String]) throws -> any SigilTransport
    ) async throws -> (SigilDevice, SigningKey, AppAttestSigner, DeviceIdentity) {
        let provider = AppAttestDebugTests.provider()
        let device = try SigilDevice(
            store: DeviceScaffold.store(), clock: server.clock, appAttestProvider: provider, transport: transport)
        let key = try SigningKey.generate(.ecdsaP256SHA256)
        let appAttest = try await AppAttestSigner.generate(provider: provider)
        let identity = try await device.enroll(key, vouchedBy: appAttest, server: DeviceScaffold.url(server))
        return (device, key, appAttest, identity)
    }

    static func echoed(_ response: SigilResponse) -> [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any]) ?? [:]
    }

    @Test(
        "enrolled once by attestation, the key signs 32 requests in flight, all accepted, the device shown as attested")
    func manyInFlight() async throws {
        try await Self.withServer { server, transport in
            let (device, key, appAttest, identity) = try await Self.enrolled(server, transport)
            #expect(identity.keyID == key.derivedKeyID)
            #expect(identity.algorithm == "ecdsa-p256-sha256")
            #expect(identity.appAttestKeyID == appAttest.appAttestKeyID)
            #expect(identity.secretKeyID == nil, "an attested key gets no HMAC secret")
            // The directory holds both keys on one device, recorded as attested (here: by the debug token).
            let keys = try await server.prepared.directory.keys(ofDevice: identity.deviceID)
            #expect(Set(keys.map(\.keyID)) == [identity.keyID, appAttest.keyID])
            #expect(keys.allSatisfy { $0.deviceAttestation == RegisteredKey.appAttestDebug })

            let statuses = try await withThrowingTaskGroup(of: SigilResponse.self) { group in
                for index in 0..<32 {
                    group.addTask {
                        try await device.send(
                            SessionScaffold.echo(server), body: Array(#"{"n":\#(index)}"#.utf8), sealed: nil)
                    }
                }
                return try await group.reduce(into: [SigilResponse]()) { $0.append($1) }
            }
            #expect(statuses.count == 32 && statuses.allSatisfy { $0.head.status == .ok && $0.signatureVerified })
            let echo = Self.echoed(statuses[0])
            #expect(echo["keyId"] as? String == identity.keyID)
            #expect(echo["alg"] as? String == "ecdsa-p256-sha256")
            #expect(echo["attestation"] as? String == RegisteredKey.appAttestDebug)
        }
    }

    @Test(
        "under --require-assertion the key is refused (signed), the App Attest key's assertion accepted; discovery lists the paths"
    )
    func assertionsWhereAsked() async throws {
        try await Self.withServer(requireAssertion: ["/v1/echo"]) { server, transport in
            let (device, key, _, identity) = try await Self.enrolled(server, transport)
            #expect(identity.assertionPaths == ["/v1/echo"])
            // The device signs this route's requests with assertions, one at a time.
            let answer = try await DeviceScaffold.echo(device, server)
            #expect(answer.head.status == .ok)
            #expect(Self.echoed(answer)["alg"] as? String == "apple-appattest")
            #expect(Self.echoed(answer)["deviceId"] as? String == identity.deviceID)

            // The key alone there: refused, in a refusal signed for the request.
            let session = SigilSession(
                transport: try transport("localhost", identity.pins),
                signer: RequestSigner(key: key, keyID: identity.keyID, clock: server.clock),
                clock: ServerClock(local: server.clock),
                responses: try SessionScaffold.responseVerifier(server, clock: ServerClock(local: server.clock)))
            let refused = try await session.send(SessionScaffold.echo(server), body: Array("{}".utf8))
            #expect(refused.head.status.code == 403 && refused.signatureVerified)
            #expect((refused.failure as? SigilError)?.code == .forbidden)
        }
    }

    @Test("an attested device's key rotates by an assertion of its App Attest key, never by the key itself")
    func rotation() async throws {
        try await Self.withServer { server, transport in
            let (device, key, _, identity) = try await Self.enrolled(server, transport)
            // Signed by the key alone: refused.
            let registration = try await device.registration(server: identity.server, pins: identity.pins)
            let responses = try SessionScaffold.responseVerifier(server, clock: ServerClock(local: server.clock))
            let stray = try SigningKey.generate(.ecdsaP256SHA256)
            await #expect(throws: SigilError(.forbidden, "")) {
                _ = try await registration.rotate(from: key, keyID: identity.keyID, to: stray, server: responses)
            }
            let next = try SigningKey.generate(.ecdsaP256SHA256)
            let rotated = try await device.rotate(to: next)
            #expect(rotated.keyID == next.derivedKeyID && rotated.appAttestKeyID == identity.appAttestKeyID)
            let answer = try await DeviceScaffold.echo(device, server)
            #expect(Self.echoed(answer)["keyId"] as? String == rotated.keyID)
            #expect(Self.echoed(answer)["attestation"] as? String == RegisteredKey.appAttestDebug)
        }
    }

    @Test("an attestation made for the challenge alone, or for another key, does not vouch for the key")
    func vouchesForThatKeyOnly() async throws {
        try await Self.withServer { server, transport in
            let registration = DeviceRegistration(
                transport: try transport("localhost", []), authority: "localhost:\(server.port)",
                clock: ServerClock(local: server.clock))
            let responses = try SessionScaffold.responseVerifier(server, clock: ServerClock(local: server.clock))
            let provider = AppAttestDebugTests.provider()
            let appAttest = try await AppAttestSigner.generate(provider: provider)
            let key = try SigningKey.generate(.ecdsaP256SHA256)
            let other = try SigningKey.generate(.ecdsaP256SHA256)
            for keyID in [nil, other.derivedKeyID] {
                let challenge = try await registration.attestationChallenge().challenge
                let attestation = try await appAttest.attest(
                    clientDataHash: Registration.AttestedKey.clientDataHash(challenge: challenge, vouchingFor: keyID))
                let refused = await #expect(throws: SigilClientError.self) {
                    _ = try await registration.enroll(
                        key, vouchedBy: appAttest.keyIDBytes, attestation: attestation, challenge: challenge,
                        server: responses)
                }
                #expect(refused?.claimedCode == .enrollmentRefused)
            }
        }
    }
}
