@_spi(Sigil) import SigilCore

/// What recording a nonce came to (PROTOCOL.md section 2.6 step 6).
public enum NonceOutcome: Sendable, Hashable {
    /// The pair was new and is now recorded: the request may go on.
    case recorded
    /// The pair was recorded before: `replayed-nonce`.
    case replayed
    /// The store cannot vouch for requests dated before `oldest` (it started, or lost its data, after
    /// the request was made): `timestamp-out-of-window`, which the client answers by re-syncing its
    /// clock and signing anew. Never `store-unavailable`: the store did answer.
    case beforeHorizon(oldest: Int64)
    /// The store did not answer: `store-unavailable`, and the request is refused.
    case unavailable

    /// The refusal this outcome means, or `nil` for ``recorded``.
    public func refusal(keyID: String) -> SigilError? {
        switch self {
        case .recorded: return nil
        case .replayed: return SigilError(.replayedNonce, "nonce already used with key \(keyID)")
        case .beforeHorizon(let oldest):
            return SigilError(
                .timestampOutOfWindow, "the nonce store vouches only for requests dated from \(oldest) on")
        case .unavailable:
            return SigilError(.storeUnavailable, "the nonce store did not answer; the request is refused")
        }
    }
}

/// Records nonces so each is accepted once (PROTOCOL.md section 2.6 step 6).
///
/// The shape is hummingbird's `PersistDriver.create(key:value:expires:)`: an insert that fails on a
/// duplicate, atomically. Callers go through ``record(keyID:nonce:timestamp:expiresAt:now:)``, whose
/// ``NonceOutcome`` tells a replay, a request older than the store's horizon and a store that did
/// not answer apart.
public protocol NonceStore: Sendable {
    /// Records `(keyID, nonce)` until `expiresAt` (Unix seconds) unless it is already recorded.
    ///
    /// - Parameters:
    ///   - timestamp: the request's signed timestamp (`X-Timestamp` or `created`); a store that is
    ///     durable only in part uses it to make future-dated requests durable.
    ///   - now: the verifier's time when the request passed its checks.
    /// - Returns: `true` when the pair was new and is now recorded, `false` when it was already there.
    /// - Throws: when the store cannot answer; the verifier turns that into `store-unavailable`.
    func insert(keyID: String, nonce: String, timestamp: Int64, expiresAt: Int64, now: Int64) async throws -> Bool

    /// The earliest request timestamp the store can vouch for, or `nil` when it remembers across restarts.
    ///
    /// A store that keeps nonces only in memory returns the second after it started: requests dated
    /// at or before its start are refused (`timestamp-out-of-window`), so a restart reopens no replay
    /// window for them.
    var oldestAcceptableTimestamp: Int64? { get }

    /// Records `(keyID, nonce)` until `expiresAt` unless it is already recorded, and says what came of it.
    ///
    /// The default calls ``insert(keyID:nonce:timestamp:expiresAt:now:)`` and then checks the
    /// horizon (a store may learn during the insert that it lost its data); a thrown error is
    /// ``NonceOutcome/unavailable``.
    func record(keyID: String, nonce: String, timestamp: Int64, expiresAt: Int64, now: Int64) async -> NonceOutcome
}

extension NonceStore {
    public func record(keyID: String, nonce: String, timestamp: Int64, expiresAt: Int64, now: Int64) async
        -> NonceOutcome
    {
        let isNew: Bool
        do {
            isNew = try await insert(keyID: keyID, nonce: nonce, timestamp: timestamp, expiresAt: expiresAt, now: now)
        } catch {
            return .unavailable
        }
        // Read after the insert: the connection that answered may have just found the data lost.
        if let oldest = oldestAcceptableTimestamp, timestamp < oldest { return .beforeHorizon(oldest: oldest) }
        return isNew ? .recorded : .replayed
    }
}
