import AsyncHTTPClient
import Foundation
import NIOSSL
@_spi(Sigil) import SigilCore
import SigilHTTPClient
import SigilTLS
import Synchronization
import Testing

@testable import SigilTestSupport

/// Pinning `sigil serve` by its SPKI pins.
@Suite("Pinning")
struct PinningTests {
    static let anotherPin = "sha256/" + Base64.encode([UInt8](repeating: 9, count: 32))

    @Test("a matching pin anchors at the server's own certificate; the client then connects")
    func matching() async throws {
        try await TestServer.with { server in
            let pins = try PinSet(host: "localhost", pins: server.prepared.pins + [PinScaffold.otherPin])
            let trust = try await PinnedServer.check(host: "localhost", port: server.port, pins: pins)
            #expect(trust.report.matched)
            #expect(trust.anchors?.count == 1)
            let tls = ClientTLS.configuration(anchors: trust.anchors)
            try await HTTPClient(eventLoopGroupProvider: .singleton, configuration: .init(tlsConfiguration: tls))
                .using { client in
                    let (head, _) = try await AsyncHTTPClientTransport(client: client).send(
                        SessionScaffold.discovery(server), body: [])
                    #expect(head.status == .ok)
                }
            // By IP address too: the certificate's IP entry is checked.
            let byAddress = try PinSet(host: "127.0.0.1", pins: server.prepared.pins + [PinScaffold.otherPin])
            #expect(try await PinnedServer.check(host: "127.0.0.1", port: server.port, pins: byAddress).report.matched)
        }
    }

    @Test("a mismatched pin is refused with both the expected and the presented pins")
    func mismatch() async throws {
        try await TestServer.with { server in
            let pins = try PinSet(host: "localhost", pins: [PinScaffold.otherPin, Self.anotherPin])
            // Without a pinned self-signed certificate there is nothing to anchor at: the chain fails.
            let unanchored = await #expect(throws: PinError.self) {
                _ = try await PinnedServer.check(host: "localhost", port: server.port, pins: pins)
            }
            #expect(unanchored?.description.contains("does not validate") == true)
            #expect(unanchored?.description.contains(server.prepared.pins[0]) == true)
            // Anchored by the caller, the chain validates and the pins are compared.
            let error = await #expect(throws: PinError.self) {
                _ = try await PinnedServer.check(
                    host: "localhost", port: server.port, pins: pins, anchors: try server.certificates)
            }
            let message = error?.description ?? ""
            #expect(message.contains(PinScaffold.otherPin) && message.contains(Self.anotherPin))
            #expect(message.contains(server.prepared.pins[0]))
        }
    }

    @Test("the backup pin alone matches; one pin needs a waiver")
    func backup() async throws {
        try await TestServer.with { server in
            #expect(throws: SigilInputError.self) { _ = try PinSet(host: "localhost", pins: server.prepared.pins) }
            #expect(throws: SigilInputError.self) {
                _ = try PinSet(host: "localhost", pins: ["md5/abc", PinScaffold.otherPin])
            }
            let waived = try PinSet(host: "localhost", pins: server.prepared.pins, allowSinglePin: true)
            #expect(try await PinnedServer.check(host: "localhost", port: server.port, pins: waived).report.matched)
            // The server's key as the backup of a pin set whose first pin is a key not in use yet.
            let rotated = try PinSet(host: "localhost", pins: [PinScaffold.otherPin] + server.prepared.pins)
            #expect(try await PinnedServer.check(host: "localhost", port: server.port, pins: rotated).report.matched)
        }
    }

    @Test("report-only connects and reports what it saw")
    func reportOnly() async throws {
        try await TestServer.with { server in
            let pins = try PinSet(host: "localhost", pins: [PinScaffold.otherPin, Self.anotherPin])
            let reports = Mutex<[PinReport]>([])
            let trust = try await PinnedServer.check(
                host: "localhost", port: server.port, pins: pins, anchors: try server.certificates, reportOnly: true
            ) { report in reports.withLock { $0.append(report) } }
            #expect(!trust.report.matched)
            #expect(reports.withLock { $0 } == [trust.report])
            #expect(trust.report.seen == server.prepared.pins)

            // Through SigilHTTPClient: the pin check and the client's own connection report, and the
            // request goes through.
            var options = SigilHTTPClient.Options()
            options.pins = [PinScaffold.otherPin, Self.anotherPin]
            options.anchors = try server.certificates
            options.reportOnly = true
            options.report = { report in reports.withLock { $0.append(report) } }
            let connection = try await SigilHTTPClient.connect(host: "localhost", port: server.port, options: options)
            let (head, _) = try await connection.transport.send(SessionScaffold.discovery(server), body: [])
            try await connection.shutdown()
            #expect(head.status == .ok)
            #expect(reports.withLock { $0.count } == 3)
            #expect(reports.withLock { $0.allSatisfy { $0 == trust.report } })
        }
    }
}

@Suite("Pin sets: TrustKit's rules")
struct PinSetRuleTests {
    static let a = "sha256/" + Base64.encode([UInt8](repeating: 1, count: 32))
    static let b = "sha256/" + Base64.encode([UInt8](repeating: 2, count: 32))
    static let c = "sha256/" + Base64.encode([UInt8](repeating: 3, count: 32))

    @Test("two pins or an explicit waiver; the host's subdomains only when asked; a longer match decides")
    func subdomains() throws {
        #expect(throws: SigilInputError.self) { try PinSet(host: "example.com", pins: [Self.a]) }
        let parent = try PinSet(host: "Example.com.", pins: [Self.a, Self.b], includesSubdomains: true)
        let own = try PinSet(host: "pay.example.com", pins: [Self.c], allowSinglePin: true)
        let now: Int64 = 1_800_000_000
        #expect(PinSet.verdict(host: "api.example.com", presented: [Self.b], in: [parent], at: now) == .matched)
        #expect(
            PinSet.verdict(host: "API.example.com.", presented: [Self.c], in: [parent], at: now)
                == .mismatch(expected: [Self.a, Self.b].sorted()))
        // A look-alike is not a subdomain.
        #expect(PinSet.verdict(host: "evilexample.com", presented: [Self.c], in: [parent], at: now) == .unpinned)
        let hostOnly = try PinSet(host: "example.com", pins: [Self.a, Self.b])
        #expect(PinSet.verdict(host: "api.example.com", presented: [Self.c], in: [hostOnly], at: now) == .unpinned)
        // The host's own set decides over its parent's.
        #expect(PinSet.verdict(host: "pay.example.com", presented: [Self.c], in: [parent, own], at: now) == .matched)
        #expect(
            PinSet.verdict(host: "pay.example.com", presented: [Self.a], in: [parent, own], at: now)
                == .mismatch(expected: [Self.c]))
    }

    @Test("past its expiry a pin set is no longer enforced; before it, it is")
    func expiry() throws {
        let pins = try PinSet(host: "example.com", pins: [Self.a, Self.b], expires: 1_800_000_000)
        #expect(
            PinSet.verdict(host: "example.com", presented: [Self.c], in: [pins], at: 1_799_999_999)
                == .mismatch(expected: [Self.a, Self.b].sorted()))
        #expect(PinSet.verdict(host: "example.com", presented: [Self.c], in: [pins], at: 1_800_000_000) == .unpinned)
    }
}
