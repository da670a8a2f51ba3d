import AsyncHTTPClient
import Foundation
import HTTPTypes
import SigilClient
@_spi(Sigil) import SigilCore
import SigilHTTPClient
import Synchronization
import Testing

@testable import SigilTestSupport

/// A transport that remembers the last signed request it sent, as whoever watches the wire does (a
/// discovery read the device makes after an answer is no request worth replaying).
final class RecordingTransport: SigilTransport {
    let inner: any SigilTransport
    let last = Mutex<(HTTPRequest, [UInt8])?>(nil)

    init(_ inner: any SigilTransport) { self.inner = inner }

    func send(_ request: HTTPRequest, body: [UInt8]) async throws -> (HTTPResponse, [UInt8]) {
        if request.headerFields[SigilV1.signatureField] != nil { last.withLock { $0 = (request, body) } }
        return try await inner.send(request, body: body)
    }
}

/// Drives a backend that mounts Sigil with `GET /api/me` behind its framework's authentication, as
/// the app does (``SigilDevice``) and as an attacker would: unsigned, replayed, with a revoked key.
enum BackendExercise {
    static func run(port: Int, token: String) async throws {
        try await HTTPClient(eventLoopGroupProvider: .singleton).using { http in
            let wire = RecordingTransport(AsyncHTTPClientTransport(client: http))
            let device = try SigilDevice(store: MemoryDeviceStore(), transport: { _, _ in wire })
            let key = try SigningKey.generate(.ecdsaP256SHA256)
            let identity = try await device.enroll(key, server: "http://127.0.0.1:\(port)", token: token)
            let me = HTTPRequest(method: .get, scheme: "http", authority: "127.0.0.1:\(port)", path: "/api/me")

            // Signed by the enrolled device: through the framework's authentication to the route,
            // whose answer is signed.
            let answer = try await device.send(me)
            #expect(answer.head.status == .ok)
            #expect(answer.signatureVerified)
            #expect(String(decoding: answer.body, as: UTF8.self) == identity.keyID)

            // Unsigned: refused before any route runs.
            let unsigned = try await wire.inner.send(me, body: [])
            #expect(unsigned.0.status == .unauthorized)
            #expect(Self.code(unsigned) == "missing-signature")

            // The device's request, captured and sent again verbatim: its signature is valid, its nonce used.
            let (captured, capturedBody) = try #require(wire.last.withLock { $0 })
            let replayed = try await wire.inner.send(captured, body: capturedBody)
            #expect(replayed.0.status == .unauthorized)
            #expect(Self.code(replayed) == "replayed-nonce")

            // Revoked (the device reset), then a copy of its key signs a fresh request.
            try await device.reset()
            let clock = ServerClock()
            let stolen = SigilSession(
                transport: wire.inner, signer: RequestSigner(key: key, keyID: identity.keyID, clock: clock),
                clock: clock)
            let refused = try await stolen.send(me, body: [])
            #expect(refused.head.status == .unauthorized)
            #expect(refused.refusal?.code == .revokedKey)
        }
    }

    /// The problem+json `code` of a refusal.
    static func code(_ response: (HTTPResponse, [UInt8])) -> String? {
        guard response.0.headerFields[.contentType]?.hasPrefix("application/problem+json") == true,
            let object = try? JSONSerialization.jsonObject(with: Data(response.1)) as? [String: Any]
        else { return nil }
        return object["code"] as? String
    }
}
