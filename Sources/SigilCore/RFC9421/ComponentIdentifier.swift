import Foundation
import HTTPTypes
import RawStructuredFieldValues

/// A covered component of an RFC 9421 signature: a derived component (`@method`) or a field name,
/// with its parameters (`;sf`, `;key`, `;bs`, `;req`, `;tr`, `;name`).
public struct ComponentIdentifier: Sendable, Hashable, CustomStringConvertible {
    /// The component name: `@`-prefixed for derived components, a lowercase field name otherwise.
    public let name: String
    /// The parameters, in order.
    public let parameters: [(String, RFC9651BareItem)]

    /// The identifier's serialization, as it starts a signature base line: `"@query-param";name="Pet"`.
    public let serialized: String

    /// What the name denotes, decided once.
    enum Kind: Sendable {
        case method, targetURI, authority, scheme, requestTarget, path, query, queryParameter, status
        case signatureParameters, unknownDerived
        case field(HTTPField.Name?)
    }

    let kind: Kind
    /// Whether ``serialized`` is the item's serialization (a name or parameter RFC 9651 cannot carry is not).
    let isSerializable: Bool

    /// Creates an identifier.
    public init(_ name: String, parameters: [(String, RFC9651BareItem)] = []) {
        self.name = name.hasPrefix("@") ? name : name.lowercased()
        self.parameters = parameters
        switch self.name {
        case "@method": kind = .method
        case "@target-uri": kind = .targetURI
        case "@authority": kind = .authority
        case "@scheme": kind = .scheme
        case "@request-target": kind = .requestTarget
        case "@path": kind = .path
        case "@query": kind = .query
        case "@query-param": kind = .queryParameter
        case "@status": kind = .status
        case "@signature-params": kind = .signatureParameters
        case _ where self.name.hasPrefix("@"): kind = .unknownDerived
        default: kind = .field(HTTPField.Name(self.name))
        }
        if parameters.isEmpty && self.name.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7F && $0 != 0x22 && $0 != 0x5C }) {
            self.serialized = "\"" + self.name + "\""  // what the serializer writes for a plain sf-string
            self.isSerializable = true
        } else {
            var serializer = StructuredFields.Serializer()
            let written: Void? = try? serializer.item(
                StructuredFields.Item(bareItem: .string(self.name), parameters: parameters))
            self.serialized =
                written == nil ? "\"\(self.name)\"" : String(decoding: serializer.bytes, as: UTF8.self)
            self.isSerializable = written != nil
        }
    }

    /// Whether the component is derived (`@…`).
    public var isDerived: Bool {
        if case .field = kind { return false }
        return true
    }

    /// The value of a parameter.
    public func parameter(_ key: String) -> RFC9651BareItem? { parameters.first { $0.0 == key }?.1 }

    /// Whether a boolean parameter (`;sf`, `;bs`, `;req`, `;tr`) is set.
    public func flag(_ key: String) -> Bool {
        if case .bool(true) = parameter(key) { return true }
        return false
    }

    /// The structured item this identifier is in Signature-Input.
    public var item: Item {
        var map = OrderedMap<String, RFC9651BareItem>()
        for (key, value) in parameters { map[key] = value }
        return Item(bareItem: .string(name), parameters: map)
    }

    public var description: String { serialized }

    public static func == (lhs: ComponentIdentifier, rhs: ComponentIdentifier) -> Bool {
        lhs.serialized == rhs.serialized
    }

    public func hash(into hasher: inout Hasher) { hasher.combine(serialized) }

    /// Parses an inner-list member of Signature-Input.
    init(item: StructuredFields.Item) throws {
        guard case .string(let name) = item.bareItem, !name.isEmpty else {
            throw SigilError(.malformedSignature, "covered components must be strings")
        }
        if item.parameters.isEmpty, let known = Self.common.first(where: { $0.name == name }) {
            self = known  // the usual components, built once
            return
        }
        guard name.hasPrefix("@") || !name.utf8.contains(where: { $0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z") })
        else {
            throw SigilError(.malformedSignature, "field names in covered components must be lowercase")
        }
        self.init(name, parameters: item.parameters)
    }
}

extension ComponentIdentifier {
    /// `@method`.
    public static let method = ComponentIdentifier("@method")
    /// `@target-uri`.
    public static let targetURI = ComponentIdentifier("@target-uri")
    /// `@authority`.
    public static let authority = ComponentIdentifier("@authority")
    /// `@scheme`.
    public static let scheme = ComponentIdentifier("@scheme")
    /// `@request-target`.
    public static let requestTarget = ComponentIdentifier("@request-target")
    /// `@path`.
    public static let path = ComponentIdentifier("@path")
    /// `@query`.
    public static let query = ComponentIdentifier("@query")
    /// `@status`.
    public static let status = ComponentIdentifier("@status")
    /// `content-digest`.
    public static let contentDigest = ComponentIdentifier("content-digest")
    /// `content-encoding`, which a message carrying that field must cover (PROTOCOL.md section 3).
    public static let contentEncoding = ComponentIdentifier("content-encoding")

    /// The components most signatures cover, reused when a signature names them without parameters.
    static let common: [ComponentIdentifier] = [
        .method, .authority, .path, .query, .contentDigest, .targetURI, .scheme, .requestTarget, .status,
        ComponentIdentifier("content-type"), ComponentIdentifier("content-length"),
    ]

    /// `@query-param;name="…"` with an already-encoded name.
    public static func queryParam(_ encodedName: String) -> ComponentIdentifier {
        ComponentIdentifier("@query-param", parameters: [("name", .string(encodedName))])
    }

    /// Parses the text form used on the command line: `@method`, `content-type`,
    /// `"@query-param";name="a"`, `example-dict;key="a"`, `content-digest;req`.
    public static func parse(_ text: String) throws -> ComponentIdentifier {
        var source = text.trimmingCharacters(in: .whitespaces)
        if !source.hasPrefix("\"") {
            let nameEnd = source.firstIndex(of: ";") ?? source.endIndex
            source = "\"" + source[..<nameEnd] + "\"" + source[nameEnd...]
        }
        guard let item = try? StructuredFields.parseItem(Array(source.utf8)) else {
            throw SigilInputError("component '\(text.prefix(80))' is not a valid component identifier")
        }
        return try ComponentIdentifier(item: item)
    }
}
