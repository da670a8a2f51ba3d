import AsyncHTTPClient
import Crypto
import Foundation
import HTTPTypes
import NIOCore
import NIOHTTP1
import NIOSSL
import SigilClient
@_spi(Sigil) import SigilCore
import SigilServer
import SigilStandalone
import Testing
import X509

@testable import SigilTestSupport

/// What an attacker tried against operators' tools and rotating server keys (issue 22's review); each
/// test is a hole that was found, and stays closed.
@Suite("Operators and server keys under attack")
struct AttackReviewTests {
    /// Finding 1. A device's HMAC secret is fetched with its key pair. A rotation retires the secret so it
    /// "does not outlive" the key that fetched it (RevocationTests.rotatedKeyManagesNothing); an
    /// operator's `revoke --key` of that key pair leaves the secret active, and the device (or whoever
    /// stole the key pair and fetched a secret with it) keeps signing.
    @Test("an operator revoking a device's key pair also ends the HMAC secret fetched with it")
    func revokedKeyEndsItsSecret() async throws {
        try await TestServer.with { server in
            try await server.client().using { client in
                let device = try await DeviceSteps.registeredDevice(on: server, client: client)
                let secret = try await DeviceSteps.issueSecret(for: device, server: server, client: client)
                let admin = Administration(directory: server.prepared.directory, serverKeys: nil, clock: server.clock)
                let after = try await admin.revoke(.key(device.keyID), by: "ops", reason: "key pair stolen")
                // Its secret goes with it, so no key of the device may sign: the device reads revoked.
                #expect(after.first?.state == .revoked)

                let (byKey, _, _) = try await DeviceSteps.echo(
                    "{}", signer: device.signer(clock: server.clock), server: server, client: client)
                #expect(byKey.code == "revoked-key")
                let (bySecret, _, _) = try await DeviceSteps.echo(
                    "{}", signer: secret.signer(clock: server.clock), server: server, client: client)
                #expect(
                    bySecret.code == "revoked-key",
                    "the secret fetched with the revoked key still signs: \(bySecret.status)")
            }
        }
    }

    /// Finding 2. `sigil ca init` / `sigil ca issue` make one CA, the one `POST /v1/certificates` issues
    /// device certificates from. Naming it as `--admin-client-ca` (the only CA the tool makes, and the
    /// profile the admin test itself uses) turns every enrolled device into an operator.
    @Test("a device certificate from the public client CA is not an operator credential on the admin port")
    func deviceCertificateIsNoOperator() async throws {
        let dataDirectory = TestServer.temporaryDirectory()
        let caPath = try DataDirectory(path: dataDirectory).createCertificateAuthority()
        let holder = TLSScaffold.CSRDevice()
        let device = try holder.device
        let started: Bool = await {
            do {
                return try await TestServer.with(
                    dataDirectory: dataDirectory,
                    configure: {
                        $0.admin.port = 0
                        $0.admin.clientCAFile = caPath
                    }
                ) { server in
                    let port = try #require(await server.prepared.adminPort?.value())
                    // Any enrollee: register, trade a CSR for a device certificate.
                    let certificatePEM: String = try await server.client().using { client in
                        #expect(try await DeviceSteps.register(device, on: server, client: client).status == 201)
                        let body = try JSONSerialization.data(withJSONObject: ["csr": try holder.csrPEM])
                        var request = TestRequest(
                            .post, "/v1/certificates", server: server, json: String(decoding: body, as: UTF8.self))
                        try request.sign(with: device.signer(clock: server.clock))
                        let response = try await request.send(client, to: server)
                        #expect(response.status == 201, "\(response.text)")
                        return try #require(response.json["certificate"] as? String)
                    }
                    try await server.client { tls in
                        tls.certificateChain = [
                            .certificate(try NIOSSLCertificate(bytes: Array(certificatePEM.utf8), format: .pem))
                        ]
                        tls.privateKey = .privateKey(
                            try NIOSSLPrivateKey(bytes: Array(holder.privateKey.pemRepresentation.utf8), format: .pem))
                    }.using { client in
                        let listed = try await AdminScaffold.call(
                            .GET, "/admin/v1/devices", port: port, token: nil, client: client)
                        #expect(listed.status == 401, "a device certificate read the admin API: \(listed.status)")
                        let revoked = try await AdminScaffold.call(
                            .POST, "/admin/v1/users/nobody/revoke", port: port, token: nil, client: client)
                        #expect(revoked.status == 401, "a device certificate reached a revoke route: \(revoked.status)")
                    }
                    return true
                }
            } catch {
                return false  // refusing to start with the device CA as the admin CA is a fix too
            }
        }()
        _ = started
    }

    /// Finding 3. A signed discovery has no date, no expiry and no sequence, and a client's trust only
    /// grows: a proxy that kept an old discovery (signed by the enrollment key K1, listing K2 as next)
    /// replays it to any session built from the stored identity (which still pins K1) long after K2
    /// was retired, and answers signed with a leaked K2 verify.
    @Test("a discovery replayed after its keys were retired teaches nothing")
    func replayedDiscovery() throws {
        let k1 = try SigningKey.generate(.ed25519)
        let k2 = try SigningKey.generate(.ed25519)
        let id1 = try #require(try k1.verificationKey.derivedKeyID)
        let id2 = try #require(try k2.verificationKey.derivedKeyID)
        func entry(_ key: SigningKey, _ id: String, _ state: String) throws -> Registration.Discovery.Key {
            Registration.Discovery.Key(
                keyId: id, alg: try key.verificationKey.algorithm.rawValue,
                publicKey: try #require(KeyFile.publicKeyFile(for: try key.verificationKey)), state: state)
        }
        // Day 0: the server publishes K2 as next, signed by K1 (what the proxy records).
        let old = Registration.Discovery(
            responseKeys: [try entry(k1, id1, "current"), try entry(k2, id2, "next")], profiles: ["sigil-v1"],
            algorithms: ["ed25519"], maxSkew: 300, serverTime: SigningSetup.start, pins: [], backupPins: [])
        let body = try Registration.json(old)
        let signature = try Registration.DiscoverySignature.value(body: body, signers: [(id1, k1)])

        // Months later: K2 was promoted, then replaced by K3 and retired (and has leaked). A session opens
        // from the stored identity, which pins K1 only.
        let later = ManualUnixClock(SigningSetup.start + 200 * 86_400)
        var verifier = ResponseVerifier(key: try k1.verificationKey, keyID: id1, clock: later)
        let trusted = TrustedResponseKeys([id1: try k1.verificationKey])
        verifier.trusted = trusted
        // The proxy answers with an unknown key ID, the session fetches discovery, the proxy replays.
        let learnt = trusted.learn(discovery: body, signature: signature, now: later.now())
        #expect(learnt.isEmpty, "a months-old signed discovery re-taught retired key \(id2)")

        // What the replay buys: an answer forged with the retired K2 verifies.
        let request = SigilV1.AnsweredRequest(keyID: "device-key", nonce: "nonce-0123456789abcdef", signature: "c2ln")
        let forged = ResponseSigner(signer: k2, keyID: id2, clock: later)
        var response = HTTPResponse(status: .ok)
        response.headerFields[.contentType] = "application/json"
        let payload = Array(#"{"balance":1000000}"#.utf8)
        response.headerFields.append(
            contentsOf: try forged.sigilV1Fields(for: response, body: payload, answering: request))
        #expect(throws: SigilError.self, "an answer signed by a retired key verified") {
            try verifier.verifySigilV1(response, body: payload, answering: request)
        }
    }
}
