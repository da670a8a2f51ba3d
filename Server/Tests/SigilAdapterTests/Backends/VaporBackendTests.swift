import AsyncHTTPClient
import Foundation
import HTTPTypes
import SigilClient
@_spi(Sigil) import SigilCore
import SigilHTTPClient
import SigilServer
import SigilVapor
import Testing
import Vapor
import VaporTesting

@testable import SigilTestSupport

/// The Vapor backend (``VaporBackend``), and Vapor's authentication over Sigil.
@Suite("Vapor backend: Sigil in Vapor's authentication idiom")
struct VaporBackendTests {
    static let token = "vapor-backend-token-0123456789"

    @Test(
        "a device enrolls and reaches the route behind guardMiddleware; unsigned, replayed and revoked requests are refused; a restart keeps the keys"
    )
    func backend() async throws {
        let dataDirectory = TestServer.temporaryDirectory()
        try FileManager.default.createDirectory(atPath: dataDirectory, withIntermediateDirectories: true)
        var responseKeyID: String?
        for start in 1...2 {
            try await withApp { app in
                try await VaporBackend.configure(app, dataDirectory: dataDirectory, enrollToken: Self.token)
                try await app.server.start(address: .hostname("127.0.0.1", port: 0))
                do {
                    let port = try #require(app.http.server.shared.localAddress?.port)
                    if start == 1 { try await BackendExercise.run(port: port, token: Self.token) }
                    // The response key is in the store: the same after a restart.
                    let discovery = try await HTTPClient(eventLoopGroupProvider: .singleton).using { http in
                        try await DeviceRegistration(
                            transport: AsyncHTTPClientTransport(client: http), scheme: "http",
                            authority: "127.0.0.1:\(port)", clock: ServerClock()
                        ).discover()
                    }
                    let keyID = try #require(discovery.responseKeys.first?.keyId)
                    #expect(responseKeyID == nil || responseKeyID == keyID)
                    responseKeyID = keyID
                } catch {
                    await app.server.shutdown()
                    throw error
                }
                await app.server.shutdown()
            }
        }
        // The master key was made in sigil serve's format.
        let master = try MasterKey(contentsOfFile: dataDirectory + "/master.key")
        #expect(try String(contentsOfFile: dataDirectory + "/master.key", encoding: .utf8) == master.fileRepresentation)
    }

    @Test("only the middleware logs a SigilIdentity in: guardMiddleware refuses a route without it, signed or not")
    func loginOnlyFromTheMiddleware() async throws {
        let setup = try await SigningSetup(.ed25519)
        try await withApp { app in
            let sigil = SigilVapor.SigilMiddleware(exchange: Exchange(verifier: setup.verifier))
            app.grouped(sigil, SigilIdentity.guardMiddleware()).get("api", "me") { request in
                // One identity under both names.
                #expect(request.auth.get(SigilIdentity.self) == request.sigil.identity)
                return try request.auth.require(SigilIdentity.self).keyID ?? "none"
            }
            // Vapor's guard alone, or before Sigil's middleware: nothing is logged in yet.
            app.grouped(SigilIdentity.guardMiddleware()).get("bare", "me") { _ in "reached" }
            app.grouped(SigilIdentity.guardMiddleware(), sigil).get("early", "me") { _ in "reached" }
            func signed(_ path: String) throws -> HTTPHeaders {
                var request = HTTPRequest(method: .get, scheme: nil, authority: nil, path: path)
                try setup.signer(.sigilV1).sign(&request, body: [])
                var headers = HTTPHeaders()
                for field in request.headerFields { headers.add(name: field.name.rawName, value: field.value) }
                return headers
            }
            let tester = try app.testing()
            let headers = try signed("/api/me")
            try await tester.test(.GET, "api/me", headers: headers) { response in
                #expect(response.status == .ok)
                #expect(response.body.string == setup.keyID)
            }
            try await tester.test(.GET, "api/me", headers: headers) { response in
                #expect(response.status == .unauthorized)
                #expect(response.body.string.contains("replayed-nonce"))
            }
            try await tester.test(.GET, "api/me") { response in
                #expect(response.status == .unauthorized)
                #expect(response.body.string.contains("missing-signature"))
            }
            var forged = try signed("/api/me")
            forged.replaceOrAdd(name: SigilV1.signatureField.rawName, value: String(repeating: "A", count: 86))
            try await tester.test(.GET, "api/me", headers: forged) { #expect($0.status == .unauthorized) }
            for path in ["/bare/me", "/early/me"] {
                try await tester.test(.GET, path, headers: try signed(path)) { response in
                    #expect(response.status == .unauthorized)
                    #expect(response.body.string != "reached")
                }
            }
        }
    }
}
