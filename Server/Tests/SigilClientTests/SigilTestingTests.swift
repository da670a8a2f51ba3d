import Foundation
import HTTPTypes
@_spi(Sigil) import SigilCore
import SigilTesting
import Testing

@testable import SigilClient
@testable import SigilTestSupport

/// SigilTesting's in-process server, as an app's unit tests use it: a real ``SigilDevice`` enrolls,
/// sends, is refused and rotates with no network.
@Suite("SigilTesting: an app's unit tests against an in-process Sigil backend")
struct SigilTestingTests {
    static func request(_ server: SigilTestServer, _ path: String = "/v1/me") -> HTTPRequest {
        HTTPRequest(method: .post, scheme: "https", authority: "sigil.test", path: path)
    }

    @Test("enroll, send (verified there, the answer verified here), a replay refused, a revoked device told so, signed")
    func lifecycle() async throws {
        let server = try SigilTestServer { _, body, caller in
            var head = HTTPResponse(status: .ok)
            head.headerFields[.contentType] = "application/json"
            return (head, Array(#"{"user":"\#(caller.userID ?? "")","bytes":\#(body.count)}"#.utf8))
        }
        await server.addToken("alice-login-token", user: "alice")
        let device = try SigilDevice(
            store: DeviceScaffold.store(),
            transport: { _, _ in server })
        let identity = try await device.enroll(
            try SigningKey.generate(.ecdsaP256SHA256), server: server.origin, token: "alice-login-token")
        #expect(identity.userID == "alice")
        #expect(identity.secretKeyID != nil)

        let answer = try await device.send(Self.request(server), body: Array("{}".utf8))
        #expect(answer.head.status == .ok && answer.signatureVerified)
        #expect(String(decoding: answer.body, as: UTF8.self) == #"{"user":"alice","bytes":2}"#)

        // The request as sent, again: refused, in a refusal signed for it.
        let sent = try #require(await server.received.last)
        let replay = try await server.send(sent, body: Array("{}".utf8))
        #expect(replay.0.status.code == 401 && replay.0.headerFields[SigilV1.signatureField] != nil)

        // Revoked on the server: the device's next request is refused revoked-key, which it trusts.
        await server.revoke(deviceOf: identity.keyID)
        await #expect(throws: SigilError(.revokedKey, "")) {
            _ = try await device.send(Self.request(server), body: [])
        }
    }

    @Test("rotation and an unknown key, through the in-process server")
    func rotationAndUnknownKey() async throws {
        let server = try SigilTestServer { _, _, caller in (HTTPResponse(status: .ok), Array(caller.keyID.utf8)) }
        let device = try SigilDevice(store: DeviceScaffold.store(), transport: { _, _ in server })
        try await device.enroll(
            try SigningKey.generate(.ed25519), server: server.origin, token: server.token,
            enrollment: DeviceEnrollment(fetchSecret: false))
        let next = try SigningKey.generate(.ecdsaP256SHA256)
        let rotated = try await device.rotate(to: next)
        let answer = try await device.send(Self.request(server), body: [])
        #expect(String(decoding: answer.body, as: UTF8.self) == rotated.keyID)
        await server.forget(rotated.keyID)
        await #expect(throws: SigilError(.unknownKey, "")) { _ = try await device.send(Self.request(server), body: []) }
    }
}
