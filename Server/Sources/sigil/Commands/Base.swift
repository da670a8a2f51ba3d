import ArgumentParser
@_spi(Sigil) import SigilCore
import SigilTLS

struct Base: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print the signature base a signed message's signature covers.")

    @Option(name: .long, help: "sigil-v1 or rfc9421 (default: whichever the message carries).")
    var profile: SignatureProfile?

    @Option(name: .long, help: "rfc9421: the label (default: the first).")
    var label: String?

    @Option(name: .long, help: "The scheme of the request.")
    var scheme: String = "https"

    func run() throws {
        let message = try RawHTTPMessage(parsing: try IO.readStandardInput())
        guard !message.isResponse else { throw SigilInputError("base reads a request; this is a response") }
        let request = try message.request(scheme: scheme)
        do {
            IO.write(try CoveredBase.base(of: request, body: message.body, profile: profile, label: label))
        } catch let error as SigilError {
            throw SigilInputError("\(error.code): \(error.detail)")
        }
    }
}

struct Pin: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print sha256/<base64 of SHA-256(SPKI DER)> for each certificate of a file or a live server."
    )

    @Option(name: .long, help: "A PEM file of one or more certificates.")
    var cert: String?

    @Argument(help: "A live TLS server, HOST:PORT; one pin per certificate it presents, leaf first.")
    var server: String?

    func run() async throws {
        switch (cert, server) {
        case (let cert?, nil):
            let text = String(decoding: try IO.readFile(cert), as: UTF8.self)
            for pin in try SPKIPin.pins(certificatePEM: text) { print(pin) }
        case (nil, let server?):
            let (host, port) = try Self.hostAndPort(server)
            for der in try await PeerCertificates.fetch(host: host, port: port) {
                print(try SPKIPin.pin(certificateDER: der))
            }
        default:
            throw SigilInputError("give --cert FILE or HOST:PORT")
        }
    }

    /// `host:port`, `[v6]:port`.
    static func hostAndPort(_ text: String) throws -> (String, Int) {
        guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]),
            (1...65_535).contains(port)
        else { throw SigilInputError("expected HOST:PORT") }
        var host = String(text[..<colon])
        if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        guard !host.isEmpty else { throw SigilInputError("expected HOST:PORT") }
        return (host, port)
    }
}
