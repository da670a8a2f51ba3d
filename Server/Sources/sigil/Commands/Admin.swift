import ArgumentParser
import Foundation
import Logging
@_spi(Sigil) import SigilCore
import SigilServer
import SigilStandalone

/// `sigil admin`: operators' tools on the store a server uses, while it runs.
struct Admin: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Devices, revocation, the audit trail and the server's keys, on the store a server uses.",
        discussion: """
            Works on the data directory's SQLite file (--data-dir) or on PostgreSQL (--store postgres://…) \
            while servers run on it: a revocation is refused by every running server within a second. \
            Creates nothing. `keys` also needs the servers' master key: the master.key of --data-dir (a \
            replica's data directory, or a directory holding a copy of it).
            """,
        subcommands: [Devices.self, Device.self, Revoke.self, Audit.self, Keys.self]
    )

    /// Where the store is.
    struct StoreOptions: ParsableArguments {
        @Option(
            name: .customLong("data-dir"),
            help: "A server's data directory (default: ~/.sigil): its directory.sqlite, and its master.key for keys.")
        var dataDirectory: String?

        @Option(
            name: .long,
            help:
                "sqlite (the data directory, the default) or postgres://user@host:port/database (password: SIGIL_STORE_PASSWORD or --store-password-file)."
        )
        var store = "sqlite"

        @Option(name: .customLong("store-password-file"), help: "A file holding the PostgreSQL password.")
        var storePasswordFile: String?

        @Option(name: .customLong("key-overlap"), help: "Seconds a rotated server key is published before it is used.")
        var keyOverlap: Int64 = 7 * 86_400

        /// The options that name this store again, for a `more:` line: the data directory, the
        /// password file, and a PostgreSQL URL without any password written in it (the password
        /// itself is never printed).
        var named: [(String, String?)] {
            var url: String?
            if store != "sqlite" {
                if var components = URLComponents(string: store), components.password != nil {
                    components.password = nil
                    url = components.string
                } else {
                    url = store
                }
            }
            return [("--data-dir", dataDirectory), ("--store", url), ("--store-password-file", storePasswordFile)]
        }

        /// Runs `body` on the opened administration, closing it after.
        ///
        /// - Parameter serverKeys: open the server's keys, which needs the master key.
        func with<Result>(serverKeys: Bool = false, _ body: (Administration) async throws -> Result) async throws
            -> Result
        {
            var options = SigilStandalone.Options()
            options.dataDirectory = dataDirectory ?? DataDirectory.defaultPath
            options.keyStore = try ServerOptions.keyStore(store)
            options.storePasswordFile = storePasswordFile
            options.keyOverlap = keyOverlap
            var logger = Logger(label: "sigil.admin")
            logger.logLevel = .critical
            let (administration, close) = try await SigilStandalone.openAdministration(
                options, serverKeys: serverKeys, logger: logger)
            do {
                let result = try await body(administration)
                await close()
                return result
            } catch {
                await close()
                throw error
            }
        }
    }

    /// Prints `values` one a line: JSON Lines, or each value's line for people.
    static func print<Value: Encodable>(_ values: [Value], json: Bool, line: (Value) -> String) throws {
        var out = ""
        for value in values {
            out += json ? String(decoding: try Registration.json(value), as: UTF8.self) : line(value)
            out += "\n"
        }
        FileHandle.standardOutput.write(Data(out.utf8))
    }

    /// An operator's name as the audit trail shows it: `--as`, else `$USER`.
    static func operatorName(_ given: String?) throws -> String {
        let name = given ?? ProcessInfo.processInfo.environment["USER"] ?? "unknown"
        guard KeyID.isValid(name) else { throw ValidationError("--as is [A-Za-z0-9._~-]{1,128}") }
        return name
    }

    /// Runs `body`; an ID the store does not know is exit status 1 with one line, nothing changed.
    static func unknownIsOne<Result>(_ body: () async throws -> Result) async throws -> Result {
        do {
            return try await body()
        } catch let error as SigilError where error.code == .unknownKey {
            // The detail names the ID escaped (``Administration``): one line, whatever was typed.
            FileHandle.standardError.write(Data("sigil: \(error.detail)\n".utf8))
            throw ExitStatus(code: 1)
        }
    }

    /// What every paged list takes (PageRule): the page's size and the cursor of the page before.
    struct PageOptions: ParsableArguments {
        @Option(help: "Items a page, 1 to \(PageRule.maximumLimit).") var limit = PageRule.defaultLimit

        func validate() throws {
            guard (try? PageRule.limit(limit)) != nil else {
                throw ValidationError("--limit is a number from 1 to \(PageRule.maximumLimit)")
            }
        }
    }

    /// Says on standard error how to ask for the next page, when there is one: `more: sigil admin
    /// <command> <the same filters> --after|--before <cursor>`, one line (standard output stays the
    /// list alone, JSON Lines or not).
    static func sayMore(
        _ command: String, _ options: [(String, String?)], json: Bool, cursor name: String, next: String?
    ) {
        guard let next else { return }
        var words = ["more: sigil admin", command]
        // `--option=value`: a value starting with `-` stays the option's, and one starting with `=`
        // is no word zsh expands.
        for case (let option, let value?) in options { words.append(option + "=" + shellQuoted(value)) }
        if json { words.append("--json") }
        words.append(name + "=" + shellQuoted(next))
        FileHandle.standardError.write(Data((words.joined(separator: " ") + "\n").utf8))
    }

    /// `value` as one shell word on one line: as it is when it needs no quoting, else in single
    /// quotes (every shell reads those alike, UTF-8 included), else (control or format characters,
    /// which a terminal would act on or hide) in `$'…'` with `\xHH` escapes.
    static func shellQuoted(_ value: String) -> String {
        // No `~`: a word starting with one is a home directory to the shell.
        let plain = value.utf8.allSatisfy { byte in
            (PercentEncoding.isUnreserved(byte) && byte != UInt8(ascii: "~")) || "@%+=:,/".utf8.contains(byte)
        }
        if plain && !value.isEmpty { return value }
        let hidden = value.unicodeScalars.contains {
            [.control, .format, .lineSeparator, .paragraphSeparator].contains($0.properties.generalCategory)
        }
        if !hidden {
            return "'" + value.replacingOccurrences(of: "'", with: #"'\''"#) + "'"
        }
        var quoted = "$'"
        for byte in value.utf8 {
            switch byte {
            case UInt8(ascii: "'"), UInt8(ascii: "\\"): quoted += "\\" + String(UnicodeScalar(byte))
            case 0x20..<0x7F: quoted += String(UnicodeScalar(byte))
            default: quoted += String(format: "\\x%02x", byte)
            }
        }
        return quoted + "'"
    }

    struct Devices: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List devices, one a line, by device ID, a page at a time.",
            discussion: """
                Prints --limit devices (100); when more follow, says on standard error how to ask for \
                them: more: sigil admin devices … --after <cursor>.
                """)

        @OptionGroup var store: StoreOptions
        @Option(help: "Only this user's devices.") var user: String?
        @Option(help: "Only devices in this state: active or revoked.") var state: DeviceRecord.State?
        @OptionGroup var page: PageOptions
        @Option(help: "The cursor a `more:` line gave: the devices after it.") var after: String?
        @Flag(help: "JSON Lines.") var json = false

        func validate() throws {
            if let after, (try? PageRule.deviceCursor(after)) == nil {
                throw ValidationError("--after is the cursor a `more:` line gave")
            }
        }

        func run() async throws {
            let found = try await store.with {
                try await $0.devices(user: user, state: state, limit: page.limit, after: after)
            }
            if let user, found.items.isEmpty, after == nil {
                // As `revoke --user` does, the store cannot tell a user it never saw from one known by
                // access tokens alone: said, not an error.
                let name = OperatorText.escaped(user, quoting: .never)
                let which = state.map { "\($0.rawValue) " } ?? ""
                FileHandle.standardError.write(Data("sigil: no \(which)device of user \(name)\n".utf8))
            }
            try Admin.print(found.items, json: json, line: \.line)
            Admin.sayMore(
                "devices",
                [
                    ("--user", user), ("--state", state?.rawValue),
                    ("--limit", page.limit == PageRule.defaultLimit ? nil : String(page.limit)),
                ] + store.named, json: json, cursor: "--after", next: found.next)
        }
    }

    struct Device: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show one device, by device ID or any of its key IDs.")

        @OptionGroup var store: StoreOptions
        @Argument(help: "A device ID or key ID.") var id: String
        @Flag(help: "JSON.") var json = false

        func run() async throws {
            let device = try await Admin.unknownIsOne { try await store.with { try await $0.device(id) } }
            try Admin.print([device], json: json, line: \.line)
        }
    }

    struct Revoke: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Revoke a device, a key or every device of a user, in one write; prints what it revoked.")

        @OptionGroup var store: StoreOptions
        @Option(help: "A device ID.") var device: String?
        @Option(help: "A key ID (its device keeps its other keys).") var key: String?
        @Option(help: "A user: every device of theirs.") var user: String?
        @Option(help: "Why, for the audit trail.") var reason: String?
        @Option(name: .customLong("as"), help: "Your name in the audit trail (default: $USER).") var operatorName:
            String?
        @Flag(help: "JSON Lines.") var json = false

        func validate() throws {
            guard [device, key, user].compactMap({ $0 }).count == 1 else {
                throw ValidationError("give exactly one of --device, --key, --user")
            }
            _ = try Admin.operatorName(operatorName)
        }

        func run() async throws {
            let target: Administration.Target =
                if let device { .device(device) } else if let key { .key(key) } else { .user(user ?? "") }
            let name = try Admin.operatorName(operatorName)
            let devices = try await Admin.unknownIsOne {
                try await store.with { try await $0.revoke(target, by: name, reason: reason) }
            }
            if !json {
                if let user, devices.isEmpty {
                    // An OAuth client's user, known by its tokens alone: those issued before now are refused.
                    let name = OperatorText.escaped(user, quoting: .never)
                    FileHandle.standardOutput.write(
                        Data("revoked user \(name): no device; its access tokens issued before now are refused\n".utf8))
                    return
                }
                FileHandle.standardOutput.write(Data("revoked:\n".utf8))
            }
            try Admin.print(devices, json: json, line: \.line)
        }
    }

    struct Audit: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "The audit trail, oldest first, a page at a time from the newest.",
            discussion: """
                Prints the newest --limit rows (100), oldest first; when older rows remain, says on \
                standard error how to ask for them: more: sigil admin audit … --before <cursor>.
                """)

        @OptionGroup var store: StoreOptions
        @Option(help: "Only rows about this device.") var device: String?
        @Option(help: "Only rows about this user.") var user: String?
        @Option(help: "Only rows since this time: Unix seconds, or an ISO 8601 date or date-time.") var since: String?
        @OptionGroup var page: PageOptions
        @Option(help: "The cursor a `more:` line gave: the rows written before it.") var before: String?
        @Flag(help: "JSON Lines.") var json = false

        func validate() throws {
            if let before, (try? PageRule.auditCursor(before)) == nil {
                throw ValidationError("--before is the cursor a `more:` line gave")
            }
        }

        func run() async throws {
            let since = try self.since.map(Admin.time)
            let found = try await store.with {
                try await $0.audit(
                    AuditQuery(deviceID: device, userID: user, since: since), limit: page.limit, before: before)
            }
            try Admin.print(found.items, json: json, line: Admin.line)
            Admin.sayMore(
                "audit",
                [
                    ("--device", device), ("--user", user), ("--since", self.since),
                    ("--limit", page.limit == PageRule.defaultLimit ? nil : String(page.limit)),
                ] + store.named, json: json, cursor: "--before", next: found.next)
        }
    }

    struct Keys: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "The server's response, sealing and TLS keys and their states; rotate or promote them.",
            discussion: """
                `rotate response|sealing|tls` publishes a next key in discovery (a TLS key's pin among the \
                backup pins), current after --key-overlap; `promote response|sealing|tls` makes it current \
                now, served from the next connection on by every server on the store. Clients that trust \
                the current response key follow. A server given --cert serves its own certificate: its TLS \
                key is not Sigil's to rotate.
                """)

        @OptionGroup var store: StoreOptions
        @Argument(help: "rotate or promote (none: list).") var step: String?
        @Argument(help: "response, sealing or tls.") var kind: ServerKeyKind?
        @Option(name: .customLong("as"), help: "Your name in the audit trail (default: $USER).") var operatorName:
            String?
        @Flag(help: "JSON Lines.") var json = false

        func validate() throws {
            switch step {
            case nil: guard kind == nil else { throw ValidationError("rotate or promote before the kind") }
            case "rotate", "promote":
                guard kind != nil else { throw ValidationError("name the key: response, sealing or tls") }
            default: throw ValidationError("the step is rotate or promote")
            }
        }

        func run() async throws {
            let name = try Admin.operatorName(operatorName)
            let keys = try await store.with(serverKeys: true) { administration -> [ServerKeyInfo] in
                if let step, let kind {
                    _ =
                        step == "rotate"
                        ? try await administration.rotate(kind, by: name)
                        : try await administration.promote(kind, by: name)
                }
                return try administration.keys()
            }
            try Admin.print(keys, json: json) { key in
                "\(key.kind.rawValue) \(OperatorText.escaped(key.keyID)) \(OperatorText.escaped(key.alg)) \(key.state.rawValue) "
                    + (key.activatesAt == 0
                        ? "(since the first start)" : "(current from \(OperatorText.time(key.activatesAt)))")
            }
        }
    }

    /// Unix seconds, or an ISO 8601 date (`2026-11-25`) or date-time (`2026-11-25T10:00:00Z`).
    static func time(_ text: String) throws -> Int64 {
        if let seconds = Int64(text) { return seconds }
        let formatter = ISO8601DateFormatter()
        if let date = formatter.date(from: text) { return Int64(date.timeIntervalSince1970) }
        formatter.formatOptions = [.withFullDate]
        if let date = formatter.date(from: text) { return Int64(date.timeIntervalSince1970) }
        throw ValidationError("--since is Unix seconds or an ISO 8601 date or date-time")
    }

    /// An audit row as one line for people: what users, devices and operators supplied is escaped
    /// (``OperatorText``), so a row prints as one line whatever its fields hold.
    static func line(_ row: AuditEntry) -> String {
        let text = { OperatorText.escaped($0) }
        var fields = [OperatorText.time(row.time), row.action.rawValue, "actor=\(text(row.actor))"]
        if let device = row.deviceID { fields.append("device=\(text(device))") }
        if let key = row.keyID { fields.append("key=\(text(key))") }
        if let user = row.userID { fields.append("user=\(text(user))") }
        if let client = row.clientAddress { fields.append("client=\(text(client))") }
        if let reason = row.reason { fields.append("reason=" + OperatorText.escaped(reason, quoting: .always)) }
        return fields.joined(separator: " ")
    }

}

extension DeviceRecord.State: ExpressibleByArgument {}
extension ServerKeyKind: ExpressibleByArgument {}
