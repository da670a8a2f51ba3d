import Crypto
@_spi(Sigil) import SigilCore
import Synchronization

/// An in-memory ``NonceStore``: sharded open-addressing tables of 128-bit digests with compact expiries.
///
/// Each live nonce costs one 24-byte slot at a load factor between 3/8 and 3/4, so 32 to 64 bytes;
/// expired entries are dropped as tables are rebuilt while they fill. Shards have their own locks so
/// concurrent verifiers do not queue on one.
///
/// - Warning: what it remembers ends with the process. After a restart it refuses every request
///   dated at or before its start, but a request dated *ahead* of the server's clock (up to the
///   window, 300 s by default) and accepted before the restart is accepted once more after it, until
///   its timestamp leaves the window. Behind several replicas each has its own memory, so a request
///   is accepted once per replica. Where either matters, use a persistent or shared store
///   (`SQLiteNonceStore` for one server, as `sigil serve` does).
public final class MemoryNonceStore: NonceStore {
    struct Slot {
        var high: UInt64 = 0
        var low: UInt64 = 0
        var expiry: UInt32 = 0  // 0: empty
    }

    struct Table {
        var slots: [Slot]
        var occupied = 0  // live or expired-but-not-yet-dropped

        init(capacity: Int) { slots = Array(repeating: Slot(), count: capacity) }

        /// Inserts unless a live equal digest exists.
        mutating func insert(high: UInt64, low: UInt64, expiry: UInt32, now: UInt32) -> Bool {
            if (occupied + 1) * 4 > slots.count * 3 { rebuild(now: now) }
            let mask = slots.count - 1
            var index = Int(truncatingIfNeeded: low) & mask
            var reusable = -1
            while true {
                let slot = slots[index]
                if slot.expiry == 0 { break }
                if slot.high == high && slot.low == low {
                    if slot.expiry > now { return false }
                    slots[index].expiry = expiry
                    return true
                }
                if reusable < 0 && slot.expiry <= now { reusable = index }
                index = (index + 1) & mask
            }
            if reusable >= 0 {
                slots[reusable] = Slot(high: high, low: low, expiry: expiry)
            } else {
                slots[index] = Slot(high: high, low: low, expiry: expiry)
                occupied += 1
            }
            return true
        }

        /// Drops expired entries, growing when live entries alone would fill more than 3/8 of the table.
        mutating func rebuild(now: UInt32) {
            let live = slots.filter { $0.expiry > now }
            var capacity = slots.count
            while live.count * 8 > capacity * 3 { capacity *= 2 }
            var table = Table(capacity: capacity)
            let mask = capacity - 1
            for slot in live {
                var index = Int(truncatingIfNeeded: slot.low) & mask
                while table.slots[index].expiry != 0 { index = (index + 1) & mask }
                table.slots[index] = slot
            }
            table.occupied = live.count
            self = table
        }
    }

    final class Shard: Sendable {
        let table: Mutex<Table>
        init() { table = Mutex(Table(capacity: 1024)) }
    }

    private let shards: [Shard]
    private let epoch: Int64

    /// Creates an empty store.
    ///
    /// - Parameters:
    ///   - clock: read once, for the restart rule: requests dated at or before now are refused.
    ///   - shardCount: number of independently locked tables, rounded up to a power of two.
    public init(clock: some UnixClock = SystemUnixClock(), shardCount: Int = 16) {
        let count = shardCount <= 1 ? 1 : 1 << (Int.bitWidth - (shardCount - 1).leadingZeroBitCount)
        shards = (0..<count).map { _ in Shard() }
        epoch = clock.now() - 1
    }

    /// When the store started (Unix seconds).
    public var startedAt: Int64 { epoch + 1 }

    public var oldestAcceptableTimestamp: Int64? { startedAt + 1 }

    public func insert(keyID: String, nonce: String, timestamp: Int64, expiresAt: Int64, now: Int64) async throws
        -> Bool
    {
        insertSync(keyID: keyID, nonce: nonce, expiresAt: expiresAt, now: now)
    }

    /// The synchronous insert behind ``insert(keyID:nonce:expiresAt:now:)``.
    package func insertSync(keyID: String, nonce: String, expiresAt: Int64, now: Int64) -> Bool {
        let (high, low) = Self.digest(keyID: keyID, nonce: nonce)
        // Times are kept as seconds since just before the store started: 136 years of headroom in 32 bits.
        let expiry = UInt32(clamping: expiresAt - epoch)
        let current = UInt32(clamping: now - epoch)
        guard expiry > current else { return true }  // already past retention: nothing to remember
        let shard = shards[Int(truncatingIfNeeded: high) & (shards.count - 1)]
        return shard.table.withLock { $0.insert(high: high, low: low, expiry: expiry, now: current) }
    }

    /// 128 bits of SHA-256 over the length-prefixed key ID and the nonce.
    static func digest(keyID: String, nonce: String) -> (UInt64, UInt64) {
        var hasher = SHA256()
        var keyIDCopy = keyID
        var nonceCopy = nonce
        keyIDCopy.withUTF8 { bytes in
            withUnsafeBytes(of: UInt8(truncatingIfNeeded: bytes.count)) { hasher.update(bufferPointer: $0) }
            hasher.update(bufferPointer: UnsafeRawBufferPointer(bytes))
        }
        nonceCopy.withUTF8 { hasher.update(bufferPointer: UnsafeRawBufferPointer($0)) }
        var high: UInt64 = 0
        var low: UInt64 = 0
        hasher.finalize().withUnsafeBytes { raw in
            high = raw.loadUnaligned(fromByteOffset: 0, as: UInt64.self)
            low = raw.loadUnaligned(fromByteOffset: 8, as: UInt64.self)
        }
        return (high, low)
    }

    /// Bytes held by the tables, for `sigil bench`.
    public var allocatedBytes: Int {
        shards.reduce(0) { total, shard in total + shard.table.withLock { $0.slots.count } * MemoryLayout<Slot>.stride }
    }
}
