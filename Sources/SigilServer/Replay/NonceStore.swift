import SigilCore

/// Records nonces so each is accepted once (PROTOCOL.md section 2.6 step 6).
///
/// The shape is hummingbird's `PersistDriver.create(key:value:expires:)`: an insert that fails on a
/// duplicate, atomically. A store that cannot answer throws; the verifier then refuses the request.
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
}
