import Foundation
import HTTPTypes
import HTTPTypesFoundation
@_spi(Sigil) import SigilCore

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Sigil for a networking stack of the app's own, in the shape of Alamofire's `RequestInterceptor`
/// (adapt, then retry) plus a validation step, without depending on Alamofire:
///
/// ```swift
/// // An Alamofire interceptor in a few lines:
/// struct Signing: RequestInterceptor {
///     let sigil: SigilInterceptor
///     func adapt(_ request: URLRequest, for session: Session, completion: @escaping (Result<URLRequest, Error>) -> Void) {
///         Task { completion(await Result { try await sigil.adapt(request) }) }
///     }
///     func retry(_ request: Request, for session: Session, dueTo error: Error, completion: @escaping (RetryResult) -> Void) {
///         completion(sigil.shouldRetry(request.request, response: request.response, data: (request as? DataRequest)?.data,
///                                      attempt: request.retryCount) ? .retry : .doNotRetry)
///     }
/// }
/// // and on each answer: try sigil.validate(request, response: response, data: data)
/// ```
///
/// ``adapt(_:)`` signs (a new nonce and timestamp each time, so a retried request is a new one);
/// ``validate(_:response:data:)`` checks the answer is signed by the server for that very request and
/// learns the clock from it; ``shouldRetry(_:response:data:attempt:)`` is `true` once, for a signed
/// `timestamp-out-of-window` refusal. App Attest keys need their requests in order, which an
/// interceptor cannot promise: send them with ``SigilDevice/send(_:body:sealed:)``.
public struct SigilInterceptor: Sendable {
    let session: SigilSession
    /// The device whose identity signs, to keep what an answer teaches (the clock's offset).
    let device: SigilDevice?
    /// The local time each recent request was signed at, by its signature: an answer teaches the clock
    /// only when its round trip is known and short (``ServerClock/maximumRoundTrip``).
    let sentAt = SentTimes()

    /// An interceptor signing as `session` does, and checking answers against its response key.
    public init(session: SigilSession) {
        self.session = session
        device = nil
    }

    init(session: SigilSession, device: SigilDevice) {
        self.session = session
        self.device = device
    }

    /// `request` signed (its `httpBody` is the body), with a fresh nonce and the server's time.
    ///
    /// - Throws: ``SigilInputError`` for a request to another origin than the session's, a streamed
    ///   body, or a key whose requests must go in order (App Attest).
    public func adapt(_ request: URLRequest) async throws -> URLRequest {
        guard !session.signer.key.requiresOrderedRequests else {
            throw SigilInputError("an App Attest key's requests go in order: send them with SigilDevice.send")
        }
        guard var head = request.httpRequest, request.httpBodyStream == nil else {
            throw SigilInputError("the URLRequest needs an absolute http(s) URL and its body as httpBody")
        }
        if let origin = session.origin, Origin(head) != origin {
            throw SigilInputError("this identity signs for \(origin) only")
        }
        let body = request.httpBody.map(Array.init) ?? []
        try await session.signer.signWithoutBlocking(&head, body: .bytes(body), nonce: session.signer.nonces.next())
        var signed = request
        for field in head.headerFields {
            signed.setValue(head.headerFields[field.name], forHTTPHeaderField: field.name.rawName)
        }
        sentAt.record(Self.signature(of: head), at: session.clock.localTime)
        return signed
    }

    /// The request's signature field, which names one signing.
    static func signature(of request: HTTPRequest) -> String {
        request.headerFields[SigilV1.signatureField] ?? request.headerFields[MessageSignatures.signatureField] ?? ""
    }

    /// The answer to `sent`, its signature checked by the session (and the clock learnt from it).
    func checked(_ sent: HTTPRequest, _ head: HTTPResponse, _ data: Data) throws -> SigilResponse {
        let received = SigilResponse(
            head: head, body: Array(data), signatureVerified: false, attempts: 1, sentRequest: sent)
        return try session.verified(received, request: sent, roundTrip: roundTrip(sent))
    }

    /// The round trip of the answer to `request`: from its signing, when this interceptor signed it
    /// recently, to now; else one too long to teach the clock anything.
    func roundTrip(_ request: HTTPRequest) -> (sentAt: Int64, receivedAt: Int64) {
        let now = session.clock.localTime
        return (sentAt.time(of: Self.signature(of: request)) ?? now - ServerClock.maximumRoundTrip - 1, now)
    }

    /// Checks the answer to `request` (as ``adapt(_:)`` signed it): signed by the server's response
    /// key, for this request, and learns the clock from its signed time.
    ///
    /// - Throws: ``SigilError``: a refusal the server signed, with its code; ``SigilClientError``: an
    ///   answer whose signature is missing, from another key, or does not verify.
    public func validate(_ request: URLRequest, response: HTTPURLResponse, data: Data) async throws {
        guard let head = response.httpResponse, let sent = request.httpRequest else {
            throw SigilInputError("not an HTTP exchange")
        }
        let checked: SigilResponse
        do {
            checked = try self.checked(sent, head, data)
        } catch let error as SigilError {
            throw SigilClientError.untrusted(head: head, body: Array(data), reason: error.detail)
        }
        // Whatever the session's settings, an answer this checks must be the server's, for this request.
        guard checked.signatureVerified else {
            throw SigilClientError.untrusted(head: head, body: Array(data), reason: "not signed by the server")
        }
        await device?.keep(session)
        if let failure = checked.failure { throw failure }
    }

    /// Whether to send the request again (through ``adapt(_:)``, for a new nonce and time): once, when
    /// the answer is a `timestamp-out-of-window` refusal the server signed for this request.
    public func shouldRetry(_ request: URLRequest?, response: HTTPURLResponse?, data: Data?, attempt: Int) -> Bool {
        guard attempt == 0, let request, let response, let data, let head = response.httpResponse,
            let sent = request.httpRequest, head.status.code == 401,
            SigilResponse.refusal(head: head, body: Array(data))?.code == .timestampOutOfWindow
        else { return false }
        // Only when the refusal's signed time was just learnt, from an answer to this very signing within
        // a known short round trip: a refusal a proxy held back says nothing about now, and the request
        // it refuses may be a replay of one that ran.
        guard let checked = try? checked(sent, head, data) else { return false }
        return checked.signatureVerified && checked.synchronizedClock
    }
}

/// The local times the last requests were signed at, by signature (at most 256, the oldest dropped).
final class SentTimes: Sendable {
    private let times = Locked<(order: [String], at: [String: Int64])>(([], [:]))

    func record(_ signature: String, at time: Int64) {
        times.withLock { times in
            if times.at.updateValue(time, forKey: signature) == nil { times.order.append(signature) }
            if times.order.count > 256 { times.at[times.order.removeFirst()] = nil }
        }
    }

    func time(of signature: String) -> Int64? { times.withLock { $0.at[signature] } }
}
