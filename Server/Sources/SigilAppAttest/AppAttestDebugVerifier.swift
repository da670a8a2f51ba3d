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

    /// Accepts debug attestations made with one of `tokens` (at least 32 bytes each, of at least 10
    /// different characters: a random token's, never `aaaa…` or `1234…` repeated).
    ///
    /// - Throws: ``SigilInputError`` for a token shorter than 32 bytes or of fewer than 10 different
    ///   characters, or none.
    public init(verifier: any DeviceAttestationVerifier, tokens: [String]) throws {
        // 32 hex characters of a random token hold fewer than 10 different ones with a chance below
        // 10^-9; a made-up one (32 × a, a word repeated) holds a few.
        guard !tokens.isEmpty, tokens.allSatisfy({ $0.utf8.count >= 32 && Set($0.utf8).count >= 10 }) else {
            throw SigilInputError(
                "an App Attest debug token is at least 32 random characters (sigil keygen --alg hmac-sha256)")
        }
        self.verifier = verifier
        self.tokens = tokens.map { Array($0.utf8) }
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
