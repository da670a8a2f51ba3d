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

/// App Attest enrollment against a test server.
enum AppAttestScaffold {
    static func attestation(
        _ authority: TestAppAttestAuthority, device: TestAppAttestDevice, challenge: String,
        change: (inout TestAppAttestAuthority.Attestation) -> Void = { _ in }
    ) throws -> [UInt8] {
        var fields = authority.attestation(
            clientDataHash: Array(SHA256.hash(data: Array(challenge.utf8))), key: device.key)
        change(&fields)
        return try authority.object(fields)
    }

    static func serve<Result: Sendable>(
        _ authority: TestAppAttestAuthority, appIDs: [String] = [TestAppAttestAuthority.appID],
        _ body: (TestServer, DeviceRegistration, ResponseVerifier, AsyncHTTPClientTransport) async throws -> Result
    ) async throws -> Result {
        try await TestServer.with(
            dataDirectory: TestServer.temporaryDirectory(),
            configure: { options in
                options.appAttest.appIDs = appIDs
                options.appAttest.root = authority.root
            }
        ) { server in
            let tls = ClientTLS.configuration(anchors: try server.certificates)
            return try await HTTPClient(eventLoopGroupProvider: .singleton, configuration: .init(tlsConfiguration: tls))
                .using { client in
                    let clock = ServerClock(local: server.clock)
                    let transport = AsyncHTTPClientTransport(client: client)
                    let registration = DeviceRegistration(
                        transport: transport, authority: "localhost:\(server.port)", clock: clock)
                    let verifier = try await registration.discover().responseVerifier(clock: clock)
                    return try await body(server, registration, verifier, transport)
                }
        }
    }
}

/// A device's App Attest key as the device uses it: it signs with assertions whose counter grows,
/// over SHA-256 of the signature base, for its App ID.
final class TestAppAttestDevice: SignatureProvider, Sendable {
    let key: P256.Signing.PrivateKey
    let appID: String
    let counter = Mutex<UInt32>(0)

    init(key: P256.Signing.PrivateKey = .init(), appID: String = TestAppAttestAuthority.appID) {
        self.key = key
        self.appID = appID
    }

    var algorithm: SigilCore.SignatureAlgorithm { .appleAppAttest }
    var publicKey: VerificationKey? { nil }
    var appAttestKeyID: [UInt8] { Array(SHA256.hash(data: key.publicKey.x963Representation)) }
    var keyID: String { AppAttestAssertion.keyID(appAttestKeyID: appAttestKeyID) }

    func signature(for message: [UInt8]) throws -> [UInt8] {
        let next = counter.withLock { value in
            value += 1
            return value
        }
        return try TestAppAttestAuthority.assertion(key: key, clientData: message, counter: next, appID: appID)
    }

    /// Signs the next request with `counter` again, as a cloned key would.
    func rewind(to value: UInt32) { counter.withLock { $0 = value } }
}
