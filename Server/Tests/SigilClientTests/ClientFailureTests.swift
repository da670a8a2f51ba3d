import AsyncHTTPClient
import Foundation
import HTTPTypes
@_spi(Sigil) import SigilCore
import SigilHTTPClient
import SigilServer
import SigilStandalone
import Synchronization
import Testing

@testable import SigilClient
@testable import SigilTestSupport

/// A store that can be made to fail, as the Keychain does before the first unlock: reads, writes or
/// both throw ``SigilClientError/Kind/keychainUnavailable``; otherwise a ``FileDeviceStore``.
final class LockableStore: DeviceStore {
    let inner: FileDeviceStore
    let locked = Mutex<(reads: Bool, writes: Bool)>((false, false))

    init() { inner = DeviceScaffold.store() }

    func lock(reads: Bool, writes: Bool) { locked.withLock { $0 = (reads, writes) } }

    func read() throws {
        if locked.withLock({ $0.reads }) { throw Self.unavailable }
    }

    func write() throws {
        if locked.withLock({ $0.writes }) { throw Self.unavailable }
    }

    static let unavailable = SigilClientError(
        .keychainUnavailable, "the Keychain could not read identity (-25308)", keychainStatus: -25308)

    func identity() throws -> DeviceIdentity? {
        try read()
        return try inner.identity()
    }
    func deviceKey() throws -> (any SignatureProvider)? {
        try read()
        return try inner.deviceKey()
    }
    func secret() throws -> SigningKey? {
        try read()
        return try inner.secret()
    }
    func save(_ identity: DeviceIdentity, key: any SignatureProvider, secret: [UInt8]?) throws {
        try write()
        try inner.save(identity, key: key, secret: secret)
    }
    func saveIdentity(_ identity: DeviceIdentity) throws {
        try write()
        try inner.saveIdentity(identity)
    }
    func reset() throws {
        try write()
        try inner.reset()
    }
}

/// The events a device told its log.
final class EventLog: Sendable {
    let events = Mutex<[SigilEvent]>([])
    var handler: @Sendable (SigilEvent) -> Void { { event in self.events.withLock { $0.append(event) } } }
    var all: [SigilEvent] { events.withLock { $0 } }
}

/// A transport that answers in the server's place (a captive portal, a proxy), or cannot connect.
struct ForgedAnswers: SigilTransport {
    let answer: @Sendable (HTTPRequest) throws -> (HTTPResponse, [UInt8])

    func send(_ request: HTTPRequest, body: [UInt8]) async throws -> (HTTPResponse, [UInt8]) {
        try answer(request)
    }

