import Synchronization

/// What a store-backed key directory remembers of its lookups, written once for SQLite and
/// PostgreSQL: keys by key ID, key IDs by thumbprint, users' revocation times; absent answers too.
///
/// Freshness comes from the store's **change counter**, which every change bumps in its transaction:
/// before a lookup trusts the cache, the counter is read if it was last read ``checkInterval`` ago or
/// more, and a new value ``clear()``s everything. So a change made where this process cannot see it
/// (another replica, another process on the file) is seen within about a quarter second of the next
/// lookup; entries are trusted only while the last successful read of the counter began less than
/// a second ago (a store that stops answering is then read, and refuses, rather than served from
/// memory). A change this process sees (its own, a notification) clears the cache at once. An entry
/// lives ``lifetime`` seconds at most. The cache holds at most ``capacity`` entries, so memory stays
/// bounded whatever the number of devices: when full, a new entry takes the place of one not read
/// since the last time the clock's hand passed it (CLOCK, second chance), in constant time on
/// average, so a device that signs often stays while a million others come and go.
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

    /// What an entry is kept under: what it answers, and of what (a key ID, a thumbprint, a user ID),
    /// without a string made of the two at every lookup.
    ///
    /// Two names are one only when their values are one identifier (``Identifiers``): a user's
    /// revocation must not be read for another user whose ID is only canonically equivalent.
    struct Name: Hashable {
        enum Kind: UInt8 { case key, thumbprint, user }
        let kind: Kind
        let id: Identifiers.Key

        init(kind: Kind, value: String) {
            self.kind = kind
            id = Identifiers.Key(value)
        }
    }

    /// An entry, when it was loaded, and its place in the ring: a class, so a lookup takes it out of
    /// the lock as one reference.
    final class Slot: Sendable {
        let entry: Entry
        let loadedAt: Int64
        let place: Int

        init(entry: Entry, loadedAt: Int64, place: Int) {
            self.entry = entry
            self.loadedAt = loadedAt
            self.place = place
        }
    }

    struct State {
        var generation: UInt64 = 0
        var entries: [Name: Slot] = [:]
        /// The entries' names by place, in the order the clock's hand visits them.
        var ring: [Name] = []
        /// Whether each place's entry was read since the hand last passed it.
        var referenced: [Bool] = []
        var hand = 0
        /// The change counter as last read.
        var counter: Int64?
        /// When the last read of the counter began, and when the last successful one did.
        var checkedAt: ContinuousClock.Instant?
        var confirmedAt: ContinuousClock.Instant?

        /// Forgets every entry, and any lookup under way.
        mutating func forget() {
            generation &+= 1
            entries.removeAll(keepingCapacity: true)
            ring.removeAll(keepingCapacity: true)
            referenced.removeAll(keepingCapacity: true)
            hand = 0
        }

        /// Keeps `entry` under `name`, in the place of an entry not read lately when `capacity` are held.
        mutating func keep(_ entry: Entry, name: Name, loadedAt: Int64, capacity: Int) {
            if let slot = entries[name] {
                entries[name] = Slot(entry: entry, loadedAt: loadedAt, place: slot.place)
                return
            }
            let place: Int
            if ring.count < capacity {
                place = ring.count
                ring.append(name)
                referenced.append(false)
            } else {
                // The hand clears the mark of each entry read since it last passed, and stops at the
                // first unmarked one: at most one turn.
                while referenced[hand] {
                    referenced[hand] = false
                    hand = (hand + 1) % ring.count
                }
                place = hand
                entries[ring[place]] = nil
                ring[place] = name
                hand = (hand + 1) % ring.count
            }
            entries[name] = Slot(entry: entry, loadedAt: loadedAt, place: place)
        }
    }

    let state = Mutex(State())
    /// How long an entry is trusted, in seconds; 0 reads every time.
    public let lifetime: Int64
    /// The most entries held at once.
    public let capacity: Int
    /// The least time between two reads of the change counter.
    public let checkInterval: Duration
    /// Reads the store's change counter, when it has one.
    let changeCounter: (@Sendable () async throws -> Int64)?
    /// How long a successful read of the counter vouches for the entries.
    static let confirmation: Duration = .seconds(1)

    /// Creates an empty cache.
    ///
    /// - Parameters:
    ///   - lifetime: the most an entry lives, in seconds; 0 reads every time.
    ///   - capacity: the most entries held.
    ///   - checkInterval: the least time between two reads of the change counter.
    ///   - changeCounter: reads the store's change counter; `nil` when the store has none, and then
    ///     only `lifetime` bounds how stale an entry may be.
    public init(
        lifetime: Int64, capacity: Int = 100_000, checkInterval: Duration = .milliseconds(250),
        changeCounter: (@Sendable () async throws -> Int64)? = nil
    ) {
        self.lifetime = lifetime
        self.capacity = max(capacity, 1)
        self.checkInterval = checkInterval
        self.changeCounter = changeCounter
    }

    /// Reads the change counter when due, clearing the cache when it moved.
    ///
    /// - Returns: whether the entries may be trusted (a read of the counter began less than a
    ///   second ago and succeeded; always, without a counter).
    func noticeChanges() async throws -> Bool {
        guard let changeCounter else { return true }
        let start = ContinuousClock.now
        let (due, trusted) = state.withLock { state -> (Bool, Bool) in
            let trusted = state.confirmedAt.map { start - $0 < Self.confirmation } ?? false
            if let checked = state.checkedAt, start - checked < checkInterval { return (false, trusted) }
            state.checkedAt = start
            return (true, trusted)
        }
        guard due else { return trusted }
        let counter = try await changeCounter()
        state.withLock { state in
            if state.counter != counter {
                state.counter = counter
                state.forget()
            }
            if state.confirmedAt.map({ $0 < start }) ?? true { state.confirmedAt = start }
        }
        return true
    }

    /// The number of entries held.
    public var count: Int { state.withLock { $0.entries.count } }

    /// Forgets every entry, and any lookup under way when it was called.
    public func clear() { state.withLock { $0.forget() } }

    /// The entry named `name` while it is fresh at `now`, else `load()`'s, remembered unless a
    /// ``clear()`` happened while it loaded.
    func entry(_ name: Name, now: Int64, load: () async throws -> Entry) async throws -> Entry {
        let trusted = try await noticeChanges()
        let (hit, generation) = state.withLock { state in
            let hit = state.entries[name]
            if let hit { state.referenced[hit.place] = true }
            return (hit, state.generation)
        }
        if trusted, let hit, now >= hit.loadedAt, now - hit.loadedAt < lifetime { return hit.entry }
        let loaded = try await load()
        guard lifetime > 0 else { return loaded }
        state.withLock { state in
            guard state.generation == generation else { return }
            state.keep(loaded, name: name, loadedAt: now, capacity: capacity)
        }
        return loaded
    }

    /// The key `keyID`, cached.
    public func key(_ keyID: String, now: Int64, load: () async throws -> RegisteredKey?) async throws
        -> RegisteredKey?
    {
        guard
            case .key(let key) = try await entry(
                Name(kind: .key, value: keyID), now: now, load: { .key(try await load()) })
        else {
            return nil
        }
        return key
    }

    /// The key ID of `thumbprint`, cached.
    public func keyID(thumbprint: String, now: Int64, load: () async throws -> String?) async throws -> String? {
        guard
            case .keyID(let keyID) = try await entry(
                Name(kind: .thumbprint, value: thumbprint), now: now, load: { .keyID(try await load()) })
        else { return nil }
        return keyID
    }

    /// When `userID` was revoked, cached.
    public func userRevokedAt(_ userID: String, now: Int64, load: () async throws -> Int64?) async throws -> Int64? {
        guard
            case .userRevokedAt(let at) = try await entry(
                Name(kind: .user, value: userID), now: now, load: { .userRevokedAt(try await load()) })
        else { return nil }
        return at
    }
}
