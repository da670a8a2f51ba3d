import AsyncHTTPClient
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import NIOHTTP1
@_spi(Sigil) import SigilCore
import SigilHummingbird
import SigilServer

extension UInt8 {
    fileprivate var isHexDigit: Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(self) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(self)
            || (UInt8(ascii: "A")...UInt8(ascii: "F")).contains(self)
    }
}

extension SigilStandalone {
    /// Where `sigil gateway` forwards the requests it verified, and how.
    public struct Upstream: Sendable {
        /// The upstream's base URL, `http://host:port` (or `https://`), optionally with a path prefix.
        public var url: String
        /// Forward the path as received rather than its canonical form (sigil-v1), and refuse a
        /// request whose path differs from the canonical one beyond the case of percent-encoding.
        public var keepPath = false
        /// Sent as `Sigil-Gateway-Secret`, so the upstream can refuse requests that did not come
        /// through the gateway.
        public var secret: String?
        /// How long the upstream may take to answer (connecting included).
        public var timeout: Duration = .seconds(30)
        /// The largest response body forwarded; a larger one is a `502`.
        public var responseLimit = 64 << 20
        /// The host (`host[:port]`) the backend is told the client reached, in `X-Forwarded-Host` and
        /// `Forwarded: host=`. Without it the backend is told a host only when the request's signature
        /// covered `@authority` (rfc9421): a sigil-v1 request's `Host` is not signed, and a backend
        /// that builds links from it would build them for whatever host an attacker wrote.
        public var publicHost: String?

        public init(url: String) { self.url = url }

        /// `authority` when it is `host[:port]` only (anything else could smuggle parameters into
        /// `Forwarded`), else `nil`.
        public static func plainAuthority(_ authority: String) -> String? { Exchange.plainAuthority(authority) }
    }
}

/// The routes of `sigil gateway`: every path the registration API does not take is verified by the
/// middleware, then forwarded to the upstream with the verified identity, and the upstream's answer
/// comes back signed. Refusals never reach the upstream.
///
/// The request body is forwarded once it has been read and verified (a request is verified before
/// any of it reaches the upstream), and the response body once it has been read (its signature
/// covers it), each within its limit.
struct GatewayRoutes: Sendable {
    let middleware: SigilMiddleware<SigilBasicRequestContext>
    let upstream: SigilStandalone.Upstream
    let client: HTTPClient
    let bodyLimit: Int
    /// `scheme://host:port/prefix`, without a trailing `/`.
    let base: String
    /// The upstream's path prefix (`/prefix`, or empty), percent-encoded, without a trailing `/`.
    let prefix: String

    init(
        middleware: SigilMiddleware<SigilBasicRequestContext>, upstream: SigilStandalone.Upstream, client: HTTPClient,
        bodyLimit: Int
    ) throws {
        guard let components = URLComponents(string: upstream.url), let scheme = components.scheme?.lowercased(),
            scheme == "http" || scheme == "https", let host = components.host, !host.isEmpty,
            components.query == nil, components.fragment == nil, components.user == nil
        else {
            throw SigilInputError("--upstream must look like http://host:port[/prefix]")
        }
        let hostPart = host.contains(":") ? "[\(host)]" : host
        let port = components.port.map { ":\($0)" } ?? ""
        var prefix = components.percentEncodedPath
        while prefix.hasSuffix("/") { prefix.removeLast() }
        self.base = "\(scheme)://\(hostPart)\(port)\(prefix)"
        self.prefix = prefix
        self.middleware = middleware
        self.upstream = upstream
        self.client = client
        self.bodyLimit = bodyLimit
    }

    /// Sends every request no route of `router` answers (any path, any method, `/v1/orders` next to the
    /// registration API's `/v1/devices` included) through the ``SigilMiddleware`` to the backend.
    ///
    /// - Important: call it after the last route is added. A router middleware applies to the routes
    ///   added after it and to the responder of requests that match none; added last, it wraps that
    ///   responder alone. (A `**` route would not do: Hummingbird's trie does not backtrack, so
    ///   `/v1/orders` would end at the `v1` node of `/v1/devices` and be a 404.)
    func addFallback(to router: Router<SigilBasicRequestContext>) {
        router.add(middleware: Fallback(routes: self))
    }

