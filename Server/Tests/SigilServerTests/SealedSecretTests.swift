import AsyncHTTPClient
import Crypto
import Foundation
import HTTPTypes
import SQLiteNIO
import SigilClient
@_spi(Sigil) import SigilCore
import SigilHTTPClient
import SigilPostgres
import SigilSQLite
import SigilServer
import SigilStandalone
import SigilTLS
import Testing

@testable import SigilTestSupport

/// Secrets sealed to the device's own X-Wing key (PROTOCOL.md section 6.4): registered with the
/// device's signing key, kept with the device in every registry, used for every secret it is issued,
/// in the answer or by push.
@Suite("Sealed secrets")
struct SealedSecretTests {
    @Test(
        "over TLS: the secret comes sealed to the device's key, opens with it only, and signs; rotation moves or keeps the key"
    )
    func sealedOverTLS() async throws {
        let serverClock = ManualUnixClock(SystemUnixClock().now())
        try await TestServer.with(dataDirectory: TestServer.temporaryDirectory(), clock: serverClock) { server in
            let tls = ClientTLS.configuration(anchors: try server.certificates)
            try await HTTPClient(eventLoopGroupProvider: .singleton, configuration: .init(tlsConfiguration: tls))
                .using { client in
                    let clock = ServerClock(local: serverClock)
                    let transport = AsyncHTTPClientTransport(client: client)
                    let registration = DeviceRegistration(
                        transport: transport, authority: "localhost:\(server.port)", clock: clock)
                    let verifier = try await registration.discover().responseVerifier(clock: clock)
                    let device = try TestDevice(.ecdsaP256SHA256)
                    let sealing = try SealingPrivateKey.generate()
                    _ = try await registration.enroll(
                        device.key, token: TestServer.token, sealingKey: sealing.publicKey, server: verifier)

                    let issued = try await registration.fetchSecret(
                        key: device.key, keyID: device.keyID, server: verifier)
                    #expect(issued.secret == nil)
                    let sealed = try #require(issued.sealedSecret.flatMap(Base64.decode))
                    #expect(sealed.count == Sealing.encapsulatedKeyCount + 32 + 16)
                    let secret = try issued.secretBytes(openingWith: sealing)
                    #expect(secret.count == 32)
                    // Another X-Wing key, another key ID, or no key at all opens nothing.
                    #expect(throws: SigilError(.sealedBodyInvalid, "")) {
                        _ = try issued.secretBytes(openingWith: try SealingPrivateKey.generate())
                    }
                    #expect(throws: SigilError(.sealedBodyInvalid, "")) {
                        _ = try Sealing.openSecret(sealed, keyID: "hmac-0000000000000000", with: sealing)
                    }
                    #expect(throws: SigilInputError.self) { _ = try issued.secretBytes }

                    // The opened secret is the one the server holds: it signs a request that verifies.
                    let hmac = SigilSession(
                        transport: transport,
                        signer: RequestSigner(
                            key: try SigningKey(hmacSecret: secret), keyID: issued.keyId, clock: clock),
                        clock: clock, responses: verifier, requireSignedResponses: true)
                    #expect(
                        try await hmac.send(SessionScaffold.echo(server), body: Array("{}".utf8)).head.status == .ok)

