import Synchronization

/// What one request's exchange learnt, for an access log: set by whoever serves the request
/// (``RequestRecord/current``, a task-local), filled by the exchange as it admits or refuses, read when
/// the answer has gone. The key, device and user are those of a signature that verified, even when the
/// request was refused after it (a replay).
public final class RequestRecord: Sendable {
    /// What is known so far.
    public struct Facts: Sendable, Hashable {
        /// `verified`, or the PROTOCOL.md code the request was refused (or, monitored, let through) with.
        public var outcome: String?
        /// `sigil-v1`, `rfc9421` or `dpop`.
        public var profile: String?
        public var keyID: String?
        public var deviceID: String?
        public var userID: String?
        /// The attestation the key's device enrolled with (`app-attest`, `android-key,…`), if any.
        public var attestation: String?
        /// The bytes of the body as received.
        public var bodyBytes: Int?
    }

    let state = Mutex(Facts())

    /// An empty record.
    public init() {}

    /// The record of the request being served, when its server keeps one.
    @TaskLocal public static var current: RequestRecord?

    /// What is known.
    public var facts: Facts { state.withLock { $0 } }

    /// Notes what is learnt.
    public func update(_ change: (inout Facts) -> Void) { state.withLock { change(&$0) } }

    /// Notes `identity` (when there is one) and `outcome` on the current record, if any.
    static func note(identity: SigilIdentity?, outcome: String?, bodyBytes: Int?) {
        guard let record = current else { return }
        record.update { facts in
            facts.outcome = outcome ?? facts.outcome
            if let identity {
                facts.profile = identity.profile
                facts.keyID = identity.keyID
                facts.deviceID = identity.deviceID
                facts.userID = identity.userID
                facts.attestation = identity.attestation
            }
            if let bodyBytes { facts.bodyBytes = bodyBytes }
        }
    }

    /// Notes the key a signature verified with, before the request is refused or admitted.
    static func note(verified key: RegisteredKey, profile: String) {
        current?.update { facts in
            facts.profile = profile
            facts.keyID = key.keyID
            facts.deviceID = key.deviceID
            facts.userID = key.userID
            facts.attestation = key.deviceAttestation
        }
    }
}
