import Foundation
import HTTPTypes
import RawStructuredFieldValues

/// An HTTP message as RFC 9421 sees it: a request, or a response with the request it answers.
public struct RFC9421Message: Sendable {
    /// The request, or for a response the request it answers (for `;req` components); may be absent for a response.
    public var request: HTTPRequest?
    /// The response, when the message is one.
    public var response: HTTPResponse?
    /// Trailer fields of the message, for `;tr`.
    public var trailers: HTTPFields?

    /// A request.
    public init(request: HTTPRequest, trailers: HTTPFields? = nil) {
        self.request = request
        self.response = nil
        self.trailers = trailers
    }

    /// A response, optionally with the request it answers.
    public init(response: HTTPResponse, answering request: HTTPRequest? = nil, trailers: HTTPFields? = nil) {
        self.request = request
        self.response = response
        self.trailers = trailers
    }

    /// The message's own fields.
    var fields: HTTPFields { response?.headerFields ?? request?.headerFields ?? HTTPFields() }
}

/// RFC 9421 signature bases and component values.
public enum RFC9421 {
    /// The signature base of section 2.5: one line per covered component, then `@signature-params`,
    /// lines joined by LF, no trailing newline.
    ///
    /// - Throws: `missing-component` when a covered component is absent from the message,
    ///   `malformed-signature` when an identifier or its parameters are not usable.
    public static func signatureBase(for input: SignatureInput, message: RFC9421Message) throws -> [UInt8] {
        var base = [UInt8]()
        base.reserveCapacity(512)
        for component in input.components {
            if case .signatureParameters = component.kind {
                throw SigilError(.malformedSignature, "@signature-params cannot be a covered component")
            }
            base += component.serialized.utf8
            base += ": ".utf8
            base += try componentValue(component, message: message).utf8
            base.append(0x0A)
        }
        base += "\"@signature-params\": ".utf8
        do {
            try input.appendSerializedParameters(to: &base)
        } catch {
            throw SigilError(.malformedSignature, "signature parameters cannot be serialized")
        }
        return base
    }

    /// The value of one component in `message` (section 2.1 and 2.2).
    public static func componentValue(_ component: ComponentIdentifier, message: RFC9421Message) throws -> String {
        for (key, _) in component.parameters where !componentParameters.contains(key) {
            throw SigilError(.malformedSignature, "component parameter '\(key)' is not supported")
        }
        let fromRequest = component.flag("req")
        if fromRequest && message.response == nil {
            throw SigilError(.malformedSignature, ";req is only meaningful on a response")
        }
        guard case .field(let fieldName) = component.kind else {
            return try derivedValue(component, message: message, fromRequest: fromRequest)
        }
        let fields: HTTPFields?
        if component.flag("tr") {
            fields = fromRequest ? nil : message.trailers
        } else {
            fields = fromRequest ? message.request?.headerFields : message.fields
        }
        guard let fieldName else {
            throw SigilError(.malformedSignature, "'\(component.name.prefix(64))' is not a field name")
        }
        return try fieldValue(component, name: fieldName, fields: fields ?? HTTPFields())
    }

    /// The component parameters RFC 9421 defines.
    static let componentParameters: Set<String> = ["sf", "key", "bs", "req", "tr", "name"]
    /// The parameters that only field components take.
    static let fieldOnlyParameters = ["sf", "key", "bs", "tr"]

    static func missing(_ component: ComponentIdentifier) -> SigilError {
        SigilError(.missingComponent, "covered component \(component.serialized) is not in the message")
    }

