import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import SigilClient
@_spi(Sigil) import SigilCore
import SigilHummingbird
import SigilJWT
import SigilServer
import SigilTLS
import Synchronization
import Testing
import X509

@testable import SigilTestSupport

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Exposes only what `SecureEnclave.P256.Signing.PrivateKey` exposes: the public key, an opaque blob,
/// and signing. It counts its signatures, so the test sees that the key itself signed every step.
final class EnclaveDouble: HardwareP256Key, Sendable {
    private let key = P256.Signing.PrivateKey()
    let signatures = Atomic<Int>(0)

    var publicKey: P256.Signing.PublicKey { key.publicKey }
    var dataRepresentation: Data { Data("opaque, device-bound".utf8) }

    func signature<D: DataProtocol>(for data: D) throws -> P256.Signing.ECDSASignature {
        signatures.add(1, ordering: .relaxed)
        return try key.signature(for: data)
    }
}

@Suite("Enrollment with any key over any transport")
struct AnyKeyEnrollmentTests {
    static let token = "any-key-enrollment-token-0123456789"

    /// The README's example: a Hummingbird app with registration and a protected route.
    static func application(clock: ManualUnixClock, certificates: CertificateAuthority) throws
        -> some ApplicationProtocol
    {
        let directory = Directory.inMemory(clock: clock)
        let nonces = MemoryNonceStore(clock: clock)
        clock.advance(by: 2)  // past the store's start, which only later timestamps may follow
        let responseKey = try SigningKey.generate(.ecdsaP256SHA256)
        let sigil = SigilMiddleware<SigilBasicRequestContext>(
            exchange: Exchange(
                verifier: RequestVerifier(keys: directory, nonces: nonces, clock: clock),
                responseSigner: ResponseSigner(signer: responseKey, keyID: responseKey.derivedKeyID ?? "", clock: clock)
            ))
        let registration = RegistrationService(
            directory: directory, nonces: nonces, enrollment: EnrollmentPolicy(bootstrapToken: token, clock: clock),
            certificates: certificates, clock: clock)
        let router = Router(context: SigilBasicRequestContext.self)
        SigilRegistrationRoutes(service: registration, middleware: sigil).add(to: router)
        router.group("api").add(middleware: sigil).get("me") { _, context in
            try context.requireSigilIdentity().keyID
        }
        return Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)))
    }

    @Test(
        "an enclave-shaped key enrolls, gets its secret and a certificate for its own CSR, signs, rotates, revokes, over URLSession"
    )
    func enclaveKeyOverURLSession() async throws {
        let clock = ManualUnixClock(SystemUnixClock().now())
        let ca = try CertificateAuthority.create(name: "Sigil test CA").authority
        let app = try Self.application(clock: clock, certificates: ca)
        try await app.test(.live) { client in
            let port = try #require(client.port)
            let deviceClock = ServerClock(local: clock)
            let registration = DeviceRegistration(
                transport: URLSessionTransport(session: URLSession(configuration: .ephemeral)), scheme: "http",
                authority: "127.0.0.1:\(port)", clock: deviceClock)
            let enclave = EnclaveDouble()
            let signer = HardwareKeySigner(enclave)
            let store = MemoryDeviceStore()

            // A file store keeps software keys only: it refuses a hardware key rather than lose it.
            #expect(throws: SigilInputError.self) {
                try FileDeviceStore(directory: TestServer.temporaryDirectory()).save(
                    DeviceIdentity(
                        server: "", keyID: "", deviceID: "", algorithm: "", pins: [], responseKeyID: "", responseKey: ""
                    ),
                    key: signer, secret: nil)
            }

            let identity = try await DeviceEnrollment(requestCertificate: true).enroll(
                signer, token: Self.token, with: registration, store: store)
            #expect(identity.keyID == signer.keyID)
            #expect(identity.server == "http://127.0.0.1:\(port)")
            #expect(try store.secret() != nil)
            // Registration, secret and certificate requests, and the CSR: four signatures by the enclave key.
            #expect(enclave.signatures.load(ordering: .relaxed) == 4)
            let certificate = try Certificate(pemEncoded: try #require(identity.clientCertificate))
            #expect(certificate.publicKey == Certificate.PublicKey(enclave.publicKey))
            #expect(certificate.subject.description.contains(signer.keyID))

            // The stored key signs requests (sigil-v1 and rfc9421), and the stored secret too.
            let server = try await registration.discover().responseVerifier(clock: deviceClock)
            let stored = try #require(try store.deviceKey())
            for (key, keyID) in [
                (stored, identity.keyID), (try #require(try store.secret()), try #require(identity.secretKeyID)),
            ] {
                for profile in SignatureProfile.allCases {
                    let session = SigilSession(
                        transport: registration.transport,
                        signer: RequestSigner(key: key, keyID: keyID, profile: profile, clock: deviceClock),
                        clock: deviceClock, responses: server, requireSignedResponses: true)
                    let me = try await session.send(
                        HTTPRequest(method: .get, scheme: "http", authority: "127.0.0.1:\(port)", path: "/api/me"))
                    #expect(me.head.status == .ok)
                    #expect(String(decoding: me.body, as: UTF8.self) == keyID)
                }
            }

            // Rotation to another enclave key, signed by the first; then the new key revokes the device.
            let next = HardwareKeySigner(EnclaveDouble())
            let rotated = try await registration.rotate(from: stored, keyID: identity.keyID, to: next, server: server)
            #expect(rotated.keyId == next.keyID)
            #expect(rotated.deviceId == identity.deviceID)
            try await registration.revoke(key: next, keyID: next.keyID, server: server)
            let refused = await #expect(throws: SigilError.self) {
                _ = try await registration.fetchSecret(key: next, keyID: next.keyID, server: server)
            }
            #expect(refused?.code == .revokedKey)
        }
    }

    @Test(
        "a CSR made by the signer itself is what swift-certificates verifies, for each kind a certificate is issued to")
    func csrForAnySigner() throws {
        let signers: [any SignatureProvider] = [
            HardwareKeySigner(EnclaveDouble()),
            try SigningKey.generate(.ecdsaP256SHA512),
            try SigningKey.generate(.ecdsaP384SHA384),
            try SigningKey.generate(.ed25519),
        ]
        for signer in signers {
            let csr = try CertificateAuthority.parseCSR(Array(try CSR.pem(for: signer, commonName: "device").utf8))
            #expect(try CertificateAuthority.keyID(of: csr) == signer.publicKey?.derivedKeyID, "\(signer.algorithm)")
        }
        #expect(throws: SigilInputError.self) { try CSR.pem(for: try SigningKey.generate(.hmacSHA256)) }
        #expect(throws: SigilInputError.self) { try CSR.pem(for: try SigningKey.generate(.mlDSA65)) }
    }
}
