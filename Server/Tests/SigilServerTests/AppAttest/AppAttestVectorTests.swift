import Crypto
import Foundation
import SigilAppAttest
@_spi(Sigil) import SigilCore
import SigilServer
import Synchronization
import Testing
import X509

@testable import SigilTestSupport

/// Real App Attest captures (`Vectors/appattest.json`: Apple's validation guide sample and a device's
/// attestation, assertion and receipts), each verified at its `verifyAt` time.
@Suite("App Attest vectors")
struct AppAttestVectorTests {
    static let file = Vectors.file("appattest.json")
    static let vectors = Vectors.cases("appattest.json", "vectors")

    static func bytes(_ json: JSON?) throws -> [UInt8] { try #require(json?.string.flatMap(Base64.decode)) }
    static func time(_ json: JSON?) throws -> Date { try #require(json?.string.flatMap(AppAttestReceipt.date)) }

    /// The attestation of a vector (the file has two shapes: fields at the top, or under `attestation`).
    static func attestation(_ vector: VectorCase) -> JSON { vector["attestation"] ?? vector.json }

    static func verifier(_ vector: VectorCase) throws -> AppAttestVerifier {
        let environment = try #require(
            AppAttestVerifier.Environment(rawValue: vector["environment"]?.string ?? ""))
        return AppAttestVerifier(appIDs: [try #require(vector["appId"]?.string)], environments: [environment])
    }

    /// What the app passed to `attestKey`: the vector says whether it hashed the challenge.
    static func clientDataHash(_ attestation: JSON) throws -> [UInt8] {
        if let hash = attestation["clientDataHashSha256Base64"] { return try bytes(hash) }
        return try bytes(attestation["clientDataHashBase64"])
    }

    @Test("the built-in root is the vectors' Apple App Attestation Root CA")
    func root() throws {
        let pem = try #require(Self.file["appleAppAttestationRootCaPem"]?.string)
        #expect(try Certificate(pemEncoded: pem) == AppAttestVerifier.appleAppAttestationRootCA)
    }

    @Test(
        "attestations verify at their time, with the expected key, counter, environment and receipt", arguments: vectors
    )
    func attestation(_ vector: VectorCase) async throws {
        let attestation = Self.attestation(vector)
        let expected = try #require(attestation["expected"])
        let verified = try await Self.verifier(vector).verifyAttestation(
            try Self.bytes(attestation["attestationObjectBase64"]), keyID: try Self.bytes(attestation["keyIdBase64"]),
            clientDataHash: try Self.clientDataHash(attestation), at: try Self.time(attestation["verifyAt"]))
        #expect(Hex.encode(Array(verified.publicKey.x963Representation)) == expected["publicKeyX963Hex"]?.string)
        #expect(verified.counter == 0)
        #expect(verified.environment.rawValue == vector["environment"]?.string)
        #expect(Int64(verified.receipt.count) == expected["receiptLength"]?.int)
        #expect(verified.notBefore == (try Self.time(expected["leafNotBefore"])))
        if let pem = attestation["publicKeyPem"]?.string {
            #expect(
                try P256.Signing.PublicKey(pemRepresentation: pem).rawRepresentation
                    == verified.publicKey.rawRepresentation)
        }
        if let receipt = expected["receipt"] {
            let read = try await Self.verifier(vector).verifyReceipt(
                of: verified, at: try Self.time(attestation["verifyAt"]))
            #expect(read.type == receipt["type"]?.string)
            #expect(read.environment == receipt["environment"]?.string)
            #expect(read.creationTime == (try Self.time(receipt["creationTime"])))
            #expect(read.clientHash == Array((receipt["clientHashUtf8"]?.string ?? "").utf8))
            #expect(read.appID == vector["appId"]?.string)
        }
    }

    @Test("the assertion verifies with the attested key, its counter above the stored one")
    func assertion() async throws {
        for vector in Self.vectors {
            guard let assertion = vector["assertion"] else { continue }
            let attestation = Self.attestation(vector)
            let key = try P256.Signing.PublicKey(pemRepresentation: try #require(attestation["publicKeyPem"]?.string))
            let expected = try #require(assertion["expected"])
            let verified = try Self.verifier(vector).verifyAssertion(
                try Self.bytes(assertion["assertionObjectBase64"]),
                clientData: try Self.bytes(assertion["clientDataBase64"]),
                publicKey: key, previousCounter: UInt32(try #require(assertion["previousCounter"]?.int)))
            #expect(Int64(verified.counter) == expected["counter"]?.int)
            #expect(verified.appID == vector["appId"]?.string)
        }
    }

    @Test("enrollment keeps an attestation's receipt only when it is Apple's and this attestation's")
    func enrollmentReceipt() async throws {
        let guide = try #require(Self.vectors.first)
        let device = try #require(Self.vectors.first { $0["attestation"] != nil })
        let attestation = try #require(device["attestation"])
        let object = try Self.bytes(attestation["attestationObjectBase64"])
        var verifier = try Self.verifier(device)
        let time = try Self.time(attestation["verifyAt"])
        verifier.now = { time }
        let kept = try await verifier.attestedKey(
            object, keyID: try Self.bytes(attestation["keyIdBase64"]),
            clientDataHash: try Self.clientDataHash(attestation))
        #expect(kept.key.algorithm == .appleAppAttest)
        #expect(kept.receipt == (try CBOR.decode(object)["attStmt"]?["receipt"]?.bytesValue))
        // The guide's receipt, swapped in: the key is admitted, the receipt is not kept.
        let swapped = try Self.swappingReceipt(
            of: object,
            with: try #require(
                try CBOR.decode(try Self.bytes(guide["attestationObjectBase64"]))["attStmt"]?["receipt"]))
        let dropped = try await verifier.attestedKey(
            swapped, keyID: try Self.bytes(attestation["keyIdBase64"]),
            clientDataHash: try Self.clientDataHash(attestation))
        #expect(dropped.receipt == nil)
    }

    static func swappingReceipt(of object: [UInt8], with receipt: CBOR) throws -> [UInt8] {
        guard case .map(var pairs) = try CBOR.decode(object),
            let index = pairs.firstIndex(where: { $0.key == .text("attStmt") }),
            case .map(var statement) = pairs[index].value,
            let receiptIndex = statement.firstIndex(where: { $0.key == .text("receipt") })
        else { throw SigilInputError("not an attestation object") }
        statement[receiptIndex].value = receipt
        pairs[index].value = .map(statement)
        return CBOREncoder.encode(.map(pairs))
    }

    @Test("a receipt swapped in from another attestation is refused: the receipt is outside the nonce")
    func swappedReceipt() async throws {
        let guide = try #require(Self.vectors.first)
        let device = try #require(Self.vectors.first { $0["attestation"] != nil })
        let attestation = try #require(device["attestation"])
        let otherReceipt = try #require(
            try CBOR.decode(try Self.bytes(guide["attestationObjectBase64"]))["attStmt"]?["receipt"])
        let object = try Self.swappingReceipt(
            of: try Self.bytes(attestation["attestationObjectBase64"]), with: otherReceipt)
        let time = try Self.time(attestation["verifyAt"])
        let verifier = try Self.verifier(device)
        // Apple's steps pass: nothing they check covers the receipt…
        let verified = try await verifier.verifyAttestation(
            object, keyID: try Self.bytes(attestation["keyIdBase64"]),
            clientDataHash: try Self.clientDataHash(attestation), at: time)
        // …but the receipt names another app and another key.
        let error = await #expect(throws: AppAttestError.self) {
            _ = try await verifier.verifyReceipt(of: verified, at: try Self.time(guide["verifyAt"]))
        }
        #expect(error?.code == .receiptInvalid)
    }

    @Test("receipts verify against Apple Root CA - G3 and read as expected")
    func receipts() async throws {
        var count = 0
        for vector in Self.vectors {
            for receipt in vector["receipts"]?.array ?? [] {
                let expected = try #require(receipt["expected"])
                let read = try await AppAttestReceipt.verify(
                    try Self.bytes(receipt["receiptBase64"]), at: try Self.time(receipt["verifyAt"]))
                #expect(read.type == expected["type"]?.string)
                #expect(read.environment == expected["environment"]?.string)
                #expect(read.token == expected["token"]?.string)
                #expect(read.creationTime == (try Self.time(expected["creationTime"])))
                #expect(read.expirationTime == (try Self.time(expected["expirationTime"])))
                #expect(read.notBefore == (try expected["notBefore"]?.string.map { try Self.time(.string($0)) }))
                #expect(read.riskMetric.map(Int64.init) == expected["riskMetric"]?.int)
                #expect(Base64.encode(read.clientHash) == expected["clientHashBase64"]?.string)
                count += 1
            }
        }
        #expect(count == 2)
    }

    @Test("a receipt changed by one byte, read after its signer expired, or under another root is receipt-invalid")
    func receiptRefusals() async throws {
        let vector = try #require(Self.vectors.first { $0["receipts"] != nil })
        let receipt = try #require(vector["receipts"]?.array.first)
        let bytes = try Self.bytes(receipt["receiptBase64"])
        let time = try Self.time(receipt["verifyAt"])
        // The receipt names the attested key's certificate: the attestation's own leaf.
        let read = try await AppAttestReceipt.verify(bytes, at: time)
        let object = try Self.bytes(vector["attestation"]?["attestationObjectBase64"])
        #expect(read.attestedCertificate == (try CBOR.decode(object)["attStmt"]?["x5c"]?.arrayValue?.first?.bytesValue))
        // Byte 1,000 lies in the signed content (the fields), which the signature covers.
        var changed = bytes
        changed[1_000] ^= 1
        let cases: [(String, [UInt8], Date, Certificate)] = [
            ("changed content", changed, time, AppAttestVerifier.appleRootCAG3),
            ("after the signer expired", bytes, time + 3 * 365 * 86_400, AppAttestVerifier.appleRootCAG3),
            ("another root", bytes, time, AppAttestVerifier.appleAppAttestationRootCA),
            ("truncated", Array(bytes.prefix(2_000)), time, AppAttestVerifier.appleRootCAG3),
        ]
        for (name, input, at, root) in cases {
            let error = await #expect(throws: AppAttestError.self) {
                _ = try await AppAttestReceipt.verify(input, at: at, root: root)
            }
            #expect(error?.code == .receiptInvalid, "\(name)")
        }
    }
}

/// `sigil attest`: the vectors through the command, as an operator checks evidence by hand.
@Suite("sigil attest")
struct AttestCommandTests {
    static let file = Vectors.directory.appendingPathComponent("appattest.json").path

