import Foundation
import HTTPTypes
@_spi(Sigil) import SigilCore
import SigilServer

/// What a signed key refusal costs (PROTOCOL.md section 2.7): refusing a request whose key ID the
/// server does not know, with the refusal unsigned and then signed (the server's Ed25519 response
/// key, as `sigil serve` makes it), beside refusing a forged request that names a known ECDSA P-256
/// key (its signature verified, and refused `invalid-signature`), which anyone could always send. One
/// task, one core; the figures are ratios within one run.
enum KeyRefusalBench {
    struct Figures {
        let unsigned: Double
        let signed: Double
        let forgedKnownKey: Double
    }

    static func run(seconds: Double) async throws -> Figures {
        let clock = ManualUnixClock(1_763_769_600)
        let device = try SigningKey.generate(.ecdsaP256SHA256)
        let deviceKeyID = try device.verificationKey.derivedKeyID ?? ""
        let directory = MemoryKeyDirectory(
            [RegisteredKey(keyID: deviceKeyID, key: try device.verificationKey, deviceID: "dev-bench")])
        var configuration = VerifierConfiguration()
        configuration.keyRefusals = KeyRefusalBudget(perSecond: .max)
        // A store started before the requests are dated (a memory store refuses those dated at its start).
        let verifier = RequestVerifier(
            keys: directory, nonces: MemoryNonceStore(clock: ManualUnixClock(clock.now() - 60)), clock: clock,
            configuration: configuration)
        let responseKey = try SigningKey.generate(.ed25519)
        let signer = ResponseSigner(
            signer: responseKey, keyID: try responseKey.verificationKey.derivedKeyID ?? "", clock: clock)
        let body = Array(#"{"to":"acct_2","amount":"25.00"}"#.utf8)

        func request(signedBy key: SigningKey, keyID: String, nonce: Int) throws -> HTTPRequest {
            var request = HTTPRequest(method: .post, scheme: "https", authority: "api.example", path: "/v1/transfers")
            request.headerFields[.contentType] = "application/json"
            request.headerFields.append(
                contentsOf: try SigilV1.sign(
                    request, body: body, signer: key, keyID: keyID, timestamp: clock.now(),
                    nonce: "bench-nonce-\(String(nonce, radix: 16))-0123456789"))
            return request
        }
        let stranger = try SigningKey.generate(.ecdsaP256SHA256)
        let unknown = try request(signedBy: stranger, keyID: stranger.verificationKey.derivedKeyID ?? "", nonce: 0)
        // The device's request sent to a path it did not sign: a forgery the server must verify to refuse.
        var forged = try request(signedBy: device, keyID: deviceKeyID, nonce: 1)
        forged.path = "/v1/transfers/all"

        func rate(_ request: HTTPRequest, signer: ResponseSigner?) async throws -> Double {
            var count = 0
            let start = Stopwatch.now()
            let deadline = start + UInt64(seconds * 1e9)
            repeat {
                do {
                    _ = try await verifier.verify(request, body: body)
                } catch let error as SigilError {
                    _ = verifier.refusal(error, for: request, signer: signer)
                }
                count += 1
            } while Stopwatch.now() < deadline
            return Double(count) / (Double(Stopwatch.now() - start) / 1e9)
        }
        // Each row refuses as it says, the signed one signed.
        for (request, code, signed) in [
            (unknown, SigilError.Code.unknownKey, true), (forged, .invalidSignature, false),
        ] {
            do {
                _ = try await verifier.verify(request, body: body)
                throw SigilInputError("the bench's request was accepted")
            } catch let error as SigilError where error.code == code {
                let refusal = verifier.refusal(error, for: request, signer: signer)
                guard (refusal.head.headerFields[SigilV1.signatureField] != nil) == signed else {
                    throw SigilInputError("the bench's \(code) refusal is not as signed as it should be")
                }
            }
        }
        // Alternating slices, so a busy moment does not favour one row.
        var rates = [0.0, 0.0, 0.0]
        for _ in 0..<5 {
            rates[0] += try await rate(unknown, signer: nil) / 5
            rates[1] += try await rate(unknown, signer: signer) / 5
            rates[2] += try await rate(forged, signer: signer) / 5
        }
        return Figures(unsigned: rates[0], signed: rates[1], forgedKnownKey: rates[2])
    }
}
