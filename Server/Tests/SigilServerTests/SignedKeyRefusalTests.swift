import AsyncHTTPClient
import Foundation
import HTTPTypes
@_spi(Sigil) import SigilCore
import SigilServer
import SigilStandalone
import Testing

@testable import SigilClient
@testable import SigilTestSupport

// With the suites that start PostgreSQL, one test at a time (ExternalServers.swift).
/// `unknown-key` and `revoked-key` are statements about the key a request names, true whoever sent it:
/// signed for the request they answer (PROTOCOL.md section 2.7), so a revoked device can trust them,
/// while a tampered copy's `invalid-signature` stays unsigned. Over TLS against `sigil serve`, on
/// SQLite and on PostgreSQL, each refusal checked by outside code (Python's `cryptography`).
@Suite("Signed key refusals: a revoked or unknown key learns it from a refusal it can trust", .externalServers)
struct SignedKeyRefusalTests {
    enum Store: String, CaseIterable, CustomStringConvertible {
        case sqlite, postgres
        var description: String { rawValue }
        static var available: [Store] { ExternalServers.runPostgres ? allCases : [.sqlite] }
    }

    /// A server on `store`, a client trusting it.
    static func withServer(
        _ store: Store, configure: @escaping @Sendable (inout SigilStandalone.Options) -> Void = { _ in },
        _ body: @escaping (TestServer, HTTPClient) async throws -> Void
    ) async throws {
        switch store {
        case .sqlite:
            try await TestServer.with(configure: configure) { server in
                try await server.client().using { try await body(server, $0) }
            }
        case .postgres:
            try await PostgresTestServer.with { postgres in
                try await TestServer.with(
                    clock: ManualUnixClock(SystemUnixClock().now()),
                    configure: { options in
                        options.keyStore = .postgres(url: postgres.url)
                        configure(&options)
                    }
                ) { server in
                    try await server.client().using { try await body(server, $0) }
                }
            }
        }
    }

    /// The outside check of a sigil-v1 refusal's signature: the code it verified, or `nil`.
    static func outsideCheck(_ answer: TestResponse, to request: TestRequest, key: String) throws -> String? {
        guard let python = PythonHPKE.interpreter else { return nil }
        let answered = request.answered
        let input: [String: Any] = [
            "publicKey": key, "keyId": answered.keyID, "nonce": answered.nonce,
            "signature": answered.signature, "status": answer.status,
            "headers": answer.headers.map { [$0.name.rawName, $0.value] }, "body": answer.text,
        ]
        let script = TestPaths.tests.appendingPathComponent("Interop/verify_refusal.py").path
        let output = try? PythonHPKE.run(
            python, [script], input: Array(try JSONSerialization.data(withJSONObject: input)))
        return output.map { String(decoding: $0, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines) }
    }

