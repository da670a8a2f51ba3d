import HTTPTypes
import Hummingbird
import NIOCore

/// The operators' console (PROTOCOL.md section 11): one page, its script and its style, compiled into
/// the binary and served by the admin port to anyone who reaches it, since they hold no data and a
/// browser cannot send the admin token when it loads a page. Everything the page shows it reads from
/// the admin API with the token the operator types, held in the page's memory.
enum ConsoleAssets {
    /// What the page may do: load its own script and style, call its own origin; nothing inline, no
    /// eval, no frames, no forms posted anywhere, and no HTML sink at all (Trusted Types, enforced
    /// by Chromium-based browsers: the script builds the page from text nodes only).
    static let contentSecurityPolicy =
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "
        + "base-uri 'none'; form-action 'none'; frame-ancestors 'none'; require-trusted-types-for 'script'; "
        + "trusted-types 'none'"

    /// Headers on every answer of the admin port: not cached, not sniffed, not framed, no referrer.
    static let commonHeaders: HTTPFields = [
        .cacheControl: "no-store", HTTPField.Name("X-Content-Type-Options")!: "nosniff",
        HTTPField.Name("Referrer-Policy")!: "no-referrer",
        HTTPField.Name("Cross-Origin-Resource-Policy")!: "same-origin",
        HTTPField.Name("Cross-Origin-Opener-Policy")!: "same-origin",
    ]

    /// Whether a browser says `request` comes from another site's page: `Sec-Fetch-Site` other than
    /// `same-origin` or `none` (the operator's own navigation), or an `Origin` other than the admin
    /// port's own (`https://` and the authority the request names). A client without either (curl, a
    /// script) is no browser acting for someone else.
    static func isCrossSite(_ request: Request) -> Bool {
        if let site = request.headers[secFetchSite], site != "same-origin", site != "none" { return true }
        guard let origin = request.headers[.origin] else { return false }
        guard let authority = request.head.authority else { return true }
        return origin.lowercased() != "https://" + authority.lowercased()
    }

    static let secFetchSite = HTTPField.Name("Sec-Fetch-Site")!

    /// The asset at `path` (`/`, `/console.js`, `/console.css`), if it is one.
    static func response(for path: String) -> Response? {
        let body: [UInt8]
        let type: String
        switch path {
        case "/":
            (body, type) = (PackageResources.console_html, "text/html; charset=utf-8")
        case "/console.js":
            (body, type) = (PackageResources.console_js, "text/javascript; charset=utf-8")
        case "/console.css":
            (body, type) = (PackageResources.console_css, "text/css; charset=utf-8")
        case "/favicon.ico":
            // Asked for by every browser that opens the console: no icon, and no refusal to log.
            return Response(status: .noContent, headers: commonHeaders)
        default:
            return nil
        }
        var headers = commonHeaders
        headers[.contentType] = type
        headers[.contentSecurityPolicy] = contentSecurityPolicy
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: body)))
    }
}