    static func fieldValue(_ component: ComponentIdentifier, name: HTTPField.Name, fields: HTTPFields) throws -> String
    {
        if component.parameter("name") != nil {
            throw SigilError(.malformedSignature, ";name is only defined for @query-param")
        }
        let lines = fields.values(name).map { trimWhitespace($0) }
        guard !lines.isEmpty else { throw missing(component) }
        let structured = component.flag("sf")
        let key = component.parameter("key")
        let byteSequence = component.flag("bs")
        if byteSequence {
            guard !structured && key == nil else {
                throw SigilError(.malformedSignature, ";bs cannot be combined with ;sf or ;key")
            }
            return lines.map { ":" + Data($0.utf8).base64EncodedString() + ":" }.joined(separator: ", ")
        }
        let combined = lines.joined(separator: ", ")
        if let key {
            guard case .string(let memberName) = key else {
                throw SigilError(.malformedSignature, ";key must be a string")
            }
            guard let dictionary = try? StructuredFields.parseDictionary(Array(combined.utf8)) else {
                throw SigilError(.malformedSignature, "field \(component.name) is not a Structured Field dictionary")
            }
            guard let member = dictionary.first(where: { $0.0 == memberName })?.1 else { throw missing(component) }
            var serializer = StructuredFields.Serializer()
            do {
                try serializer.member(member)
            } catch {
                throw SigilError(.malformedSignature, "field \(component.name) cannot be serialized")
            }
            return String(decoding: serializer.bytes, as: UTF8.self)
        }
        if structured {
            return try reserializeStructured(combined, fieldName: component.name)
        }
        return combined
    }

    /// Field names whose Structured Field type is known; other fields are tried as item, list, then dictionary.
    static let dictionaryFields: Set<String> = [
        "signature-input", "signature", "accept-signature", "content-digest", "repr-digest", "want-content-digest",
        "want-repr-digest", "priority", "example-dict",
    ]

    static func reserializeStructured(_ value: String, fieldName: String) throws -> String {
        let bytes = Array(value.utf8)
        var serializer = StructuredFields.Serializer()
        do {
            if !dictionaryFields.contains(fieldName) {
                if let item = try? StructuredFields.parseItem(bytes) {
                    try serializer.item(item)
                    return String(decoding: serializer.bytes, as: UTF8.self)
                }
                if let list = try? StructuredFields.parseList(bytes) {
                    try serializer.list(list)
                    return String(decoding: serializer.bytes, as: UTF8.self)
                }
            }
            guard let dictionary = try? StructuredFields.parseDictionary(bytes) else {
                throw SigilError(.malformedSignature, "field \(fieldName) is not a Structured Field")
            }
            try serializer.dictionary(dictionary)
            return String(decoding: serializer.bytes, as: UTF8.self)
        } catch let error as SigilError {
            throw error
        } catch {
            throw SigilError(.malformedSignature, "field \(fieldName) cannot be serialized")
        }
    }

    static func trimWhitespace(_ value: String) -> String {
        var utf8 = Substring(value).utf8[...]
        while let first = utf8.first, first == 0x20 || first == 0x09 { utf8 = utf8.dropFirst() }
        while let last = utf8.last, last == 0x20 || last == 0x09 { utf8 = utf8.dropLast() }
        return String(Substring(utf8))
    }

    static func derivedValue(
        _ component: ComponentIdentifier,
        message: RFC9421Message,
        fromRequest: Bool
    ) throws -> String {
        for flag in fieldOnlyParameters where component.parameter(flag) != nil {
            throw SigilError(.malformedSignature, ";\(flag) is not defined for derived components")
        }
        if case .status = component.kind {
            guard let response = message.response, !fromRequest else {
                throw SigilError(.malformedSignature, "@status is only defined for responses")
            }
            return String(response.status.code)
        }
        if message.response != nil && !fromRequest {
            throw SigilError(.malformedSignature, "\(component.name) on a response needs ;req")
        }
        guard let request = message.request else { throw missing(component) }
        var takesName = false
        if case .queryParameter = component.kind { takesName = true }
        if !takesName && component.parameter("name") != nil {
            throw SigilError(.malformedSignature, ";name is only defined for @query-param")
        }
        let target = request.path ?? ""
        let questionMark = target.utf8.firstIndex(of: UInt8(ascii: "?"))
        switch component.kind {
        case .method:
            return request.method.rawValue
        case .authority:
            guard let authority = request.authority else { throw missing(component) }
            return normalizedAuthority(authority, scheme: request.scheme)
        case .scheme:
            guard let scheme = request.scheme else { throw missing(component) }
            return scheme.lowercased()
        case .targetURI:
            guard let scheme = request.scheme, let authority = request.authority else { throw missing(component) }
            return scheme.lowercased() + "://" + normalizedAuthority(authority, scheme: scheme) + target
        case .requestTarget:
            return target
        case .path:
            let path = target[..<(questionMark ?? target.endIndex)]
            return path.isEmpty ? "/" : String(path)
        case .query:
            return questionMark.map { String(target[$0...]) } ?? "?"
        case .queryParameter:
            guard case .string(let name)? = component.parameter("name") else {
                throw SigilError(.malformedSignature, "@query-param needs a ;name string parameter")
            }
            let query = questionMark.map { String(target[target.utf8.index(after: $0)...]) } ?? ""
            let matches = queryParameters(query).filter { $0.name == name }
            guard !matches.isEmpty else { throw missing(component) }
            guard matches.count == 1 else {
                throw SigilError(.malformedSignature, "query parameter '\(name)' occurs more than once")
            }
            return matches[0].value
        default:
            throw SigilError(.malformedSignature, "unknown derived component \(component.name)")
        }
    }

