import Foundation
import HTTPTypes
import SigilClient
@_spi(Sigil) import SigilCore
import SigilRSA
import SigilServer

/// A fixed nonce, for reproducible requests.
struct FixedNonce: NonceSource {
    let value: String
    func next() -> String { value }
}

/// A signer, the matching verifier and a clock, around one generated key.
struct SigningSetup: Sendable {
    let key: SigningKey
    let keyID: String
    let clock: ManualUnixClock
    let store: MemoryNonceStore
    let directory: MemoryKeyDirectory
    let verifier: RequestVerifier

    static let start: Int64 = 1_763_769_600

    init(_ algorithm: SignatureAlgorithm, configuration: VerifierConfiguration = VerifierConfiguration()) async throws {
        key = try SigningKey.generate(algorithm, formats: .withRSA)
        keyID = try key.verificationKey.derivedKeyID ?? "device-secret-1"
        clock = ManualUnixClock(Self.start)
        // A verifier that has been up for a while: the restart rule refuses requests dated at its start.
        store = MemoryNonceStore(clock: ManualUnixClock(Self.start - 60))
        directory = MemoryKeyDirectory()
        try await directory.add(try key.verificationKey, keyID: keyID)
        verifier = RequestVerifier(keys: directory, nonces: store, clock: clock, configuration: configuration)
    }

    func signer(_ profile: SignatureProfile, nonce: String? = nil) -> RequestSigner {
        RequestSigner(
            key: key,
            keyID: keyID,
            profile: profile,
            clock: clock,
            nonces: nonce.map { FixedNonce(value: $0) as any NonceSource } ?? RandomNonceSource()
        )
    }

    static func jsonPost(_ body: String = #"{"to":"acct_2","amount":"25.00"}"#) -> (HTTPRequest, [UInt8]) {
        var request = HTTPRequest(
            method: .post, scheme: "https", authority: "api.example.com", path: "/v1/transfers?a=1")
        request.headerFields[.contentType] = "application/json"
        return (request, Array(body.utf8))
    }
}

extension RequestVerifier {
    /// The code a verification fails with, or `nil` when it passes.
    func failure(_ request: HTTPRequest, body: [UInt8]) async -> SigilError.Code? {
        do {
            _ = try await verify(request, body: body)
            return nil
        } catch let error as SigilError {
            return error.code
        } catch {
            return nil
        }
    }
}

extension Directory {
    /// Registers `key` under `keyID` on a device of its own (`dev-` and the key ID).
    func add(_ key: VerificationKey, keyID: String) async throws {
        try await apply(DirectoryChange(added: [RegisteredKey(keyID: keyID, key: key, deviceID: "dev-" + keyID)]))
    }
}
