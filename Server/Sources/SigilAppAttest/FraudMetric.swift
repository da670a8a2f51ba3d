import Crypto
import Foundation
@_spi(Sigil) import SigilCore
import X509

/// Sends one HTTP request for ``FraudMetricClient``: an HTTP client in production, a stand-in in
/// tests (Apple's server is not reachable from every network).
public protocol FraudMetricTransport: Sendable {
    /// POSTs `body` to `url` with `headers`.
    ///
    /// - Returns: the status and body of the answer.
    func post(url: String, headers: [(name: String, value: String)], body: [UInt8]) async throws
        -> (status: Int, body: [UInt8])
}

/// Refreshes an App Attest receipt to read the fraud metric (Apple's "Assessing fraud risk"): the
/// receipt, base64, POSTed to Apple's `attestationData` endpoint with a JWT signed by the team's
/// DeviceCheck key; the answer is a newer receipt, checked like any other.
public struct FraudMetricClient: Sendable {
    /// What a refresh found.
    public enum Refresh: Sendable, Hashable {
        /// A newer receipt, verified; keep its bytes for the next refresh.
        case updated(AppAttestReceipt, bytes: [UInt8])
        /// 304: not yet (before the receipt's `notBefore`); keep the receipt.
        case notModified
        /// 404: Apple holds no data for it any more (after about 30 days); keep the receipt.
        case noData
    }

    /// Why a refresh failed.
    public struct Failure: Error, Sendable, Hashable, CustomStringConvertible {
        /// The HTTP status Apple answered with.
        public let status: Int
        /// Creates the failure.
        public init(status: Int) { self.status = status }
        public var description: String { "Apple's App Attest server answered \(status)" }
    }

    /// The environment whose server is asked.
    public let environment: AppAttestVerifier.Environment
    /// The team ID, the JWT's `iss`.
    public let teamID: String
    /// The DeviceCheck key's ID, the JWT's `kid`.
    public let keyID: String
    let privateKey: P256.Signing.PrivateKey
    let transport: any FraudMetricTransport
    let clock: any UnixClock

    /// Creates a client.
    ///
    /// - Parameters:
    ///   - privateKey: the team's DeviceCheck private key (the `.p8` file, P-256).
    ///   - transport: sends the request.
    public init(
        environment: AppAttestVerifier.Environment, teamID: String, keyID: String,
        privateKey: P256.Signing.PrivateKey, transport: any FraudMetricTransport,
        clock: any UnixClock = SystemUnixClock()
    ) {
        self.environment = environment
        self.teamID = teamID
        self.keyID = keyID
        self.privateKey = privateKey
        self.transport = transport
        self.clock = clock
    }

    /// The endpoint of ``environment``.
    public var url: String {
        switch environment {
        case .production: return "https://data.appattest.apple.com/v1/attestationData"
        case .development: return "https://data-development.appattest.apple.com/v1/attestationData"
        }
    }

    /// The request for `receipt`: its headers (the JWT in `Authorization`) and its body (the receipt
    /// in standard base64).
    public func request(for receipt: [UInt8]) throws -> (headers: [(name: String, value: String)], body: [UInt8]) {
        ([("Authorization", try token()), ("Content-Type", "text/plain")], Array(Base64.encode(receipt).utf8))
    }

    /// An ES256 JWT: `{"alg":"ES256","kid":…}`, `{"iss":team ID,"iat":now}`.
    func token() throws -> String {
        let header = try Registration.json(["alg": "ES256", "kid": keyID])
        let claims =
            Array("{\"iat\":\(clock.now()),\"iss\":".utf8) + (try Registration.json(teamID)) + [UInt8(ascii: "}")]
        let signingInput = Base64URL.encode(header) + "." + Base64URL.encode(claims)
        let signature = try privateKey.signature(for: Array(signingInput.utf8))
        return signingInput + "." + Base64URL.encode(Array(signature.rawRepresentation))
    }

    /// Refreshes `receipt`, verifying the answer at the client's time.
    ///
    /// - Throws: ``Failure`` for another status; ``AppAttestError`` `receipt-invalid` for an
    ///   answer that is not an Apple-signed receipt.
    public func refresh(_ receipt: [UInt8], root: Certificate = AppAttestVerifier.appleRootCAG3) async throws
        -> Refresh
    {
        let (headers, body) = try request(for: receipt)
        let answer = try await transport.post(url: url, headers: headers, body: body)
        switch answer.status {
        case 200:
            let text = String(decoding: answer.body, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            guard let bytes = Base64.decode(text) else {
                throw AppAttestError(.receiptInvalid, "Apple's answer is not a base64 receipt")
            }
            let refreshed = try await AppAttestReceipt.verify(
                bytes, at: Date(timeIntervalSince1970: TimeInterval(clock.now())), root: root)
            return .updated(refreshed, bytes: bytes)
        case 304: return .notModified
        case 404: return .noData
        default: throw Failure(status: answer.status)
        }
    }
}
