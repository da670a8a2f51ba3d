import ArgumentParser
import Foundation
import HTTPTypes
@_spi(Sigil) import SigilCore
import SigilServer
import SigilStandalone

/// `sigil push-secret --device dev-…`: a new HMAC secret for a device of a server's store (the data
/// directory's, or PostgreSQL), sealed to the device's X-Wing key and signed with the response key
/// current in the key ring, written as an APNs payload for the team's own push sender. No APNs
/// connection is made.
struct PushSecret: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "push-secret",
        abstract: "Issue a device a new HMAC secret sealed to its X-Wing key, as an APNs payload (at most 4 KB).",
        discussion: """
            The device must have registered a sealing key (sigil enroll --seal-secret, or DeviceEnrollment's \
            sealingKey). Its earlier secrets stay valid for --secret-overlap seconds. The payload is \
            {"aps":{"content-available":1},"sigil-secret":…,"sigil-key-id":…,"sigil-issued-at":…,"sigil-signature":…}; \
            SigilClient's DeviceEnrollment.receivePushedSecret takes it.
            """
    )

    @OptionGroup var store: Admin.StoreOptions

    @Option(name: .long, help: "The device ID (dev-…).")
    var device: String

    @Option(name: .customLong("secret-overlap"), help: "Seconds the device's earlier secrets stay valid.")
    var secretOverlap: Int64 = 86_400

    @Option(name: .long, help: "Write the payload here (mode 0600) instead of standard output.")
    var out: String?

    @Option(name: .customLong("as"), help: "Your name in the audit trail (default: $USER).")
    var operatorName: String?

    func validate() throws { _ = try Admin.operatorName(operatorName) }

    /// Registers nobody: this command only issues secrets.
    struct NoEnrollment: EnrollmentAuthorizer {
        func authorize(_ request: HTTPRequest) async throws -> String? {
            throw SigilError(.enrollmentRefused, "sigil push-secret registers no device")
        }
    }

    func run() async throws {
        guard secretOverlap >= 0 else { throw SigilInputError("--secret-overlap must not be negative") }
        // The store and the server's keys as `sigil serve` and `sigil admin` open them: the data
        // directory's SQLite file or PostgreSQL, and the response key current now in the key ring
        // (not a file: after a promotion the file's key is retired).
        let payload: [UInt8] = try await store.with(serverKeys: true) { administration in
            guard let ring = administration.serverKeys else {
                throw SigilInputError("this store holds no server keys yet: start `sigil serve` on it once")
            }
            var configuration = RegistrationService.Configuration()
            configuration.secretOverlap = secretOverlap
            let service = RegistrationService(
                directory: administration.directory, nonces: MemoryNonceStore(), enrollment: NoEnrollment(),
                configuration: configuration, clock: administration.clock)
            do {
                let issued = try await service.issueSealedSecret(
                    toDevice: device, actor: "operator:" + (try Admin.operatorName(operatorName)))
                // Checked before anything is written: a payload over 4 KB is refused.
                return try ResponseSigner(ring: ring, clock: administration.clock).secretPush(issued, deviceID: device)
                    .payload()
            } catch let error as SigilError {
                throw SigilInputError("\(error.code): \(error.detail)")
            }
        }
        if let out {
            try IO.writeSecret(String(decoding: payload, as: UTF8.self) + "\n", to: out)
        } else {
            IO.write(payload + Array("\n".utf8))
        }
    }
}
