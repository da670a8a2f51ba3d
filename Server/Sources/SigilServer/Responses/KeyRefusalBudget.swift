import Synchronization

/// How many `unknown-key` and `revoked-key` refusals of unverified requests a server signs each
/// second (PROTOCOL.md section 2.7); past that, in the same second, they go unsigned.
///
/// Such a refusal is signed although no signature verified, so anyone can make the server sign one
/// by naming a key ID it does not know. Each costs one signature by the response key, no more than a
/// forged request naming a known key already costs in verification, but with an ML-DSA response key
/// (whose signing costs more than an ECDSA verification) a flood could cost more: the budget bounds
/// it to a fixed share of a core whatever the key. A device refused unsigned in a flood treats the
/// refusal as untrusted and is refused, signed, on a later try.
public final class KeyRefusalBudget: Sendable {
    /// Signed key refusals per second, at most.
    public let perSecond: Int
    let spent = Mutex<(second: Int64, count: Int)>((0, 0))

    /// A budget of `perSecond` signed key refusals each second (0: none is signed).
    public init(perSecond: Int = 1000) { self.perSecond = max(0, perSecond) }

    /// Takes one signature of the second `now`, if any is left.
    public func take(at now: Int64) -> Bool {
        spent.withLock { spent in
            if spent.second != now { spent = (now, 0) }
            guard spent.count < perSecond else { return false }
            spent.count += 1
            return true
        }
    }
}
