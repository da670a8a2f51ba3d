// Sigil's sample app: a SwiftUI app that enrolls the device (App Attest where it runs, else a
// Secure Enclave key), sends a signed request over a pinned connection, rotates its key and resets.
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
            status = await device.identity.map { "Enrolled as \($0.keyID)" } ?? "Not enrolled"
        } catch {
            status = "The Keychain could not be read: \(error)"
        }
    }

    func run(_ action: @escaping @MainActor (SigilDevice) async throws -> String) {
        guard let device else { return }
        busy = true
        Task {
            do {
                status = try await action(device)
            } catch let error as SigilError {
                status = "Refused: \(error.code.rawValue)"
            } catch {
                status = "Failed: \(error)"
            }
            busy = false
        }
    }

    func enroll(_ device: SigilDevice) async throws -> String {
        let identity: DeviceIdentity
        do {
            let signer = try await AppAttestSigner.generate()
            identity = try await device.enroll(appAttest: signer, server: Self.server, token: Self.token)
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
