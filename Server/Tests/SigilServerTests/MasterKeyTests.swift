import AsyncHTTPClient
import Crypto
import Foundation
@_spi(Sigil) import SigilCore
import SigilServer
import SigilStandalone
import Testing

@testable import SigilTestSupport

/// ``MasterKey``: the file a backend shares with `sigil serve`, and the keys derived from it.
@Suite("Master key")
struct MasterKeyTests {
    @Test("the file is the base64 of 32 bytes and a newline; whitespace is ignored; anything else is refused")
    func fileFormat() throws {
        let key = MasterKey.generate()
        let file = key.fileRepresentation
        #expect(file.utf8.count == 45)
        #expect(file.hasSuffix("=\n"))
        #expect(Base64.decode(String(file.dropLast())) == key.symmetricKey.withUnsafeBytes { Array($0) })
        let read = try MasterKey(fileRepresentation: Array(("  \r\n" + file + "\n\n").utf8))
        #expect(read.symmetricKey == key.symmetricKey)
        // Unpadded reads too (padding is optional when read).
        #expect(try MasterKey(fileRepresentation: Array(file.utf8.prefix(43))).symmetricKey == key.symmetricKey)
        for bad in ["", "not base64 at all", Base64.encode(Array(repeating: 7, count: 31)), String(file.dropFirst())] {
            #expect(throws: SigilInputError.self) { try MasterKey(fileRepresentation: Array(bad.utf8)) }
        }
        #expect(throws: SigilInputError.self) { try MasterKey(SymmetricKey(size: .bits128)) }
    }

    @Test("loadOrCreate writes the file once, mode 0600; a file others may read, or none, is refused")
    func files() throws {
        let directory = TestServer.temporaryDirectory()
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/master.key"
        #expect(throws: SigilInputError.self) { try MasterKey(contentsOfFile: path) }
        let made = try MasterKey.loadOrCreate(file: path)
        #expect(try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int == 0o600)
        #expect(try MasterKey.loadOrCreate(file: path).symmetricKey == made.symmetricKey)
        #expect(try MasterKey(contentsOfFile: path).symmetricKey == made.symmetricKey)
        // sigil serve's data directory reads the same file the same way.
        #expect(try DataDirectory(path: directory).masterKey() == made.symmetricKey)
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: path)
        #expect(throws: SigilInputError.self) { try MasterKey(contentsOfFile: path) }
        #expect(throws: SigilInputError.self) { try MasterKey.loadOrCreate(file: path) }
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: path)
        try "not a key\n".write(toFile: path, atomically: false, encoding: .utf8)
        let refused = #expect(throws: SigilInputError.self) { try MasterKey(contentsOfFile: path) }
        #expect(refused?.description.contains("not a key") == false)  // never the contents
    }

    @Test("the derived keys are the documented HKDF-SHA256 of the 32 bytes, one info string each")
    func derivedKeys() throws {
        let key = MasterKey.generate()
        func hkdf(_ info: String) -> SymmetricKey {
            HKDF<SHA256>.deriveKey(inputKeyMaterial: key.symmetricKey, info: Array(info.utf8), outputByteCount: 32)
        }
        #expect(key.attestationChallengeKey == hkdf("sigil attest challenges"))
        #expect(key.dpopNonceKey == hkdf("sigil dpop nonces"))
        #expect(key.attestationChallengeKey != key.dpopNonceKey)
        #expect(
            DPoPNonces(masterKey: key).current(at: SigningSetup.start)
                == DPoPNonces(key: hkdf("sigil dpop nonces")).current(at: SigningSetup.start))
        let challenge = AttestationChallenges(key: hkdf("sigil attest challenges")).issue(now: SigningSetup.start)
        #expect(throws: Never.self) {
            try AttestationChallenges(masterKey: key).check(challenge.challenge, now: SigningSetup.start)
        }
    }

    @Test("a backend reading sigil serve's master.key accepts the App Attest challenges sigil serve issues")
    func challengesOfSigilServe() async throws {
        try await TestServer.with(configure: { $0.appAttest.appIDs = ["TEAMID1234.com.example.app"] }) { server in
            let issued = try await server.client().using { client in
                try await TestRequest(.post, "/v1/attest/challenge", server: server).send(client, to: server)
            }
            #expect(issued.status == 200)
            let challenge = try #require(issued.json["challenge"] as? String)
            let master = try MasterKey(contentsOfFile: try server.data.file("master.key"))
            #expect(throws: Never.self) {
                try AttestationChallenges(masterKey: master).check(challenge, now: server.clock.now())
            }
            #expect(throws: SigilError.self) {
                try AttestationChallenges(masterKey: .generate()).check(challenge, now: server.clock.now())
            }
        }
    }
}