                    // A rotation naming a new sealing key moves the device's secrets to it…
                    let next = try TestDevice(.ed25519)
                    let moved = try SealingPrivateKey.generate()
                    _ = try await registration.rotate(
                        from: device.key, keyID: device.keyID, to: next.key, sealingKey: moved.publicKey,
                        server: verifier)
                    let afterMove = try await registration.fetchSecret(
                        key: next.key, keyID: next.keyID, server: verifier)
                    #expect(try afterMove.secretBytes(openingWith: moved).count == 32)
                    #expect(throws: SigilError(.sealedBodyInvalid, "")) {
                        _ = try afterMove.secretBytes(openingWith: sealing)
                    }
                    // …and one naming none, or the same one, is refused: the sealing key rotates with the
                    // signing key, and a rotation never downgrades to secrets in the clear.
                    let third = try TestDevice(.ecdsaP256SHA256)
                    for same in [nil, moved.publicKey] {
                        let refused = await #expect(throws: SigilError.self) {
                            _ = try await registration.rotate(
                                from: next.key, keyID: next.keyID, to: third.key, sealingKey: same, server: verifier)
                        }
                        #expect(refused?.code == .invalidRegistration)
                    }
                    let afterRefusal = try await registration.fetchSecret(
                        key: next.key, keyID: next.keyID, server: verifier)
                    #expect(afterRefusal.secret == nil)
                    #expect(try afterRefusal.secretBytes(openingWith: moved).count == 32)
                    #expect(afterRefusal.issuedAt == serverClock.now())

                    // A device without a sealing key still gets its secret in the clear, which a
                    // device expecting a sealed one refuses.
                    let plain = try TestDevice(.ecdsaP256SHA256)
                    _ = try await registration.enroll(plain.key, token: TestServer.token, server: verifier)
                    let clear = try await registration.fetchSecret(key: plain.key, keyID: plain.keyID, server: verifier)
                    #expect(clear.sealedSecret == nil)
                    #expect(try clear.secretBytes.count == 32)
                    #expect(throws: SigilInputError.self) { _ = try clear.secretBytes(openingWith: sealing) }
                }
        }
    }

    @Test("a sealing key that is not X-Wing, not base64 or under another key's ID is invalid-registration")
    func badSealingKeys() async throws {
        try await TestServer.with(dataDirectory: TestServer.temporaryDirectory()) { server in
            try await server.client().using { client in
                let device = try TestDevice(.ecdsaP256SHA256)
                let good = Registration.Discovery.SealingKey(try SealingPrivateKey.generate().publicKey)
                let other = Registration.Discovery.SealingKey(try SealingPrivateKey.generate().publicKey)
                let bad: [(String, Registration.Discovery.SealingKey)] = [
                    ("another key's ID", .init(keyId: other.keyId, kem: good.kem, publicKey: good.publicKey)),
                    ("another KEM", .init(keyId: good.keyId, kem: "x25519", publicKey: good.publicKey)),
                    ("not base64", .init(keyId: good.keyId, kem: good.kem, publicKey: "%%%")),
                    ("short", .init(keyId: good.keyId, kem: good.kem, publicKey: Base64.encode([1, 2, 3]))),
                ]
                for (name, sealingKey) in bad {
                    let submission = Registration.KeySubmission(
                        alg: device.key.algorithm.rawValue, publicKey: try device.publicKeyPEM, sealingKey: sealingKey)
                    let response = try await RegistrationInputTests.registration(
                        device, server: server, body: try Registration.json(submission), signedBy: device
                    ).send(client, to: server)
                    #expect(response.status == 400, "\(name)")
                    #expect(response.code == "invalid-registration", "\(name)")
                }
                #expect(try await server.prepared.directory.keyIDs().isEmpty)
            }
        }
    }

    @Test(
        "every registry keeps the sealing key with the device: read with each key, replaced, never set on a revoked one",
        arguments: TestStores.Store.available)
    func registryKeepsSealingKey(_ store: TestStores.Store) async throws {
        try await TestStores.withRegistry(store) { registry, _, _ in
            let first = try SealingPrivateKey.generate().publicKey
            let second = try SealingPrivateKey.generate().publicKey
            let a = try TestStores.key("dev-s")
            let b = try TestStores.key("dev-s")
            try await registry.apply(DirectoryChange(added: [a, b], sealingKeys: [("dev-s", first)]))
            #expect(try await registry.key(for: a.keyID)?.sealingKey == first)
            #expect(try await registry.keys(ofDevice: "dev-s").map(\.sealingKey) == [first, first])

            try await registry.apply(DirectoryChange(sealingKeys: [("dev-s", second)], actingKeyID: a.keyID))
            #expect(try await registry.key(for: b.keyID)?.sealingKey == second)

            // A change made for the device's sealing key as it was read lands only if it still is.
            let secret = RegisteredKey(
                keyID: "hmac-sealed", key: try VerificationKey(hmacSecret: SymmetricKey(size: .bits256)),
                deviceID: "dev-s")
            await #expect(throws: SigilError(.forbidden, "")) {
                try await registry.apply(DirectoryChange(added: [secret], sealingKeyRead: ("dev-s", first)))
            }
            await #expect(throws: SigilError(.forbidden, "")) {
                try await registry.apply(DirectoryChange(added: [secret], sealingKeyRead: ("dev-s", nil)))
            }
            #expect(try await registry.key(for: "hmac-sealed") == nil)
            try await registry.apply(DirectoryChange(added: [secret], sealingKeyRead: ("dev-s", second)))
            #expect(try await registry.key(for: "hmac-sealed") != nil)

            // No device to set it on, or a revoked one: refused, nothing changed.
            let other = try TestStores.key("dev-t")
            try await registry.apply(DirectoryChange(added: [other]))
            #expect(try await registry.key(for: other.keyID)?.sealingKey == nil)
            await #expect(throws: SigilError(.invalidRegistration, "")) {
                try await registry.apply(DirectoryChange(sealingKeys: [("dev-none", first)]))
            }
            try await registry.apply(DirectoryChange(revokedDevices: ["dev-s"]))
            await #expect(throws: SigilError(.revokedKey, "")) {
                try await registry.apply(DirectoryChange(sealingKeys: [("dev-s", first)]))
            }
            let kept = try await registry.keys(ofDevice: "dev-s").map(\.sealingKey)
            #expect(kept.count == 3 && kept.allSatisfy { $0 == second })
        }
    }

    @Test("a SQLite file made by a development build of 0.9 is refused, saying so; the nonce store's tables are not")
    func sqliteDevelopmentFile() async throws {
        let path = TestServer.temporaryDirectory() + ".sqlite"
        let connection = try await SQLiteConnection.open(storage: .file(path: path))
        _ = try await connection.query(
            "CREATE TABLE sigil_keys (key_id TEXT PRIMARY KEY, device_id TEXT NOT NULL, alg TEXT NOT NULL)")
        try await connection.close()
        await #expect(throws: SigilError(.storeUnavailable, "")) {
            _ = try await Directory.sqlite(path: path, masterKey: SymmetricKey(size: .bits256))
        }
        do {
            _ = try await Directory.sqlite(path: path, masterKey: SymmetricKey(size: .bits256))
        } catch let error as SigilError {
            #expect(error.detail.contains("development build of 0.9"), "\(error)")
        }
        // A file where only the nonce store has been is made a directory as a new one is.
        let shared = TestServer.temporaryDirectory() + ".sqlite"
        let nonces = try await SQLiteNonceStore.open(path: shared)
        try await nonces.close()
        let directory = try await Directory.sqlite(path: shared, masterKey: SymmetricKey(size: .bits256))
        try await directory.apply(DirectoryChange(added: [try TestStores.key("dev-new")]))
        try await directory.close()
        let again = try await Directory.sqlite(path: shared, masterKey: SymmetricKey(size: .bits256))
        #expect(try await again.devices(DeviceQuery()).map(\.deviceID) == ["dev-new"])
        try await again.close()
    }

    @Test(
        "a PostgreSQL database at a development build's schema (1 to 11) or a newer one is refused, saying so",
        .enabled(if: ExternalServers.runPostgres), .externalServers)
    func postgresDevelopmentSchema() async throws {
        try await PostgresTestServer.with { server in
            let location = try PostgresStore.Location(url: server.url)
            let first = try await PostgresStore.open(location, timeout: .seconds(10))
            var version = 0
            for try await found in try await first.client.query("SELECT version FROM sigil_schema").decode(Int.self) {
                version = found
            }
            #expect(version == PostgresStore.schemaVersion && version > 11)
            first.close()
            // Set by an application's own pool: a store refuses to open on those versions.
            let postgres = PostgresClientSteps.client(of: server)
            let pool = Task { await postgres.run() }
            defer { pool.cancel() }
            for (stored, says) in [(1, "development build of 0.9"), (11, "development build of 0.9"), (99, "newer")] {
                try await postgres.query("UPDATE sigil_schema SET version = \(stored)")
                do {
                    let store = try await PostgresStore.open(location, timeout: .seconds(10))
                    store.close()
                    Issue.record("a database of schema \(stored) was opened")
                } catch let error as SigilError {
                    #expect(error.code == .storeUnavailable && error.detail.contains(says), "\(stored): \(error)")
                }
            }
        }
    }
}

