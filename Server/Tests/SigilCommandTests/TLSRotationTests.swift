import Crypto
import Foundation
import HTTPTypes
@_spi(Sigil) import SigilCore
import SigilServer
import SigilStandalone
import SigilTLS
import Synchronization
import Testing

@testable import SigilClient
@testable import SigilTestSupport

// With the suites that start servers of their own, one test at a time (ExternalServers.swift): its server and command processes beside a PostgreSQL test made that test miss its deadline.
/// Pins that move with the server (PROTOCOL.md section 8.1): `sigil admin keys rotate tls` publishes
/// the next TLS key's pin in the signed discovery, clients adopt it from there alone, and `promote tls`
/// serves the new key from the next connection on, without a restart and after one.
@Suite("TLS keys that rotate, pins that follow", .externalServers)
struct TLSRotationTests {
    /// The pin of the certificate the server on `port` presents now.
    static func served(_ port: Int) async throws -> String {
        let chain = try await PeerCertificates.fetch(host: "localhost", port: port)
        return try SPKIPin.pins(certificatePEM: PEM.encode(try #require(chain.first), label: "CERTIFICATE"))[0]
    }

    @Test(
        "enroll, rotate tls, one curl (the next pin adopted from signed discovery), promote tls: the next curl connects pinned, and after a restart"
    )
    func walk() async throws {
        let directory = try SigilCommand.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let data = directory.appendingPathComponent("data").path
        let home = directory.appendingPathComponent("client-home").path
        let environment = ["HOME": home]
        var server = try ServerProcess(dataDirectory: data)
        defer { server.stop() }
        let url = "https://localhost:\(server.port)"
        let enrolledPins = server.pins
        let enroll = try await server.enroll(home: home)
        #expect(enroll.status == 0, "\(enroll.error)")
        let first = try await Self.served(server.port)
        #expect(enrolledPins.first == first)
        let identityFile = home + "/.sigil/identities/default/identity.json"
        func identity() throws -> DeviceIdentity {
            try JSONDecoder().decode(
                DeviceIdentity.self, from: Data(contentsOf: URL(fileURLWithPath: identityFile)))
        }

        let rotate = try await SigilCommand.run(
            ["admin", "keys", "rotate", "tls", "--data-dir", data], environment: environment)
        #expect(rotate.status == 0, "\(rotate.error)")
        #expect(rotate.text.contains("tls ") && rotate.text.contains(" next "), "\(rotate.text)")
        // The server follows the store within about a second: its discovery then lists the next pin.
        var listed = 0
        for _ in 0..<200 where listed < 3 {
            let read = try await SigilCommand.run(["curl", url + "/.well-known/sigil"], environment: environment)
            let document = try? JSONDecoder().decode(Registration.Discovery.self, from: Data(read.output))
            listed = (document?.pins.count ?? 0) + (document?.backupPins.count ?? 0)
            if listed < 3 { try await Task.sleep(for: .milliseconds(50)) }
        }
        #expect(listed == 3)
        // Still the first key served; the one curl reads the signed discovery the answer's tag points to.
        var curl = try await SigilCommand.run(
            ["curl", "-v", "--json", "{}", url + "/v1/echo"], environment: environment)
        #expect(curl.status == 0, "\(curl.error)")
        #expect(curl.error.contains("pins from the server's signed discovery"), "\(curl.error)")
        // The next key is the backup key every device pinned at enrollment; the new backup key
        // that took its place is adopted from discovery.
        let adopted = try identity().pins
        let next = try #require(enrolledPins.last)
        #expect(next != first)
        let newBackup = try #require(adopted.first { !enrolledPins.contains($0) })
        #expect(adopted.contains(first) && adopted.contains(next) && adopted.contains(newBackup))

        let promote = try await SigilCommand.run(
            ["admin", "keys", "promote", "tls", "--data-dir", data], environment: environment)
        #expect(promote.status == 0, "\(promote.error)")
        // The server follows the store within about a second: served from a connection after that.
        var servedNow = try await Self.served(server.port)
        for _ in 0..<200 where servedNow != next {
            try await Task.sleep(for: .milliseconds(50))
            servedNow = try await Self.served(server.port)
        }
        #expect(servedNow == next)
        curl = try await SigilCommand.run(
            ["curl", "-v", "--json", "{}", url + "/v1/echo"], environment: environment)
        #expect(curl.status == 0, "\(curl.error)")
        #expect(curl.error.contains("pins matched"), "\(curl.error)")

        // After a restart, the promoted key is served, and the enrolled identity still connects.
        server.stop()
        server = try ServerProcess(dataDirectory: data)
        #expect(try await Self.served(server.port) == next)
        #expect(server.pins.first == next)
        let moved = "https://localhost:\(server.port)"
        var stored = try identity()
        stored.server = moved
        try FileDeviceStore(directory: home + "/.sigil/identities/default").saveIdentity(stored)
        // Pinned with the identity's pins, discovery's signature checked with its response key (a
        // signed request would meet the restart's own rule, PROTOCOL.md section 2.6, for a moment).
        curl = try await SigilCommand.run(["curl", "-v", moved + "/.well-known/sigil"], environment: environment)
        #expect(curl.status == 0, "\(curl.error)")
        #expect(curl.error.contains("pins matched"), "\(curl.error)")
    }

    @Test(
        "rotate tls then promote tls at once: a device that heard of neither still connects, since the next key was the backup key it pinned at enrollment, and learns the new backup"
    )
    func promotedUnheard() async throws {
        let directory = try SigilCommand.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let data = directory.appendingPathComponent("data").path
        let environment = ["HOME": directory.appendingPathComponent("client-home").path]
        let server = try ServerProcess(dataDirectory: data)
        defer { server.stop() }
        let url = "https://localhost:\(server.port)"
        let enrolledPins = server.pins
        let enroll = try await server.enroll(home: environment["HOME"]!)
        #expect(enroll.status == 0, "\(enroll.error)")
        for step in ["rotate", "promote"] {
            let run = try await SigilCommand.run(
                ["admin", "keys", step, "tls", "--data-dir", data], environment: environment)
            #expect(run.status == 0, "\(run.error)")
        }
        var served = try await Self.served(server.port)
        for _ in 0..<200 where served != enrolledPins.last {
            try await Task.sleep(for: .milliseconds(50))
            served = try await Self.served(server.port)
        }
        #expect(served == enrolledPins.last, "the backup key is served")
        let curl = try await SigilCommand.run(
            ["curl", "-v", "--json", "{}", url + "/v1/echo"], environment: environment)
        #expect(curl.status == 0, "\(curl.error)")
        #expect(curl.error.contains("pins matched"), "\(curl.error)")
        let pins = try JSONDecoder().decode(
            DeviceIdentity.self,
            from: Data(
                contentsOf: URL(
                    fileURLWithPath: environment["HOME"]! + "/.sigil/identities/default/identity.json"))
        ).pins
        #expect(pins.contains { !enrolledPins.contains($0) }, "the new backup pin is learnt: \(pins)")
    }

    @Test("a backup key the ring holds already (a stale copy put back) is not published again: a new key is")
    func staleBackup() async throws {
        try await TestServer.with { server in
            let ring = server.prepared.serverKeys
            let current = try #require(ring.current(.tls))
            var administration = Administration(
                directory: server.prepared.directory, serverKeys: ring, clock: server.clock)
            let renewed = Mutex(0)
            administration.backupTLSKey = BackupTLSKey(
                current: { try #require(current.signing) }, renew: { renewed.withLock { $0 += 1 } })
            let next = try await administration.rotate(.tls, by: "ops")
            #expect(next != current.stored.keyID)
            #expect(renewed.withLock { $0 } == 1, "a new backup follows")
        }
    }

    @Test(
        "pins are adopted only from discovery a trusted response key signed: never unsigned, never another server's"
    )
    func impostorPins() async throws {
        try await TestServer.with(clock: ManualUnixClock(SystemUnixClock().now())) { server in
            try await TestServer.with(clock: server.clock) { impostor in
                let trusted = TrustedResponseKeys([
                    server.prepared.responseKeyID: try DataDirectory(path: server.options.dataDirectory)
                        .responseKey()
                        .verificationKey
                ])
                func discovery(_ of: TestServer) async throws -> TestResponse {
                    try await of.client().using { client in
                        try await TestRequest(.get, Registration.Path.discovery, server: of).send(client)
                    }
                }
                let signatureField = try #require(HTTPField.Name(Registration.DiscoverySignature.field))
                // The impostor's own discovery, signed by its key: nothing learnt.
                let other = try await discovery(impostor)
                trusted.learn(
                    discovery: other.body, signature: other.headers[signatureField], now: server.clock.now())
                #expect(trusted.pins.isEmpty)
                // The same pins offered unsigned: nothing learnt.
                trusted.learn(discovery: other.body, signature: nil, now: server.clock.now())
                #expect(trusted.pins.isEmpty)
                // The server's own, signed: learnt.
                let own = try await discovery(server)
                trusted.learn(discovery: own.body, signature: own.headers[signatureField], now: server.clock.now())
                #expect(trusted.pins.first == server.prepared.pins.first)
                #expect(trusted.pins.count == 2)
            }
        }
    }
}
