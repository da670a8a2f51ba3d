import AsyncHTTPClient
import Foundation
import HTTPTypes
@_spi(Sigil) import SigilCore
import SigilServer
import SigilStandalone
import Testing

@testable import SigilClient
@testable import SigilTestSupport

/// What an attack review of signed key refusals, App Attest with a key and pins that move found, each
/// kept as a test.
@Suite("Attack review: signed key refusals, assertions, pins that move")
struct KeyRefusalAttackReviewTests {
    @Test(
        "a device's request dressed as a registration of another key draws no signed unknown-key: the proof's directory is not the server's"
    )
    func registrationDressing() async throws {
        try await TestServer.with { server in
            try await server.client().using { client in
                let device = try await DeviceSteps.registeredDevice(on: server, client: client)
                for profile in SignatureProfile.allCases {
                    var echo = TestRequest(.post, "/v1/echo", server: server, json: "{}")
                    try echo.sign(with: device.signer(profile, clock: server.clock))
                    // The proxy holds the device's request and sends its signature on a registration of
                    // its own key, with its own token.
                    let stranger = try TestDevice(.ed25519)
                    var dressed = TestRequest(.post, "/v1/devices", server: server, body: try stranger.registration)
                    dressed.head.headerFields = echo.head.headerFields
                    dressed.head.headerFields[.contentType] = "application/json"
                    dressed.head.headerFields[.authorization] = "Bearer \(TestServer.token)"
                    let answer = try await dressed.send(client)
                    #expect(answer.status == 401, "\(profile) \(answer.text)")
                    #expect(answer.headers[SigilV1.signatureField] == nil, "\(profile)")
                    #expect(answer.headers[MessageSignatures.signatureField] == nil, "\(profile)")
                }
            }
        }
    }

    @Test("the tag learnt is the signed document's own; a document that does not verify is not read again for its tag")
    func tagOfTheDocument() throws {
        let key = try SigningKey.generate(.ed25519)
        let keyID = try #require(try key.verificationKey.derivedKeyID)
        let trusted = TrustedResponseKeys([keyID: try key.verificationKey])
        func document(tag: String, signedBy signer: SigningKey) throws -> ([UInt8], String) {
            var discovery = Registration.Discovery(
                responseKeys: [
                    try #require(
                        Registration.Discovery.Key(keyID: keyID, key: try key.verificationKey, state: "current"))
                ],
                profiles: ["sigil-v1"], algorithms: ["ed25519"], maxSkew: 300, serverTime: 1_000, pins: ["sha256/a"],
                backupPins: ["sha256/b"])
            discovery.keysTag = tag
            let body = try Registration.json(discovery)
            let signerID = try #require(try signer.verificationKey.derivedKeyID)
            return (body, try Registration.DiscoverySignature.value(body: body, signers: [(signerID, signer)]))
        }
        // A replica a moment behind answers discovery with the keys' older tag: kept as that one, so the
        // newer tag of the next answer has the client read again.
        let (stale, staleSignature) = try document(tag: "a", signedBy: key)
        trusted.learn(discovery: stale, signature: staleSignature, now: 1_000, tag: "b")
        #expect(trusted.keysTag == "a")
        #expect(trusted.needsRead(tag: "b"))
        // Another key's document: refused, and its tag not read again.
        let (forged, forgedSignature) = try document(tag: "c", signedBy: try SigningKey.generate(.ed25519))
        trusted.learn(discovery: forged, signature: forgedSignature, now: 1_000, tag: "c")
        trusted.refusedRead(tag: "c")
        #expect(!trusted.needsRead(tag: "c"))
        #expect(trusted.pins == ["sha256/a", "sha256/b"])
    }

    @Test("pins learnt from signed discovery add to the app's own, which stay")
    func appPinsStay() throws {
        let key = try SigningKey.generate(.ed25519)
        let keyID = try #require(try key.verificationKey.derivedKeyID)
        var identity = DeviceIdentity(
            server: "https://api.example", keyID: "k", deviceID: "d", algorithm: "ed25519",
            pins: ["sha256/cdn", "sha256/cdn-backup"], responseKeyID: keyID,
            responseKey: try #require(KeyFile.publicKeyFile(for: try key.verificationKey)))
        identity.appPins = identity.pins
        let trusted = TrustedResponseKeys([keyID: try key.verificationKey])
        var discovery = Registration.Discovery(
            responseKeys: [
                try #require(Registration.Discovery.Key(keyID: keyID, key: try key.verificationKey, state: "current"))
            ],
            profiles: ["sigil-v1"], algorithms: ["ed25519"], maxSkew: 300, serverTime: 1_000, pins: ["sha256/origin"],
            backupPins: ["sha256/next"])
        discovery.keysTag = "t"
        let body = try Registration.json(discovery)
        trusted.learn(
            discovery: body, signature: try Registration.DiscoverySignature.value(body: body, signers: [(keyID, key)]),
            now: 1_000)
        let following = try #require(identity.following(trusted))
        #expect(following.pins == ["sha256/cdn", "sha256/cdn-backup", "sha256/origin", "sha256/next"])
    }

    @Test("--require-assertion covers a path whose raw form falls under the prefix though its canonical form does not")
    func rawPathRequiresAssertion() {
        let paths = PathPrefixes(["/v1/pay"])
        #expect(paths.anyReading(of: "/v1/pay/..") == "/v1/pay")
        #expect(paths.anyReading(of: "/v1/pay/%2e%2e") == "/v1/pay")
        #expect(paths.anyReading(of: "/v1/PAY/x") == "/v1/pay")
        #expect(paths.anyReading(of: "/v1/payments") == nil)
    }

    @Test("a debug-token device's key proves nothing through DPoP or a certificate once the token is gone")
    func debugKeysEverywhere() throws {
        var key = RegisteredKey(keyID: "k", key: try SigningKey.generate(.ed25519).verificationKey, deviceID: "d")
        key.deviceAttestation = RegisteredKey.appAttestDebug
        #expect(key.isUsable(at: 1, acceptingDebugKeys: true))
        #expect(!key.isUsable(at: 1, acceptingDebugKeys: false))
        key.deviceAttestation = RegisteredKey.appAttest
        #expect(key.isUsable(at: 1, acceptingDebugKeys: false))
    }
}
