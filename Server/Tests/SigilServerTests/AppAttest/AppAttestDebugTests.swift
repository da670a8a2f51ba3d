import AsyncHTTPClient
import Crypto
import Foundation
import SigilAppAttest
import SigilClient
@_spi(Sigil) import SigilCore
import SigilFiles
import SigilHTTPClient
import SigilServer
import SigilStandalone
import SigilTLS
import Testing

@testable import SigilTestSupport

/// App Attest's debug provider (the simulator's) and the server's debug token.
@Suite("App Attest debug provider")
struct AppAttestDebugTests {
    static let token = "Xq7fK2mPzR9vT4wLbN8cJ3hYdG6sAeU1oI5nQtVx"
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
        // A token under 128 bits by the stated rule is refused at start: short, made up, or 32 hex
        // digits (at most 128, nearly always fewer); 64 hex digits and keygen's 44 base64 hold more.
        let hex = { (count: Int) in (0..<count).map { _ in String(Int.random(in: 0..<16), radix: 16) }.joined() }
        for weak in [
            "short", String(repeating: "a", count: 64), String(repeating: "12345678", count: 4), hex(32),
            // Patterns repeated hold more bits by frequency the longer they run: refused for repeating.
            String(repeating: "0123456789abcdef", count: 2), String(repeating: "ab", count: 64),
            String(repeating: "12345678", count: 6),
        ] {
            #expect(throws: SigilInputError.self) { _ = try AppAttestDebugVerifier(verifier: real, tokens: [weak]) }
        }
        #expect(AppAttestDebugVerifier.estimatedBits(String(repeating: "12345678", count: 4)) == 96)
        #expect(AppAttestDebugVerifier.estimatedBits(String(repeating: "a", count: 64)) == 0)
        let keygen = Data(SymmetricKey(size: .bits256).withUnsafeBytes { Array($0) }).base64EncodedString()
        for strong in [hex(64), keygen, Self.token] {
            #expect(throws: Never.self) { _ = try AppAttestDebugVerifier(verifier: real, tokens: [strong]) }
        }
    }

    @Test(
        "sigil serve with --app-attest-debug-token enrolls the debug provider's key, which then signs; without it, refused"
    )
    func endToEnd() async throws {
        let authority = try TestAppAttestAuthority(now: Date())
        let tokenFile = TestServer.temporaryDirectory() + "-debug-token"
        try SecureFile.write(Self.token, to: tokenFile)
        for accepting in [true, false] {
            try await DeviceScaffold.withServer(configure: { options in
                options.appAttest.appIDs = [Self.appID]
                options.appAttest.root = authority.root
                if accepting { options.appAttest.debugTokenFiles = [tokenFile] }
            }) { server, transport, _ in
                // A store that keeps any key, as the Keychain store keeps an App Attest key's ID.
                let device = try SigilDevice(store: MemoryDeviceStore(), clock: server.clock, transport: transport)
                let keys = TestServer.temporaryDirectory()
                let provider = AppAttestDebugProvider(token: Self.token, appID: Self.appID, directory: keys)
                let signer = try await AppAttestSigner.generate(provider: provider)
                if accepting {
                    let identity = try await device.enroll(appAttest: signer, server: DeviceScaffold.url(server))
                    #expect(identity.algorithm == "apple-appattest")
                    #expect(try await DeviceScaffold.echo(device, server).head.status == .ok)
                    #expect(try await DeviceScaffold.echo(device, server).head.status == .ok)

                    // App Attest gives the key up (as after a restore to another device): the device
                    // says so, and a new key is attested and enrolled with the same server and pins.
                    // The pins it holds now: discovery's, adopted from its signed copy after an answer.
                    let held = try #require(await device.identity).pins
                    try FileManager.default.removeItem(atPath: keys)
                    await #expect(throws: AppAttestFailure.keyInvalidated) {
                        _ = try await DeviceScaffold.echo(device, server)
                    }
                    let replaced = try await device.replaceAppAttestKey(provider: provider, token: nil)
                    #expect(replaced.keyID != identity.keyID)
                    #expect(replaced.pins == held)
                    #expect(try await DeviceScaffold.echo(device, server).head.status == .ok)
                } else {
                    // Refused before the request's own signature is checked: unsigned, so only a claim.
                    let refused = await #expect(throws: SigilClientError.self) {
                        try await device.enroll(appAttest: signer, server: DeviceScaffold.url(server))
                    }
                    #expect(refused?.kind == .untrustedRefusal && refused?.claimedCode == .enrollmentRefused)
                }
            }
        }
    }

    @Test("removing the debug token cuts off every device it let in; the enrollment is recorded and audited as debug")
    func debugDevicesCutOff() async throws {
        let authority = try TestAppAttestAuthority(now: Date())
        let dataDirectory = TestServer.temporaryDirectory()
        let tokenFile = dataDirectory + "-debug-token"
        try SecureFile.write(Self.token, to: tokenFile)
        let store = MemoryDeviceStore()
        func configure(debug: Bool) -> (inout SigilStandalone.Options) -> Void {
            { options in
                options.appAttest.appIDs = [Self.appID]
                options.appAttest.root = authority.root
                if debug { options.appAttest.debugTokenFiles = [tokenFile] }
            }
        }
        let clock = ManualUnixClock(SigningSetup.start)  // one clock across the restart
        /// A device on `store`, made by `device()`, talking to a server started on `dataDirectory`.
        func withServer(debug: Bool, _ body: (TestServer, () throws -> SigilDevice) async throws -> Void)
            async throws
        {
            try await TestServer.with(dataDirectory: dataDirectory, clock: clock, configure: configure(debug: debug)) {
                server in
                let tls = ClientTLS.configuration(anchors: try server.certificates)
                try await HTTPClient(eventLoopGroupProvider: .singleton, configuration: .init(tlsConfiguration: tls))
                    .using { client in
                        try await body(server) {
                            try SigilDevice(store: store, clock: server.clock) { _, _ in
                                AsyncHTTPClientTransport(client: client)
                            }
                        }
                    }
            }
        }
        try await withServer(debug: true) { server, device in
            let device = try device()
            let signer = try await AppAttestSigner.generate(provider: Self.provider())
            let keyID = try await device.enroll(appAttest: signer, server: DeviceScaffold.url(server)).keyID
            #expect(try await DeviceScaffold.echo(device, server).head.status == .ok)
            let record = try await server.prepared.directory.key(for: keyID)
            #expect(record?.deviceAttestation == RegisteredKey.appAttestDebug)
        }
        // The same data directory, restarted without the flag: the debug device is refused.
        try await withServer(debug: false) { server, device in
            // The restarted server listens on a port of its own (none reused): the identity follows it
            // there, as it would a server behind the same name.
            var moved = try #require(try store.identity())
            moved.server = DeviceScaffold.url(server)
            try store.saveIdentity(moved)
            let device = try device()
            await #expect(throws: SigilError(.revokedKey, "")) { _ = try await DeviceScaffold.echo(device, server) }
        }
        // A token file others may read is refused at start.
        let open = dataDirectory + "-open-token"
        try SecureFile.write(Self.token, to: open, mode: 0o644)
        await #expect(throws: (any Error).self) {
            try await TestServer.with(configure: { options in
                options.appAttest.appIDs = [Self.appID]
                options.appAttest.debugTokenFiles = [open]
            }) { _ in }
        }
    }
}
