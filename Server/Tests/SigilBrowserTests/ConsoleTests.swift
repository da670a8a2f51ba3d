import AsyncHTTPClient
import Foundation
import HTTPTypes
import NIOCore
import NIOHTTP1
@_spi(Sigil) import SigilCore
import SigilServer
import SigilStandalone
import Testing

@testable import SigilTestSupport

/// The operators' console on the admin port, in a real browser: Debian's Chromium driven by Python
/// Playwright (`Tests/Browser/console_test.py`), in front of a gateway monitoring `/legacy` and
/// enforcing everything else. Screenshots of each page go to `ci-output/console/` (or
/// `$SIGIL_SCREENSHOTS`).
@Suite("Operators' console")
struct ConsoleTests {
    /// A python3 with Playwright, and Debian's Chromium; `nil` without both.
    static let browser: String? = {
        guard ["/usr/lib/chromium/chromium", "/usr/bin/chromium"].contains(where: FileManager.default.fileExists)
        else { return nil }
        let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
        let candidates = path.split(separator: ":").map { "\($0)/python3" } + ["/usr/bin/python3"]
        return candidates.first { candidate in
            FileManager.default.isExecutableFile(atPath: candidate)
                && (try? PythonHPKE.run(candidate, ["-c", "import playwright.sync_api"])) != nil
        }
    }()

    static let script = TestPaths.tests.appendingPathComponent("Browser/console_test.py").path

    /// Where the screenshots go: `$SIGIL_SCREENSHOTS`, else `ci-output/console` at the repository's root.
    static let screenshots: String =
        ProcessInfo.processInfo.environment["SIGIL_SCREENSHOTS"]
        ?? TestPaths.repository.appendingPathComponent("ci-output/console").path

    /// Runs one step of the browser script; what it saw, as JSON.
    static func browse(_ python: String, _ arguments: [String]) async throws -> [String: Any] {
        let log = TestServer.temporaryDirectory() + "-browser.log"
        try await ExternalServers.run(python, [script] + arguments, log: log)
        let output = try String(contentsOfFile: log, encoding: .utf8)
        let last = output.split(separator: "\n").last.map(String.init) ?? ""
        return try #require(try JSONSerialization.jsonObject(with: Data(last.utf8)) as? [String: Any], "\(output)")
    }

