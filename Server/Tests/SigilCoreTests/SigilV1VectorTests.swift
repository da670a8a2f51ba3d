import Foundation
import HTTPTypes
import SigilClient
@_spi(Sigil) import SigilCore
import SigilRSA
import SigilServer
import Testing

@testable import SigilTestSupport

@Suite("sigil-v1 request and response vectors")
struct SigilV1VectorTests {
    static let requests = Vectors.cases("sigil-v1-requests.json")
    static let responses = Vectors.cases("sigil-v1-responses.json")

    @Test func vectorsLoaded() {
        #expect(Self.requests.count >= 39)
        #expect(Self.responses.count >= 5)
    }

    @Test("request verifies as expected", arguments: requests)
    func request(_ vector: VectorCase) async throws {
        let message = try Fixtures.message(vector["message"]?.string ?? "")
        let request = try message.request()
        let key = try Fixtures.verificationKey(vector)
        let keyID = vector["keyId"]?.string ?? ""
        let now = vector["now"]?.int ?? 0
        let store = MemoryNonceStore(clock: ManualUnixClock(0))
        let verifier = await Fixtures.verifier(
            keyID: keyID,
            key: key,
            now: now,
            maxSkew: vector["maxSkew"]?.int ?? 300,
            store: store
        )
        if vector["expect"]?.string == "valid" {
            let headers = try SigilV1.parseRequestHeaders(request.headerFields)
            let base = SigilV1.requestBase(
                for: request,
                body: message.body,
                timestamp: headers.timestampText,
                nonce: headers.nonce
            )
            #expect(String(decoding: base, as: UTF8.self) == vector["signatureBase"]?.string)
            let verified = try await verifier.verify(request, body: message.body)
            #expect(verified.keyID == keyID)
            #expect(verified.algorithm.rawValue == vector["algorithm"]?.string)
            // The same request again is a replay.
            await #expect(throws: SigilError(.replayedNonce, "")) {
                try await verifier.verify(request, body: message.body)
            }
        } else {
            let code = SigilError.Code.named(vector["expect"]?["invalid"]?.string)
            #expect(code != nil)
            do {
                _ = try await verifier.verify(request, body: message.body)
                Issue.record("expected \(code?.rawValue ?? "?")")
            } catch let error as SigilError {
                #expect(error.code == code)
            }
        }
    }

    @Test(
        "deterministic signatures are reproduced",
        arguments: requests.filter { $0["deterministicSignature"]?.bool == true && $0["signatureBase"]?.string != nil }
    )
    func deterministicSignature(_ vector: VectorCase) throws {
        guard let signer = try Fixtures.signingKey(vector) else {
            Issue.record("no private key for \(vector.name)")
            return
        }
        let message = try Fixtures.message(vector["message"]?.string ?? "")
        let expected = message.headers.first { $0.name == "X-Signature" }?.value
        let signature = try signer.signature(
            for: Array((vector["signatureBase"]?.string ?? "").utf8), profile: .sigilV1)
        #expect(Base64URL.encode(signature) == expected)
    }

    @Test("response verifies or is refused as expected", arguments: responses)
    func response(_ vector: VectorCase) throws {
        let message = try Fixtures.message(vector["message"]?.string ?? "")
        let response = try message.response()
        let key = try Fixtures.verificationKey(vector)
        let verifier = ResponseVerifier(
            key: key,
            keyID: vector["keyId"]?.string ?? "",
            clock: ManualUnixClock(vector["now"]?.int ?? 0)
        )
        let request = SigilV1.AnsweredRequest(
            keyID: vector["requestKeyId"]?.string ?? "",
            nonce: vector["requestNonce"]?.string ?? "",
            signature: vector["requestSignature"]?.string ?? ""
        )
        if let code = SigilError.Code.named(vector["expect"]?["invalid"]?.string) {
            #expect(throws: SigilError(code, "")) {
                try verifier.verifySigilV1(response, body: message.body, answering: request)
            }
            return
        }
        let base = SigilV1.responseBase(
            for: response,
            body: message.body,
            timestamp: message.headers.first { $0.name == "X-Timestamp" }?.value ?? "",
            answering: request
        )
        #expect(String(decoding: base, as: UTF8.self) == vector["signatureBase"]?.string)
        try verifier.verifySigilV1(response, body: message.body, answering: request)
        // Bound to exactly one request: its key ID, its nonce and its signature each count, and so
        // do the status and the body.
        for other in [
            SigilV1.AnsweredRequest(keyID: "attacker-key-0001", nonce: request.nonce, signature: request.signature),
            SigilV1.AnsweredRequest(keyID: request.keyID, nonce: "another-nonce-0000000", signature: request.signature),
            SigilV1.AnsweredRequest(keyID: request.keyID, nonce: request.nonce, signature: request.signature + "A"),
        ] {
            #expect(throws: SigilError(.invalidSignature, "")) {
                try verifier.verifySigilV1(response, body: message.body, answering: other)
            }
        }
        var changed = response
        changed.status = .created
        #expect(throws: SigilError(.invalidSignature, "")) {
            try verifier.verifySigilV1(changed, body: message.body, answering: request)
        }
        #expect(throws: SigilError(.invalidSignature, "")) {
            try verifier.verifySigilV1(response, body: message.body + [0x20, 0x31], answering: request)
        }
    }

    @Test func keyIDsAreDerived() throws {
        for (file, id) in [
            ("ecdsa-p256.pub.pem", "aac11ee354a5028d"), ("ed25519.pub.pem", "543ab1204f012699"),
            ("ml-dsa-65.pub.pem", "7686f00d8bd4834f"),
        ] {
            #expect(try KeyFile.load(try Vectors.keyFile(file), formats: .withRSA).verificationKey.derivedKeyID == id)
        }
        // A private key derives the same ID as its public key.
        #expect(
            try KeyFile.load(try Vectors.keyFile("ml-dsa-65.pem")).verificationKey.derivedKeyID == "7686f00d8bd4834f")
    }
}
