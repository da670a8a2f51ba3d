import Crypto
import Foundation
@_spi(Sigil) import SigilCore
import SigilServer

/// Accepts the debug attestations of App Attest's debug provider (`AppAttestDebugProvider`, for the
/// simulator, as App Check's debug tokens) made with one of the server's debug tokens, and every other
/// attestation as `verifier` does. A server uses it only when started with a debug token
/// (`sigil serve --app-attest-debug-token FILE`); without one, a debug attestation is not App Attest's
/// and is refused.
///
/// The key is then an `apple-appattest` key like any other: every request is an assertion, its
/// counter kept, for one of the accepted App IDs. What it does not prove is a genuine device.
public struct AppAttestDebugVerifier: DeviceAttestationVerifier {
    /// Checks every attestation that is not a debug one.
    public let verifier: any DeviceAttestationVerifier
    let tokens: [[UInt8]]

    /// Accepts debug attestations made with one of `tokens`, each ``isStrong(_:)``.
    ///
    /// - Throws: ``SigilInputError`` for a token that is not, or none.
    public init(verifier: any DeviceAttestationVerifier, tokens: [String]) throws {
        guard !tokens.isEmpty, tokens.allSatisfy(Self.isStrong) else {
            throw SigilInputError(
                "an App Attest debug token holds at least \(Int(Self.minimumBits)) bits: 44 random base64 characters (sigil keygen --alg hmac-sha256 writes them) or 64 hex digits"
            )
        }
        self.verifier = verifier
        self.tokens = tokens.map { Array($0.utf8) }
    }

    /// Whether `token` is taken (PROTOCOL.md section 7): more than ``minimumBits`` by
    /// ``estimatedBits(_:)``, and no 8 bytes of it appear twice (a pattern repeated holds more bits
    /// by frequency the longer it runs: `0123456789abcdef` twice, `ab` 64 times).
    public static func isStrong(_ token: String) -> Bool {
        let bytes = Array(token.utf8)
        guard estimatedBits(token) > minimumBits else { return false }
        var seen = Set<ArraySlice<UInt8>>()
        for start in 0..<max(bytes.count - 7, 0) where !seen.insert(bytes[start..<(start + 8)]).inserted {
            return false
        }
        return true
    }

    /// The bits a debug token must hold more than, by ``estimatedBits(_:)``.
    public static let minimumBits = 128.0

    /// The bits `token` holds by the stated rule (PROTOCOL.md section 7): its length in bytes times
    /// the Shannon entropy of its own byte frequencies, `n × Σ −p log2 p`. A random token's bytes are
    /// spread over its alphabet, so it is near length × log2(alphabet): 44 base64 characters about
    /// 220, 64 hex digits about 240, 32 hex digits at most 128 and nearly always fewer. A made-up one
    /// repeats a few: `aaaa…` holds 0, `12345678` four times 96.
    public static func estimatedBits(_ token: String) -> Double {
        let bytes = Array(token.utf8)
        var counts = [Int](repeating: 0, count: 256)
        for byte in bytes { counts[Int(byte)] += 1 }
        let total = Double(bytes.count)
        let perByte = counts.reduce(0.0) { sum, count in
            guard count > 0 else { return sum }
            let p = Double(count) / total
            return sum - p * log2(p)
        }
        return total * perByte
    }

    /// ``RegisteredKey/appAttestDebug`` for a debug attestation, recorded with the device.
    public func summary(of attestation: [UInt8]) -> String? {
        attestation.first == UInt8(ascii: "{") ? RegisteredKey.appAttestDebug : nil
    }

    public func attestedKey(_ attestation: [UInt8], keyID: [UInt8], clientDataHash: [UInt8]) async throws
        -> (key: VerificationKey, receipt: [UInt8]?)
    {
        guard attestation.first == UInt8(ascii: "{") else {
            return try await verifier.attestedKey(attestation, keyID: keyID, clientDataHash: clientDataHash)
        }
        func refuse(_ step: String) -> SigilError {
            SigilError(.enrollmentRefused, "App Attest debug attestation: \(step)")
        }
        guard attestation.count <= AppAttestDebug.maximumSize,
            let object = try? JSONSerialization.jsonObject(with: Data(attestation)) as? [String: Any],
            object.count == 3, object["fmt"] as? String == AppAttestDebug.format,
            let publicKeyText = object["publicKey"] as? String, let publicKey = Base64.decode(publicKeyText),
            let macText = object["mac"] as? String, let mac = Base64.decode(macText), mac.count == 32
        else { throw refuse("not a \(AppAttestDebug.format) attestation") }
        guard let key = try? P256.Signing.PublicKey(x963Representation: publicKey) else {
            throw refuse("the key is not a P-256 key")
        }
        guard Array(SHA256.hash(data: key.x963Representation)) == keyID else {
            throw refuse("the key ID is not SHA-256 of the key")
        }
        let accepted = tokens.contains { token in
            let expected = AppAttestDebug.mac(
                token: token, keyID: keyID, publicKey: publicKey, clientDataHash: clientDataHash)
            return zip(expected, mac).reduce(UInt8(0)) { $0 | ($1.0 ^ $1.1) } == 0
        }
        guard accepted else { throw refuse("made with no debug token this server accepts") }
        return (try VerificationKey(key, algorithm: .appleAppAttest), nil)
    }
}