    /// The backend in place of Hummingbird's not-found responder.
    struct Fallback: RouterMiddleware {
        let routes: GatewayRoutes

        func handle(
            _ request: Request,
            context: SigilBasicRequestContext,
            next: (Request, SigilBasicRequestContext) async throws -> Response
        ) async throws -> Response {
            try await routes.middleware.handle(request, context: context) { request, context in
                try await routes.forward(request, context: context)
            }
        }
    }

    // MARK: Forwarding

    func forward(_ request: Request, context: SigilBasicRequestContext) async throws -> Response {
        // Verified, or let through unverified by monitor mode with the code it would have been refused with.
        let identity = context.sigilOutcome == nil ? try context.requireSigilIdentity() : nil
        // A SigilError thrown here is refused by the middleware, signed for the admitted request.
        let target = try Self.target(
            request.head.path ?? "/",
            // DPoP (and an unverified request) compares paths canonically, as sigil-v1 does: the
            // backend gets the path compared.
            profile: identity?.request?.profile ?? .sigilV1, keepPath: upstream.keepPath)
        var outgoing = HTTPClientRequest(url: try forwardedURL(target))
        outgoing.method = HTTPMethod(rawValue: request.method.rawValue)
        outgoing.headers = forwardedHeaders(
            request, identity: identity, outcome: context.sigilOutcome, client: Self.clientAddress(context.channel))
        let body = try await request.body.collect(upTo: bodyLimit)
        if body.readableBytes > 0 || request.method == .post || request.method == .put || request.method == .patch {
            outgoing.body = .bytes(body)
        }
        let answer: HTTPClientResponse
        let answerBody: ByteBuffer
        do {
            // One deadline for the head and the whole body: a backend that stalls mid-body is a 504.
            let (client, limit, timeout, sent) = (self.client, upstream.responseLimit, upstream.timeout, outgoing)
            (answer, answerBody) = try await withDeadline(
                upstream.timeout, SigilError(.upstreamTimeout, "the upstream did not answer in time")
            ) {
                let answer = try await client.execute(sent, timeout: Self.timeAmount(timeout))
                return (answer, try await answer.body.collect(upTo: limit))
            }
            guard (200...599).contains(answer.status.code) else {
                throw SigilError(.upstreamUnavailable, "the upstream answered with status \(answer.status.code)")
            }
        } catch let error as SigilError {
            throw error
        } catch {
            context.logger.warning("upstream failed", metadata: ["error": "\(String(describing: error))"])
            throw Self.refusal(for: error)
        }
        // Only the gateway speaks Sigil's refusals: a backend's problem+json carrying a Sigil code (a
        // `timestamp-out-of-window` that would make the client send the request again, after the
        // backend already ran it) would go out signed as the gateway's own.
        if Self.speaksForTheGateway(contentType: answer.headers.first(name: "content-type"), body: answerBody) {
            throw SigilError(
                .upstreamUnavailable, "the upstream answered with a Sigil refusal, which only the gateway makes")
        }
        var headers = HTTPFields()
        let dropped = Self.dropped(connection: answer.headers["connection"].joined(separator: ","))
        for header in answer.headers {
            let name = header.name.lowercased()
            guard Self.returns(name, dropped: dropped), let fieldName = HTTPField.Name(header.name) else { continue }
            headers.append(HTTPField(name: fieldName, value: header.value))
        }
        return Response(
            status: HTTPResponse.Status(code: Int(answer.status.code)), headers: headers,
            body: ResponseBody(byteBuffer: answerBody))
    }

