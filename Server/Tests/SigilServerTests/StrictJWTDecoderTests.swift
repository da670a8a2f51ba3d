import Crypto
import Foundation
import HTTPTypes
import JWTKit
@_spi(Sigil) import SigilCore
import SigilJWT
import SigilServer
import Testing

@testable import SigilTestSupport

/// jwt-kit's JSON decoder in Sigil (`StrictJWTDecoder`): whatever Foundation's decoder (jwt-kit's
/// default) reads, it reads the same, and it refuses what is ambiguous or unbounded; tokens verified
/// with the keys `sigil serve` makes go through it.
@Suite("JWT decoding")
struct StrictJWTDecoderTests {
    /// jwt-kit's default decoder, as `JSONDecoder.defaultForJWT` makes it.
    static let foundation: JSONDecoder = {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .secondsSince1970
        return decoder
    }()

    /// `json` decoded as `T` by each decoder and encoded again (sorted keys, dates in seconds), so
    /// two readings compare; `nil` where a decoder refuses it.
    static func readings<T: Codable>(_ type: T.Type, _ json: String) -> (foundation: String?, strict: String?) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        encoder.dateEncodingStrategy = .secondsSince1970
        func text(_ value: T?) -> String? {
            value.flatMap { try? encoder.encode($0) }.map { String(decoding: $0, as: UTF8.self) }
        }
        return (
            text(try? foundation.decode(type, from: Data(json.utf8))),
            text(try? StrictJWTDecoder().decode(type, from: Data(json.utf8)))
        )
    }

    static let claims: [String] = [
        #"{"sub":"user-1","exp":1796417355,"aud":"api","iss":"https://issuer.example","nbf":1,"iat":2,"cnf":{"jkt":"abc"}}"#,
        #"{"sub":"user-1","exp":1796417355,"aud":["api","other"]}"#,
        #"{"sub":"user-1","exp":1796417355.75,"iat":-1.5}"#,
        #"{"sub":"user-1","exp":1.796417355e9,"nbf":0.0}"#,
        #"{"sub":"user-1","exp":1796417355,"nbf":null,"cnf":null,"aud":null}"#,
        #"{"sub":"us\u00e9r\ud83d\ude00\n\/\"","exp":1,"extra":{"a":[1,2,{"b":null}],"c":true}}"#,
        #" { "sub" : "é" , "exp" : 12345678901234567890 } "#,
        #"{"sub":"user-1","exp":1796417355,"cnf":{"jkt":null}}"#,
        // Each of these is refused by both.
        #"{"exp":1796417355}"#,
        #"{"sub":1,"exp":1796417355}"#,
        #"{"sub":"user-1","exp":"1796417355"}"#,
        #"{"sub":"user-1","exp":1796417355,"aud":1}"#,
        #"{"sub":"user-1","exp":1796417355,"aud":["api",1]}"#,
        #"{"sub":"user-1","exp":1796417355,"cnf":"jkt"}"#,
        #"{"sub":"user-1","exp":true}"#,
        #"{"sub":"user-1","exp":01}"#,
        #"["sub"]"#,
        "",
    ]

    static let headers: [String] = [
        #"{"alg":"ES256","typ":"JWT","kid":"k1"}"#,
        #"{"alg":"ES256","jwk":{"kty":"EC","crv":"P-256","x":"f83","y":"x_F"},"x5c":["a","b"],"n":1.5,"i":3,"b":true,"z":null}"#,
        #"{"alg":"RS256","crit":["exp"],"exp":1e3,"deep":{"a":{"b":{"c":[[[]]]}}}}"#,
        #"{}"#,
    ]

    @Test("reads every claims set and header as Foundation's decoder does, and refuses what it refuses")
    func parity() {
        for json in Self.claims {
            let (foundation, strict) = Self.readings(JWTAccessTokens.Claims.self, json)
            #expect(foundation == strict, "\(json)")
        }
        #expect(Self.claims.filter { Self.readings(JWTAccessTokens.Claims.self, $0).strict != nil }.count == 8)
        for json in Self.headers {
            let (foundation, strict) = Self.readings(JWTHeader.self, json)
            #expect(foundation != nil && foundation == strict, "\(json)")
        }
    }

    @Test("reads a JWK Set as Foundation's decoder does")
    func jwks() throws {
        let ec = P256.Signing.PrivateKey().publicKey.rawRepresentation
        let json = """
            {"keys":[
              {"kty":"EC","crv":"P-256","kid":"ec-1","alg":"ES256","use":"sig",
               "x":"\(Base64URL.encode(Array(ec.prefix(32))))","y":"\(Base64URL.encode(Array(ec.suffix(32))))"},
              {"kty":"RSA","kid":"rsa-1","alg":"RS256","n":"sXchDaQebHnPiGvyDOAT4saGEUetSyo9MKLOoWFsueri","e":"AQAB",
               "key_ops":["verify"],"x5c":["MIIB"]},
              {"kty":"OKP","crv":"Ed25519","kid":"ed-1","x":"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"}
            ]}
            """
        let (foundation, strict) = Self.readings(JWKS.self, json)
        #expect(foundation != nil && foundation == strict)
    }

    /// Random claims sets, with values of every JSON type where the claims have one: both decoders
    /// agree on each (a fixed seed, so a failure repeats).
    @Test("agrees with Foundation's decoder on 3,000 random claims sets")
    func randomParity() {
        var random = SeededGenerator(seed: 38)
        var accepted = 0
        for _ in 0..<3_000 {
            var members: [String] = []
            for name in ["sub", "exp", "aud", "iss", "nbf", "iat", "cnf", "extra"] where random.next() % 4 != 0 {
                members.append("\"\(name)\":" + Self.randomValue(&random, depth: 0, name: name))
            }
            let json = "{" + members.joined(separator: ",") + "}"
            let (foundation, strict) = Self.readings(JWTAccessTokens.Claims.self, json)
            #expect(foundation == strict, "\(json)")
            if strict != nil { accepted += 1 }
        }
        #expect(accepted > 100, "the generator makes valid claims sets too")
    }

    static let strings = [#""user-1""#, #""""#, #""\u00e9\ud83d\ude00""#, #""a\"b\\c\/d""#, #""é""#, #""\t""#]
    static let numbers = [
        "0", "-0", "1", "-1", "1796417355", "1796417355.5", "-1.5", "1e3", "1E-3", "2.5e+2", "9007199254740993",
        "12345678901234567890", "-9223372036854775808", "1e308", "0.1",
    ]

    static func randomValue(_ random: inout SeededGenerator, depth: Int, name: String) -> String {
        // Mostly the type the claim has, so that whole claims sets decode often.
        let kind = random.next() % 10
        switch (name, kind) {
        case ("sub", 0...6), ("iss", 0...6): return strings[Int(random.next() % UInt64(strings.count))]
        case ("exp", 0...6), ("nbf", 0...6), ("iat", 0...6): return numbers[Int(random.next() % UInt64(numbers.count))]
        case ("aud", 0...3): return strings[Int(random.next() % UInt64(strings.count))]
        case ("aud", 4...6): return "[" + strings.prefix(Int(random.next() % 3)).joined(separator: ",") + "]"
        case ("cnf", 0...5): return #"{"jkt":"# + strings[Int(random.next() % UInt64(strings.count))] + "}"
        default: break
        }
        switch random.next() % 7 {
        case 0: return strings[Int(random.next() % UInt64(strings.count))]
        case 1: return numbers[Int(random.next() % UInt64(numbers.count))]
        case 2: return random.next() % 2 == 0 ? "true" : "false"
        case 3: return "null"
        case 4 where depth < 3:
            return "["
                + (0..<Int(random.next() % 3)).map { _ in randomValue(&random, depth: depth + 1, name: "") }
                .joined(separator: ",") + "]"
        case 5 where depth < 3:
            return "{"
                + (0..<Int(random.next() % 3)).map { "\"k\($0)\":" + randomValue(&random, depth: depth + 1, name: "") }
                .joined(separator: ",") + "}"
        default: return "{}"
        }
    }

    @Test("refuses duplicate names, invalid text, and documents too deep or too wide")
    func refusals() {
        let refused: [(String, [UInt8])] = [
            ("a duplicate claim", Array(#"{"sub":"a","exp":1,"sub":"b"}"#.utf8)),
            ("a duplicate name in a nested object", Array(#"{"sub":"a","exp":1,"cnf":{"jkt":"x","jkt":"y"}}"#.utf8)),
            ("a lone surrogate", Array(#"{"sub":"\ud800","exp":1}"#.utf8)),
            ("invalid UTF-8", Array(#"{"sub":""#.utf8) + [0xC0, 0xAF] + Array(#"","exp":1}"#.utf8)),
            ("a control character", Array("{\"sub\":\"a\u{1}\",\"exp\":1}".utf8)),
            (
                "33 levels",
                Array(
                    (#"{"sub":"a","exp":1,"x":"# + String(repeating: "[", count: 32) + String(repeating: "]", count: 32)
                        + "}").utf8)
            ),
            ("257 members", Array(("{" + (0..<255).map { "\"m\($0)\":0," }.joined() + #""sub":"a","exp":1}"#).utf8)),
            // Foundation's decoder takes this one (a trailing comma); JSON has none.
            ("a trailing comma", Array(#"{"sub":"a","exp":1,}"#.utf8)),
            ("a number too large for a Double", Array(#"{"sub":"a","exp":1e400}"#.utf8)),
        ]
        for (what, json) in refused {
            #expect(throws: DecodingError.self, "\(what)") {
                try StrictJWTDecoder().decode(JWTAccessTokens.Claims.self, from: Data(json))
            }
        }
        // The deepest and widest documents allowed are read.
        let deepest =
            #"{"sub":"a","exp":1,"x":"# + String(repeating: "[", count: 31) + String(repeating: "]", count: 31) + "}"
        let widest = "{" + (0..<254).map { "\"m\($0)\":0," }.joined() + #""sub":"a","exp":1}"#
        for json in [deepest, widest] {
            #expect(throws: Never.self) {
                try StrictJWTDecoder().decode(JWTAccessTokens.Claims.self, from: Data(json.utf8))
            }
        }
    }

    @Test("numbers keep their integer readings: exact, rounded down, or none")
    func numbers() throws {
        func number(_ text: String) -> StrictJSON.Number? {
            guard case .number(let number)? = StrictJSON.value(Array(text.utf8), limits: .document) else { return nil }
            return number
        }
        let cases: [(String, Int64?, Int64?, Double)] = [
            ("1796417355", 1_796_417_355, 1_796_417_355, 1_796_417_355),
            ("1796417355.75", nil, 1_796_417_355, 1_796_417_355.75),
            ("-1.5", nil, -2, -1.5),
            ("-1.0", nil, -1, -1),
            ("1e3", nil, nil, 1_000),
            ("-9223372036854775808", .min, .min, -9_223_372_036_854_775_808),
            ("9223372036854775808", nil, nil, 9_223_372_036_854_775_808),
            ("-9223372036854775807.5", nil, .min, -9_223_372_036_854_775_807.5),
            ("-9223372036854775808.5", nil, nil, -9_223_372_036_854_775_808.5),
            ("18446744073709551616", nil, nil, 18_446_744_073_709_551_616),
            ("-18446744073709551615.5", nil, nil, -18_446_744_073_709_551_615.5),
            ("-184467440737095516150", nil, nil, -184_467_440_737_095_516_150),
        ]
        for (text, exact, part, double) in cases {
            let parsed = try #require(number(text), "\(text)")
            #expect(parsed.exactInteger == exact && parsed.integerPart == part && parsed.double == double, "\(text)")
        }
        for text in ["01", "1.", ".5", "-", "1e", "+1", "0x1", "NaN", "Infinity"] {
            #expect(number(text) == nil, "\(text)")
        }
    }

    /// A token signed with a P-256 key over the exact header and claims given.
    static func token(header: String, claims: String, key: P256.Signing.PrivateKey) throws -> String {
        let input = Base64URL.encode(Array(header.utf8)) + "." + Base64URL.encode(Array(claims.utf8))
        let signature = try key.signature(for: Data(input.utf8)).rawRepresentation
        return input + "." + Base64URL.encode(Array(signature))
    }

    @Test("tokens verified with the keys sigil serve makes: a duplicate claim or header field is refused")
    func tokens() async throws {
        let key = P256.Signing.PrivateKey()
        let keys = try #require(
            try await EnrollmentPolicy.jwtKeys(pemKeys: [key.publicKey.pemRepresentation], hs256Secrets: [], jwks: []))
        let clock = ManualUnixClock(1_700_000_000)
        let tokens = JWTAccessTokens(keys: keys, audience: "api", issuer: "https://issuer.example", clock: clock)
        let header = #"{"alg":"ES256","typ":"at+jwt"}"#
        let claims =
            #"{"sub":"user-1","aud":"api","iss":"https://issuer.example","exp":1700000060.5,"cnf":{"jkt":"t"}}"#
        let verified = try await tokens.verify(try Self.token(header: header, claims: claims, key: key))
        #expect(verified == AccessToken(subject: "user-1", boundThumbprint: "t", expiresAt: 1_700_000_060))

        let forged = [
            (header, #"{"sub":"user-1","sub":"admin","aud":"api","iss":"https://issuer.example","exp":1700000060}"#),
            (
                header,
                #"{"sub":"user-1","aud":"api","iss":"https://issuer.example","exp":1700000060,"cnf":{"jkt":"t","jkt":"u"}}"#
            ),
            (#"{"alg":"ES256","alg":"none"}"#, claims),
            (#"{"alg":"ES256","crit":["exp"],"exp":1}"#, claims),
        ]
        for (header, claims) in forged {
            await #expect(throws: SigilError.self, "\(header) \(claims)") {
                try await tokens.verify(try Self.token(header: header, claims: claims, key: key))
            }
        }
    }

    /// Signed by a configured key, so only the claims' own rules stand between them and the server:
    /// each is refused, whichever decoder read it (jwt-kit's default included), and nothing traps.
    static let hostileClaims = [
        #"{"sub":"user-1","aud":"api","iss":"https://issuer.example","exp":1e19}"#,
        #"{"sub":"user-1","aud":"api","iss":"https://issuer.example","exp":1700000060,"nbf":-1e19}"#,
        #"{"sub":"user-1","aud":"api","iss":"https://issuer.example","exp":1700000060,"iat":1e19}"#,
        #"{"sub":"user-1","aud":"api","iss":"https://issuer.example","exp":253402300800}"#,
        #"{"sub":"alice\u0000m","aud":"api","iss":"https://issuer.example","exp":1700000060}"#,
        #"{"sub":"alice\nSigil-Verified: ?1","aud":"api","iss":"https://issuer.example","exp":1700000060}"#,
    ]

    @Test(
        "a signed token with a time past year 9999, a sub with a control character or a critical header is refused, never a crash"
    )
    func hostileIssuer() async throws {
        let key = P256.Signing.PrivateKey()
        let strict = try #require(
            try await EnrollmentPolicy.jwtKeys(pemKeys: [key.publicKey.pemRepresentation], hs256Secrets: [], jwks: []))
        let lenient = JWTKeyCollection()
        await lenient.add(ecdsa: try ES256PublicKey(pem: key.publicKey.pemRepresentation))
        let clock = ManualUnixClock(1_700_000_000)
        let header = #"{"alg":"ES256","typ":"JWT"}"#
        for keys in [strict, lenient] {
            let tokens = JWTAccessTokens(keys: keys, audience: "api", issuer: "https://issuer.example", clock: clock)
            let enrollment = EnrollmentPolicy(
                jwt: EnrollmentPolicy.JWTRules(keys: keys, audience: "api", issuer: "https://issuer.example"),
                clock: clock)
            for claims in Self.hostileClaims {
                let token = try Self.token(header: header, claims: claims, key: key)
                await #expect(throws: SigilError.self, "\(claims)") { try await tokens.verify(token) }
                var request = HTTPRequest(method: .post, scheme: "https", authority: "api.example", path: "/register")
                request.headerFields[.authorization] = "Bearer " + token
                // Enrollment reads no iat.
                if !claims.contains("iat") {
                    await #expect(throws: SigilError.self, "\(claims)") { try await enrollment.authorize(request) }
                }
                _ = try? await enrollment.singleUse(of: request)
            }
            // A critical extension Sigil does not understand (jwt-kit does not look at crit).
            let critical = try Self.token(
                header: #"{"alg":"ES256","crit":["x-bound"],"x-bound":true}"#,
                claims: #"{"sub":"user-1","aud":"api","iss":"https://issuer.example","exp":1700000060}"#, key: key)
            await #expect(throws: SigilError.self) { try await tokens.verify(critical) }
            var request = HTTPRequest(method: .post, scheme: "https", authority: "api.example", path: "/register")
            request.headerFields[.authorization] = "Bearer " + critical
            await #expect(throws: SigilError.self) { try await enrollment.authorize(request) }
        }
    }
}
