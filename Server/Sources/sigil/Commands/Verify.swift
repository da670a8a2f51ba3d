import ArgumentParser
import Foundation
@_spi(Sigil) import SigilCore
import SigilServer

struct Verify: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Verify a signed raw HTTP request on standard input.",
        discussion: "Exit 0 and 'valid key-id=ID alg=ALG'; exit 1 and 'invalid CODE: detail'; exit 2 on unusable input."
    )

    @OptionGroup var keyOptions: KeyOptions

    @Option(name: .long, help: "sigil-v1 or rfc9421 (default: whichever the message carries).")
    var profile: SignatureProfile?

    @Option(name: .long, help: "Unix seconds to verify at (default: now).")
    var now: Int64?

    @Option(name: .customLong("max-skew"), help: "Accepted |now - timestamp| in seconds.")
    var maxSkew: Int64 = 300

    @Option(name: .long, help: "rfc9421: the label to verify (default: the first).")
    var label: String?

    @Option(name: .long, help: "The scheme of the request.")
    var scheme: String = "https"

    func run() async throws {
        let (loaded, keyID) = try keyOptions.load()
        let message = try RawHTTPMessage(parsing: try IO.readStandardInput())
        guard !message.isResponse else { throw SigilInputError("verify reads a request; this is a response") }
        let request = try message.request(scheme: scheme)
        var configuration = VerifierConfiguration()
        configuration.maxSkew = maxSkew
        configuration.label = label
        if let profile { configuration.profiles = [profile] }
        let verifier = RequestVerifier(
            keys: MemoryKeyDirectory([RegisteredKey(keyID: keyID, key: loaded.verificationKey)]),
            nonces: MemoryNonceStore(clock: ManualUnixClock(0)),
            clock: now.map { ManualUnixClock($0) } ?? SystemUnixClock(),
            configuration: configuration
        )
        do {
            let verified = try await verifier.verify(request, body: message.body)
            print("valid key-id=\(verified.keyID) alg=\(verified.algorithm)")
        } catch let error as SigilError {
            print("invalid \(error.code): \(error.detail)")
            throw ExitStatus(code: 1)
        }
    }
}
