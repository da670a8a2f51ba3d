@_spi(Sigil) import SigilCore
import SigilServer

extension AppAttestVerifier: DeviceAttestationVerifier {
    /// The attested key of an enrollment, as an `apple-appattest` verification key, judged at
    /// ``AppAttestVerifier/now``, and its receipt when ``AppAttestVerifier/verifyReceipt(of:at:)`` accepts it.
    ///
    /// - Throws: `enrollment-refused` naming the failed step.
    public func attestedKey(_ attestation: [UInt8], keyID: [UInt8], clientDataHash: [UInt8]) async throws
        -> (key: VerificationKey, receipt: [UInt8]?)
    {
        do {
            let time = now()
            let attested = try await verifyAttestation(
                attestation, keyID: keyID, clientDataHash: clientDataHash, at: time)
            let receipt = try? await verifyReceipt(of: attested, at: time)
            return (
                try VerificationKey(attested.publicKey, algorithm: .appleAppAttest),
                receipt.map { _ in attested.receipt }
            )
        } catch let error as AppAttestError {
            throw SigilError(.enrollmentRefused, "App Attest \(error.code): \(error.detail)")
        }
    }
}

/// The ``AssertionPolicy`` of App Attest: an assertion made for an accepted App ID, whose counter is
/// above the stored one, recorded atomically.
public struct AppAttestAssertions: AssertionPolicy {
    /// The accepted App IDs.
    public let verifier: AppAttestVerifier
    /// Where counters are kept.
    public let counters: any AppAttestStore

    /// Creates the policy.
    public init(verifier: AppAttestVerifier, counters: any AppAttestStore) {
        self.verifier = verifier
        self.counters = counters
    }

    public func accept(_ assertion: AppAttestAssertion, keyID: String) async throws {
        do {
            _ = try verifier.appID(forRPIDHash: assertion.rpIDHash)
        } catch let error as AppAttestError {
            throw SigilError(.invalidSignature, "App Attest \(error.code): \(error.detail)")
        }
        let advanced: Bool
        do {
            advanced = try await counters.advance(keyID: keyID, to: assertion.counter)
        } catch {
            throw SigilError(.storeUnavailable, "the App Attest counters did not answer; the request is refused")
        }
        guard advanced else {
            throw SigilError(
                .replayedNonce, "App Attest counter \(assertion.counter) of key \(keyID) is not above the last")
        }
    }
}
