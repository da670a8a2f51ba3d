import SigilServer
import Synchronization
import Testing

/// The key directory's cache: bounded by its capacity whatever the number of devices, a device read
/// often kept while others come and go (CLOCK), cleared whole.
@Suite("Directory cache")
struct DirectoryCacheTests {
    /// Counts the loads of each name.
    final class Loads: Sendable {
        let counts = Mutex<[String: Int]>([:])

        func lookUp(_ cache: DirectoryCache, _ keyID: String, now: Int64 = 100) async throws {
            _ = try await cache.key(keyID, now: now) {
                counts.withLock { $0[keyID, default: 0] += 1 }
                return nil
            }
        }

        subscript(_ keyID: String) -> Int { counts.withLock { $0[keyID] ?? 0 } }
    }

    @Test("holds at most its capacity; a name read between every miss is loaded once in 10,000 misses")
    func capacityAndSecondChance() async throws {
        let cache = DirectoryCache(lifetime: 3_600, capacity: 100)
        let loads = Loads()
        for index in 0..<10_000 {
            try await loads.lookUp(cache, "hot")
            try await loads.lookUp(cache, "cold-\(index)")
            #expect(cache.count <= 100)
        }
        #expect(cache.count == 100)
        #expect(loads["hot"] == 1)
        // The last names loaded are held; the first ones went.
        try await loads.lookUp(cache, "cold-9999")
        try await loads.lookUp(cache, "cold-0")
        #expect(loads["cold-9999"] == 1 && loads["cold-0"] == 2)
    }

    @Test(
        "names are told apart by their bytes: a user ID with the Kelvin sign (U+212A) is not the user with a K, whose revocation it must not read"
    )
    func namesByBytes() async throws {
        let cache = DirectoryCache(lifetime: 3_600, capacity: 100)
        let (kelvin, ascii) = ("\u{212A}x", "Kx")
        #expect(kelvin == ascii, "Swift's String equality takes them for one")
        #expect(try await cache.userRevokedAt(kelvin, now: 100) { 50 } == 50)
        #expect(try await cache.userRevokedAt(ascii, now: 100) { nil } == nil)
        #expect(try await cache.userRevokedAt(kelvin, now: 100) { nil } == 50, "held, not loaded again")
        #expect(cache.count == 2)
        // A key ID and a thumbprint with the same text are two entries too.
        _ = try await cache.key("abc", now: 100) { nil }
        #expect(try await cache.keyID(thumbprint: "abc", now: 100) { "key-1" } == "key-1")
        #expect(cache.count == 4)
    }

    @Test("a clear forgets everything; the ring refills to its capacity; an entry past its lifetime loads again")
    func clearAndLifetime() async throws {
        let cache = DirectoryCache(lifetime: 60, capacity: 50)
        let loads = Loads()
        for index in 0..<80 { try await loads.lookUp(cache, "a-\(index)") }
        cache.clear()
        #expect(cache.count == 0)
        for index in 0..<120 { try await loads.lookUp(cache, "b-\(index)") }
        #expect(cache.count == 50)
        try await loads.lookUp(cache, "b-119", now: 159)
        #expect(loads["b-119"] == 1)
        try await loads.lookUp(cache, "b-119", now: 160)
        #expect(loads["b-119"] == 2)
        #expect(cache.count == 50)
    }
}
