import Crypto
import Foundation
import SigilAppAttest
@_spi(Sigil) import SigilCore
import SigilSQLite
import SigilServer
import Testing

@testable import SigilTestSupport

/// Each of Apple's validation steps refuses with its own code when one field changes, on objects laid
/// out as App Attest lays them out (a test root and intermediate stand in for Apple's), and on the
/// real captures where a change needs no re-signing.
@Suite("App Attest validation steps")
struct AppAttestVerificationTests {
    static let challenge = Array(SHA256.hash(data: Array("one-time challenge".utf8)))

    /// `(name, change, expected code)` applied to a valid attestation.
    typealias Change = (
        name: String, code: AppAttestError.Code,
        apply: @Sendable (inout TestAppAttestAuthority.Attestation, inout AttestationCall) -> Void
    )

    /// What the verifier is called with.
    struct AttestationCall: Sendable {
        var keyID: [UInt8]
        var clientDataHash: [UInt8]
        var time: Date
        var appIDs = [TestAppAttestAuthority.appID]
        var environments: Set<AppAttestVerifier.Environment> = [.production]
        var flipChainByte = false
    }

    static let changes: [Change] = [
        ("App ID", .appIDMismatch, { fields, _ in fields.appID = "TEAM123456.dev.sigil.other" }),
        ("accepted App IDs", .appIDMismatch, { _, call in call.appIDs = ["OTHERTEAM1.dev.sigil.tests"] }),
        ("challenge", .nonceMismatch, { _, call in call.clientDataHash[0] ^= 1 }),
        (
            "environment", .environmentMismatch,
            { fields, _ in fields.aaguid = AppAttestVerifier.Environment.development.aaguid }
        ),
        ("AAGUID", .aaguidInvalid, { fields, _ in fields.aaguid = Array("not-app-attest!!".utf8) }),
        ("counter", .counterInvalid, { fields, _ in fields.counter = 1 }),
        ("key ID", .keyIDMismatch, { _, call in call.keyID[5] ^= 1 }),
        ("credential ID", .credentialIDMismatch, { fields, _ in fields.credentialID = Array(repeating: 7, count: 32) }),
        ("certificate time", .certificateExpired, { _, call in call.time += 4 * 86_400 }),
        ("a byte of the chain", .certificateChain, { _, call in call.flipChainByte = true }),
        ("nonce extension", .nonceMismatch, { fields, _ in fields.nonce = Array(repeating: 9, count: 32) }),
        ("no nonce extension", .nonceExtensionInvalid, { fields, _ in fields.nonce = [] }),
        ("format", .malformed, { fields, _ in fields.fmt = "packed" }),
    ]