    @Test("verify-attestation and verify-assertion print the verified facts; a changed field exits 1 with its code")
    func command() async throws {
        for vector in AppAttestVectorTests.vectors {
            let id = try #require(vector["id"]?.string)
            let result = try await SigilCommand.run(["attest", "verify-attestation", Self.file, "--vector", id])
            #expect(result.status == 0, "\(id): \(result.error)")
            let facts = try #require(try JSONSerialization.jsonObject(with: Data(result.output)) as? [String: Any])
            let expected = try #require(AppAttestVectorTests.attestation(vector)["expected"])
            #expect(facts["publicKeyX963Hex"] as? String == expected["publicKeyX963Hex"]?.string)
            #expect(facts["environment"] as? String == vector["environment"]?.string)
            #expect(facts["counter"] as? Int == 0)
            #expect((facts["receipt"] as? [String: Any])?["type"] as? String == "ATTEST", "\(id)")

            let refused = try await SigilCommand.run([
                "attest", "verify-attestation", Self.file, "--vector", id, "--app-id", "AAAAAAAAAA.other",
            ])
            #expect(refused.status == 1)
            #expect(refused.text.hasPrefix("invalid app-id-mismatch: "))
        }
        let assertion = try await SigilCommand.run([
            "attest", "verify-assertion", Self.file, "--vector", "veehaitch-ios-14.4",
        ])
        #expect(assertion.status == 0, "\(assertion.error)")
        #expect(assertion.text.contains(#""counter":1"#))
        let replayed = try await SigilCommand.run([
            "attest", "verify-assertion", Self.file, "--vector", "veehaitch-ios-14.4", "--previous-counter", "1",
        ])
        #expect(replayed.status == 1)
        #expect(replayed.text.hasPrefix("invalid counter-replayed: "))
        let unusable = try await SigilCommand.run(["attest", "verify-attestation", Self.file])
        #expect(unusable.status == 2)
        #expect(unusable.error.contains("--vector"))
    }
}

/// The fraud-metric refresh, against a stand-in for Apple's server.
@Suite("App Attest fraud metric")
struct FraudMetricTests {
    final class Apple: FraudMetricTransport, Sendable {
        let answer: (status: Int, body: [UInt8])
        let seen = Mutex<[(url: String, headers: [(name: String, value: String)], body: [UInt8])]>([])
        init(_ status: Int, _ body: [UInt8] = []) { answer = (status, body) }
        func post(url: String, headers: [(name: String, value: String)], body: [UInt8]) async throws
            -> (status: Int, body: [UInt8])
        {
            seen.withLock { $0.append((url, headers, body)) }
            return answer
        }
    }

