import Crypto
import Foundation
import HTTPTypes
import JWTKit
@_spi(Sigil) import SigilCore
import SigilJWT
import SigilStandalone
import Testing

@testable import SigilTestSupport

/// Enrollment credentials: ES256 keys and JWKS files, open enrollment, nothing configured.
@Suite("Enrollment policy")
struct EnrollmentPolicyTests {
    static func request(bearer: String?) -> HTTPRequest {
        var request = HTTPRequest(method: .post, scheme: "https", authority: "localhost", path: "/v1/devices")
        request.headerFields[.authorization] = bearer.map { "Bearer \($0)" }
        return request
    }

    static let clock = ManualUnixClock(SigningSetup.start)

    static func claims(_ subject: String, expires: Int64) -> RegistrationInputTests.Claims {
        .init(sub: .init(value: subject), exp: .init(value: Date(timeIntervalSince1970: TimeInterval(expires))))
    }

    @Test("an ES256 public key in PEM verifies enrollment JWTs; another key's do not")
    func es256() async throws {
        let key = P256.Signing.PrivateKey()
        let keys = try #require(
            try await EnrollmentPolicy.jwtKeys(pemKeys: [key.publicKey.pemRepresentation], hs256Secrets: [], jwks: []))
        let policy = EnrollmentPolicy(
            jwt: .init(keys: keys, audience: RegistrationInputTests.audience, issuer: RegistrationInputTests.issuer),
            clock: Self.clock)
        let signing = JWTKeyCollection()
        await signing.add(ecdsa: try ES256PrivateKey(pem: key.pemRepresentation))
        let token = try await signing.sign(Self.claims("bob", expires: Self.clock.now() + 60))
        #expect(try await policy.authorize(Self.request(bearer: token)) == "bob")

        let other = JWTKeyCollection()
        await other.add(ecdsa: ES256PrivateKey())
        let forged = try await other.sign(Self.claims("bob", expires: Self.clock.now() + 60))
        await #expect(throws: SigilError(.enrollmentRefused, "")) {
            _ = try await policy.authorize(Self.request(bearer: forged))
        }
    }

    @Test(
        "an enrollment JWT's aud and iss are compared byte for byte (RFC 7519 §2): an equivalent spelling (a Kelvin sign for K) is another audience, another issuer"
    )
    func claimsByBytes() async throws {
        let key = P256.Signing.PrivateKey()
        let keys = try #require(
            try await EnrollmentPolicy.jwtKeys(pemKeys: [key.publicKey.pemRepresentation], hs256Secrets: [], jwks: []))
        let policy = EnrollmentPolicy(
            jwt: .init(keys: keys, audience: "https://sigil.test/Kiosk", issuer: "https://id.example.com/Kate"),
            clock: Self.clock)
        let signing = JWTKeyCollection()
        await signing.add(ecdsa: try ES256PrivateKey(pem: key.pemRepresentation))
        var claims = Self.claims("bob", expires: Self.clock.now() + 60)
        claims.aud = .init(value: ["https://sigil.test/Kiosk"])
        claims.iss = .init(value: "https://id.example.com/Kate")
        #expect(try await policy.authorize(Self.request(bearer: try await signing.sign(claims))) == "bob")
        for (audience, issuer) in [
            ("https://sigil.test/\u{212A}iosk", "https://id.example.com/Kate"),
            ("https://sigil.test/Kiosk", "https://id.example.com/\u{212A}ate"),
        ] {
            claims.aud = .init(value: [audience])
            claims.iss = .init(value: issuer)
            let token = try await signing.sign(claims)
            await #expect(throws: SigilError(.enrollmentRefused, "")) {
                _ = try await policy.authorize(Self.request(bearer: token))
            }
        }
    }

    @Test("a JWKS file verifies enrollment JWTs by kid")
    func jwks() async throws {
        let key = P256.Signing.PrivateKey()
        let raw = key.publicKey.rawRepresentation
        let jwks = """
            {"keys":[{"kty":"EC","crv":"P-256","alg":"ES256","kid":"enroll-1",\
            "x":"\(Base64URL.encode(Array(raw.prefix(32))))","y":"\(Base64URL.encode(Array(raw.suffix(32))))"}]}
            """
        let keys = try #require(try await EnrollmentPolicy.jwtKeys(pemKeys: [], hs256Secrets: [], jwks: [jwks]))
        let policy = EnrollmentPolicy(
            jwt: .init(keys: keys, audience: RegistrationInputTests.audience, issuer: RegistrationInputTests.issuer),
            clock: Self.clock)
        let signing = JWTKeyCollection()
        await signing.add(ecdsa: try ES256PrivateKey(pem: key.pemRepresentation), kid: "enroll-1")
        let token = try await signing.sign(Self.claims("carol", expires: Self.clock.now() + 60), kid: "enroll-1")
        #expect(try await policy.authorize(Self.request(bearer: token)) == "carol")
    }

    @Test("open enrollment takes anyone; nothing configured takes no one")
    func openAndClosed() async throws {
        #expect(try await EnrollmentPolicy(isOpen: true).authorize(Self.request(bearer: nil)) == nil)
        await #expect(throws: SigilError(.enrollmentRefused, "")) {
            _ = try await EnrollmentPolicy().authorize(Self.request(bearer: "anything"))
        }
        await #expect(throws: SigilInputError.self) {
            _ = try await EnrollmentPolicy.jwtKeys(pemKeys: ["not a key"], hs256Secrets: [], jwks: [])
        }
        await #expect(throws: SigilInputError.self) {
            _ = try await EnrollmentPolicy.jwtKeys(pemKeys: [], hs256Secrets: [[1, 2, 3]], jwks: [])
        }
    }
}
