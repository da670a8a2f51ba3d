import ArgumentParser
import Foundation
import HTTPTypes
@_spi(Sigil) import SigilCore
import SigilSQLite
import SigilServer
import SigilStandalone

/// `sigil push-secret --device dev-…`: a new HMAC secret for a device of the data directory's
/// registry, sealed to the device's X-Wing key and signed with the response key, written as an APNs
/// payload for the team's own push sender. No APNs connection is made.
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

    @Option(name: .customLong("data-dir"), help: "The data directory of sigil serve (default: ~/.sigil).")
    var dataDirectory: String?

    @Option(name: .long, help: "The device ID (dev-…).")
    var device: String

    @Option(name: .customLong("secret-overlap"), help: "Seconds the device's earlier secrets stay valid.")
    var secretOverlap: Int64 = 86_400

    @Option(name: .long, help: "Write the payload here (mode 0600) instead of standard output.")
    var out: String?

    /// Registers nobody: this command only issues secrets.
    struct NoEnrollment: EnrollmentAuthorizer {
        func authorize(_ request: HTTPRequest) async throws -> String? {
            throw SigilError(.enrollmentRefused, "sigil push-secret registers no device")
        }
    }

    func run() async throws {
        let data = try DataDirectory(path: dataDirectory ?? DataDirectory.defaultPath)
        guard FileManager.default.fileExists(atPath: data.databasePath) else {
            throw SigilInputError("no registry in \(data.path): start sigil serve there first")
        }
        guard secretOverlap >= 0 else { throw SigilInputError("--secret-overlap must not be negative") }
        let responseKey = try data.responseKey()
        guard let responseKeyID = try responseKey.verificationKey.derivedKeyID else {
            throw SigilInputError("the response key has no key ID")
        }
        let registry = try await SQLiteKeyDirectory.open(
            path: data.databasePath, masterKey: try data.masterKey(), keyFormats: .withRSA)
        let payload: [UInt8]
        do {
            var configuration = RegistrationService.Configuration()
            configuration.secretOverlap = secretOverlap
            let service = RegistrationService(
                registry: registry, nonces: MemoryNonceStore(), enrollment: NoEnrollment(),
                configuration: configuration)
            let issued = try await service.issueSealedSecret(toDevice: device)
            // Checked before anything is written: a payload over 4 KB is refused.
            payload = try ResponseSigner(signer: responseKey, keyID: responseKeyID).secretPush(issued, deviceID: device)
                .payload()
            try await registry.close()
        } catch {
            try? await registry.close()
            if let error = error as? SigilError { throw SigilInputError("\(error.code): \(error.detail)") }
            throw error
        }
        if let out {
            try IO.writeSecret(String(decoding: payload, as: UTF8.self) + "\n", to: out)
        } else {
            IO.write(payload + Array("\n".utf8))
        }
    }
}
