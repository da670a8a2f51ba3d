import ArgumentParser
import HTTPTypes
import SigilClient
@_spi(Sigil) import SigilCore

struct Sign: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Read a raw HTTP request on standard input; write it signed.")

    @OptionGroup var keyOptions: KeyOptions

    @Option(name: .long, help: "The wire profile.")
    var profile: SignatureProfile = .sigilV1

    @Option(name: .long, help: "Unix seconds (default: now).")
    var timestamp: Int64?

    @Option(name: .long, help: "The nonce (default: 128 random bits).")
    var nonce: String?

    @Option(
        name: .long,
        help:
            "rfc9421: comma-separated covered components (default @method,@authority,@path,@query and content-digest with a body)."
    )
    var components: String?

    @Option(name: .long, help: "rfc9421: the signature label.")
    var label: String = "sig1"

    @Option(name: .long, help: "The scheme of the request.")
    var scheme: String = "https"

    @Flag(
        name: .customLong("headers-only"),
        help: "Print only the header lines the signature adds (for curl -H @FILE) instead of the message.")
    var headersOnly = false

    /// The header fields a signature of each profile adds.
    static let signatureFields: [SignatureProfile: Set<String>] = [
        .sigilV1: ["x-timestamp", "x-nonce", "x-key-id", "x-signature"],
        .rfc9421: ["content-digest", "signature-input", "signature"],
    ]

    func run() throws {
        let (loaded, keyID) = try keyOptions.load()
        guard let signer = loaded.signingKey else { throw SigilInputError("signing needs a private key or a secret") }
        var message = try RawHTTPMessage(parsing: try IO.readStandardInput())
        guard !message.isResponse else { throw SigilInputError("sign reads a request; this is a response") }
        var request = try message.request(scheme: scheme)
        let timestamp = timestamp ?? SystemUnixClock().now()
        let nonce = nonce ?? RandomNonceSource().next()
        switch profile {
        case .sigilV1:
            message.append(
                try SigilV1.sign(
                    request, body: message.body, signer: signer, keyID: keyID, timestamp: timestamp, nonce: nonce)
            )
        case .rfc9421:
            var covered =
                try components.map { list in
                    try list.split(separator: ",").map { try ComponentIdentifier.parse(String($0)) }
                } ?? [.method, .authority, .path, .query]
            var withDigest = covered
            if let digest = ContentDigest.cover(message.body, in: &request.headerFields, components: &withDigest) {
                message.headers.append(("Content-Digest", digest))
            }
            if components == nil { covered = withDigest }
            let input = SignatureInput(components: covered, created: timestamp, keyID: keyID, nonce: nonce)
            let (inputMember, signatureMember) = try RFC9421.sign(
                RFC9421Message(request: request),
                input: input,
                label: label,
                signer: signer
            )
            message.appendDictionaryMember("Signature-Input", inputMember)
            message.appendDictionaryMember("Signature", signatureMember)
        }
        if headersOnly {
            let added = Self.signatureFields[profile] ?? []
            let lines = message.headers.filter { added.contains($0.name.lowercased()) }.map {
                "\($0.name): \($0.value)\n"
            }
            IO.write(Array(lines.joined().utf8))
        } else {
            IO.write(message.serialized)
        }
    }
}
