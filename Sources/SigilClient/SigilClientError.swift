import Foundation
import HTTPTypes
@_spi(Sigil) import SigilCore

/// A failure on the device's side, never a verdict of the server: what happened, and what the app
/// should do about it (``recovery``).
///
/// The client throws ``SigilError`` (a PROTOCOL.md code) only for a refusal the server's response key
/// signed for the request it answers: that is the server speaking, and its code can be acted on
/// (`revoked-key`, `unknown-key`: enroll again). Everything else is one of these, and none of them
/// is a reason to reset the device's identity:
///
/// ```swift
/// do {
///     let answer = try await device.send(request, body: body)
/// } catch let refusal as SigilError where refusal.code == .revokedKey || refusal.code == .unknownKey {
///     try await device.reset(revoke: false)         // the server said so, and signed it
/// } catch let failure as SigilClientError {
///     switch failure.kind {
///     case .transport, .untrustedAnswer, .untrustedRefusal: retryLater()   // may have run: no reset
///     case .keychainUnavailable: waitForProtectedData()
///     case .notEnrolled: showLogin()
///     case .appAttestUnavailable: enrollWithSecureEnclave()
///     }
/// }
/// ```
public struct SigilClientError: Error, Sendable, CustomStringConvertible {
    /// What failed.
    public enum Kind: String, Sendable, Hashable, CaseIterable {
        /// The request could not be sent or its answer not received (no network, a timeout, a TLS
        /// pin that did not match). It may or may not have reached the server.
        case transport
        /// An answer the server's trusted response key did not sign, or whose signature is for another
        /// request, stale or wrong: a captive portal, a proxy, a CDN's error page, an attacker. The
        /// request may or may not have run.
        case untrustedAnswer
        /// A refusal with a Sigil code (``claimedCode``) that the server did not sign: anyone on the
        /// path could have written it, so its code is a claim, never acted on.
        case untrustedRefusal
        /// The device holds no identity: it never enrolled, or it was reset.
        case notEnrolled
        /// The Keychain could not be read or written: before the first unlock after a restart, while
        /// the app is prewarmed, or a Keychain error (``keychainStatus``).
        case keychainUnavailable
        /// App Attest is not supported here (a Mac, most app extensions, a simulator without the debug
        /// provider), or it refused to make or use a key.
        case appAttestUnavailable
    }

    /// What failed.
    public let kind: Kind
    /// What happened, for logs and people; never contains key material.
    public let detail: String
    /// The code an untrusted refusal claims (``Kind/untrustedRefusal``).
    public let claimedCode: SigilError.Code?
    /// The HTTP status of the answer, for ``Kind/untrustedAnswer`` and ``Kind/untrustedRefusal``.
    public let status: Int?
    /// The Keychain's `OSStatus`, for ``Kind/keychainUnavailable``.
    public let keychainStatus: Int32?
    /// The transport's own error, for ``Kind/transport``.
    public let underlying: (any Error & Sendable)?

    /// Creates an error.
    public init(
        _ kind: Kind, _ detail: String, claimedCode: SigilError.Code? = nil, status: Int? = nil,
        keychainStatus: Int32? = nil, underlying: (any Error & Sendable)? = nil
    ) {
        self.kind = kind
        self.detail = detail
        self.claimedCode = claimedCode
        self.status = status
        self.keychainStatus = keychainStatus
        self.underlying = underlying
    }

    /// What the app should do.
    public var recovery: String {
        switch kind {
        case .transport:
            "retry when the network is back; the request may have reached the server, so only resend one that is safe to repeat"
        case .untrustedAnswer:
            "retry later (another network may not have the proxy in the way); the request may have run; keep the identity"
        case .untrustedRefusal:
            "treat it as an untrusted answer: retry later, never reset the identity on its claimed code"
        case .notEnrolled:
            "enroll the device"
        case .keychainUnavailable:
            "wait until protected data is available (after the first unlock), then retry; keep the identity"
        case .appAttestUnavailable:
            "enroll a Secure Enclave key instead (SecureEnclaveSigningKey)"
        }
    }

    public var description: String {
        var text = "\(kind.rawValue): \(detail)"
        if let claimedCode { text += " (claims \(claimedCode.rawValue))" }
        return text + "; " + recovery
    }

    /// The device is not enrolled.
    static let notEnrolled = SigilClientError(.notEnrolled, "this device is not enrolled: enroll it first")

    /// The transport's failure `error`, unless it is a Sigil error already.
    static func transport(_ error: any Error) -> any Error {
        if error is SigilClientError || error is SigilError || error is SigilInputError || error is CancellationError {
            return error
        }
        return SigilClientError(.transport, String(describing: error).prefix(512).description, underlying: error)
    }

    /// The failure an answer that did not verify (``ResponseVerifier``'s verdict) is to the app: an
    /// untrusted refusal when it claims a Sigil code, an untrusted answer otherwise.
    static func untrusted(_ response: SigilResponse, reason: String) -> SigilClientError {
        untrusted(head: response.head, body: response.body, reason: reason)
    }

    /// ``untrusted(_:reason:)`` for an answer's head and body.
    static func untrusted(head: HTTPResponse, body: [UInt8], reason: String) -> SigilClientError {
        let status = head.status.code
        if let claimed = SigilResponse.refusal(head: head, body: body) {
            // The claimed detail, for people; the code is only a claim.
            return SigilClientError(
                .untrustedRefusal, "\(claimed.detail) [not signed by the server: \(reason)]",
                claimedCode: claimed.code, status: status)
        }
        return SigilClientError(.untrustedAnswer, reason, status: status)
    }
}