    @Test(
        "revoked and unknown keys are refused signed for the request (checked by outside code); a tampered copy's refusal and a stale unknown key's stay unsigned",
        arguments: Store.available)
    func keyRefusalsSigned(_ store: Store) async throws {
        try #require(PythonHPKE.available)
        try await Self.withServer(store) { server, client in
            // The response key as any client learns it: from discovery.
            let discovery = try JSONDecoder().decode(
                Registration.Discovery.self,
                from: Data(
                    try await TestRequest(.get, Registration.Path.discovery, server: server).send(client).body))
            let key = try #require(discovery.responseKeys.first?.publicKey)
            let responses = try discovery.responseVerifier(clock: server.clock)
            let device = try await DeviceSteps.registeredDevice(on: server, client: client)
            for profile in SignatureProfile.allCases {
                let (accepted, _, _) = try await DeviceSteps.echo(
                    "{}", signer: device.signer(profile, clock: server.clock), server: server, client: client)
                #expect(accepted.status == 200, "\(accepted.text)")
            }

            // A key the server never registered: unknown-key, signed for that request.
            let stranger = try TestDevice(.ed25519)
            for profile in SignatureProfile.allCases {
                let (refused, _, request) = try await DeviceSteps.echo(
                    "{}", signer: stranger.signer(profile, clock: server.clock), server: server, client: client)
                #expect(refused.code == "unknown-key", "\(profile) \(refused.text)")
                try Self.expectSigned(refused, answering: request, profile: profile, by: responses)
                if profile == .sigilV1 {
                    #expect(try Self.outsideCheck(refused, to: request, key: key) == "verified unknown-key")
                }
            }

            // A tampered copy of the device's request: invalid-signature, unsigned.
            var tampered = TestRequest(.post, "/v1/echo", server: server, json: #"{"amount":1}"#)
            try tampered.sign(with: device.signer(clock: server.clock))
            tampered.body = Array(#"{"amount":9}"#.utf8)
            let forged = try await tampered.send(client)
            #expect(forged.code == "invalid-signature")
            #expect(forged.headers[SigilV1.signatureField] == nil && forged.headers[SigilV1.keyIDField] == nil)

            // An unknown key dated outside the window: the window's refusal, which is unsigned.
            var stale = TestRequest(.post, "/v1/echo", server: server, json: "{}")
            try stale.sign(with: stranger.signer(clock: ManualUnixClock(server.clock.now() - 3600)))
            let staleAnswer = try await stale.send(client)
            #expect(staleAnswer.code == "timestamp-out-of-window")
            #expect(staleAnswer.headers[SigilV1.signatureField] == nil)

            // The device revoked by an operator: its next request is refused revoked-key, signed.
            _ = try await Administration(directory: server.prepared.directory, serverKeys: nil, clock: server.clock)
                .revoke(.key(device.keyID), by: "operator:test", reason: "lost phone")
            for profile in SignatureProfile.allCases {
                var refused: TestResponse?
                var request: TestRequest?
                // A replica's directory cache may serve the key as it was for a moment.
                for _ in 0..<100 {
                    let (answer, _, sent) = try await DeviceSteps.echo(
                        "{}", signer: device.signer(profile, clock: server.clock), server: server, client: client)
                    (refused, request) = (answer, sent)
                    if answer.code == "revoked-key" { break }
                    try await Task.sleep(for: .milliseconds(50))
                }
                let answer = try #require(refused)
                #expect(answer.code == "revoked-key", "\(profile) \(answer.text)")
                try Self.expectSigned(answer, answering: try #require(request), profile: profile, by: responses)
                if profile == .sigilV1 {
                    #expect(
                        try Self.outsideCheck(answer, to: try #require(request), key: key) == "verified revoked-key"
                    )
                }
            }
        }
    }

    /// `answer` carries the server's signature for `request`, and that signature covers the key ID.
    static func expectSigned(
        _ answer: TestResponse, answering request: TestRequest, profile: SignatureProfile,
        by responses: ResponseVerifier
    ) throws {
        var head = HTTPResponse(status: .init(code: answer.status))
        head.headerFields = answer.headers
        let verified =
            switch profile {
            case .sigilV1: try responses.verifySigilV1(head, body: answer.body, answering: request.answered)
            case .rfc9421: try responses.verifyRFC9421(head, body: answer.body, answering: request.head)
            }
        #expect(verified.coversRequestKeyID, "\(profile)")
    }

    @Test("past the budget, key refusals go unsigned for the rest of the second; the budget is per second")
    func budget() async throws {
        let budget = KeyRefusalBudget(perSecond: 2)
        #expect(budget.take(at: 10) && budget.take(at: 10))
        #expect(!budget.take(at: 10))
        #expect(budget.take(at: 11))
        #expect(!KeyRefusalBudget(perSecond: 0).take(at: 1))
        try await TestServer.with(configure: { $0.verifier.keyRefusals = KeyRefusalBudget(perSecond: 1) }) {
            server in
            try await server.client().using { client in
                let stranger = try TestDevice(.ed25519)
                var answers: [TestResponse] = []
                for _ in 0..<2 {
                    answers.append(
                        try await DeviceSteps.echo(
                            "{}", signer: stranger.signer(clock: server.clock), server: server, client: client
                        ).0)
                }
                #expect(answers.allSatisfy { $0.code == "unknown-key" })
                #expect(answers[0].headers[SigilV1.signatureField] != nil)
                #expect(answers[1].headers[SigilV1.signatureField] == nil)
            }
        }
    }
}