    /// The path and query to send upstream: rfc9421 signs `@path` and `@query` as sent, so they go
    /// as they came; sigil-v1 signs the canonical path and query (PROTOCOL.md sections 2.3 and 2.4),
    /// so they go canonical (the upstream routes and reads what was signed), or, with `keepPath`, the
    /// path as it came when it is canonical already (percent-encoding case aside).
    ///
    /// Only origin-form targets (`/…`) without a fragment are forwarded: anything else could name
    /// another host once joined to the upstream's URL, or hide part of the path from the signature.
    static func target(_ requestTarget: String, profile: SignatureProfile, keepPath: Bool) throws -> String {
        let bytes = Array(requestTarget.utf8)
        guard bytes.first == UInt8(ascii: "/"), !bytes.contains(UInt8(ascii: "#")),
            !bytes.contains(where: { $0 < 0x21 || $0 == 0x7F })
        else {
            throw SigilError(.forbidden, "the gateway forwards only paths of the form /…, without #")
        }
        let queryStart = bytes.firstIndex(of: UInt8(ascii: "?")) ?? bytes.endIndex
        let path = bytes[..<queryStart]
        // A path whose escapes decode to no UTF-8 has no path a URL library can give the backend
        // (AsyncHTTPClient sent `/`, the query kept: `/api/orders/%ff?cmd=wipe` reached the backend's
        // root, verified). Refused, whatever the profile.
        let decoded = PercentEncoding.decode(path)
        guard String(validating: decoded, as: UTF8.self) != nil else {
            throw SigilError(.invalidTarget, "the path's percent-escapes do not decode to UTF-8")
        }
        // An encoded backslash, which some backends read as `/` (`/api/public/..%5Cprivate`).
        guard !decoded.contains(UInt8(ascii: "\\")) else {
            throw SigilError(.invalidTarget, "the gateway forwards no path with a backslash, encoded or not")
        }
        let forwarded = try forwardedTarget(
            path, bytes: bytes, queryStart: queryStart, profile: profile, keepPath: keepPath)
        try checkSegments(forwarded)
        return forwarded
    }