    @Test(
        "a valid attestation verifies; each single-field change is refused with its own code",
        arguments: changes.map(\.name))
    func attestationChange(_ name: String) async throws {
        let authority = try TestAppAttestAuthority()
        var fields = authority.attestation(clientDataHash: Self.challenge)
        var call = AttestationCall(keyID: fields.keyID, clientDataHash: Self.challenge, time: authority.now)
        let valid = try await authority.verifier().verifyAttestation(
            try authority.object(fields), keyID: call.keyID, clientDataHash: call.clientDataHash, at: call.time)
        #expect(valid.publicKey.rawRepresentation == fields.key.publicKey.rawRepresentation)
        #expect(valid.environment == .production)

        let change = try #require(Self.changes.first { $0.name == name })
        change.apply(&fields, &call)
        let verifier = authority.verifier(appIDs: call.appIDs, environments: call.environments)
        let object = try authority.object(fields, flipChainByte: call.flipChainByte)
        let error = await #expect(throws: AppAttestError.self) {
            _ = try await verifier.verifyAttestation(
                object, keyID: call.keyID, clientDataHash: call.clientDataHash, at: call.time)
        }
        #expect(error?.code == change.code, "\(name): \(String(describing: error))")
    }

    @Test("the codes of the changes are distinct, but for the challenge and the extension, which one check compares")
    func distinctCodes() {
        let codes = Self.changes.filter { !["accepted App IDs", "nonce extension"].contains($0.name) }.map(\.code)
        #expect(Set(codes).count == codes.count)
    }

    @Test("a development key is accepted only where development is")
    func development() async throws {
        let authority = try TestAppAttestAuthority()
        var fields = authority.attestation(clientDataHash: Self.challenge)
        fields.aaguid = AppAttestVerifier.Environment.development.aaguid
        let verified = try await authority.verifier(environments: [.development, .production]).verifyAttestation(
            try authority.object(fields), keyID: fields.keyID, clientDataHash: Self.challenge, at: authority.now)
        #expect(verified.environment == .development)
    }

    @Test("Apple's own root refuses the test authority's chain")
    func appleRootRefusesTestChain() async throws {
        let authority = try TestAppAttestAuthority()
        let fields = authority.attestation(clientDataHash: Self.challenge)
        let error = await #expect(throws: AppAttestError.self) {
            _ = try await AppAttestVerifier(appIDs: [TestAppAttestAuthority.appID]).verifyAttestation(
                try authority.object(fields), keyID: fields.keyID, clientDataHash: Self.challenge, at: authority.now)
        }
        #expect(error?.code == .certificateChain)
    }

    @Test("assertions: valid, then a changed signature, App ID, client data or counter is refused with its code")
    func assertionChanges() throws {
        let key = P256.Signing.PrivateKey()
        let verifier = try TestAppAttestAuthority().verifier()
        let data = Array("the request's signature base".utf8)
        let valid = try verifier.verifyAssertion(
            try TestAppAttestAuthority.assertion(key: key, clientData: data, counter: 5), clientData: data,
            publicKey: key.publicKey, previousCounter: 4)
        #expect(valid.counter == 5)
        let cases: [(String, [UInt8], [UInt8], UInt32, AppAttestError.Code)] = [
            (
                "signature",
                try TestAppAttestAuthority.assertion(key: key, clientData: data, counter: 5, flipSignature: true), data,
                4, .invalidSignature
            ),
            (
                "client data", try TestAppAttestAuthority.assertion(key: key, clientData: data, counter: 5), data + [0],
                4, .invalidSignature
            ),
            (
                "App ID", try TestAppAttestAuthority.assertion(key: key, clientData: data, counter: 5, appID: "X.y"),
                data, 4, .appIDMismatch
            ),
            (
                "same counter", try TestAppAttestAuthority.assertion(key: key, clientData: data, counter: 5), data, 5,
                .counterReplayed
            ),
            (
                "lower counter", try TestAppAttestAuthority.assertion(key: key, clientData: data, counter: 5), data, 9,
                .counterReplayed
            ),
            (
                "another key", try TestAppAttestAuthority.assertion(key: .init(), clientData: data, counter: 5), data,
                4, .invalidSignature
            ),
        ]
        for (name, object, clientData, previous, code) in cases {
            let error = #expect(throws: AppAttestError.self) {
                _ = try verifier.verifyAssertion(
                    object, clientData: clientData, publicKey: key.publicKey, previousCounter: previous)
            }
            #expect(error?.code == code, "\(name)")
        }
    }

    @Test("SQLite keeps App Attest counters across a restart")
    func countersSurviveRestart() async throws {
        let path = TestServer.temporaryDirectory() + ".sqlite"
        let masterKey = SymmetricKey(size: .bits256)
        let first = try await Directory.sqlite(path: path, masterKey: masterKey)
        #expect(try await first.advance(keyID: "k", to: 9))
        try await first.close()
        let second = try await Directory.sqlite(path: path, masterKey: masterKey)
        #expect(try await !second.advance(keyID: "k", to: 9))
        #expect(try await second.advance(keyID: "k", to: 10))
        try await second.close()
    }
}