    /// Lowercase host, default port removed.
    static func normalizedAuthority(_ authority: String, scheme: String?) -> String {
        let lowered =
            authority.utf8.contains { $0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z") }
            ? authority.lowercased() : authority
        // Byte comparisons: String's hasSuffix and lowercased() compare and allocate by grapheme.
        func equalsIgnoringCase(_ text: String?, _ expected: StaticString) -> Bool {
            guard let text, text.utf8.count == expected.utf8CodeUnitCount else { return false }
            return zip(text.utf8, UnsafeBufferPointer(start: expected.utf8Start, count: expected.utf8CodeUnitCount))
                .allSatisfy { $0 | 0x20 == $1 }
        }
        let defaultPort: StaticString? =
            equalsIgnoringCase(scheme, "https") ? ":443" : equalsIgnoringCase(scheme, "http") ? ":80" : nil
        guard let defaultPort, lowered.utf8.count > defaultPort.utf8CodeUnitCount,
            lowered.utf8.suffix(defaultPort.utf8CodeUnitCount).elementsEqual(
                UnsafeBufferPointer(start: defaultPort.utf8Start, count: defaultPort.utf8CodeUnitCount))
        else { return lowered }
        return String(decoding: lowered.utf8.dropLast(defaultPort.utf8CodeUnitCount), as: UTF8.self)
    }

    /// Query parameters parsed as `application/x-www-form-urlencoded` and re-encoded (section 2.2.8):
    /// `+` and `%20` are spaces, and names and values come back percent-encoded with space as `%20`.
    static func queryParameters(_ query: String) -> [(name: String, value: String)] {
        var result: [(String, String)] = []
        for piece in Array(query.utf8).split(separator: UInt8(ascii: "&"), omittingEmptySubsequences: true) {
            let equals = piece.firstIndex(of: UInt8(ascii: "="))
            let name = equals.map { piece[..<$0] } ?? piece
            let value = equals.map { piece[($0 + 1)...] } ?? []
            result.append((formEncode(formDecode(name)), formEncode(formDecode(value))))
        }
        return result
    }

    static func formDecode(_ bytes: ArraySlice<UInt8>) -> [UInt8] {
        PercentEncoding.decode(ArraySlice(bytes.map { $0 == UInt8(ascii: "+") ? 0x20 : $0 }))
    }

    static func formEncode(_ bytes: [UInt8]) -> String {
        var out = [UInt8]()
        for byte in bytes {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "*"), UInt8(ascii: "-"), UInt8(ascii: "."),
                UInt8(ascii: "_"):
                out.append(byte)
            default:
                PercentEncoding.appendEscaped(byte, to: &out)
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Signs a message: returns the `Signature-Input` and `Signature` members for `label`.
    public static func sign(
        _ message: RFC9421Message,
        input: SignatureInput,
        label: String,
        signer: some SignatureProvider
    ) throws -> (signatureInput: String, signature: String) {
        let base = try signatureBase(for: input, message: message)
        let signature = try signer.signature(for: base, profile: .rfc9421)
        return (
            try MessageSignatures.signatureInputMember(label: label, input: input),
            try MessageSignatures.signatureMember(label: label, signature: signature)
        )
    }
}