    @Test("the request carries the receipt in base64 and an ES256 JWT; 200, 304, 404 and errors read as they should")
    func refresh() async throws {
        let vector = try #require(AppAttestVectorTests.vectors.first { $0["receipts"] != nil })
        let receipts = vector["receipts"]?.array ?? []
        let first = try AppAttestVectorTests.bytes(receipts[0]["receiptBase64"])
        let newer = try AppAttestVectorTests.bytes(receipts[1]["receiptBase64"])
        let time = try AppAttestVectorTests.time(receipts[1]["verifyAt"])
        let key = P256.Signing.PrivateKey()
        let clock = ManualUnixClock(Int64(time.timeIntervalSince1970))
        func client(_ apple: Apple) -> FraudMetricClient {
            FraudMetricClient(
                environment: .development, teamID: "6MURL8TA57", keyID: "KEY1234567", privateKey: key,
                transport: apple, clock: clock)
        }

        let apple = Apple(200, Array((Base64.encode(newer) + "\n").utf8))
        guard case .updated(let receipt, let bytes) = try await client(apple).refresh(first) else {
            Issue.record("a 200 answer is a new receipt")
            return
        }
        #expect(bytes == newer)
        #expect(receipt.type == "RECEIPT")
        #expect(receipt.riskMetric == 3)
        let sent = try #require(apple.seen.withLock { $0.first })
        #expect(sent.url == "https://data-development.appattest.apple.com/v1/attestationData")
        #expect(sent.body == Array(Base64.encode(first).utf8))
        let jwt = try #require(sent.headers.first { $0.name == "Authorization" }?.value).split(separator: ".")
        #expect(jwt.count == 3)
        let header = try JSONSerialization.jsonObject(with: Data(try #require(Base64URL.decode(String(jwt[0])))))
        #expect((header as? [String: String]) == ["alg": "ES256", "kid": "KEY1234567"])
        let claims = try JSONSerialization.jsonObject(with: Data(try #require(Base64URL.decode(String(jwt[1])))))
        #expect((claims as? [String: Any])?["iss"] as? String == "6MURL8TA57")
        #expect((claims as? [String: Any])?["iat"] as? Int == Int(clock.now()))
        let signature = try P256.Signing.ECDSASignature(
            rawRepresentation: try #require(Base64URL.decode(String(jwt[2]))))
        #expect(key.publicKey.isValidSignature(signature, for: Array("\(jwt[0]).\(jwt[1])".utf8)))

        #expect(try await client(Apple(304)).refresh(first) == .notModified)
        #expect(try await client(Apple(404)).refresh(first) == .noData)
        await #expect(throws: FraudMetricClient.Failure(status: 401)) {
            _ = try await client(Apple(401)).refresh(first)
        }
        let forged = await #expect(throws: AppAttestError.self) {
            _ = try await client(Apple(200, Array(Base64.encode(Array(newer.dropLast(9))).utf8))).refresh(first)
        }
        #expect(forged?.code == .receiptInvalid)
        #expect(
            FraudMetricClient(
                environment: .production, teamID: "T", keyID: "K", privateKey: key, transport: Apple(200)
            ).url == "https://data.appattest.apple.com/v1/attestationData")
    }
}

/// `apple-appattest` requests made by an implementation independent of Sigil
/// (`Tests/Interop/appattest_vectors.py`, Python's `cryptography`): the signature bases agree and
/// each case verifies or is refused as the file says.
@Suite("apple-appattest request vectors")
struct AppleAppAttestRequestVectorTests {
    static let file = Vectors.file("apple-appattest.json")
    static let cases = Vectors.cases("apple-appattest.json")

    @Test("the key ID is the App Attest key ID's first 8 bytes, and the key decides the algorithm")
    func keyID() throws {
        let key = try P256.Signing.PublicKey(pemRepresentation: try #require(Self.file["publicKeyPem"]?.string))
        let appAttestKeyID = try AppAttestVectorTests.bytes(Self.file["appAttestKeyIdBase64"])
        #expect(appAttestKeyID == Array(SHA256.hash(data: key.x963Representation)))
        let verification = try VerificationKey(key, algorithm: .appleAppAttest)
        #expect(verification.derivedKeyID == Self.file["keyId"]?.string)
        #expect(AppAttestAssertion.keyID(appAttestKeyID: appAttestKeyID) == Self.file["keyId"]?.string)
        #expect(throws: SigilError.self) { _ = try SigningKey.generate(.appleAppAttest) }
    }

    @Test("each request verifies or is refused as the vector says", arguments: cases)
    func request(_ vector: VectorCase) async throws {
        #expect(Self.cases.count == 5)
        let message = try Fixtures.message(try #require(vector["message"]?.string))
        let request = try message.request()
        let pem = try #require(Self.file["publicKeyPem"]?.string)
        let key = try VerificationKey(try P256.Signing.PublicKey(pemRepresentation: pem), algorithm: .appleAppAttest)
        let keyID = try #require(Self.file["keyId"]?.string)
        let counters = Directory.inMemory()
        let previous = UInt32(try #require(vector["previousCounter"]?.int))
        if previous > 0 { #expect(try await counters.advance(keyID: keyID, to: previous)) }
        var configuration = VerifierConfiguration()
        configuration.assertions = AppAttestAssertions(
            verifier: AppAttestVerifier(appIDs: [try #require(Self.file["appId"]?.string)]), counters: counters)
        let verifier = RequestVerifier(
            keys: MemoryKeyDirectory([RegisteredKey(keyID: keyID, key: key)]),
            nonces: MemoryNonceStore(clock: ManualUnixClock(0)),
            clock: ManualUnixClock(try #require(Self.file["now"]?.int)), configuration: configuration)
        if vector["profile"]?.string == "sigil-v1" {
            let headers = try SigilV1.parseRequestHeaders(request.headerFields)
            let base = SigilV1.requestBase(
                for: request, body: message.body, timestamp: headers.timestampText, nonce: headers.nonce)
            if vector["id"]?.string != "body-changed" {
                #expect(String(decoding: base, as: UTF8.self) == vector["signatureBase"]?.string)
            }
        }
        let expected = try #require(vector["expect"]?.string)
        if expected == "valid" {
            let verified = try await verifier.verify(request, body: message.body)
            #expect(verified.algorithm == .appleAppAttest)
            #expect(verified.keyID == keyID)
        } else {
            let error = await #expect(throws: SigilError.self) {
                _ = try await verifier.verify(request, body: message.body)
            }
            #expect(error?.code.rawValue == expected, "\(vector.name)")
        }
    }
}
