@_spi(Sigil) import SigilCore
import Synchronization

/// The bytes of the unsigned bodies monitor mode is holding for their routes, across every request,
/// under one budget (PROTOCOL.md section 15).
///
/// A verified request's body is read only once its head named a registered key inside the window;
/// an unsigned one under a monitored prefix needs nothing, so anyone could make the server hold
/// `bodyLimit` bytes per connection. Instead, such bodies share ``budget``: each byte is taken from it
/// as it arrives and given back when the route's ``Admission`` (every copy of it) is gone. A body
/// that would pass the budget is refused `body-too-large` at once, never queued.
public final class UnverifiedBodies: Sendable {
    /// The most bytes unsigned bodies may hold at once.
    public let budget: Int
    private let held = Mutex(0)

    /// A budget of `budget` bytes.
    public init(budget: Int) {
        self.budget = budget
    }

    /// The bytes held now.
    public var inUse: Int { held.withLock { $0 } }

    /// Reads `chunks` as ``BodyReader/collect(_:declaredLength:limit:)`` does, taking each chunk's
    /// bytes from the budget first.
    ///
    /// - Returns: the body and the hold that gives its bytes back when released.
    @inlinable
    public func collect<Chunks: AsyncSequence>(
        _ chunks: Chunks,
        declaredLength: Int?,
        limit: Int
    ) async throws -> (body: [UInt8], hold: Hold) where Chunks.Element: Collection<UInt8> {
        if let declaredLength { try BodyReader.check(declaredLength, limit: limit) }
        let hold = Hold(self)
        var body = [UInt8]()
        for try await chunk in chunks {
            try BodyReader.check(body.count + chunk.count, limit: limit)
            try hold.take(chunk.count)
            body.append(contentsOf: chunk)
        }
        return (body, hold)
    }

    /// Takes `count` bytes, or refuses when they would pass the budget.
    @usableFromInline
    func take(_ count: Int) throws {
        let taken = held.withLock { held in
            guard held + count <= budget else { return false }
            held += count
            return true
        }
        guard taken else {
            throw SigilError(
                .bodyTooLarge,
                "unsigned bodies waiting for their routes hold the server's budget (\(budget) bytes); sign the request")
        }
    }

    @usableFromInline
    func give(_ count: Int) {
        held.withLock { $0 -= count }
    }

    /// The bytes one body holds, given back when the last reference to it goes.
    public final class Hold: Sendable {
        @usableFromInline let budget: UnverifiedBodies
        @usableFromInline let count = Mutex(0)

        @usableFromInline
        init(_ budget: UnverifiedBodies) {
            self.budget = budget
        }

        @usableFromInline
        func take(_ bytes: Int) throws {
            try budget.take(bytes)
            count.withLock { $0 += bytes }
        }

        deinit {
            budget.give(count.withLock { $0 })
        }
    }
}
