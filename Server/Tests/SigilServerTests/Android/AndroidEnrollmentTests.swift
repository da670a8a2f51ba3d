import AsyncHTTPClient
import Crypto
import Foundation
import HTTPTypes
import SigilAndroidAttestation
import SigilClient
@_spi(Sigil) import SigilCore
import SigilHTTPClient
import SigilServer
import SigilStandalone
import SigilTLS
import Testing

@testable import SigilTestSupport

/// Enrollment by Android Key Attestation against `sigil serve`, over TLS: a chain from a test authority
/// laid out as Google's (its Key Description made by the test), then requests signed by the attested key.
@Suite("Android Key Attestation enrollment")
struct AndroidEnrollmentTests {
    static func serve(
        _ authority: TestAndroidAuthority,
        _ body: (TestServer, DeviceRegistration, ResponseVerifier, AsyncHTTPClientTransport) async throws -> Void
    ) async throws {
        try await TestServer.with(
            dataDirectory: TestServer.temporaryDirectory(),
            configure: { options in
                options.android.policy = AndroidAttestationPolicy(apps: [TestAndroidAuthority.app])
                options.android.roots = [authority.anchor]
            }
        ) { server in
            let tls = ClientTLS.configuration(anchors: try server.certificates)
            try await HTTPClient(eventLoopGroupProvider: .singleton, configuration: .init(tlsConfiguration: tls))
                .using { client in
                    let clock = ServerClock(local: server.clock)
                    let transport = AsyncHTTPClientTransport(client: client)
                    let registration = DeviceRegistration(
                        transport: transport, authority: "localhost:\(server.port)", clock: clock)
                    let verifier = try await registration.discover().responseVerifier(clock: clock)
                    try await body(server, registration, verifier, transport)
                }
        }
    }

    /// The code and detail a refused enrollment carries.
    static func refusal(_ body: () async throws -> Void) async -> String {
        do {
            try await body()
            return "accepted"
        } catch let error as SigilError {
            return "\(error.code.rawValue): \(error.detail)"
        } catch let error as SigilClientError where error.kind == .untrustedRefusal {
            // Refused before the registration's signature verified: unsigned, the code a claim.
            return "\(error.claimedCode?.rawValue ?? ""): \(error.detail)"
        } catch {
            return "\(error)"
        }
    }

