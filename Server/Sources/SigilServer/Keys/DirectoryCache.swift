import Synchronization

/// What a store-backed key directory remembers of its lookups, written once for SQLite and
/// PostgreSQL: keys by key ID, key IDs by thumbprint, users' revocation times; absent answers too.
///
/// An entry is trusted for ``lifetime`` seconds at most, so a change made where this process cannot
/// see it (another replica, another process on the file) is seen within that bound; a change this
/// process sees (its own, a notification, a change counter) ``clear()``s everything at once. The cache
/// holds at most ``capacity`` entries: when full, entries past their lifetime go, then an eighth of the rest,
/// arbitrary ones (Swift's hashing makes the choice random), so memory stays bounded whatever the number of devices.
public final class DirectoryCache: Sendable {
    /// One remembered answer.
    public enum Entry: Sendable {
        /// The key of a key ID, or none.
        case key(RegisteredKey?)
        /// The key ID of a thumbprint, or none.
        case keyID(String?)
        /// The time a user was revoked, or never.
        case userRevokedAt(Int64?)
    }

    struct State {
        var generation: UInt64 = 0
        var entries: [String: (entry: Entry, loadedAt: Int64)] = [:]
    }

    let state = Mutex(State())
    /// How long an entry is trusted, in seconds; 0 reads every time.
    public let lifetime: Int64
    /// The most entries held at once.
    public let capacity: Int

    /// Creates an empty cache.
    public init(lifetime: Int64, capacity: Int = 100_000) {
        self.lifetime = lifetime
        self.capacity = max(capacity, 1)
    }

    /// The number of entries held.
    public var count: Int { state.withLock { $0.entries.count } }

    /// Forgets every entry, and any lookup under way when it was called.
    public func clear() {
        state.withLock { state in
            state.generation &+= 1
            state.entries.removeAll(keepingCapacity: true)
        }
    }

    /// The entry named `name` while it is fresh at `now`, else `load()`'s, remembered unless a
    /// ``clear()`` happened while it loaded.
    func entry(_ name: String, now: Int64, load: () async throws -> Entry) async throws -> Entry {
        let (hit, generation) = state.withLock { ($0.entries[name], $0.generation) }
        if let hit, now >= hit.loadedAt, now - hit.loadedAt < lifetime { return hit.entry }
        let loaded = try await load()
        guard lifetime > 0 else { return loaded }
        state.withLock { state in
            guard state.generation == generation else { return }
            if state.entries[name] == nil, state.entries.count >= capacity {
                state.entries = state.entries.filter { now >= $0.value.loadedAt && now - $0.value.loadedAt < lifetime }
                // An eighth at once, so a full cache does not filter on every insertion.
                let keep = capacity - max(capacity / 8, 1)
                while state.entries.count > keep { state.entries.remove(at: state.entries.startIndex) }
            }
            state.entries[name] = (loaded, now)
        }
        return loaded
    }

    /// The key `keyID`, cached.
    public func key(_ keyID: String, now: Int64, load: () async throws -> RegisteredKey?) async throws
        -> RegisteredKey?
    {
        guard case .key(let key) = try await entry("k" + keyID, now: now, load: { .key(try await load()) }) else {
            return nil
        }
        return key
    }

    /// The key ID of `thumbprint`, cached.
    public func keyID(thumbprint: String, now: Int64, load: () async throws -> String?) async throws -> String? {
        guard case .keyID(let keyID) = try await entry("t" + thumbprint, now: now, load: { .keyID(try await load()) })
        else { return nil }
        return keyID
    }

    /// When `userID` was revoked, cached.
    public func userRevokedAt(_ userID: String, now: Int64, load: () async throws -> Int64?) async throws -> Int64? {
        guard
            case .userRevokedAt(let at) = try await entry(
                "u" + userID, now: now, load: { .userRevokedAt(try await load()) })
        else { return nil }
        return at
    }
}
