import Crypto
import Foundation
import HTTPTypes
import SigilClient
@_spi(Sigil) import SigilCore
import SigilServer

/// Sealing (PROTOCOL.md section 6) against swift-crypto's own HPKE in the same run: seal and open of
/// a 1 KiB and a 1 MiB body, and an HMAC-verified sealed request opened.
enum SealingBench {
    struct Row {
        let name: String
        let sigil: Double
        let raw: Double
    }

    static func run(seconds: Double) async throws -> [Row] {
        let key = try SealingPrivateKey.generate()
        let raw = try XWingMLKEM768X25519.PrivateKey.generate()
        let suite = HPKE.Ciphersuite.XWingMLKEM768X25519_SHA256_AES_GCM_256
        let info = Data("sigil sealed request v1\0nonce-0123456789abcdef".utf8)
        var rows: [Row] = []
        for (label, size) in [("1 KiB", 1 << 10), ("1 MiB", 1 << 20)] {
            let body = [UInt8](repeating: 0x61, count: size)
            rows.append(
                try alternate(
                    "seal \(label)", seconds: seconds,
                    sigil: {
                        _ = try Sealing.sealRequest(
                            body, to: key.publicKey, keyID: "bench-key", nonce: "nonce-0123456789abcdef")
                    },
                    raw: {
                        var sender = try HPKE.Sender(recipientKey: raw.publicKey, ciphersuite: suite, info: info)
                        _ = try sender.seal(body)
                    }))
            let (sealed, _) = try Sealing.sealRequest(
                body, to: key.publicKey, keyID: "bench-key", nonce: "nonce-0123456789abcdef")
            var sender = try HPKE.Sender(recipientKey: raw.publicKey, ciphersuite: suite, info: info)
            let ciphertext = try sender.seal(body)
            let encapsulated = sender.encapsulatedKey
            rows.append(
                try alternate(
                    "open \(label)", seconds: seconds,
                    sigil: {
                        _ = try Sealing.openRequest(
                            sealed, with: [key], keyID: "bench-key", nonce: "nonce-0123456789abcdef")
                    },
                    raw: {
                        var recipient = try HPKE.Recipient(
                            privateKey: raw, ciphersuite: suite, info: info, encapsulatedKey: encapsulated)
                        _ = try recipient.open(ciphertext)
                    }))
        }
        rows.append(try await verifiedAndOpened(key: key, raw: raw, seconds: seconds))
        return rows
    }

    /// An HMAC-verified sealed 1 KiB request, opened, against swift-crypto's open alone.
    static func verifiedAndOpened(key: SealingPrivateKey, raw: XWingMLKEM768X25519.PrivateKey, seconds: Double)
        async throws -> Row
    {
        let secret = try SigningKey.generate(.hmacSHA256)
        let directory = MemoryKeyDirectory()
        let clock = ManualUnixClock(1_763_769_600)
        let sealing = SealedBodies(keys: [key])
        let body = BenchBody.json
        // Requests signed ahead, each with its own nonce; the verifier's store forgets nothing, so a
        // fresh one per slice.
        let count = 4096
        var requests: [(HTTPRequest, [UInt8])] = []
        let signer = RequestSigner(key: secret, keyID: "hmac-bench", clock: clock)
        for _ in 0..<count {
            var request = HTTPRequest(method: .post, scheme: "https", authority: "api.example.com", path: "/v1/pay")
            request.headerFields[.contentType] = "application/json"
            request.headerFields[.contentEncoding] = Sealing.contentEncoding
            let nonce = signer.nonces.next()
            let (sealed, _) = try Sealing.sealRequest(body, to: key.publicKey, keyID: signer.keyID, nonce: nonce)
            try signer.sign(&request, body: sealed, nonce: nonce)
            requests.append((request, sealed))
        }
        let suite = HPKE.Ciphersuite.XWingMLKEM768X25519_SHA256_AES_GCM_256
        let info = Data("sigil sealed request v1\0nonce-0123456789abcdef".utf8)
        var sender = try HPKE.Sender(recipientKey: raw.publicKey, ciphersuite: suite, info: info)
        let ciphertext = try sender.seal(body)
        let encapsulated = sender.encapsulatedKey
        try await directory.add(try secret.verificationKey, keyID: "hmac-bench")
        var sigilSeconds = 0.0
        var sigilCount = 0
        var rawRate = 0.0
        for _ in 0..<5 {
            let verifier = RequestVerifier(
                keys: directory, nonces: MemoryNonceStore(clock: ManualUnixClock(1_763_769_500)), clock: clock)
            let start = Stopwatch.now()
            let deadline = start + UInt64(seconds / 5 * 1e9)
            var index = 0
            while Stopwatch.now() < deadline && index < count {
                let (request, sealed) = requests[index]
                let verified = try await verifier.verify(request, body: sealed)
                _ = try sealing.open(request, body: sealed, verified: verified)
                index += 1
            }
            sigilSeconds += Double(Stopwatch.now() - start) / 1e9
            sigilCount += index
            rawRate += try rate(seconds: seconds / 5) {
                var recipient = try HPKE.Recipient(
                    privateKey: raw, ciphersuite: suite, info: info, encapsulatedKey: encapsulated)
                _ = try recipient.open(ciphertext)
            }
        }
        return Row(
            name: "HMAC-verified sealed 1 KiB request, opened", sigil: Double(sigilCount) / sigilSeconds,
            raw: rawRate / 5)
    }

    /// Sigil's and the raw operation's rates, measured in five alternating slices.
    static func alternate(_ name: String, seconds: Double, sigil: () throws -> Void, raw: () throws -> Void) throws
        -> Row
    {
        var sigilRate = 0.0
        var rawRate = 0.0
        for _ in 0..<5 {
            sigilRate += try rate(seconds: seconds / 5, sigil)
            rawRate += try rate(seconds: seconds / 5, raw)
        }
        return Row(name: name, sigil: sigilRate / 5, raw: rawRate / 5)
    }

    static func rate(seconds: Double, _ body: () throws -> Void) throws -> Double {
        try body()
        var count = 0
        let start = Stopwatch.now()
        let deadline = start + UInt64(seconds * 1e9)
        repeat {
            try body()
            count += 1
        } while Stopwatch.now() < deadline
        return Double(count) / (Double(Stopwatch.now() - start) / 1e9)
    }
}
