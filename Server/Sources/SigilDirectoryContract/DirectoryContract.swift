import Crypto
import SigilCore
import SigilServer

/// The promises every ``DirectoryBackend`` keeps, as clauses a test runs on a ``Directory`` over it:
/// the backends here (memory, SQLite, PostgreSQL) and one of your own. No test framework is needed:
/// a clause throws a ``Violation`` naming what failed.
///
/// ```swift
/// import SigilDirectoryContract
/// import Testing
///
/// @Test(arguments: DirectoryContract.clauses)
/// func contract(_ clause: DirectoryContract.Clause) async throws {
///     try await clause.check { clock in Directory(backend: MyBackend(), clock: clock, cacheLifetime: 0) }
/// }
/// ```
///
/// Each clause wants a fresh, empty directory, with its clock the one it is given (changes are dated
/// by it, and some clauses move it).
public enum DirectoryContract {
    /// One promise, checked on a directory.
    public struct Clause: Sendable, CustomStringConvertible {
        /// What it promises.
        public let name: String
        let body: @Sendable (Directory, ManualUnixClock) async throws -> Void
        public var description: String { name }

        /// Checks the clause on the directory `make` returns for a clock (closed after).
        ///
        /// - Throws: ``Violation`` when the directory breaks the promise; any error it threw otherwise.
        public func check(_ make: (ManualUnixClock) async throws -> Directory) async throws {
            let clock = ManualUnixClock(DirectoryContract.start)
            let directory = try await make(clock)
            do {
                try await body(directory, clock)
                try await directory.close()
            } catch {
                try? await directory.close()
                throw error
            }
        }
    }

    /// A promise broken.
    public struct Violation: Error, CustomStringConvertible {
        /// What was found instead of what was promised.
        public let detail: String
        /// Where in this file.
        public let line: Int
        public var description: String { "directory contract, line \(line): \(detail)" }
    }

    /// The time every clause starts at.
    public static let start: Int64 = 1_763_769_600

    /// Every clause.
    public static let clauses: [Clause] = changes + reads + administration + serverKeys + appAttest
}

// MARK: Helpers

extension DirectoryContract {
    static func expect(_ condition: Bool, _ detail: @autoclosure () -> String, line: Int = #line) throws {
        if !condition { throw Violation(detail: detail(), line: line) }
    }

    /// That `body` throws a ``SigilError`` of `code`.
    static func expect(
        throws code: SigilError.Code, line: Int = #line, _ body: () async throws -> Void
    ) async throws {
        do {
            try await body()
        } catch let error as SigilError where error.code == code {
            return
        } catch {
            throw Violation(detail: "expected \(code.rawValue), got \(error)", line: line)
        }
        throw Violation(detail: "expected \(code.rawValue), nothing was thrown", line: line)
    }

    /// A new Ed25519 key of `device`.
    static func key(_ device: String, user: String? = nil) throws -> RegisteredKey {
        let verification = try SigningKey.generate(.ed25519).verificationKey
        return RegisteredKey(
            keyID: verification.derivedKeyID ?? "", key: verification, deviceID: device, userID: user,
            createdAt: start)
    }

    /// Every page `list` gives, from the first.
    static func pages<Item>(_ list: (_ cursor: String?) async throws -> Page<Item>) async throws -> [Page<Item>] {
        var pages: [Page<Item>] = []
        var cursor: String?
        repeat {
            let page = try await list(cursor)
            pages.append(page)
            cursor = page.next
        } while cursor != nil && pages.count < 1_000
        return pages
    }
}