    @Test(
        "in Chromium: sign in with the admin token, find a device by its user, revoke it (its next request is refused on the public port), read the audit, rotate and promote the response key, see the rollout chart count this test's requests; a user ID holding HTML shows as text"
    )
    func consoleInABrowser() async throws {
        guard let python = Self.browser else {
            #expect(!ExternalServers.isCI, "no Chromium, or no python3 with Playwright")
            if !ExternalServers.isCI { print("skipping the console's browser test: no Chromium or Playwright") }
            return
        }
        let tokenFile = try AdminScaffold.tokenFile()
        let hostile = "<img src=x onerror=\"document.title='pwned'\">\nsecond line\u{202E}txt.exe"
        // As the console shows it: markup as text, what a reader could not see written out.
        let shown = #"<img src=x onerror="document.title='pwned'">\nsecond line\u{202e}txt.exe"#
        try await GatewayScaffold.withGateway(configure: {
            $0.monitor = ["/legacy"]
            $0.admin.port = 0
            $0.admin.tokenFile = tokenFile
        }) { server, _, _, client in
            let admin = try #require(await server.prepared.adminPort?.value())
            let url = "https://localhost:\(admin)"
            let alice = try TestDevice(.ed25519)
            let other = try TestDevice(.ed25519)
            try await server.prepared.directory.apply(
                DirectoryChange(
                    added: [
                        RegisteredKey(
                            keyID: alice.keyID, key: try alice.key.verificationKey, deviceID: "dev-alice",
                            userID: "alice@example.com"),
                        RegisteredKey(
                            keyID: other.keyID, key: try other.key.verificationKey, deviceID: "dev-other",
                            userID: hostile),
                    ]
                        // More than the console's page of 50, which it pages through by the answer's Link.
                        + (0..<55).map { index in
                            let key = try TestDevice(.ed25519)
                            return RegisteredKey(
                                keyID: key.keyID, key: try key.key.verificationKey,
                                deviceID: "dev-bulk-" + String(format: "%02d", index))
                        }))
            func signed(_ device: TestDevice, _ path: String) async throws -> TestResponse {
                var request = TestRequest(.post, path, server: server, json: #"{"n":1}"#)
                _ = try request.sign(with: device.signer(clock: server.clock))
                return try await request.send(client)
            }
            func unsigned(_ path: String) async throws -> TestResponse {
                try await TestRequest(.post, path, server: server, json: #"{"n":1}"#).send(client)
            }
            // Under /legacy (monitored): 2 verified, 3 unsigned that reach the backend anyway.
            for _ in 0..<2 { #expect(try await signed(alice, "/legacy/orders").status == 200) }
            for _ in 0..<3 { #expect(try await unsigned("/legacy/orders").status == 200) }
            // Elsewhere (enforced): 1 verified, 1 refused.
            #expect(try await signed(alice, "/api/orders").status == 200)
            #expect(try await unsigned("/api/orders").status == 401)

            let shots = Self.screenshots
            let first = try await Self.browse(
                python, ["devices", url, tokenFile, shots, "alice@example.com", "dev-alice", shown])
            #expect(first["revoked"] as? String == "dev-alice")
            #expect(first["hostileText"] as? String == shown)
            #expect(first["cookies"] as? Int == 0 && first["stored"] as? Int == 0)

            // Revoked in the console: refused on the public port, enforced and monitored alike (the
            // monitored route lets it through unverified, with its code).
            let refused = try await signed(alice, "/api/orders")
            #expect(refused.status == 401 && refused.code == "revoked-key", "\(refused.text)")
            #expect(try await signed(alice, "/legacy/orders").status == 200)
            let devices = try await server.prepared.directory.devices(DeviceQuery(deviceID: "dev-alice"))
            #expect(devices.first?.state == .revoked)

            let expected = #"{"verified":2,"missing-signature":3,"revoked-key":1}"#
            let second = try await Self.browse(
                python, ["pages", url, tokenFile, shots, "dev-alice", alice.keyID, "/legacy", expected])
            #expect((second["rollout"] as? [String: Int]) == ["verified": 2, "missing-signature": 3, "revoked-key": 1])
            #expect((second["bars"] as? Int ?? 0) > 0)
            #expect((second["keyStates"] as? [String])?.sorted() == ["current", "previous"])
        }
    }

    @Test(
        "the console's page, script and style are served without a credential, under a strict policy; nothing else is")
    func consoleAssets() async throws {
        try await AdminScaffold.withAdmin { server, port, client in
            func get(_ path: String) async throws -> HTTPClientResponse {
                try await client.execute(
                    HTTPClientRequest(url: "https://localhost:\(port)\(path)"), timeout: .seconds(30))
            }
            let page = try await get("/")
            #expect(page.status == .ok)
            #expect(page.headers.first(name: "Content-Type") == "text/html; charset=utf-8")
            let policy = try #require(page.headers.first(name: "Content-Security-Policy"))
            for directive in [
                "default-src 'none'", "script-src 'self'", "frame-ancestors 'none'",
                "require-trusted-types-for 'script'",
            ] {
                #expect(policy.contains(directive))
            }
            #expect(!policy.contains("unsafe"))
            #expect(page.headers.first(name: "Cache-Control") == "no-store")
            #expect(page.headers.first(name: "X-Content-Type-Options") == "nosniff")
            let html = String(buffer: try await page.body.collect(upTo: 1 << 20))
            #expect(html.contains(#"<label for="token">Admin token</label>"#))
            // No inline script or style: every script is the console's own file.
            #expect(!html.contains("<script>") && !html.contains("style=") && !html.contains("<style"))
            #expect(html.contains(#"<script src="/console.js" defer></script>"#))
            let script = try await get("/console.js")
            #expect(script.headers.first(name: "Content-Type") == "text/javascript; charset=utf-8")
            let code = String(buffer: try await script.body.collect(upTo: 1 << 20))
            for sink in ["innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(", "localStorage"] {
                #expect(!code.contains(sink), "the console's script uses \(sink)")
            }
            #expect(try await get("/console.css").status == .ok)
            // The icon every browser asks for: nothing, not a refusal logged as a failed admin call.
            #expect(try await get("/favicon.ico").status == .noContent)
            // Anything else still needs the credential, and says nothing without it.
            for path in ["/console.map", "/admin/v1/devices", "/index.html", "/metrics"] {
                let refused = try await get(path)
                #expect(refused.status == .unauthorized, "\(path)")
                #expect(refused.headers.first(name: "Cache-Control") == "no-store")
            }
            var post = HTTPClientRequest(url: "https://localhost:\(port)/")
            post.method = .POST
            #expect(try await client.execute(post, timeout: .seconds(30)).status == .unauthorized)

            // A call another site's page makes the browser send is refused, credential or not (a
            // browser sends a client certificate by itself); the operator's own page, and a
            // client that is no browser, are not.
            func call(_ path: String, _ fields: [(String, String)]) async throws -> HTTPClientResponse {
                var request = HTTPClientRequest(url: "https://localhost:\(port)\(path)")
                request.method = .POST
                request.headers.add(name: "Authorization", value: "Bearer \(AdminScaffold.adminToken)")
                for (name, value) in fields { request.headers.add(name: name, value: value) }
                return try await client.execute(request, timeout: .seconds(30))
            }
            let revoke = "/admin/v1/users/nobody/revoke?reason=csrf"
            for fields in [
                [("Sec-Fetch-Site", "cross-site")], [("Sec-Fetch-Site", "same-site")],
                [("Origin", "https://evil.example")], [("Origin", "null")],
                [("Origin", "https://localhost:\(port + 1)")],
                [("Sec-Fetch-Site", "same-origin"), ("Origin", "http://localhost:\(port)")],
            ] {
                let refused = try await call(revoke, fields)
                #expect(refused.status == .forbidden, "\(fields)")
                let body = String(buffer: try await refused.body.collect(upTo: 1 << 16))
                #expect(body.contains(#""code":"forbidden""#), "\(fields)")
            }
            for fields in [
                [], [("Sec-Fetch-Site", "same-origin"), ("Origin", "https://localhost:\(port)")],
                [("Sec-Fetch-Site", "none")],
            ] {
                #expect(try await call(revoke, fields).status == .ok, "\(fields)")
            }
            let audit = try await server.prepared.directory.auditTrail(AuditQuery(userID: "nobody"))
            #expect(audit.count == 3, "only the three calls let through revoked")

            // The rollout's window is an hour or a day, nothing else; without a server counting
            // requests (an operator's tool on the store alone), there is no rollout.
            for (window, status) in [("hour", 200), ("day", 200), ("week", 400), ("", 400)] {
                let answer = try await AdminScaffold.call(
                    .GET, "/admin/v1/rollout?window=\(window)", port: port, token: AdminScaffold.adminToken,
                    client: client)
                #expect(answer.status == status, "\(window)")
            }
            let alone = Administration(directory: server.prepared.directory, serverKeys: nil, clock: server.clock)
            #expect(await alone.handle(.get, path: "/admin/v1/rollout", query: [:], actor: "ops").status == .forbidden)

            // A control character in an ID or a query value is a bad request, on every store.
            for path in ["/admin/v1/devices?user=a%00b", "/admin/v1/devices/dev%0A1", "/admin/v1/audit?device=%07"] {
                var request = HTTPClientRequest(url: "https://localhost:\(port)\(path)")
                request.headers.add(name: "Authorization", value: "Bearer \(AdminScaffold.adminToken)")
                let refused = try await client.execute(request, timeout: .seconds(30))
                #expect(refused.status == .badRequest, "\(path)")
            }
        }
    }
}
