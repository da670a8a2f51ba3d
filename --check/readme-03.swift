// README.md line 870
import Foundation
import SigilClient
@MainActor
func readmeSnippet3(_ registration: DeviceRegistration, _ transport: URLSessionTransport, _ clock: ServerClock) async throws {
    // The older mode, every request an assertion (SigilDevice.enroll(_:vouchedBy:) is the one to use):
    // one App Attest key, enrolled by attestation, signing with assertions.
    let signer = try await AppAttestSigner.generate()
    let identity = try await signer.enroll(with: registration, store: KeychainDeviceStore())
    let session = SigilSession(transport: transport,
                               signer: RequestSigner(key: signer, keyID: identity.keyID, clock: clock), clock: clock)
}