/// Secrets delivered by push: issued on the server's initiative, sealed, signed with the response key.
@Suite("Pushed secrets")
struct PushedSecretTests {
    typealias NoEnrollment = EnrollmentScaffold.NoEnrollment

    /// A service over a memory registry holding one device, with or without a sealing key.
    static func service(sealing: SealingPublicKey?, clock: ManualUnixClock) async throws
        -> (RegistrationService, TestDevice, String, Directory)
    {
        let registry = Directory.inMemory(clock: clock)
        let device = try TestDevice(.ecdsaP256SHA256)
        try await registry.apply(
            DirectoryChange(
                added: [
                    RegisteredKey(
                        keyID: device.keyID, key: try device.key.verificationKey, deviceID: "dev-push",
                        createdAt: clock.now())
                ],
                sealingKeys: sealing.map { [("dev-push", $0)] } ?? []))
        let service = RegistrationService(
            directory: registry, nonces: MemoryNonceStore(), enrollment: NoEnrollment(), clock: clock)
        return (service, device, "dev-push", registry)
    }

    /// A device store enrolled with `device`, `sealing` and the server's response key.
    static func store(
        device: TestDevice, sealing: SealingPrivateKey, responseKey: SigningKey, deviceID: String = "dev-push"
    ) throws -> FileDeviceStore {
        let store = FileDeviceStore(directory: TestServer.temporaryDirectory())
        var identity = DeviceIdentity(
            server: "https://localhost", keyID: device.keyID, deviceID: deviceID, algorithm: "ecdsa-p256-sha256",
            pins: [], responseKeyID: try responseKey.verificationKey.derivedKeyID ?? "",
            responseKey: KeyFile.publicKeyFile(for: try responseKey.verificationKey) ?? "")
        identity.deviceSealingKeyID = sealing.keyID
        try store.saveSealingKey(sealing)
        try store.save(identity, key: device.key, secret: nil)
        return store
    }

