import AsyncHTTPClient
import Foundation
import HTTPTypes
import SigilClient
@_spi(Sigil) import SigilCore
import SigilServer
import Testing

@testable import SigilStandalone
@testable import SigilTestSupport

/// `sigil serve --access-log`, over real TLS: one JSON line per request, accepted, refused or replayed,
/// naming the device wherever the signature verified; no secret; reopened for rotation.
@Suite("Access log")
struct AccessLogTests {
    static func lines(_ path: String) throws -> [[String: Any]] {
        try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n").map { line in
            try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "\(line)")
        }
    }

    @Test(
        "an accepted, a refused and a replayed request each get one line; the device is named where the signature verified; query values, tokens and signatures never appear; a user ID with a newline stays in its field"
    )
    func linesPerRequest() async throws {
        let path = TestServer.temporaryDirectory() + "-access.log"
        defer { try? FileManager.default.removeItem(atPath: path) }
        try await TestServer.with(configure: { $0.accessLog = path }) { server in
            let device = try TestDevice(.ed25519)
            let user = "evil\n{\"forged\":true}"
            try await server.prepared.directory.apply(
                DirectoryChange(added: [
                    RegisteredKey(
                        keyID: device.keyID, key: try device.key.verificationKey, deviceID: "dev-log", userID: user)
                ]))
            try await server.client().using { client in
                var signed = TestRequest(.post, "/v1/echo?token=s3cr3t&x", server: server, json: #"{"a":1}"#)
                try signed.sign(with: device.signer(.rfc9421, clock: server.clock))
                #expect(try await signed.send(client).status == 200)
                #expect(try await signed.send(client).status == 401)  // the same request again
                let unsigned = TestRequest(.post, "/v1/echo", server: server, json: "{}")
                #expect(try await unsigned.send(client).status == 401)
            }
            server.prepared.accessLog?.flush()
            let text = try String(contentsOfFile: path, encoding: .utf8)
            #expect(!text.contains("s3cr3t") && !text.contains("sig1=") && !text.contains(#"{"a":1}"#))
            let lines = try Self.lines(path)
            try #require(lines.count == 3, "\(text)")
            let (accepted, replayed, refused) = (lines[0], lines[1], lines[2])
            #expect(accepted["path"] as? String == "/v1/echo?token&_")
            #expect(accepted["method"] as? String == "POST" && accepted["status"] as? Int == 200)
            #expect(accepted["outcome"] as? String == "verified" && accepted["profile"] as? String == "rfc9421")
            #expect(accepted["keyId"] as? String == device.keyID && accepted["deviceId"] as? String == "dev-log")
            #expect(accepted["userId"] as? String == user)
            #expect(accepted["client"] as? String == "127.0.0.1" && accepted["bodyBytes"] as? Int == 7)
            #expect((accepted["requestId"] as? String)?.isEmpty == false && accepted["durationMs"] is Double)
            #expect(replayed["status"] as? Int == 401 && replayed["outcome"] as? String == "replayed-nonce")
            #expect(replayed["deviceId"] as? String == "dev-log", "the signature verified: the device is known")
            #expect(refused["outcome"] as? String == "missing-signature" && refused["deviceId"] == nil)
        }
    }

    @Test("the log file is made owner-only even when it existed world-readable, and a link at its path is refused")
    func ownerOnlyNoLinks() throws {
        let directory = TestServer.temporaryDirectory()
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/access.log"
        try Data().write(to: URL(fileURLWithPath: path))
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: path)
        let log = try AccessLog(path: path)
        log.close()
        let mode = try #require(try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int)
        #expect(mode & 0o777 == 0o600)
        // A link someone left at the log's path, to a file elsewhere: never written through.
        let elsewhere = directory + "/elsewhere"
        try Data().write(to: URL(fileURLWithPath: elsewhere))
        let link = directory + "/linked.log"
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: elsewhere)
        #expect(throws: SigilInputError.self) { _ = try AccessLog(path: link) }
    }

    @Test("a path keeps its parameters' names, never their values")
    func parameterValuesDropped() {
        for (path, logged) in [
            ("/v1/echo?token=s3cr3t&x", "/v1/echo?token&_"),
            ("/v1/reset;token=s3cr3t/x;a=1;b", "/v1/reset;token/x;a;_"),
            // A parameter that is all value, and a fragment: neither reaches the log.
            ("/v1/echo?eyJhbGciOiJFUzI1NiJ9.e30.c2ln", "/v1/echo?_"),
            ("/v1/echo?a=1#secret", "/v1/echo?a"),
            ("/v1/echo?a=1&token%3Ds3cr3t", "/v1/echo?a&token"),
            ("/v1/plain", "/v1/plain"),
            ("/v1/plain#fragment", "/v1/plain"),
            ("", ""),
            ("/a;=1;;b=2/c?=&&x=%3D1&y%3d=2&%3Dz", "/a;;;b/c?&&x&y&"),
            // Decided on bytes, as a router decides: a mark that joins `?` or `;` into one character
            // still separates, and what only looks like one (U+037E, Greek question mark) does not.
            ("/v1/echo?\u{301}token=s3cr3t", "/v1/echo?\u{301}token"),
            ("/v1/echo\u{600}?token=s3cr3t", "/v1/echo\u{600}?token"),
            ("/v1/reset;\u{301}token=s3cr3t", "/v1/reset;\u{301}token"),
            ("/v1/echo?\u{200D}token=s3cr3t&b", "/v1/echo?\u{200D}token&_"),
            ("/v1/echo\u{37E}session=abc", "/v1/echo\u{37E}session=abc"),
            ("/é/ü;π=3.14?ключ=значение", "/é/ü;π?ключ"),
        ] {
            #expect(Array(AccessLog.withoutQueryValues(path).utf8) == Array(logged.utf8), "\(path)")
        }
    }

    @Test(
        "a line is written byte for byte: every value a JSON string escaped as Problem.quoted escapes it, durations in milliseconds with three decimals"
    )
    func lineBytes() throws {
        var facts = RequestRecord().facts
        facts.outcome = "verified"
        facts.keyID = "k1"
        facts.userID = "a\"b\\c\n\r\t\u{01}\u{1F}\u{7F}é😀"
        facts.bodyBytes = 1024
        let entry = AccessLog.Entry(
            time: 0, method: "POST", path: "/v1/echo?token=s3cr3t", status: 200, facts: facts, client: "127.0.0.1",
            requestID: nil, duration: .microseconds(12_007))
        let line = entry.line(time: "1970-01-01T00:00:00Z")
        let expected =
            #"{"time":"1970-01-01T00:00:00Z","method":"POST","path":"/v1/echo?token","status":200,"#
            + #""outcome":"verified","keyId":"k1","userId":"a\"b\\c\n\r\t\u0001\u001f\u007fé😀","#
            + #""client":"127.0.0.1","durationMs":12.007,"bodyBytes":1024}"#
        #expect(Array(line.utf8) == Array(expected.utf8))
        let parsed = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        #expect(parsed["userId"] as? String == facts.userID)
        for (micros, text) in [(0, "0.000"), (5, "0.005"), (999, "0.999"), (1_000, "1.000"), (61_234_567, "61234.567")]
        {
            let timed = AccessLog.Entry(
                time: 0, method: "GET", path: "/", status: 200, facts: RequestRecord().facts, client: nil,
                requestID: nil,
                duration: .microseconds(micros))
            #expect(timed.line(time: "t").hasSuffix(#""durationMs":"# + text + "}"))
        }
    }

    @Test(
        "Problem.quoted, written as bytes, escapes exactly what a scalar-by-scalar reference escapes: quotes, backslashes, C0, DEL, C1, U+2028 and U+2029"
    )
    func quotedAsReference() {
        // Scalar by scalar, as every hand-written JSON of Sigil was quoted before it wrote bytes, with
        // DEL, C1 and the two separators some readers take for line breaks escaped too.
        func reference(_ text: String) -> String {
            var out = "\""
            for scalar in text.unicodeScalars {
                switch scalar {
                case "\"": out += "\\\""
                case "\\": out += "\\\\"
                case "\n": out += "\\n"
                case "\r": out += "\\r"
                case "\t": out += "\\t"
                case _
                where scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) || scalar.value == 0x2028
                    || scalar.value == 0x2029:
                    let hex = String(scalar.value, radix: 16)
                    out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                default: out.unicodeScalars.append(scalar)
                }
            }
            return out + "\""
        }
        let alphabet: [Unicode.Scalar] =
            (0..<0x22).map { Unicode.Scalar($0)! }
            + [
                "\\", "a", "~", "\u{7F}", "\u{80}", "\u{85}", "\u{9F}", "\u{A0}", "é", "\u{2027}", "\u{2028}",
                "\u{2029}", "\u{202A}", "€", "😀", "\u{301}",
            ]
        var generator = SystemRandomNumberGenerator()
        var seed = UInt64.random(in: 0...UInt64.max, using: &generator)
        for _ in 0..<5_000 {
            seed = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            let length = Int(seed >> 59)
            var text = String.UnicodeScalarView()
            var state = seed
            for _ in 0..<length {
                state = state &* 6_364_136_223_846_793_005 &+ 1
                text.append(alphabet[Int(state >> 33) % alphabet.count])
            }
            let string = String(text)
            #expect(Array(Problem.quoted(string).utf8) == Array(reference(string).utf8), "seed \(seed)")
        }
    }

    @Test("the log is reopened at its path after a rotation moved it away")
    func reopened() async throws {
        let path = TestServer.temporaryDirectory() + "-access.log"
        defer {
            try? FileManager.default.removeItem(atPath: path)
            try? FileManager.default.removeItem(atPath: path + ".1")
        }
        try await TestServer.with(configure: { $0.accessLog = path }) { server in
            try await server.client().using { client in
                _ = try await TestRequest(.post, "/v1/echo", server: server, json: "{}").send(client)
                try FileManager.default.moveItem(atPath: path, toPath: path + ".1")
                try server.prepared.accessLog?.reopen()
                _ = try await TestRequest(.get, "/v1/echo", server: server).send(client)
            }
            server.prepared.accessLog?.flush()
            #expect(try Self.lines(path + ".1").count == 1)
            #expect(try Self.lines(path).map { $0["method"] as? String } == ["GET"])
            let mode = try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int
            #expect(mode == 0o600)
        }
    }
}