    /// Refuses (`invalid-target`) a forwarded target with a dot segment, raw, encoded, or behind an
    /// encoded slash: joined under the upstream's prefix, a backend that decodes and normalizes
    /// (`/app/x/../../secret`, `/app/%2e%2e/secret`, `/app/..%2Fsecret`) would read a path outside it.
    /// An encoded slash between other characters (`a%2Fb`, which `--keep-path` exists for) is kept.
    static func checkSegments(_ target: String) throws {
        let path = target.utf8.prefix { $0 != UInt8(ascii: "?") }
        for segment in path.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false) {
            let decoded = PercentEncoding.decode(Array(segment)[...])
            for piece in decoded.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false)
            where piece.elementsEqual(".".utf8) || piece.elementsEqual("..".utf8) {
                throw SigilError(
                    .invalidTarget, "the gateway forwards no path with a dot segment, raw or encoded")
            }
        }
    }

    /// The target as forwarded, before its segments are checked.
    static func forwardedTarget(
        _ path: ArraySlice<UInt8>, bytes: [UInt8], queryStart: Int, profile: SignatureProfile, keepPath: Bool
    ) throws -> String {
        let requestTarget = String(decoding: bytes, as: UTF8.self)
        guard profile == .sigilV1 else { return requestTarget }
        let canonicalQuery =
            queryStart < bytes.endIndex ? CanonicalTarget.canonicalQuery(bytes[(queryStart + 1)...]) : []
        let query = canonicalQuery.isEmpty ? "" : "?" + String(decoding: canonicalQuery, as: UTF8.self)
        guard keepPath else { return String(decoding: CanonicalTarget.canonicalPath(path), as: UTF8.self) + query }
        guard CanonicalTarget.isCanonicalPath(path) else {
            throw SigilError(
                .forbidden,
                "the path is not in its canonical form (PROTOCOL.md section 2.3), which this gateway forwards unchanged only"
            )
        }
        return String(decoding: path, as: UTF8.self) + query
    }

    /// The upstream's URL for `target`, once the URI AsyncHTTPClient would send for it (its path as
    /// Foundation's URL re-encodes it, `/` when that is empty, then `?` and the query) is exactly the
    /// upstream's prefix followed by `target`: whatever a URL library would make of a target, the
    /// backend gets that target under that prefix, or nothing.
    func forwardedURL(_ target: String) throws -> String {
        let url = base + target
        guard let parsed = URL(string: url), Self.uri(of: parsed) == prefix + target else {
            throw SigilError(.invalidTarget, "the target would not reach the upstream as it was sent")
        }
        return url
    }

    /// The URI AsyncHTTPClient sends for `url` (its `URL.uri`, 1.37).
    static func uri(of url: URL) -> String {
        let path =
            url.path.isEmpty
            ? "/" : URLComponents(url: url, resolvingAgainstBaseURL: true)?.percentEncodedPath ?? url.path
        return path + (url.query.map { "?" + $0 } ?? "")
    }

    /// The request's fields without hop-by-hop fields, any `Sigil-*` field (only the gateway says
    /// who signed) or forwarding field (only the gateway says where the request came from), then
    /// the verified identity (`Sigil-Verified: ?1`), or for a request monitor mode let through
    /// `Sigil-Verified: ?0` and `Sigil-Outcome`, the forwarding fields and the gateway's secret.
    func forwardedHeaders(
        _ request: Request, identity: SigilIdentity?, outcome: SigilError.Code?, client: String?
    )
        -> HTTPHeaders
    {
        var headers = HTTPHeaders()
        let dropped = Self.dropped(connection: request.headers[values: .connection].joined(separator: ","))
        for field in request.headers {
            let name = field.name.canonicalName
            // `_` too: CGI-style servers read `Sigil_User_ID` as `Sigil-User-ID`.
            guard !dropped.contains(name), !name.hasPrefix("sigil-"), !name.contains("_"),
                !name.hasPrefix("x-forwarded-"), !Self.requestFieldsReplaced.contains(name)
            else { continue }
            headers.add(name: field.name.rawName, value: field.value)
        }
        if let identity {
            headers.add(name: "Sigil-Verified", value: "?1")
            if let keyID = identity.keyID { headers.add(name: "Sigil-Key-ID", value: keyID) }
            if let device = identity.deviceID { headers.add(name: "Sigil-Device-ID", value: Self.fieldValue(device)) }
            if let user = identity.userID { headers.add(name: "Sigil-User-ID", value: Self.fieldValue(user)) }
            headers.add(name: "Sigil-Algorithm", value: identity.algorithm)
            headers.add(name: "Sigil-Profile", value: identity.profile)
            if let dpop = identity.dpop { headers.add(name: "Sigil-DPoP-Thumbprint", value: dpop.thumbprint) }
            headers.add(name: "Sigil-Body-Signed", value: identity.coversBody ? "?1" : "?0")
            if let subject = identity.clientCertificate?.subject {
                headers.add(name: "Sigil-Client-Certificate-Subject", value: Self.fieldValue(subject))
            }
        } else {
            headers.add(name: "Sigil-Verified", value: "?0")
            if let outcome { headers.add(name: "Sigil-Outcome", value: outcome.rawValue) }
        }
        if let secret = upstream.secret { headers.add(name: "Sigil-Gateway-Secret", value: secret) }
        // Configured, or covered by the signature; never an unsigned Host.
        let authority =
            upstream.publicHost
            ?? (identity?.coversAuthority == true
                ? request.head.authority.flatMap(SigilStandalone.Upstream.plainAuthority) : nil)
        if let client {
            headers.add(name: "X-Forwarded-For", value: client)
            let node = client.contains(":") ? "\"[\(client)]\"" : client
            let host = authority.map { ";host=\"\($0)\"" } ?? ""
            headers.add(name: "Forwarded", value: "for=\(node);proto=https\(host)")
        }
        headers.add(name: "X-Forwarded-Proto", value: "https")
        if let authority { headers.add(name: "X-Forwarded-Host", value: authority) }
        return headers
    }

    /// Hop-by-hop fields (RFC 9110 section 7.6.1), with those `Connection` names.
    static func dropped(connection: String?) -> Set<String> {
        var names: Set<String> = [
            "connection", "keep-alive", "proxy-connection", "proxy-authenticate", "proxy-authorization", "te",
            "trailer", "transfer-encoding", "upgrade",
        ]
        for token in (connection ?? "").split(separator: ",") {
            let name = token.trimmingCharacters(in: .whitespaces).lowercased()
            // A client may not make the gateway drop what says how to read the body.
            if !["content-type", "content-encoding", "content-length"].contains(name) { names.insert(name) }
        }
        return names
    }

    /// Request fields the gateway sets itself.
    static let requestFieldsReplaced: Set<String> = [
        "host", "content-length", "forwarded", "x-real-ip", "true-client-ip", "x-client-ip", "x-original-url",
        "x-rewrite-url",
        // Not signed by sigil-v1, and read by some frameworks as the method.
        "x-http-method-override", "x-http-method", "x-method-override",
        // The answer is signed as sent; a compressed one would not verify once a client decompressed it.
        "accept-encoding",
    ]

    /// Response fields the gateway sets itself: its own signature (an upstream's would be taken for
    /// the gateway's), the length and the date.
    static let responseFieldsReplaced: Set<String> = [
        "content-length", "date", "x-timestamp", "x-key-id", "x-signature", "signature", "signature-input",
        "content-digest",
    ]

    /// Whether a response field goes back to the client: not the gateway's own, not hop-by-hop, and
    /// no `Sigil-*` field (a backend echoing the request's would hand out the gateway's secret).
    static func returns(_ name: String, dropped: Set<String>) -> Bool {
        !dropped.contains(name) && !responseFieldsReplaced.contains(name) && !name.hasPrefix("sigil-")
    }

    static func timeAmount(_ duration: Duration) -> TimeAmount {
        .nanoseconds(Int64(duration / .nanoseconds(1)))
    }

    /// `text` fit for a field value: control characters, non-ASCII and `%` percent-encoded.
    static func fieldValue(_ text: String) -> String {
        var result = ""
        for byte in text.utf8 {
            if byte < 0x20 || byte >= 0x7F || byte == UInt8(ascii: "%") {
                result += "%" + Hex.encode([byte]).uppercased()
            } else {
                result.unicodeScalars.append(Unicode.Scalar(byte))
            }
        }
        return result
    }

    /// The client's IP address: the connection's, or for an HTTP/2 stream its parent's.
    static func clientAddress(_ channel: (any Channel)?) -> String? {
        var candidate = channel
        while let current = candidate {
            if let address = current.remoteAddress?.ipAddress { return address }
            candidate = current.parent
        }
        return nil
    }

    /// `upstream-timeout` when the upstream did not answer in time, `upstream-unavailable` otherwise.
    /// Whether an answer is problem+json whose `code` is one of PROTOCOL.md section 4's.
    static func speaksForTheGateway(contentType: String?, body: ByteBuffer) -> Bool {
        guard let contentType, contentType.lowercased().hasPrefix(Problem.contentType) else { return false }
        struct Coded: Decodable { let code: String? }
        let code = (try? JSONDecoder().decode(Coded.self, from: Data(body.readableBytesView)))?.code
        return code.flatMap(SigilError.Code.init(rawValue:)) != nil
    }

    static func refusal(for error: any Error) -> SigilError {
        if let error = error as? HTTPClientError,
            error == .deadlineExceeded || error == .readTimeout || error == .connectTimeout
        {
            return SigilError(.upstreamTimeout, "the upstream did not answer in time")
        }
        if error is NIOTooManyBytesError {
            return SigilError(.upstreamUnavailable, "the upstream's response is larger than the gateway forwards")
        }
        return SigilError(.upstreamUnavailable, "the upstream could not be reached")
    }
}
