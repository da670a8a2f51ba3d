import AsyncHTTPClient
import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import NIOHTTP1
import NIOHTTP2
import NIOHTTPTypes
import NIOHTTPTypesHTTP2
import NIOPosix
import NIOSSL
import PostgresNIO
import SQLiteNIO
import SigilAppAttest
import SigilClient
@_spi(Sigil) import SigilCore
import SigilFiles
import SigilHTTPClient
import SigilHummingbird
import SigilJWT
import SigilPostgres
import SigilSQLite
import SigilServer
import SigilStandalone
import SigilTLS
import SigilTesting
import Synchronization
import Testing

/// Directories filled for operators' tests, and pauses counted.
enum OperatorScaffold {
    /// The pauses a ``KeyUsageTracker`` asked for, each waited as a few milliseconds instead.
    final class Pauses: Sendable {
        let asked = Mutex<[Duration]>([])
        var count: Int { asked.withLock { $0.count } }

        func sleep(_ pause: Duration) async throws {
            asked.withLock { $0.append(pause) }
            try await Task.sleep(for: .milliseconds(5))
        }

        /// Waits until `condition` holds, for at most `seconds`; whether it does.
        static func until(seconds: Int = 30, _ condition: () async -> Bool) async throws -> Bool {
            let deadline = ContinuousClock.now + .seconds(seconds)
            while ContinuousClock.now < deadline {
                if await condition() { return true }
                try await Task.sleep(for: .milliseconds(20))
            }
            return await condition()
        }
    }

    /// Another connection to the SQLite file at `path` that makes every write of a key's last use fail,
    /// as a full disk or a lost store would; `DROP TRIGGER no_use` on it lets them through again.
    static func refusingLastUses(path: String) async throws -> SQLiteConnection {
        let saboteur = try await SQLiteConnection.open(storage: .file(path: path), logger: Logger(label: "test"))
        _ = try await saboteur.query(
            "CREATE TRIGGER no_use BEFORE UPDATE OF last_used_at ON sigil_keys BEGIN SELECT RAISE(ABORT, 'no'); END")
        return saboteur
    }

    /// Registers a device of `user` with `keys` keys, audited as the registration does.
    @discardableResult
    static func register(_ directory: Directory, device: String, user: String?, keys: Int = 1, at time: Int64)
        async throws -> [String]
    {
        let added = try (0..<keys).map { _ in
            let key = try SigningKey.generate(.ed25519).verificationKey
            return RegisteredKey(
                keyID: key.derivedKeyID ?? "", key: key, deviceID: device, userID: user, createdAt: time)
        }
        try await directory.apply(
            DirectoryChange(
                added: added,
                audit: [
                    AuditEntry(
                        time: time, action: .registered, deviceID: device, keyID: added[0].keyID, userID: user,
                        actor: added[0].keyID, clientAddress: "127.0.0.1")
                ]))
        return added.map(\.keyID)
    }
}
