import Foundation
import HTTPTypes
import SigilCore

/// Sends HTTP messages: the app's networking (AsyncHTTPClient, URLSession) behind one function.
public protocol SigilTransport: Sendable {
    /// Sends `request` with `body` and returns the response head and body.
    func send(_ request: HTTPRequest, body: [UInt8]) async throws -> (HTTPResponse, [UInt8])
}

/// A response as a ``SigilSession`` returns it.
public struct SigilResponse: Sendable {
    /// The response head.
    public let head: HTTPResponse
    /// The response body.
    public let body: [UInt8]
    /// Whether the server's signature on it was checked and verified.
    public let signatureVerified: Bool
    /// How many times the request was sent: 1, or 2 after a clock re-sync.
    public let attempts: Int
    /// The signature base of the request as last sent, for diagnosing a refusal.
    public let sentRequest: HTTPRequest

    /// The PROTOCOL.md code of a problem+json refusal, if this is one.
    public var problemCode: String? { problem?["code"] as? String }

    /// The server's signature base in a refusal, when its debug option is on.
    public var problemSignatureBase: String? { problem?["signatureBase"] as? String }

    /// The problem+json object of a refusal.
    var problem: [String: Any]? {
        guard head.headerFields[.contentType]?.hasPrefix("application/problem+json") == true else { return nil }
        return (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any]
    }
}

/// The app's side of every request: signed with server-corrected time, re-sent once with a new
/// nonce after `timestamp-out-of-window`, and the response's signature checked.
///
/// ```swift
/// let session = SigilSession(transport: transport, signer: signer, clock: serverClock,
///                            responses: ResponseVerifier(key: serverKey, keyID: serverKeyID, clock: serverClock))
/// let response = try await session.send(request, body: body)
/// ```
public struct SigilSession: Sendable {
    /// Sends the messages.
    public let transport: any SigilTransport
    /// Signs every request; its clock should be ``clock``.
    public let signer: RequestSigner
    /// The server-corrected clock, kept from `Date` headers and `serverTime`.
    public let clock: ServerClock
    /// Checks signed responses, when set.
    public let responses: ResponseVerifier?
    /// Refuse responses the server did not sign (needs ``responses``).
    public var requireSignedResponses: Bool

    /// Creates a session.
    ///
    /// - Parameters:
    ///   - responses: the server's response key; without it, response signatures are not checked.
    ///   - requireSignedResponses: refuse unsigned responses, refusals included.
    public init(
        transport: any SigilTransport,
        signer: RequestSigner,
        clock: ServerClock,
        responses: ResponseVerifier? = nil,
        requireSignedResponses: Bool = false
    ) {
        self.transport = transport
        self.signer = signer
        self.clock = clock
        self.responses = responses
        self.requireSignedResponses = requireSignedResponses && responses != nil
    }

    /// Signs and sends `request`; on `timestamp-out-of-window`, re-syncs from the error's
    /// `serverTime` and sends it once more with a new nonce and timestamp, never more.
    ///
    /// - Throws: the transport's errors; ``SigilError`` when the response's signature is missing
    ///   (with ``requireSignedResponses``), from another key, stale, or does not verify.
    public func send(_ request: HTTPRequest, body: [UInt8] = []) async throws -> SigilResponse {
        var attempts = 0
        while true {
            attempts += 1
            var signed = request
            let nonce = try signer.sign(&signed, body: body)
            let (head, responseBody) = try await transport.send(signed, body: body)
            if let date = head.headerFields[.date] { clock.synchronize(dateHeader: date) }
            let response = SigilResponse(
                head: head, body: responseBody, signatureVerified: false, attempts: attempts, sentRequest: signed)
            if attempts == 1, head.status.code == 401, response.problemCode == "timestamp-out-of-window",
                let serverTime = (response.problem?["serverTime"] as? NSNumber)?.int64Value
            {
                clock.synchronize(serverTime: serverTime)
                continue
            }
            return try verified(response, nonce: nonce, request: signed)
        }
    }

    /// Checks the response's signature when a server key is configured.
    func verified(_ response: SigilResponse, nonce: String, request: HTTPRequest) throws -> SigilResponse {
        guard let responses else { return response }
        let fields = response.head.headerFields
        let signedV1 = fields[SigilV1.signatureField] != nil
        let signedRFC9421 = fields[MessageSignatures.signatureField] != nil
        guard signedV1 || signedRFC9421 else {
            if requireSignedResponses {
                throw SigilError(.missingSignature, "the response (status \(response.head.status.code)) is not signed")
            }
            return response
        }
        if signedV1 {
            try responses.verifySigilV1(response.head, body: response.body, requestNonce: nonce)
        } else {
            try responses.verifyRFC9421(response.head, body: response.body, answering: request)
        }
        return SigilResponse(
            head: response.head, body: response.body, signatureVerified: true, attempts: response.attempts,
            sentRequest: response.sentRequest)
    }
}
