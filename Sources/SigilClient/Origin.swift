import Foundation
import HTTPTypes
@_spi(Sigil) import SigilCore

/// A web origin (scheme, host, port) compared as a browser does: scheme and host in any case, a
/// trailing `.` on the host ignored, the scheme's default port written or not.
///
/// A device identity signs for the one origin it enrolled with: sigil-v1 covers no authority, so a
/// request signed for another server could be replayed by that server to the real one.
public struct Origin: Sendable, Hashable, CustomStringConvertible {
    /// `https` or `http`, lowercased.
    public let scheme: String
    /// The host, normalized as pins are (``PinSet/normalizedHost(_:)``).
    public let host: String
    /// The port, explicit or the scheme's default.
    public let port: Int

    /// The origin of `scheme` and `authority` (`host[:port]`, IPv6 in brackets), or `nil`.
    public init?(scheme: String?, authority: String?) {
        guard let scheme = scheme?.lowercased(), scheme == "https" || scheme == "http",
            let authority, !authority.isEmpty, !authority.contains("@"),
            let components = URLComponents(string: "\(scheme)://\(authority)"), let host = components.host,
            !host.isEmpty, components.path.isEmpty
        else { return nil }
        self.scheme = scheme
        self.host = PinSet.normalizedHost(host)
        self.port = components.port ?? (scheme == "https" ? 443 : 80)
    }

    /// The origin of a URL such as an identity's `server` (`https://host:port`), or `nil`.
    public init?(url: String) {
        guard let components = URLComponents(string: url), let authority = components.percentEncodedHost else {
            return nil
        }
        let host = authority.contains(":") && !authority.hasPrefix("[") ? "[\(authority)]" : authority
        self.init(scheme: components.scheme, authority: host + (components.port.map { ":\($0)" } ?? ""))
    }

    /// The origin a request is sent to, or `nil` when it names none.
    public init?(_ request: HTTPRequest) {
        self.init(scheme: request.scheme, authority: request.authority)
    }

    public var description: String {
        let defaultPort = scheme == "https" ? 443 : 80
        let host = host.contains(":") ? "[\(host)]" : host
        return "\(scheme)://\(host)" + (port == defaultPort ? "" : ":\(port)")
    }
}