/// Single-field changes of the real captures that need no re-signing by Apple.
@Suite("App Attest vectors, changed")
struct AppAttestVectorChangeTests {
    @Test("App ID, challenge, environment, key ID, time and a chain byte of Apple's sample: each its own code")
    func changes() async throws {
        let vector = try #require(AppAttestVectorTests.vectors.first)
        let object = try AppAttestVectorTests.bytes(vector["attestationObjectBase64"])
        let keyID = try AppAttestVectorTests.bytes(vector["keyIdBase64"])
        let hash = try AppAttestVectorTests.clientDataHash(vector.json)
        let time = try AppAttestVectorTests.time(vector["verifyAt"])
        let appID = try #require(vector["appId"]?.string)
        // The leaf's last byte is in its signature: flipping it keeps the CBOR and DER readable.
        let leaf = try #require(try CBOR.decode(object)["attStmt"]?["x5c"]?.arrayValue?.first?.bytesValue)
        var flipped = object
        let start = try #require(Self.range(of: leaf, in: object))
        flipped[start + leaf.count - 1] ^= 1

        let cases: [(String, AppAttestVerifier, [UInt8], [UInt8], [UInt8], Date, AppAttestError.Code)] = [
            ("App ID", AppAttestVerifier(appIDs: ["0352187391.com.other"]), object, keyID, hash, time, .appIDMismatch),
            ("challenge", AppAttestVerifier(appIDs: [appID]), object, keyID, hash + [0], time, .nonceMismatch),
            (
                "environment", AppAttestVerifier(appIDs: [appID], environments: [.development]), object, keyID, hash,
                time, .environmentMismatch
            ),
            ("key ID", AppAttestVerifier(appIDs: [appID]), object, Array(keyID.reversed()), hash, time, .keyIDMismatch),
            ("time", AppAttestVerifier(appIDs: [appID]), object, keyID, hash, time + 30 * 86_400, .certificateExpired),
            ("chain byte", AppAttestVerifier(appIDs: [appID]), flipped, keyID, hash, time, .certificateChain),
        ]
        for (name, verifier, object, keyID, hash, time, code) in cases {
            let error = await #expect(throws: AppAttestError.self) {
                _ = try await verifier.verifyAttestation(object, keyID: keyID, clientDataHash: hash, at: time)
            }
            #expect(error?.code == code, "\(name): \(String(describing: error))")
        }
    }

    static func range(of needle: [UInt8], in haystack: [UInt8]) -> Int? {
        guard needle.count <= haystack.count else { return nil }
        return (0...(haystack.count - needle.count)).first { haystack[$0..<($0 + needle.count)].elementsEqual(needle) }
    }

    @Test("truncated, bit-flipped and oversized objects never crash: each is refused")
    func badBytes() async throws {
        let vector = try #require(AppAttestVectorTests.vectors.first)
        let object = try AppAttestVectorTests.bytes(vector["attestationObjectBase64"])
        let verifier = AppAttestVerifier(appIDs: [try #require(vector["appId"]?.string)])
        let keyID = try AppAttestVectorTests.bytes(vector["keyIdBase64"])
        var inputs: [[UInt8]] = [
            [], [0xA1], [0xBF, 0xFF], [0x9B] + [UInt8](repeating: 0xFF, count: 8),
            [UInt8](repeating: 0x81, count: 100_000), [UInt8](repeating: 0x81, count: 40) + [0x00],
            [UInt8](repeating: 0, count: AppAttestVerifier.maximumAttestationSize + 1),
        ]
        for length in stride(from: 0, to: object.count, by: 97) { inputs.append(Array(object.prefix(length))) }
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<200 {
            var mutated = object
            mutated[Int.random(in: 0..<mutated.count, using: &generator)] ^= UInt8.random(
                in: 1...255, using: &generator)
            inputs.append(mutated)
        }
        for input in inputs {
            await #expect(throws: AppAttestError.self) {
                _ = try await verifier.verifyAttestation(input, keyID: keyID, clientDataHash: [], at: Date())
            }
            #expect(throws: AppAttestError.self) {
                _ = try verifier.verifyAssertion(
                    input, clientData: [], publicKey: P256.Signing.PrivateKey().publicKey, previousCounter: 0)
            }
        }
    }
}
