import AsyncHTTPClient
import Crypto
import Foundation
import SQLiteNIO
@_spi(Sigil) import SigilCore
import SigilPostgres
import SigilSQLite
import SigilServer
import SigilStandalone
import Testing

@testable import SigilTestSupport

/// Revoked stays revoked, and only a device's active key manages it: in both directories, inside
/// their write, and over TLS against `sigil serve`.
@Suite("Revocation and active keys")
struct RevocationTests {
    typealias Store = TestStores.Store

    @Test(
        "nothing is added to a revoked device, and its keys read as revoked whatever their row says",
        arguments: Store.available)
    func revokedStaysRevoked(_ store: Store) async throws {
        try await TestStores.withRegistry(store) { registry, _, editRow in
            let first = try TestStores.key("dev-a")
            try await registry.apply(DirectoryChange(added: [first]))
            try await registry.apply(DirectoryChange(revokedDevices: ["dev-a"], actingKeyID: first.keyID))
            #expect(try await registry.key(for: first.keyID)?.state == .revoked)

            await #expect(throws: SigilError(.revokedKey, "")) {
                try await registry.apply(DirectoryChange(added: [try TestStores.key("dev-a")]))
            }
            await #expect(throws: SigilError(.revokedKey, "")) {
                try await registry.apply(
                    DirectoryChange(
                        certificates: [
                            IssuedCertificateRecord(serial: "01", keyID: first.keyID, deviceID: "dev-a", notAfter: 0)
                        ]))
            }

            // A row set back to active by hand (or by a bug) is still revoked: the device decides.
            if let editRow {
                try await editRow(first.keyID)
            }
            let reread = try await registry.keys(ofDevice: "dev-a")
            #expect(reread.map(\.state) == [.revoked])
        }
    }

    @Test("a revocation racing a rotation ends with no usable key", arguments: Store.available)
    func revocationRacesRotation(_ store: Store) async throws {
        try await TestStores.withRegistry(store) { registry, clock, _ in
            for round in 0..<25 {
                let device = "dev-race-\(round)"
                let current = try TestStores.key(device)
                try await registry.apply(DirectoryChange(added: [current]))
                let next = try TestStores.key(device)
                async let rotated: Void = registry.apply(
                    DirectoryChange(
                        added: [next], retiring: [(current.keyID, clock.now() + 86_400)], actingKeyID: current.keyID))
                async let revoked: Void = registry.apply(DirectoryChange(revokedDevices: [device]))
                _ = try? await rotated
                try await revoked
                for key in [current, next] {
                    let found = try await registry.key(for: key.keyID)
                    #expect(found.map { !$0.isUsable(at: clock.now()) } ?? true, "round \(round)")
                }
            }
        }
    }

    @Test("a rotating key may not act for its device; an unknown one neither", arguments: Store.available)
    func onlyTheActiveKeyActs(_ store: Store) async throws {
        try await TestStores.withRegistry(store) { registry, clock, _ in
            let old = try TestStores.key("dev-b")
            let new = try TestStores.key("dev-b")
            try await registry.apply(DirectoryChange(added: [old]))
            try await registry.apply(
                DirectoryChange(added: [new], retiring: [(old.keyID, clock.now() + 86_400)], actingKeyID: old.keyID))
            // The rotated-away key tries to rotate itself back in.
            await #expect(throws: SigilError(.forbidden, "")) {
                try await registry.apply(
                    DirectoryChange(
                        added: [try TestStores.key("dev-b")], retiring: [(new.keyID, clock.now())],
                        actingKeyID: old.keyID))
            }
            await #expect(throws: SigilError(.forbidden, "")) {
                try await registry.apply(DirectoryChange(revokedDevices: ["dev-b"], actingKeyID: old.keyID))
            }
            await #expect(throws: SigilError(.unknownKey, "")) {
                try await registry.apply(DirectoryChange(revokedDevices: ["dev-b"], actingKeyID: "nobody"))
            }
            #expect(try await registry.key(for: new.keyID)?.state == .active)
            try await registry.apply(DirectoryChange(revokedDevices: ["dev-b"], actingKeyID: new.keyID))
        }
    }

    @Test("over TLS: after A→B, A still signs requests but manages nothing, its secret ends with it; B manages")
    func rotatedKeyManagesNothing() async throws {
        let dataDirectory = TestServer.temporaryDirectory()
        _ = try DataDirectory(path: dataDirectory).createCertificateAuthority()
        try await TestServer.with(dataDirectory: dataDirectory) { server in
            try await server.client().using { client in
                let clock = server.clock
                let holder = TLSScaffold.CSRDevice()
                let old = try holder.device
                #expect(try await DeviceSteps.register(old, on: server, client: client).status == 201)
                let oldSecret = try await DeviceSteps.issueSecret(for: old, server: server, client: client)
                let new = try TestDevice(.ed25519)
                #expect(
                    try await DeviceSteps.rotate(from: old, to: new, server: server, client: client).status == 201)

                let (echo, _, _) = try await DeviceSteps.echo(
                    "grace", signer: old.signer(clock: clock), server: server, client: client)
                #expect(echo.status == 200, "\(echo.text)")

                var secret = TestRequest(.post, "/v1/devices/\(old.keyID)/secret", server: server)
                try secret.sign(with: old.signer(clock: clock))
                #expect(try await secret.send(client, to: server).code == "forbidden")

                let back = try await DeviceSteps.rotate(
                    from: old, to: try TestDevice(), server: server, client: client)
                #expect(back.status == 403)
                #expect(back.code == "forbidden")

                let csr = try JSONSerialization.data(withJSONObject: ["csr": try holder.csrPEM])
                var certificate = TestRequest(
                    .post, "/v1/certificates", server: server, json: String(decoding: csr, as: UTF8.self))
                try certificate.sign(with: old.signer(clock: clock))
                #expect(try await certificate.send(client, to: server).code == "forbidden")

                var revoke = TestRequest(.delete, "/v1/devices/\(old.keyID)", server: server)
                try revoke.sign(with: old.signer(clock: clock))
                #expect(try await revoke.send(client, to: server).code == "forbidden")

                // The secret fetched with the old key ends with the old key's grace, not later.
                let newSecret = try await DeviceSteps.issueSecret(for: new, server: server, client: client)
                clock.advance(by: 86_400)
                let (late, _, _) = try await DeviceSteps.echo(
                    "after the grace", signer: oldSecret.signer(clock: clock), server: server, client: client)
                #expect(late.code == "revoked-key")
                let (current, _, _) = try await DeviceSteps.echo(
                    "current", signer: newSecret.signer(clock: clock), server: server, client: client)
                #expect(current.status == 200, "\(current.text)")
                var revokeByNew = TestRequest(.delete, "/v1/devices/\(new.keyID)", server: server)
                try revokeByNew.sign(with: new.signer(clock: clock))
                #expect(try await revokeByNew.send(client, to: server).status == 204)
            }
        }
    }
}