    @Test(
        "a pushed secret fits APNs, opens on the device and replaces its secret; forged, older or replayed pushes do not"
    )
    func pushRoundTrip() async throws {
        let clock = ManualUnixClock(SigningSetup.start)
        let sealing = try SealingPrivateKey.generate()
        let (service, device, deviceID, registry) = try await Self.service(sealing: sealing.publicKey, clock: clock)
        let responseKey = try SigningKey.generate(.ecdsaP256SHA256)
        let signer = ResponseSigner(signer: responseKey, keyID: "server", clock: clock)
        let store = try Self.store(device: device, sealing: sealing, responseKey: responseKey)

        let issued = try await service.issueSealedSecret(toDevice: deviceID)
        #expect(issued.secret == nil)
        let payload = try signer.secretPush(issued, deviceID: deviceID).payload()
        #expect(payload.count <= Registration.SecretPush.apnsPayloadLimit)
        let json = try #require(try JSONSerialization.jsonObject(with: Data(payload)) as? [String: Any])
        #expect((json["aps"] as? [String: Any])?["content-available"] as? Int == 1)
        #expect(json["sigil-secret"] as? String == issued.sealedSecret)

        let identity = try DeviceEnrollment.receivePushedSecret(payload, store: store)
        #expect(identity.secretKeyID == issued.keyId)
        #expect(try store.secret() != nil)
        #expect(try issued.secretBytes(openingWith: sealing).count == 32)

        // The same push again, or an older one: refused, the secret kept.
        #expect(throws: SigilInputError.self) { _ = try DeviceEnrollment.receivePushedSecret(payload, store: store) }
        // Signed by another key (anyone can seal to the device's public key): refused.
        clock.advance(by: 10)
        let forged = try ResponseSigner(signer: try SigningKey.generate(.ecdsaP256SHA256), keyID: "x", clock: clock)
            .secretPush(try await service.issueSealedSecret(toDevice: deviceID), deviceID: deviceID).payload()
        #expect(throws: SigilError(.invalidSignature, "")) {
            _ = try DeviceEnrollment.receivePushedSecret(forged, store: store)
        }
        // A field changed after signing: refused.
        var altered = try Registration.SecretPush(payload: payload)
        altered.issuedAt += 100
        #expect(throws: SigilError(.invalidSignature, "")) {
            _ = try DeviceEnrollment.receivePushedSecret(try altered.payload(), store: store)
        }
        #expect(try store.identity()?.secretKeyID == issued.keyId)

        // A push for another device (signed alike, sealed to this device's key) is refused.
        clock.advance(by: 10)
        let elsewhere = try signer.secretPush(
            try await service.issueSealedSecret(toDevice: deviceID), deviceID: "dev-x")
        #expect(throws: SigilInputError.self) {
            _ = try DeviceEnrollment.receivePushedSecret(try elsewhere.payload(), store: store)
        }

        // A newer push is taken; then an older, different one (delayed, or replayed) is not.
        clock.advance(by: 10)
        let older = try signer.secretPush(try await service.issueSealedSecret(toDevice: deviceID), deviceID: deviceID)
        clock.advance(by: 10)
        let newer = try await service.issueSealedSecret(toDevice: deviceID)
        let taken = try DeviceEnrollment.receivePushedSecret(
            try signer.secretPush(newer, deviceID: deviceID).payload(), store: store)
        #expect(taken.secretKeyID == newer.keyId)
        #expect(throws: SigilInputError.self) {
            _ = try DeviceEnrollment.receivePushedSecret(try older.payload(), store: store)
        }
        #expect(try store.identity()?.secretKeyID == newer.keyId)

        // A store whose sealing key is not the one its identity registered takes no push.
        let stale = try Self.store(device: device, sealing: sealing, responseKey: responseKey)
        var staleIdentity = try #require(try stale.identity())
        staleIdentity.deviceSealingKeyID = nil
        try stale.save(staleIdentity, key: device.key, secret: nil)
        clock.advance(by: 10)
        let fresh = try signer.secretPush(try await service.issueSealedSecret(toDevice: deviceID), deviceID: deviceID)
        #expect(throws: SigilInputError.self) {
            _ = try DeviceEnrollment.receivePushedSecret(try fresh.payload(), store: stale)
        }

        // A revoked device is pushed nothing.
        try await registry.apply(DirectoryChange(revokedDevices: [deviceID]))
        await #expect(throws: SigilError(.revokedKey, "")) {
            _ = try await service.issueSealedSecret(toDevice: deviceID)
        }
    }

    @Test(
        "no push for a device without a sealing key, an unknown device, or a payload over 4 KB; bad payloads never crash"
    )
    func pushRefusals() async throws {
        let clock = ManualUnixClock(SigningSetup.start)
        let (service, _, deviceID, _) = try await Self.service(sealing: nil, clock: clock)
        await #expect(throws: SigilError(.forbidden, "")) {
            _ = try await service.issueSealedSecret(toDevice: deviceID)
        }
        await #expect(throws: SigilError(.unknownKey, "")) {
            _ = try await service.issueSealedSecret(toDevice: "dev-x")
        }

        let sealing = try SealingPrivateKey.generate()
        let (sealed, _, _, _) = try await Self.service(sealing: sealing.publicKey, clock: clock)
        let issued = try await sealed.issueSealedSecret(toDevice: deviceID)
        // An ML-DSA-65 signature (3,309 bytes) does not fit beside the sealed secret.
        let large = ResponseSigner(signer: try SigningKey.generate(.mlDSA65), keyID: "pq", clock: clock)
        #expect(throws: SigilInputError.self) { _ = try large.secretPush(issued, deviceID: deviceID) }
        let clear = Registration.IssuedSecret(
            keyId: "hmac-1", alg: "hmac-sha256", secret: Base64.encode([UInt8](repeating: 1, count: 32)),
            previousKeysValidUntil: nil)
        let signer = ResponseSigner(signer: try SigningKey.generate(.ed25519), keyID: "s", clock: clock)
        #expect(throws: SigilInputError.self) { _ = try signer.secretPush(clear, deviceID: deviceID) }

        for payload in ["", "{}", #"{"aps":{}}"#, "[1,2]", String(repeating: " ", count: 5000)] {
            #expect(throws: SigilInputError.self) { _ = try Registration.SecretPush(payload: Array(payload.utf8)) }
        }
    }
}

