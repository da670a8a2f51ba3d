// Sigil's sample app: a SwiftUI app that enrolls the device (a Secure Enclave key App Attest vouches
// for where it runs, else the key alone), waits while the Keychain is locked, sends a signed request
// over a pinned connection (pins that follow the server's signed discovery), resets when the server
// says, signed, that the device is revoked, rotates its key and resets on sign-out.
// Type-checked by AppleCheck/run at iOS 17; to run it, add it to an Xcode iOS app target with the
// package's SigilClient product, and point `server` at `sigil serve`.
import SigilClient
import SwiftUI

@main
struct SigilDemoApp: App {
    var body: some Scene {
        WindowGroup { DeviceView() }
    }
}

struct DeviceView: View {
    /// The backend (`sigil serve`, or yours with Sigil mounted).
    static let server = "https://api.example.com"
    /// The enrollment token (the bootstrap token, or the logged-in user's enrollment JWT).
    static let token = "paste the token sigil serve printed"

    @State private var device: SigilDevice?
    @State private var status = "Starting…"
    @State private var busy = false

    var body: some View {
        VStack(spacing: 16) {
            Text(status)
            Button("Enroll") { run(enroll) }.disabled(busy)
            Button("Send a signed request") { run(echo) }.disabled(busy)
            Button("Rotate the key") { run(rotate) }.disabled(busy)
            Button("Reset") { run(reset) }.disabled(busy)
        }
        .padding()
        .task { await open() }
    }

    func open() async {
        do {
            let device = try SigilDevice(store: KeychainDeviceStore(service: "dev.sigil.demo"))
            self.device = device
            switch await device.enrollmentState {
            case .enrolled(let identity): status = "Enrolled as \(identity.keyID)"
            case .notEnrolled: status = "Not enrolled"
            // Before the first unlock, or prewarmed: wait, and never enroll on it (that orphans a device).
            case .unknown: status = "Waiting for the device to be unlocked"
            }
        } catch {
            status = "Sigil could not start: \(error)"
        }
    }

    func run(_ action: @escaping @MainActor (SigilDevice) async throws -> String) {
        guard let device else { return }
        busy = true
        Task {
            do {
                status = try await action(device)
            } catch let refusal as SigilError where refusal.code == .revokedKey || refusal.code == .unknownKey {
                // The server said so, in a refusal it signed for this request: enroll again.
                try? await device.reset(revoke: false)
                status = "This device was revoked: enroll again"
            } catch let refusal as SigilError {
                status = "Refused: \(refusal.code.rawValue)"
            } catch let failure as SigilClientError {
                // Not the server's word (no network, a captive portal, a locked Keychain): never a reset.
                status = "\(failure.kind.rawValue): \(failure.recovery)"
            } catch {
                status = "Failed: \(error)"
            }
            busy = false
        }
    }

    func enroll(_ device: SigilDevice) async throws -> String {
        let identity: DeviceIdentity
        do {
            // App Attest vouches once for the Secure Enclave key, which then signs every request.
            let appAttest = try await AppAttestSigner.generate()
            identity = try await device.enroll(
                try SecureEnclaveSigningKey(), vouchedBy: appAttest, server: Self.server, token: Self.token)
        } catch AppAttestFailure.unsupported {
            // The simulator and devices without App Attest: a Secure Enclave key.
            identity = try await device.enroll(try SecureEnclaveSigningKey(), server: Self.server, token: Self.token)
        }
        return "Enrolled as \(identity.keyID) (device \(identity.deviceID))"
    }

    func echo(_ device: SigilDevice) async throws -> String {
        var request = HTTPRequest(method: .post, scheme: "https", authority: "api.example.com", path: "/v1/echo")
        request.headerFields[.contentType] = "application/json"
        let answer = try await device.send(request, body: Array(#"{"hello":"world"}"#.utf8))
        return "HTTP \(answer.head.status.code), answer signed: \(answer.signatureVerified)"
    }

    func rotate(_ device: SigilDevice) async throws -> String {
        "Rotated to \(try await device.rotate(to: try SecureEnclaveSigningKey()).keyID)"
    }

    func reset(_ device: SigilDevice) async throws -> String {
        try await device.reset()
        return "Reset: not enrolled"
    }
}
