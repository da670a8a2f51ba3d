import Foundation
@_spi(Sigil) import SigilCore

#if canImport(os)
    import os
#endif

/// What ``SigilDevice`` tells the app's log: enrollment, rotation, resets, refusals, answers it could
/// not trust, the server keys and clock it learnt, and Keychain work it put off. Never a secret: key
/// IDs, device and user IDs, codes and statuses only.
public enum SigilEvent: Sendable, Hashable, CustomStringConvertible {
    /// The device enrolled: its key, device and user (`nil`: a device of no user).
    case enrolled(keyID: String, deviceID: String, userID: String?)
    /// The device rotated from one key to the next.
    case rotated(from: String, to: String)
    /// The device's identity was deleted; `revoked`: the server was asked to revoke it.
    case reset(keyID: String?, revoked: Bool)
    /// The server refused a request, in a refusal its key signed: its code can be acted on.
    case refused(code: SigilError.Code, status: Int)
    /// An answer the client could not trust (unsigned, another key's, for another request), with the
    /// code it claimed if it was a refusal.
    case untrustedAnswer(status: Int?, claimedCode: SigilError.Code?)
    /// The server's response keys the client now trusts, learnt from discovery its trusted key signed.
    case responseKeysLearnt(keyIDs: [String])
    /// The TLS pins the identity now holds, from a discovery document its trusted key signed.
    case pinsAdopted(pins: [String])
    /// Pins offered and not adopted (unsigned, or signed by a key the client does not trust).
    case pinsRefused(reason: String)
    /// The clock's offset from the server's signed time (server minus local, seconds) moved.
    case clockCorrected(offsetSeconds: Int64)
    /// Keychain work after an answer failed and will be retried (the answer was returned all the same).
    case storeDeferred(reason: String)
    /// Keychain work put off earlier was done.
    case storeCaughtUp

    public var description: String {
        switch self {
        case .enrolled(let keyID, let deviceID, let userID):
            // The user's ID is the app's to log or not: the text, written to the system log, says only
            // whether there is one.
            "enrolled key \(keyID) as device \(deviceID)" + (userID == nil ? ", no user" : ", for a user")
        case .rotated(let from, let to): "rotated from key \(from) to key \(to)"
        case .reset(let keyID, let revoked):
            "reset key \(keyID ?? "none")" + (revoked ? ", revocation asked" : ", locally only")
        case .refused(let code, let status): "refused \(status) \(code.rawValue) (signed)"
        case .untrustedAnswer(let status, let claimed):
            "untrusted answer \(status.map(String.init) ?? "-")" + (claimed.map { " claiming \($0.rawValue)" } ?? "")
        case .responseKeysLearnt(let keyIDs): "trusts response keys \(keyIDs.joined(separator: ","))"
        case .pinsAdopted(let pins): "adopted pins \(pins.joined(separator: ","))"
        case .pinsRefused(let reason): "pins refused: \(reason)"
        case .clockCorrected(let offset): "clock offset \(offset) s"
        case .storeDeferred(let reason): "store write deferred: \(reason)"
        case .storeCaughtUp: "store write caught up"
        }
    }

    /// Where events go when the app names no handler: the unified log (`os.Logger`, subsystem
    /// `dev.sigil`, category `device`) on Apple platforms, nowhere elsewhere (a server or Linux app
    /// passes a handler that writes to its swift-log `Logger`).
    public static let systemLog: @Sendable (SigilEvent) -> Void = { event in
        #if canImport(os)
            let text = event.description
            switch event {
            case .untrustedAnswer, .pinsRefused, .storeDeferred: SigilEvent.logger.error("\(text, privacy: .public)")
            default: SigilEvent.logger.info("\(text, privacy: .public)")
            }
        #endif
    }

    #if canImport(os)
        /// The unified log's `Logger` (iOS 14 / macOS 11, below the package's minimum).
        static let logger = Logger(subsystem: "dev.sigil", category: "device")
    #endif
}