    @Test(
        "an attested Keystore key enrolls with the server's challenge and signs requests; another challenge, a used one, another app or another key is refused; it neither rotates nor gets a secret"
    )
    func enrollAndSign() async throws {
        let authority = try TestAndroidAuthority(now: Date(timeIntervalSince1970: TimeInterval(SigningSetup.start)))
        try await Self.serve(authority) { server, registration, verifier, transport in
            let device = P256.Signing.PrivateKey()
            let key = try SigningKey(device)
            let challenge = try await registration.attestationChallenge().challenge
            let chain = try authority.chain(
                for: device.publicKey, .init(challenge: Array(challenge.utf8)))

            // A chain made for a challenge this server never issued.
            let forged = try authority.chain(
                for: device.publicKey, .init(challenge: Array("not-issued-by-this-server".utf8)))
            let notIssued = await Self.refusal {
                _ = try await registration.enroll(androidKey: key, chain: forged, server: verifier)
            }
            #expect(notIssued.hasPrefix("enrollment-refused"), "\(notIssued)")
            // A chain of another app, for an issued challenge.
            let otherChallenge = try await registration.attestationChallenge().challenge
            var otherApp = TestAndroidAuthority.Fields(challenge: Array(otherChallenge.utf8))
            otherApp.packages = [("com.example.other", 1)]
            let refusedApp = await Self.refusal {
                _ = try await registration.enroll(
                    androidKey: key, chain: try authority.chain(for: device.publicKey, otherApp), server: verifier)
            }
            #expect(
                refusedApp.hasPrefix("enrollment-refused") && refusedApp.contains("app-not-allowed"), "\(refusedApp)")
            // The chain signed for by another key: the registration's own signature does not verify.
            let stranger = try SigningKey.generate(.ecdsaP256SHA256)
            let byStranger = await Self.refusal {
                _ = try await registration.enroll(androidKey: stranger, chain: chain, server: verifier)
            }
            #expect(byStranger != "accepted")

            // A proxy adds its own credential, which the signed body does not name, to tie the device to
            // its account: refused, and the challenge is not spent.
            let proxied = DeviceRegistration(
                transport: SealedBodyTests.RequestTampering(inner: transport) { request, _ in
                    if request.path == Registration.Path.devices {
                        request.headerFields[.authorization] = "Bearer \(TestServer.token)"
                    }
                }, authority: "localhost:\(server.port)", clock: registration.clock)
            let hijacked = await Self.refusal {
                _ = try await proxied.enroll(androidKey: key, chain: chain, server: verifier)
            }
            #expect(hijacked.hasPrefix("enrollment-refused"), "\(hijacked)")

            let registered = try await registration.enroll(androidKey: key, chain: chain, server: verifier)
            #expect(registered.keyId == (try key.verificationKey).derivedKeyID)
            #expect(registered.alg == "ecdsa-p256-sha256")
            // The challenge is spent: the same chain again is refused.
            let again = await Self.refusal {
                _ = try await registration.enroll(androidKey: key, chain: chain, server: verifier)
            }
            #expect(again.hasPrefix("enrollment-refused"), "\(again)")

            for profile in SignatureProfile.allCases {
                let session = SigilSession(
                    transport: transport,
                    signer: RequestSigner(
                        key: key, keyID: registered.keyId, profile: profile, clock: registration.clock),
                    clock: registration.clock, responses: verifier, requireSignedResponses: true)
                let echo = try await session.send(SessionScaffold.echo(server), body: Array(#"{"a":1}"#.utf8))
                #expect(echo.head.status == .ok, "\(profile)")
            }

            // The device is recorded with its attestation.
            let directory = server.prepared.directory
            let record = try #require(try await directory.devices(DeviceQuery(keyID: registered.keyId)).first)
            #expect(
                record.attestation == "android-key,TrustedEnvironment,patch=202610,boot=Verified,app=com.example.app")
            #expect(try await directory.auditTrail(AuditQuery()).contains { $0.action == .attested })

            // It keeps its attested key: no rotation to an unattested one, no HMAC secret.
            let rotation = await Self.refusal {
                _ = try await registration.rotate(
                    from: key, keyID: registered.keyId, to: try SigningKey.generate(.ed25519), server: verifier)
            }
            #expect(rotation.hasPrefix("forbidden"), "\(rotation)")
            let secret = await Self.refusal {
                _ = try await registration.fetchSecret(key: key, keyID: registered.keyId, server: verifier)
            }
            #expect(secret.hasPrefix("forbidden"), "\(secret)")
        }
    }

    @Test("a server without --android-app refuses the chain; one with a bad flag does not start")
    func off() async throws {
        let authority = try TestAndroidAuthority(now: Date(timeIntervalSince1970: TimeInterval(SigningSetup.start)))
        try await TestServer.with(dataDirectory: TestServer.temporaryDirectory()) { server in
            let tls = ClientTLS.configuration(anchors: try server.certificates)
            try await HTTPClient(eventLoopGroupProvider: .singleton, configuration: .init(tlsConfiguration: tls))
                .using { client in
                    let clock = ServerClock(local: server.clock)
                    let registration = DeviceRegistration(
                        transport: AsyncHTTPClientTransport(client: client), authority: "localhost:\(server.port)",
                        clock: clock)
                    let verifier = try await registration.discover().responseVerifier(clock: clock)
                    let device = P256.Signing.PrivateKey()
                    let chain = try authority.chain(for: device.publicKey, .init(challenge: Array("x".utf8)))
                    let refused = await Self.refusal {
                        _ = try await registration.enroll(
                            androidKey: try SigningKey(device), chain: chain, server: verifier)
                    }
                    #expect(refused.hasPrefix("enrollment-refused"), "\(refused)")
                }
        }
        for arguments in [
            ["--android-app", "com.example.app"], ["--android-app", "com.example.app:12"],
            ["--android-status", "/nonexistent"], ["--android-min-patch-level", "202601"],
            [
                "--android-app", "com.example.app:" + String(repeating: "ab", count: 32), "--android-security-level",
                "hardware",
            ],
        ] {
            // Each is refused while the options are read, before anything listens.
            let result = try await SigilCommand.run(
                ["serve", "--port", "0", "--data-dir", TestServer.temporaryDirectory()] + arguments)
            #expect(result.status != 0 && result.error.contains("android"), "\(arguments): \(result.error)")
        }
    }
}
