// README.md line 829
import Foundation
import SigilClient
@MainActor
func readmeSnippet2(_ key: SecureEnclaveSigningKey, _ token: String, _ registration: DeviceRegistration, _ store: KeychainDeviceStore, _ userInfo: [AnyHashable: Any]) async throws {
    var enrollment = DeviceEnrollment()
    enrollment.sealingKey = try SealingPrivateKey.generate()   // kept by the store (Keychain: its seed)
    let identity = try await enrollment.enroll(key, token: token, with: registration, store: store)
    // in application(_:didReceiveRemoteNotification:):
    let payload = try JSONSerialization.data(withJSONObject: userInfo)
    _ = try DeviceEnrollment.receivePushedSecret(Array(payload), store: store)
}
