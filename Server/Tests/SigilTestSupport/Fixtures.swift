import Foundation
import HTTPTypes
@_spi(Sigil) import SigilCore
import SigilRSA
import SigilServer

enum Fixtures {
    /// The public or secret key file of a sigil-v1 vector, registered for its algorithm.
    static func verificationKey(_ vector: VectorCase) throws -> VerificationKey {
        let algorithm = try SignatureAlgorithm.named(vector["algorithm"]?.string ?? "")
        return try KeyFile.load(
            try Vectors.keyFile(vector["keyFile"]?.string ?? ""), algorithm: algorithm, formats: .withRSA
        )
        .verificationKey
    }

    /// The private key behind a vector's key file (`x.pub.pem` → `x.pem`).
    static func signingKey(_ vector: VectorCase) throws -> SigningKey? {
        let algorithm = try SignatureAlgorithm.named(vector["algorithm"]?.string ?? "")
        var name = vector["keyFile"]?.string ?? ""
        if algorithm.rawValue.hasPrefix("ecdsa-p256") { name = "ecdsa-p256.pem" }
        name = name.replacingOccurrences(of: ".pub.pem", with: ".pem")
        return try KeyFile.load(try Vectors.keyFile(name), algorithm: algorithm, formats: .withRSA).signingKey
    }

    static func message(_ text: String) throws -> RawHTTPMessage {
        try RawHTTPMessage(parsing: Array(text.utf8))
    }

    static func verifier(
        keyID: String,
        key: VerificationKey,
        now: Int64,
        maxSkew: Int64 = 300,
        store: MemoryNonceStore? = nil
    ) async -> RequestVerifier {
        let directory = MemoryKeyDirectory([RegisteredKey(keyID: keyID, key: key)])
        var configuration = VerifierConfiguration()
        configuration.maxSkew = maxSkew
        return RequestVerifier(
            keys: directory,
            nonces: store ?? MemoryNonceStore(clock: ManualUnixClock(0)),
            clock: ManualUnixClock(now),
            configuration: configuration
        )
    }
}

extension SigilError.Code {
    static func named(_ name: String?) -> SigilError.Code? { name.flatMap(SigilError.Code.init(rawValue:)) }
}