    /// An unsigned problem+json refusal with `code`.
    static func refusal(_ code: SigilError.Code) -> ForgedAnswers {
        ForgedAnswers { _ in
            var head = HTTPResponse(status: .unauthorized)
            head.headerFields[.contentType] = "application/problem+json"
            return (head, Array(#"{"code":"\#(code.rawValue)","status":401}"#.utf8))
        }
    }
}

@Suite("What an app is told: signed refusals, local failures, three enrollment states, a done request stays done")
struct ClientFailureTests {
    @Test(
        "only a refusal the server signed is a SigilError; an unsigned one, a portal's page, no network are SigilClientErrors, and nothing resets"
    )
    func errorMapping() async throws {
        try await DeviceScaffold.withServer { server, transport, _ in
            let store = DeviceScaffold.store()
            let answers = AnswerSwitch()
            let log = EventLog()
            let device = try SigilDevice(store: store, clock: server.clock, log: log.handler) { host, pins in
                let real = try transport(host, pins)
                return Either(real: real, impostor: answers)
            }
            try await device.enroll(
                try SigningKey.generate(.ecdsaP256SHA256), server: DeviceScaffold.url(server), token: TestServer.token
            )

            let cases: [(ForgedAnswers, SigilClientError.Kind, SigilError.Code?)] = [
                (.refusal(.revokedKey), .untrustedRefusal, .revokedKey),
                (.refusal(.unknownKey), .untrustedRefusal, .unknownKey),
                (
                    ForgedAnswers { _ in (HTTPResponse(status: .ok), Array("<html>Sign in to the Wi-Fi</html>".utf8)) },
                    .untrustedAnswer, nil
                ),
                (ForgedAnswers { _ in throw URLError(.notConnectedToInternet) }, .transport, nil),
            ]
            for (impostor, kind, claimed) in cases {
                answers.current.withLock { $0 = impostor }
                let failure = await #expect(throws: SigilClientError.self) {
                    _ = try await DeviceScaffold.echo(device, server)
                }
                #expect(failure?.kind == kind && failure?.claimedCode == claimed, "\(String(describing: failure))")
                #expect(failure?.recovery.isEmpty == false)
                // Nothing is reset on an answer the server did not sign.
                if case .enrolled = await device.enrollmentState {} else { Issue.record("the device was reset") }
                #expect(try store.identity() != nil)
            }
            #expect(log.all.contains(.untrustedAnswer(status: 401, claimedCode: .revokedKey)))

            // The real server, after an operator revoked the device: its signed refusal is the server's word.
            answers.current.withLock { $0 = nil }
            let keyID = try #require(try store.identity()?.keyID)
            _ = try await Administration(directory: server.prepared.directory, serverKeys: nil, clock: server.clock)
                .revoke(.key(keyID), by: "operator:test")
            await #expect(throws: SigilError(.revokedKey, "")) { _ = try await DeviceScaffold.echo(device, server) }
            #expect(log.all.contains(.refused(code: .revokedKey, status: 401)))
            // The device resets nothing by itself: that is the app's call.
            #expect(try store.identity()?.keyID == keyID)
        }
    }

    @Test(
        "enrollment state is unknown while the store cannot be read, and enrolling then is refused, never a second device"
    )
    func threeStates() async throws {
        try await DeviceScaffold.withServer { server, transport, _ in
            let store = LockableStore()
            let device = try SigilDevice(store: store, clock: server.clock, transport: transport)
            #expect(await device.enrollmentState == .notEnrolled)
            let identity = try await device.enroll(
                try SigningKey.generate(.ecdsaP256SHA256), server: DeviceScaffold.url(server), token: TestServer.token
            )
            #expect(await device.enrollmentState == .enrolled(identity))

            // Before the first unlock: unknown, not "not enrolled".
            store.lock(reads: true, writes: true)
            guard case .unknown = await device.enrollmentState else {
                Issue.record("a locked store read as known")
                return
            }
            // Launched while locked (prewarming): the device starts, and still says unknown.
            let prewarmed = try SigilDevice(store: store, clock: server.clock, transport: transport)
            guard case .unknown = await prewarmed.enrollmentState else {
                Issue.record("a locked store read as known at launch")
                return
            }
            // The documented `.notEnrolled → enroll` never runs; enrolling anyway is refused.
            let refused = await #expect(throws: SigilClientError.self) {
                try await prewarmed.enroll(
                    try SigningKey.generate(.ecdsaP256SHA256), server: DeviceScaffold.url(server),
                    token: TestServer.token)
            }
            #expect(refused?.kind == .keychainUnavailable)
            let locked = await #expect(throws: SigilClientError.self) {
                _ = try await DeviceScaffold.echo(prewarmed, server)
            }
            #expect(locked?.kind == .keychainUnavailable)

            store.lock(reads: false, writes: false)
            #expect(await prewarmed.enrollmentState == .enrolled(identity))
            #expect(try await DeviceScaffold.echo(prewarmed, server).head.status == .ok)
        }
    }

    @Test(
        "a Keychain failure after the answer does not fail the request: what it learnt is kept in memory, stored later")
    func doneStaysDone() async throws {
        try await DeviceScaffold.withServer { server, transport, _ in
            let store = LockableStore()
            // The phone's clock is 20 minutes behind: the first answer teaches the offset, which is stored.
            let phone = ManualUnixClock(server.clock.now() - 1200)
            let log = EventLog()
            let device = try SigilDevice(store: store, clock: phone, log: log.handler, transport: transport)
            try await device.enroll(
                try SigningKey.generate(.ecdsaP256SHA256), server: DeviceScaffold.url(server), token: TestServer.token
            )
            try store.inner.saveIdentity(try #require(try store.identity()).withClockOffset(nil))

            store.lock(reads: false, writes: true)
            let answer = try await DeviceScaffold.echo(device, server)
            #expect(answer.head.status == .ok)
            #expect(try store.identity()?.clockOffset == nil)
            #expect(log.all.contains { if case .storeDeferred = $0 { true } else { false } })
            // Reads failing too (the device locked again): the session's key is in memory, so the request
            // is signed and answered; what it learnt is still kept for later.
            store.lock(reads: true, writes: true)
            #expect(try await DeviceScaffold.echo(device, server).head.status == .ok)
            #expect(try store.inner.identity()?.clockOffset == nil)

            store.lock(reads: false, writes: false)
            #expect(try await DeviceScaffold.echo(device, server).head.status == .ok)
            #expect(abs((try store.identity()?.clockOffset ?? 0) - 1200) <= 1)
            #expect(log.all.contains(.storeCaughtUp))
        }
    }

    @Test("sigil curl on a revoked identity says revoked-key, from a refusal the server signed")
    func curlRevoked() async throws {
        let home = try SigilCommand.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: home) }
        let environment = ["HOME": home.path]
        try await TestServer.with(clock: ManualUnixClock(SystemUnixClock().now())) { server in
            let discovery = try await server.client().using { client in
                try JSONDecoder().decode(
                    Registration.Discovery.self,
                    from: Data(
                        try await TestRequest(.get, Registration.Path.discovery, server: server).send(client).body))
            }
            let url = "https://localhost:\(server.port)"
            let enroll = try await SigilCommand.run(
                ["enroll", url, "--token", TestServer.token]
                    + (discovery.pins + discovery.backupPins).flatMap { ["--pin", $0] },
                environment: environment)
            #expect(enroll.status == 0, "\(enroll.error)")
            let keyID = try #require(
                enroll.text.split(whereSeparator: \.isWhitespace).first { $0.hasPrefix("key-id=") }
                    .map { String($0.dropFirst(7)) })
            let first = try await SigilCommand.run(
                ["curl", "--json", "{}", url + "/v1/echo"], environment: environment)
            #expect(first.status == 0, "\(first.error)")

            _ = try await Administration(directory: server.prepared.directory, serverKeys: nil, clock: server.clock)
                .revoke(.key(keyID), by: "operator:test")
            let revoked = try await SigilCommand.run(
                ["curl", "--json", "{}", url + "/v1/echo"], environment: environment)
            #expect(revoked.status == 1)
            #expect(revoked.error.contains("(revoked-key), signed"), "\(revoked.error)")
        }
    }
}

/// Which impostor answers in the server's place, if any.
final class AnswerSwitch: Sendable {
    let current = Mutex<ForgedAnswers?>(nil)
}

/// The real transport, or an impostor in its place while one is set.
struct Either: SigilTransport {
    let real: any SigilTransport
    let impostor: AnswerSwitch

    func send(_ request: HTTPRequest, body: [UInt8]) async throws -> (HTTPResponse, [UInt8]) {
        if let impostor = impostor.current.withLock({ $0 }) { return try await impostor.send(request, body: body) }
        return try await real.send(request, body: body)
    }
}

extension DeviceIdentity {
    func withClockOffset(_ offset: Int64?) -> DeviceIdentity {
        var copy = self
        copy.clockOffset = offset
        return copy
    }
}
