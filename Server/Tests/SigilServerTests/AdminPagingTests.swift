import AsyncHTTPClient
import Crypto
import Foundation
import NIOHTTP1
@_spi(Sigil) import SigilCore
import SigilSQLite
import SigilServer
import Testing

@testable import SigilTestSupport

/// Operators' lists page through (issue: `sigil admin devices` loaded every device at once): the page
/// rule on the admin API over TLS (a `Link: <…>; rel="next"` header), its refusals, and `sigil
/// admin`'s `more:` line. The rule itself runs on every store in ``DirectoryContractTests``.
@Suite("Operators' lists page through")
struct AdminPagingTests {
    /// Devices `dev-p00`… (`count` of them) of `user`, each registration audited about that user.
    static func addDevices(
        _ directory: Directory, count: Int, user: String, prefix: String = "dev-p", at time: Int64
    ) async throws {
        for index in 0..<count {
            let device = prefix + (index < 10 ? "0" : "") + String(index)
            let key = try SigningKey.generate(.ed25519).verificationKey
            let keyID = key.derivedKeyID ?? ""
            try await directory.apply(
                DirectoryChange(
                    added: [RegisteredKey(keyID: keyID, key: key, deviceID: device, userID: user, createdAt: time)],
                    audit: [
                        AuditEntry(
                            time: time, action: .registered, deviceID: device, keyID: keyID, userID: user,
                            actor: keyID)
                    ]))
        }
    }

