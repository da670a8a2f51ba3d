import Foundation

/// A value behind a lock, for the code an app runs: the standard library's `Mutex` exists from iOS 18
/// and macOS 15 only, above Sigil's minimum (iOS 17, macOS 14). `NSLock` is a pthread mutex on every
/// platform.
@_spi(Sigil) public final class Locked<Value> {
    private let lock = NSLock()
    private var value: Value

    /// A lock around `value`.
    @_spi(Sigil) public init(_ value: Value) { self.value = value }

    /// Runs `body` with the value, holding the lock.
    @_spi(Sigil) public func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}

extension Locked: @unchecked Sendable where Value: Sendable {}