extension PushedSecretTests {
    @Test("sigil push-secret: an APNs payload for a device of the data directory, which the device takes")
    func pushSecretCommand() async throws {
        // A data directory as a server leaves it after its first start: its keys in its store.
        let (dataPath, registry) = try await ServerProcess.startedOnce(in: try SigilCommand.temporaryDirectory())
        let responseKey = try DataDirectory(path: dataPath).responseKey()
        let device = try TestDevice(.ecdsaP256SHA256)
        let sealing = try SealingPrivateKey.generate()
        try await registry.apply(
            DirectoryChange(
                added: [
                    RegisteredKey(keyID: device.keyID, key: try device.key.verificationKey, deviceID: "dev-cli")
                ],
                sealingKeys: [("dev-cli", sealing.publicKey)]))
        let store = try Self.store(device: device, sealing: sealing, responseKey: responseKey, deviceID: "dev-cli")
        defer { Task { try? await registry.close() } }

        let result = try await SigilCommand.run(["push-secret", "--data-dir", dataPath, "--device", "dev-cli"])
        #expect(result.status == 0, "\(result.error)")
        let payload = Array(result.output.dropLast())
        let identity = try DeviceEnrollment.receivePushedSecret(payload, store: store)
        let secretKeyID = try #require(identity.secretKeyID)
        // The registry holds the secret the device opened.
        let held = try #require(try await registry.key(for: secretKeyID))
        let kept = try String(contentsOfFile: store.directory + "/secret", encoding: .utf8)
        #expect(held.key.hmacSecret?.withUnsafeBytes { Base64.encode(Array($0)) + "\n" } == kept)
        try await registry.close()

        let unknown = try await SigilCommand.run(["push-secret", "--data-dir", dataPath, "--device", "dev-none"])
        #expect(unknown.status == 2)
        #expect(unknown.error.contains("unknown-key"))
    }
}