    @Test(
        "a limit of 0, 1001, -1 or not a number, and a malformed cursor, are 400 invalid-registration naming the parameter; nothing is listed"
    )
    func refusals() async throws {
        let clock = ManualUnixClock(SigningSetup.start)
        let directory = Directory.inMemory(clock: clock)
        try await Self.addDevices(directory, count: 3, user: "alice", at: clock.now())
        let admin = Administration(directory: directory, serverKeys: nil, clock: clock)
        let refused: [(String, [String: String], String)] = [
            ("devices", ["limit": "0"], "limit"), ("devices", ["limit": "1001"], "limit"),
            ("devices", ["limit": "-1"], "limit"), ("devices", ["limit": "ten"], "limit"),
            ("devices", ["limit": ""], "limit"), ("devices", ["limit": "1e2"], "limit"),
            ("devices", ["limit": "0100000"], "limit"), ("devices", ["after": ""], "after"),
            ("devices", ["after": "dev-\u{0}"], "after"),
            ("devices", ["after": String(repeating: "x", count: 513)], "after"),
            ("audit", ["limit": "0"], "limit"), ("audit", ["limit": "1001"], "limit"),
            ("audit", ["before": "abc"], "before"), ("audit", ["before": "0"], "before"),
            ("audit", ["before": "-5"], "before"), ("audit", ["before": "+5"], "before"),
            ("audit", ["before": "99999999999999999999"], "before"), ("audit", ["before": ""], "before"),
        ]
        for (route, query, parameter) in refused {
            let answer = await admin.handle(.get, path: "/admin/v1/\(route)", query: query, actor: "ops")
            let problem = try JSONSerialization.jsonObject(with: Data(answer.body)) as? [String: Any]
            #expect(answer.status.code == 400, "\(route) \(query)")
            #expect(problem?["code"] as? String == "invalid-registration", "\(route) \(query)")
            #expect((problem?["detail"] as? String)?.hasPrefix(parameter + " is") == true, "\(problem ?? [:])")
            #expect(answer.headers[Administration.linkField] == nil)
        }
        for limit in [0, 1_001] {
            await #expect(throws: SigilError(.invalidRegistration, "")) {
                try await admin.devices(limit: limit)
            }
            await #expect(throws: SigilError(.invalidRegistration, "")) {
                try await admin.audit(AuditQuery(), limit: limit)
            }
        }
        // The bounds themselves, and no limit (the default, 100), are served.
        for query in [["limit": "1"], ["limit": "1000"], [:]] {
            #expect(await admin.handle(.get, path: "/admin/v1/devices", query: query, actor: "ops").status == .ok)
        }
        #expect(PageRule.defaultLimit == 100 && PageRule.maximumLimit == 1_000)
        #expect(try await admin.devices(limit: nil).items.count == 3)
    }

    /// A GET on the admin port with the token: its status, `Link` field and JSON body.
    static func get(_ path: String, port: Int, client: HTTPClient) async throws -> (
        status: Int, link: String?, body: [UInt8]
    ) {
        var request = HTTPClientRequest(url: "https://localhost:\(port)\(path)")
        request.headers.add(name: "Authorization", value: "Bearer \(AdminScaffold.adminToken)")
        let response = try await client.execute(request, timeout: .seconds(30))
        let links = response.headers["Link"]
        #expect(links.count <= 1)
        return (Int(response.status.code), links.first, Array(buffer: try await response.body.collect(upTo: 1 << 22)))
    }

    /// The target of `Link: <target>; rel="next"`.
    static func nextTarget(_ link: String?) -> String? {
        guard let link, link.hasPrefix("<"), link.hasSuffix(#">; rel="next""#) else { return nil }
        return String(link.dropFirst().dropLast(#">; rel="next""#.count))
    }

    @Test(
        "the admin API over TLS: a page with a next one carries Link: <same filters, percent-encoded, &after= or &before=>; rel=\"next\"; following it lists everything once; the last page has none"
    )
    func linkHeader() async throws {
        try await AdminScaffold.withAdmin { server, port, client in
            let user = "jo smith/ü&x=1"
            let start = server.clock.now()
            try await Self.addDevices(server.prepared.directory, count: 7, user: user, at: start)
            try await Self.addDevices(server.prepared.directory, count: 2, user: "other", prefix: "dev-o", at: start)
            let encodedUser = "jo%20smith%2F%C3%BC%26x%3D1"

            let first = try await Self.get(
                "/admin/v1/devices?user=\(encodedUser)&limit=3", port: port, client: client)
            #expect(first.status == 200)
            #expect(first.link == #"</admin/v1/devices?user=\#(encodedUser)&limit=3&after=dev-p02>; rel="next""#)
            var listed = try JSONDecoder().decode([DeviceRecord].self, from: Data(first.body))
            var target = Self.nextTarget(first.link)
            var pages = 1
            while let next = target, pages < 10 {
                let page = try await Self.get(next, port: port, client: client)
                #expect(page.status == 200)
                listed += try JSONDecoder().decode([DeviceRecord].self, from: Data(page.body))
                target = Self.nextTarget(page.link)
                pages += 1
            }
            #expect(pages == 3)
            #expect(listed.map(\.deviceID) == (0..<7).map { "dev-p0\($0)" })
            #expect(listed.allSatisfy { $0.userID == user })

            // No filter, the default limit: one page, no Link.
            let all = try await Self.get("/admin/v1/devices", port: port, client: client)
            #expect(all.link == nil)
            #expect(try JSONDecoder().decode([DeviceRecord].self, from: Data(all.body)).count == 9)
            let state = try await Self.get("/admin/v1/devices?state=active&limit=8", port: port, client: client)
            #expect(state.link == #"</admin/v1/devices?state=active&limit=8&after=dev-p05>; rel="next""#)

            // The audit trail: newest first page, the cursor going back; the user's rows only (the
            // admin calls themselves name no user), so the pages are stable while calls add rows.
            let trail = try await Self.get(
                "/admin/v1/audit?user=\(encodedUser)&since=\(start)&limit=3", port: port, client: client)
            #expect(trail.status == 200)
            let link = try #require(trail.link)
            #expect(link.hasPrefix("</admin/v1/audit?user=\(encodedUser)&since=\(start)&limit=3&before="))
            #expect(link.hasSuffix(#">; rel="next""#))
            var pagesOfRows = [try JSONDecoder().decode([AuditEntry].self, from: Data(trail.body))]
            target = Self.nextTarget(trail.link)
            while let next = target, pagesOfRows.count < 10 {
                let page = try await Self.get(next, port: port, client: client)
                pagesOfRows.append(try JSONDecoder().decode([AuditEntry].self, from: Data(page.body)))
                target = Self.nextTarget(page.link)
            }
            #expect(pagesOfRows.map(\.count) == [3, 3, 1])
            #expect(pagesOfRows.reversed().flatMap { $0 }.map(\.deviceID) == (0..<7).map { "dev-p0\($0)" })

            // Over TLS too: a bad limit or cursor is a problem+json 400.
            for path in ["/admin/v1/devices?limit=0", "/admin/v1/audit?limit=1001", "/admin/v1/audit?before=x"] {
                let refused = try await Self.get(path, port: port, client: client)
                #expect(refused.status == 400, "\(path)")
                let problem = try JSONSerialization.jsonObject(with: Data(refused.body)) as? [String: Any]
                #expect(problem?["code"] as? String == "invalid-registration")
            }
        }
    }

    @Test(
        "sigil admin devices and audit print a page and, when more follow, one `more:` line on stderr that runs as the next page's command (text and --json); the last page says nothing"
    )
    func commandLine() async throws {
        let directory = try SigilCommand.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let data = directory.appendingPathComponent("data").path
        try FileManager.default.createDirectory(atPath: data, withIntermediateDirectories: false)
        let store = try await Directory.sqlite(
            path: data + "/directory.sqlite", masterKey: SymmetricKey(size: .bits256))
        try await Self.addDevices(store, count: 5, user: "alice", at: SigningSetup.start)
        try await Self.addDevices(store, count: 1, user: "bob", prefix: "dev-b", at: SigningSetup.start + 1)
        try await store.close()

        /// Runs `arguments` on the data directory, then every `more:` command it leads to as it is
        /// (it names the data directory itself): each run's standard output.
        func follow(_ arguments: [String]) async throws -> (outputs: [String], mores: [String]) {
            var arguments = arguments + ["--data-dir", data]
            var outputs: [String] = []
            var mores: [String] = []
            while outputs.count < 10 {
                let result = try await SigilCommand.run(["admin"] + arguments)
                #expect(result.status == 0, "\(arguments): \(result.error)")
                outputs.append(result.text)
                guard let more = result.error.split(separator: "\n").first(where: { $0.hasPrefix("more: ") }) else {
                    #expect(result.error.isEmpty, "\(result.error)")
                    break
                }
                #expect(result.error.split(separator: "\n").count == 1, "\(result.error)")
                mores.append(String(more))
                let words = more.split(separator: " ").map(String.init)
                #expect(Array(words.prefix(3)) == ["more:", "sigil", "admin"])
                arguments = Array(words.dropFirst(3))
            }
            return (outputs, mores)
        }

        let alice = (0..<5).map { "dev-p0\($0)" }
        let devices = try await follow(["devices", "--user", "alice", "--limit", "2"])
        #expect(
            devices.mores == [
                "more: sigil admin devices --user=alice --limit=2 --data-dir=\(data) --after=dev-p01",
                "more: sigil admin devices --user=alice --limit=2 --data-dir=\(data) --after=dev-p03",
            ])
        let lines = devices.outputs.flatMap { $0.split(separator: "\n") }
        #expect(lines.map { String($0.prefix(7)) } == alice)

        let json = try await follow(["devices", "--json", "--limit", "4"])
        #expect(json.mores == ["more: sigil admin devices --limit=4 --data-dir=\(data) --json --after=dev-p02"])
        let records = try json.outputs.flatMap { $0.split(separator: "\n") }.map {
            try JSONDecoder().decode(DeviceRecord.self, from: Data($0.utf8))
        }
        #expect(records.map(\.deviceID) == ["dev-b00"] + alice)

        // The default page holds all six: no `more:` line.
        let whole = try await follow(["devices"])
        #expect(whole.mores.isEmpty && whole.outputs.count == 1)

        let audit = try await follow(["audit", "--user", "alice", "--limit", "2"])
        #expect(audit.mores.count == 2)
        #expect(
            audit.mores.allSatisfy {
                $0.hasPrefix("more: sigil admin audit --user=alice --limit=2 --data-dir=\(data) --before=")
            })
        let rows = audit.outputs.reversed().flatMap { $0.split(separator: "\n") }
        let named = rows.compactMap { $0.split(separator: " ").first { $0.hasPrefix("device=") }.map(String.init) }
        #expect(named == alice.map { "device=" + $0 })
        let auditJSON = try await follow(["audit", "--json", "--limit", "5", "--since", String(SigningSetup.start)])
        #expect(auditJSON.mores.count == 1)
        #expect(
            auditJSON.mores.first?.hasPrefix(
                "more: sigil admin audit --since=\(SigningSetup.start) --limit=5 --data-dir=\(data) --json --before=")
                == true)

        for arguments in [
            ["devices", "--limit", "0"], ["devices", "--limit", "1001"], ["audit", "--limit", "x"],
            ["audit", "--before", "yesterday"], ["devices", "--after", ""],
        ] {
            let refused = try await SigilCommand.run(["admin"] + arguments + ["--data-dir", data])
            #expect(refused.status != 0, "\(arguments)")
            #expect(refused.output.isEmpty)
            #expect(refused.error.contains(arguments[1]), "\(arguments): \(refused.error)")
        }
    }
}
