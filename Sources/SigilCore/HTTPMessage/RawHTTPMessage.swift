import HTTPTypes

/// A raw HTTP/1.1 message as the `sigil` command reads and writes it (PROTOCOL.md section 5): a
/// request or status line, header lines ending in CRLF or LF, an empty line, then the body verbatim.
public struct RawHTTPMessage: Sendable {
    /// The first line, without its line ending.
    public var startLine: String
    /// Header lines in order, as (name, value) with the value's surrounding whitespace removed.
    public var headers: [(name: String, value: String)]
    /// The body bytes, verbatim to the end of input.
    public var body: [UInt8]
    /// The line ending the input used, kept on output.
    public var lineEnding: String

    /// The largest message accepted: 64 MiB.
    public static let maximumSize = 64 << 20

    /// Parses a message.
    ///
    /// - Throws: ``SigilInputError`` for a truncated or malformed message.
    public init(parsing bytes: [UInt8]) throws {
        guard bytes.count <= Self.maximumSize else { throw SigilInputError("message is larger than 64 MiB") }
        var lines: [ArraySlice<UInt8>] = []
        var index = 0
        var lineEnding: String?
        var bodyStart: Int?
        while index < bytes.count {
            guard let newline = bytes[index...].firstIndex(of: 0x0A) else { break }
            var lineEnd = newline
            let crlf = lineEnd > index && bytes[lineEnd - 1] == 0x0D
            if crlf { lineEnd -= 1 }
            if lineEnding == nil { lineEnding = crlf ? "\r\n" : "\n" }
            let line = bytes[index..<lineEnd]
            index = newline + 1
            if line.isEmpty {
                bodyStart = index
                break
            }
            lines.append(line)
        }
        guard let bodyStart else {
            throw SigilInputError("message is truncated: no empty line after the headers")
        }
        guard let first = lines.first, !first.isEmpty else { throw SigilInputError("message has no start line") }
        guard let startLine = String(validating: first, as: UTF8.self), !startLine.contains("\r") else {
            throw SigilInputError("start line is not valid text")
        }
        var headers: [(String, String)] = []
        for line in lines.dropFirst() {
            if line.first == 0x20 || line.first == 0x09 {
                // obs-fold: continues the previous header value (RFC 9112 section 5.2).
                guard let last = headers.popLast(), let more = String(validating: line, as: UTF8.self) else {
                    throw SigilInputError("header continuation line without a header")
                }
                headers.append((last.0, last.1 + " " + RFC9421.trimWhitespace(more)))
                continue
            }
            guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else {
                throw SigilInputError("header line without ':'")
            }
            guard let name = String(validating: line[..<colon], as: UTF8.self), HTTPField.Name(name) != nil else {
                throw SigilInputError("header name is not a valid token")
            }
            let rawValue = line[(colon + 1)...]
            guard let value = String(validating: rawValue, as: UTF8.self) else {
                throw SigilInputError("header \(name) is not valid UTF-8")
            }
            let trimmed = RFC9421.trimWhitespace(value)
            guard HTTPField.isValidValue(trimmed) else {
                throw SigilInputError("header \(name) has invalid characters")
            }
            headers.append((name, trimmed))
        }
        self.startLine = startLine
        self.headers = headers
        self.body = Array(bytes[bodyStart...])
        self.lineEnding = lineEnding ?? "\r\n"
    }

    /// Creates a message from parts.
    public init(startLine: String, headers: [(name: String, value: String)], body: [UInt8], lineEnding: String = "\r\n")
    {
        self.startLine = startLine
        self.headers = headers
        self.body = body
        self.lineEnding = lineEnding
    }

    /// The message's bytes.
    public var serialized: [UInt8] {
        var out = [UInt8]()
        out += startLine.utf8
        out += lineEnding.utf8
        for (name, value) in headers {
            out += name.utf8
            out += ": ".utf8
            out += value.utf8
            out += lineEnding.utf8
        }
        out += lineEnding.utf8
        out += body
        return out
    }

    /// The header fields.
    public var fields: HTTPFields {
        var fields = HTTPFields()
        for (name, value) in headers {
            if let fieldName = HTTPField.Name(name) { fields.append(HTTPField(name: fieldName, value: value)) }
        }
        return fields
    }

    /// Whether the start line is a status line.
    public var isResponse: Bool { startLine.hasPrefix("HTTP/") }

    /// The message as a request: method and target from the request line, authority from `Host`.
    ///
    /// An absolute-form target (`https://host/p`) gives the scheme and authority itself.
    public func request(scheme: String = "https") throws -> HTTPRequest {
        let parts = startLine.split(separator: " ", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[2].hasPrefix("HTTP/") else {
            throw SigilInputError("request line must be 'METHOD target HTTP/1.1'")
        }
        guard let method = HTTPRequest.Method(String(parts[0])) else {
            throw SigilInputError("request method is not a valid token")
        }
        var target = String(parts[1])
        var scheme = scheme
        var authority = headers.first { $0.name.lowercased() == "host" }?.value
        if let schemeEnd = target.range(of: "://"), !target.hasPrefix("/") {
            scheme = String(target[..<schemeEnd.lowerBound]).lowercased()
            let rest = target[schemeEnd.upperBound...]
            let pathStart = rest.firstIndex { $0 == "/" || $0 == "?" } ?? rest.endIndex
            authority = String(rest[..<pathStart])
            target = String(rest[pathStart...])
            if target.isEmpty || target.hasPrefix("?") { target = "/" + target }
        }
        guard !target.isEmpty else { throw SigilInputError("request target is empty") }
        var request = HTTPRequest(method: method, scheme: scheme, authority: authority, path: target)
        request.headerFields = fields
        return request
    }

    /// The message as a response.
    public func response() throws -> HTTPResponse {
        let parts = startLine.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count >= 2, parts[0].hasPrefix("HTTP/"), parts[1].count == 3, let code = Int(parts[1]),
            (100...999).contains(code)
        else { throw SigilInputError("status line must be 'HTTP/1.1 CODE reason'") }
        let reason = parts.count == 3 ? String(parts[2]) : ""
        var response = HTTPResponse(status: .init(code: code, reasonPhrase: reason))
        response.headerFields = fields
        return response
    }

    /// Appends header lines.
    public mutating func append(_ fields: HTTPFields) {
        for field in fields { headers.append((field.name.rawName, field.value)) }
    }

    /// Appends a member to a dictionary header (`Signature-Input`, `Signature`), or adds the header.
    public mutating func appendDictionaryMember(_ name: String, _ member: String) {
        if let index = headers.firstIndex(where: { $0.name.lowercased() == name.lowercased() }) {
            headers[index].value += ", " + member
        } else {
            headers.append((name, member))
        }
    }
}
