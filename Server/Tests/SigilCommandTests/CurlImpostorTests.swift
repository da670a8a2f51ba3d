import Foundation
import NIOSSL
import SigilClient
@_spi(Sigil) import SigilCore
import Testing

@testable import SigilTestSupport

/// `sigil curl` reading the public routes that carry signatures of their own (discovery, the key
/// directory) from an impostor that holds the server's TLS key, so that pins match.
@Suite("sigil curl against an impostor holding the TLS key", .enabled(if: PythonUpstream.available), .externalServers)
struct CurlImpostorTests {
    @Test(
        "another server's discovery and key directory, answered 200, 201, 203 or 206, are never printed: exit 1, nothing on stdout; the real server's are"
    )
    func impostor() async throws {
        let directory = try SigilCommand.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let data = directory.appendingPathComponent("data").path
        let home = ["HOME": directory.appendingPathComponent("client-home").path]
        let server = try ServerProcess(dataDirectory: data)
        defer { server.stop() }
        let enroll = try await server.enroll(home: home["HOME"]!)
        #expect(enroll.status == 0, "\(enroll.error)")

        // Another server's documents, each with its own valid signature.
        let otherData = directory.appendingPathComponent("other").path
        let other = try ServerProcess(dataDirectory: otherData)
        defer { other.stop() }
        let paths = [Registration.Path.discovery, Registration.Path.keyDirectory]
        var documents: [String: TestResponse] = [:]
        try await TestServer.client(trusting: try NIOSSLCertificate.fromPEMFile(otherData + "/tls-cert.pem"))
            .using { client in
                for path in paths {
                    documents[path] = try await TestRequest(.get, path, port: other.port).send(client)
                    #expect(documents[path]?.status == 200)
                }
            }

        for status in [200, 201, 203, 206] {
            let answers = try paths.reduce(into: [String: Any]()) { answers, path in
                let document = try #require(documents[path])
                var headers: [String: String] = [:]
                for field in document.headers where field.name != .contentLength {
                    headers[field.name.rawName] = field.value
                }
                answers[path] = ["status": status, "headers": headers, "body": document.text]
            }
            let answersFile = directory.appendingPathComponent("answers-\(status).json")
            try JSONSerialization.data(withJSONObject: answers).write(to: answersFile)
            let impostor = try await PythonUpstream.start(
                script: PythonUpstream.impostorScript,
                arguments: [data + "/tls-cert.pem", data + "/tls-key.pem", answersFile.path])
            defer { impostor.stop() }
            for path in paths {
                let read = try await SigilCommand.run(
                    ["curl", "--identity", "default", "https://localhost:\(impostor.port)" + path],
                    environment: home)
                #expect(read.status == 1, "\(status) \(path): \(read.text)")
                #expect(read.output.isEmpty, "\(status) \(path): printed \(read.text)")
                #expect(read.error.contains("not signed by the server's key"), "\(read.error)")
            }
        }
        // The real server's, signed by its key, are printed.
        for path in paths {
            let read = try await SigilCommand.run(
                ["curl", "https://localhost:\(server.port)" + path], environment: home)
            #expect(read.status == 0 && !read.output.isEmpty, "\(path): \(read.error)")
        }
    }
}
