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

/// What a device does against a test server: register, echo, get a secret, rotate.
enum DeviceSteps {
    /// Registers `device` with the bootstrap token, signing the registration with the device's own key.
    static func register(_ device: TestDevice, on server: TestServer, client: HTTPClient) async throws
        -> TestResponse
    {
        var request = TestRequest(.post, "/v1/devices", server: server, body: try device.registration)
        request.head.headerFields[.contentType] = "application/json"
        request.head.headerFields[.authorization] = "Bearer \(TestServer.token)"
        try request.sign(with: device.signer(clock: server.clock))
        return try await request.send(client, to: server)
    }

    static func echo(
        _ text: String,
        signer: RequestSigner,
        server: TestServer,
        client: HTTPClient
    ) async throws -> (TestResponse, String, TestRequest) {
        var request = TestRequest(.post, "/v1/echo?x=1", server: server, json: text)
        let nonce = try request.sign(with: signer)
        return (try await request.send(client, to: server), nonce, request)
    }

    static func issueSecret(for device: TestDevice, server: TestServer, client: HTTPClient) async throws
        -> TestDevice
    {
        var request = TestRequest(.post, "/v1/devices/\(device.keyID)/secret", server: server)
        try request.sign(with: device.signer(clock: server.clock))
        let response = try await request.send(client, to: server)
        #expect(response.status == 201, "\(response.text)")
        #expect(response.headers[.cacheControl] == "no-store")
        let keyID = try #require(response.json["keyId"] as? String)
        let encoded = try #require(response.json["secret"] as? String)
        let secret = try #require(Base64.decode(encoded))
        #expect(secret.count == 32)
        return TestDevice(key: try SigningKey(hmacSecret: secret), keyID: keyID)
    }

    static func rotate(
        from current: TestDevice, to next: TestDevice, server: TestServer, client: HTTPClient,
        serverKeyID: String? = nil
    ) async throws -> TestResponse {
        let nonce = "rotation-nonce-\(UUID().uuidString)"
        let proof = try next.key.signature(
            for: RotationProof.message(
                serverKeyID: serverKeyID ?? server.prepared.responseKeyID, currentKeyID: current.keyID,
                newKeyID: next.keyID, nonce: nonce),
            profile: .sigilV1)
        let object = [
            "alg": next.key.algorithm.rawValue, "publicKey": try next.publicKeyPEM, "proof": Base64URL.encode(proof),
        ]
        var request = TestRequest(
            .post, "/v1/keys/rotate", server: server,
            json: String(decoding: try JSONSerialization.data(withJSONObject: object), as: UTF8.self))
        let signer = RequestSigner(
            key: current.key, keyID: current.keyID, clock: server.clock, nonces: FixedNonce(value: nonce))
        try request.sign(with: signer)
        return try await request.send(client, to: server)
    }

    /// Registers a fresh P-256 device.
    static func registeredDevice(on server: TestServer, client: HTTPClient) async throws -> TestDevice {
        let device = try TestDevice()
        let registered = try await DeviceSteps.register(device, on: server, client: client)
        #expect(registered.status == 201, "\(registered.text)")
        return device
    }
}
