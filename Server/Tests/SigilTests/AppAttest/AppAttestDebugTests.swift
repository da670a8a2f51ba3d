import Crypto
import Foundation
import SigilAppAttest
import SigilClient
@_spi(Sigil) import SigilCore
import SigilServer
import SigilStandalone
import Testing

/// App Attest's debug provider (the simulator's) and the server's debug token.
@Suite("App Attest debug provider")
struct AppAttestDebugTests {
    static let token = "debug-token-0123456789abcdef0123456789"
    static let appID = TestAppAttestAuthority.appID

    static func provider(token: String = token) -> AppAttestDebugProvider {
        AppAttestDebugProvider(token: token, appID: appID, directory: TestServer.temporaryDirectory())
    }

    @Test("a debug attestation made with the server's token is accepted; another token, challenge or key is refused")
    func verifier() async throws {
        let authority = try TestAppAttestAuthority(now: Date())
        let real = AppAttestVerifier(
            appIDs: [Self.appID], environments: [.development, .production], root: authority.root)
        let debug = try AppAttestDebugVerifier(verifier: real, tokens: [Self.token])
        let provider = Self.provider()
        let keyID = try await provider.generateKey()
        let keyIDBytes = try #require(Base64.decode(keyID))
        let challenge = Array(SHA256.hash(data: Array("challenge".utf8)))
        let attestation = Array(try await provider.attestKey(keyID, clientDataHash: Data(challenge)))

        let (key, receipt) = try await debug.attestedKey(attestation, keyID: keyIDBytes, clientDataHash: challenge)
        #expect(key.algorithm == .appleAppAttest)
        #expect(receipt == nil)
        // Its assertions verify with that key, for the App ID, their counter growing.
        let first = try #require(
            AppAttestAssertion(Array(try await provider.generateAssertion(keyID, clientDataHash: Data(challenge)))))
        let second = try #require(
            AppAttestAssertion(Array(try await provider.generateAssertion(keyID, clientDataHash: Data(challenge)))))
        #expect(second.counter == first.counter + 1)
        let attestedKey = try #require(key.rawPublicKey)
        let publicKey = try P256.Signing.PublicKey(rawRepresentation: attestedKey)
        #expect(first.isValid(clientDataHash: challenge, key: publicKey))
        #expect(first.rpIDHash == Array(SHA256.hash(data: Array(Self.appID.utf8))))

        func refused(
            _ attestation: [UInt8], keyID: [UInt8] = keyIDBytes, hash: [UInt8] = challenge,
            by verifier: any DeviceAttestationVerifier = debug
        ) async {
            await #expect(throws: SigilError(.enrollmentRefused, "")) {
                _ = try await verifier.attestedKey(attestation, keyID: keyID, clientDataHash: hash)
            }
        }
        // Without a debug token, the server's App Attest verifier refuses it: it is not Apple's.
        await refused(attestation, by: real)
        // Another token, another challenge, another key ID.
        let stranger = Self.provider(token: "another-token-0123456789abcdef012345")
        let strangerKey = try await stranger.generateKey()
        await refused(
            Array(try await stranger.attestKey(strangerKey, clientDataHash: Data(challenge))),
            keyID: try #require(Base64.decode(strangerKey)))
        await refused(attestation, hash: Array(SHA256.hash(data: Array("another".utf8))))
        await refused(attestation, keyID: [UInt8](repeating: 7, count: 32))
        // Malformed: not JSON, extra members, oversized.
        await refused(Array("{".utf8))
        await refused(Array(#"{"fmt":"sigil-debug-v1","publicKey":"","mac":"","x":1}"#.utf8))
        await refused(Array("{".utf8) + [UInt8](repeating: 0x20, count: 5000))
        // A short token is refused at start.
        #expect(throws: SigilInputError.self) { _ = try AppAttestDebugVerifier(verifier: real, tokens: ["short"]) }
    }

    @Test(
        "sigil serve with --app-attest-debug-token enrolls the debug provider's key, which then signs; without it, refused"
    )
    func endToEnd() async throws {
        let authority = try TestAppAttestAuthority(now: Date())
        let tokenFile = TestServer.temporaryDirectory() + "-debug-token"
        try Self.token.write(toFile: tokenFile, atomically: true, encoding: .utf8)
        for accepting in [true, false] {
            try await SigilDeviceTests.withServer(configure: { options in
                options.appAttestAppIDs = [Self.appID]
                options.appAttestRoot = authority.root
                if accepting { options.appAttestDebugTokenFiles = [tokenFile] }
            }) { server, transport, _ in
                // A store that keeps any key, as the Keychain store keeps an App Attest key's ID.
                let device = try SigilDevice(store: MemoryDeviceStore(), clock: server.clock, transport: transport)
                let signer = try await AppAttestSigner.generate(provider: Self.provider())
                if accepting {
                    let identity = try await device.enroll(appAttest: signer, server: SigilDeviceTests.url(server))
                    #expect(identity.algorithm == "apple-appattest")
                    #expect(try await SigilDeviceTests.echo(device, server).head.status == .ok)
                    #expect(try await SigilDeviceTests.echo(device, server).head.status == .ok)
                } else {
                    await #expect(throws: SigilError(.enrollmentRefused, "")) {
                        try await device.enroll(appAttest: signer, server: SigilDeviceTests.url(server))
                    }
                }
            }
        }
    }
}
