import ArgumentParser
import Foundation
import SigilFiles
import SigilStandalone

/// `sigil gateway`: what `sigil serve` does on the way in, then the verified request forwarded to a
/// backend in any language, whose answer comes back signed.
struct Gateway: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Verify requests as `sigil serve` does, then forward them to a backend in any language.",
        discussion: """
            The backend gets the canonical path (sigil-v1) and the verified identity in Sigil-Key-ID, \
            Sigil-Device-ID, Sigil-User-ID, Sigil-Algorithm and Sigil-Profile (any Sigil-* field the client \
            sent is removed); refusals never reach it. Its answers are signed. Listen only on loopback or \
            a private network on the backend's side, or send --upstream-secret-file's secret and check it.
            """
    )

    @OptionGroup var server: ServerOptions

    @Option(name: .long, help: "The backend: http://host:port[/prefix].")
    var upstream: String

    @Flag(
        name: .customLong("keep-path"),
        help: "Forward the path as received; refuse (sigil-v1) a path that is not in its canonical form.")
    var keepPath = false

    @Option(
        name: .customLong("upstream-secret-file"),
        help: "A file whose content is sent as Sigil-Gateway-Secret (or SIGIL_UPSTREAM_SECRET).")
    var upstreamSecretFile: String?

    @Option(
        name: .customLong("public-host"),
        help: """
            The host[:port] clients reach, sent to the backend as X-Forwarded-Host and Forwarded host=. \
            Without it the backend gets a host only from a signature covering @authority (rfc9421), \
            never from an unsigned Host.
            """)
    var publicHost: String?

    @Option(name: .customLong("upstream-timeout"), help: "Seconds the backend may take to answer.")
    var upstreamTimeout: Int64 = 30

    @Option(name: .customLong("response-limit"), help: "The largest response body forwarded, in bytes.")
    var responseLimit = 64 << 20

    func validate() throws {
        guard upstreamTimeout > 0 else { throw ValidationError("--upstream-timeout is a positive number of seconds") }
        guard responseLimit > 0 else { throw ValidationError("--response-limit is a positive number of bytes") }
        guard upstream.hasPrefix("http://") || upstream.hasPrefix("https://") else {
            throw ValidationError("--upstream is an http:// or https:// URL")
        }
        if let publicHost, SigilStandalone.Upstream.plainAuthority(publicHost) == nil {
            throw ValidationError("--public-host is host[:port]")
        }
    }

    func run() async throws {
        var options = try server.options()
        var target = SigilStandalone.Upstream(url: upstream)
        target.keepPath = keepPath
        target.timeout = .seconds(upstreamTimeout)
        target.responseLimit = responseLimit
        target.publicHost = publicHost
        if let upstreamSecretFile {
            target.secret = String(decoding: try SecureFile.readSecret(upstreamSecretFile), as: UTF8.self)
                .trimmingCharacters(in: .whitespacesAndNewlines)
        } else {
            target.secret = ProcessInfo.processInfo.environment["SIGIL_UPSTREAM_SECRET"]
        }
        options.upstream = target
        try await Serve.run(options, name: "sigil gateway")
    }
}
