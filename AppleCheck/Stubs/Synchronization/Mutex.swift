// The Synchronization module's `Mutex`, which Apple platforms have from iOS 18 and macOS 15 only. The
// checked files' `import Synchronization` is dropped (AppleCheck/rewrite.py), so this declaration is
// the `Mutex` they see, with Apple's availability: one used outside an iOS 18 context fails the check.
// (`@_staticExclusiveOnly`, which the standard library's declaration also carries, needs an
// experimental feature and is left out; it only forbids a `var` of the type.)

/// Mimics `Mutex`, `@frozen struct Mutex<Value> where Value : ~Copyable` (itself `~Copyable`):
/// https://developer.apple.com/documentation/synchronization/mutex
@available(iOS 18.0, macOS 15.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, macCatalyst 18.0, *)
@frozen
public struct Mutex<Value: ~Copyable>: ~Copyable {
    /// Mimics `init(_ initialValue: consuming sending Value)`:
    /// https://developer.apple.com/documentation/synchronization/mutex/init(_:)
    @available(iOS 18.0, macOS 15.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, macCatalyst 18.0, *)
    public init(_ initialValue: consuming sending Value) { stub() }

    /// Mimics `borrowing func withLock<Result, E>(_ body: (inout sending Value) throws(E) -> sending
    /// Result) throws(E) -> sending Result where E : Error, Result : ~Copyable`:
    /// https://developer.apple.com/documentation/synchronization/mutex/withlock(_:)
    @available(iOS 18.0, macOS 15.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, macCatalyst 18.0, *)
    public borrowing func withLock<Result: ~Copyable, E: Error>(
        _ body: (inout sending Value) throws(E) -> sending Result
    ) throws(E) -> sending Result { stub() }

    /// Mimics `borrowing func withLockIfAvailable<Result, E>(_ body: (inout sending Value) throws(E) ->
    /// sending Result) throws(E) -> sending Result? where E : Error, Result : ~Copyable`:
    /// https://developer.apple.com/documentation/synchronization/mutex/withlockifavailable(_:)
    @available(iOS 18.0, macOS 15.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, macCatalyst 18.0, *)
    public borrowing func withLockIfAvailable<Result: ~Copyable, E: Error>(
        _ body: (inout sending Value) throws(E) -> sending Result
    ) throws(E) -> sending Result? { stub() }
}

/// Mimics `Mutex`'s `Sendable` conformance, `extension Mutex : @unchecked Sendable where Value : ~Copyable`:
/// https://developer.apple.com/documentation/synchronization/mutex
@available(iOS 18.0, macOS 15.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, macCatalyst 18.0, *)
extension Mutex: @unchecked Sendable where Value: ~Copyable {}