extension PushedSecretTests {
    @Test(
        "a device's rights come from the kind of evidence that enrolled it: one recorded by an attestation no kind here knows gets no secret (fail closed), as an Android one does; a plain one does"
    )
    func rightsByKind() async throws {
        let clock = ManualUnixClock(SigningSetup.start)
        let registry = Directory.inMemory(clock: clock)
        let sealing = try SealingPrivateKey.generate()
        for (deviceID, attestation) in [
            ("dev-plain", nil), ("dev-android", "android-key,TrustedEnvironment"), ("dev-new", "play-integrity,strong"),
        ] as [(String, String?)] {
            let device = try TestDevice(.ecdsaP256SHA256)
            try await registry.apply(
                DirectoryChange(
                    added: [
                        RegisteredKey(
                            keyID: device.keyID, key: try device.key.verificationKey, deviceID: deviceID,
                            createdAt: clock.now(), deviceAttestation: attestation)
                    ],
                    sealingKeys: [(deviceID, sealing.publicKey)]))
        }
        let service = RegistrationService(
            directory: registry, nonces: MemoryNonceStore(), enrollment: NoEnrollment(), clock: clock)
        #expect(try await service.issueSealedSecret(toDevice: "dev-plain").keyId.hasPrefix("hmac-"))
        for (deviceID, kind) in [("dev-android", "Android Key Attestation"), ("dev-new", "does not know")] {
            do {
                _ = try await service.issueSealedSecret(toDevice: deviceID)
                Issue.record("\(deviceID) got a secret")
            } catch let error as SigilError {
                #expect(error.code == .forbidden && error.detail.contains(kind), "\(error.detail)")
            }
        }
    }
}
