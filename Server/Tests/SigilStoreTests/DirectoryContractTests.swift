import Crypto
import SigilCore
import SigilDirectoryContract
import SigilPostgres
import SigilSQLite
import SigilServer
import Testing

@testable import SigilTestSupport

/// Every clause of the directory contract (the `SigilDirectoryContract` library) on every backend:
/// memory, SQLite, a real PostgreSQL, and ``ActorDirectoryBackend``, a backend as another package
/// writes one, on the public API alone.
@Suite("The directory contract, on every backend")
struct DirectoryContractTests {
    enum Backend: String, CaseIterable, CustomStringConvertible {
        case memory, sqlite, actor
        var description: String { rawValue }
    }

    @Test("a clause of the directory contract", arguments: Backend.allCases, DirectoryContract.clauses)
    func clause(_ backend: Backend, _ clause: DirectoryContract.Clause) async throws {
        try await clause.check { clock in
            switch backend {
            case .memory: return Directory.inMemory(clock: clock)
            case .sqlite:
                return try await Directory.sqlite(
                    path: TestServer.temporaryDirectory() + ".sqlite", masterKey: SymmetricKey(size: .bits256),
                    clock: clock, cacheLifetime: 0)
            case .actor: return Directory(backend: ActorDirectoryBackend(), clock: clock, cacheLifetime: 0)
            }
        }
    }
}

// With the suites that start PostgreSQL, one test at a time (ExternalServers.swift).
@Suite("The directory contract on PostgreSQL", .externalServers)
struct PostgresDirectoryContractTests {
    @Test(
        "every clause of the directory contract, each on a database of its own, on one real PostgreSQL",
        .enabled(if: ExternalServers.runPostgres))
    func everyClause() async throws {
        try await PostgresTestServer.with { server in
            let admin = try await PostgresStore.open(try PostgresStore.Location(url: server.url))
            defer { admin.close() }
            for (index, clause) in DirectoryContract.clauses.enumerated() {
                try await admin.client.query("CREATE DATABASE \(unescaped: "contract_\(index)")")
                let url = server.url.replacingOccurrences(of: "/postgres?", with: "/contract_\(index)?")
                let store = try await PostgresStore.open(
                    try PostgresStore.Location(url: url), timeout: .seconds(10))
                defer { store.close() }
                do {
                    try await clause.check { clock in
                        try Directory.postgres(
                            store: store, masterKey: SymmetricKey(size: .bits256), clock: clock, cacheLifetime: 0)
                    }
                } catch {
                    Issue.record("\(clause): \(error)")
                }
            }
        }
    }
}
