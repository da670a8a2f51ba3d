import Foundation
import HTTPTypes
import RawStructuredFieldValues

/// One signature's covered components and parameters: a member of `Signature-Input` (RFC 9421 section 4.1).
public struct SignatureInput: Sendable {
    /// The covered components, in order.
    public var components: [ComponentIdentifier]
    /// The signature parameters, in the order received (or to be sent).
    public var parameters: [(String, RFC9651BareItem)]

    /// Creates an input.
    public init(components: [ComponentIdentifier], parameters: [(String, RFC9651BareItem)]) {
        self.components = components
        self.parameters = parameters
    }

    /// Creates an input with Sigil's parameter order: created, expires, keyid, nonce, alg, tag.
    public init(
        components: [ComponentIdentifier],
        created: Int64?,
        expires: Int64? = nil,
        keyID: String?,
        nonce: String? = nil,
        algorithm: SignatureAlgorithm? = nil,
        tag: String? = nil
    ) {
        var parameters: [(String, RFC9651BareItem)] = []
        if let created { parameters.append(("created", .integer(created))) }
        if let expires { parameters.append(("expires", .integer(expires))) }
        if let keyID { parameters.append(("keyid", .string(keyID))) }
        if let nonce { parameters.append(("nonce", .string(nonce))) }
        if let algorithm { parameters.append(("alg", .string(algorithm.rawValue))) }
        if let tag { parameters.append(("tag", .string(tag))) }
        self.init(components: components, parameters: parameters)
    }

    func parameter(_ key: String) -> RFC9651BareItem? { parameters.first { $0.0 == key }?.1 }

    func integer(_ key: String) throws -> Int64? {
        guard let value = parameter(key) else { return nil }
        guard case .integer(let number) = value else {
            throw SigilError(.malformedSignature, "signature parameter '\(key)' must be an integer")
        }
        return number
    }

    func string(_ key: String) throws -> String? {
        guard let value = parameter(key) else { return nil }
        guard case .string(let text) = value else {
            throw SigilError(.malformedSignature, "signature parameter '\(key)' must be a string")
        }
        return text
    }

    /// `created`.
    public var created: Int64? { get throws { try integer("created") } }
    /// `expires`.
    public var expires: Int64? { get throws { try integer("expires") } }
    /// `keyid`.
    public var keyID: String? { get throws { try string("keyid") } }
    /// `nonce`.
    public var nonce: String? { get throws { try string("nonce") } }
    /// `alg`.
    public var algorithm: String? { get throws { try string("alg") } }
    /// `tag`.
    public var tag: String? { get throws { try string("tag") } }

    /// The inner list this input is in `Signature-Input`.
    public var innerList: InnerList {
        var list = BareInnerList()
        for component in components { list.append(component.item) }
        var map = OrderedMap<String, RFC9651BareItem>()
        for (key, value) in parameters { map[key] = value }
        return InnerList(bareInnerList: list, parameters: map)
    }

    /// The value of the `@signature-params` line: the serialized inner list.
    public func serializedParameters() throws -> String {
        String(decoding: try serializedParameterBytes(), as: UTF8.self)
    }

    /// ``serializedParameters()`` as bytes.
    func serializedParameterBytes() throws -> [UInt8] {
        var bytes: [UInt8] = []
        try appendSerializedParameters(to: &bytes)
        return bytes
    }

    /// Appends the serialized inner list to `bytes`: each component's item is already serialized.
    func appendSerializedParameters(to bytes: inout [UInt8]) throws {
        var serializer = StructuredFields.Serializer(capacity: 0)
        swap(&serializer.bytes, &bytes)
        defer { swap(&serializer.bytes, &bytes) }
        serializer.bytes.append(UInt8(ascii: "("))
        for (index, component) in components.enumerated() {
            guard component.isSerializable else { throw StructuredFieldError() }
            if index > 0 { serializer.bytes.append(0x20) }
            serializer.bytes += component.serialized.utf8
        }
        serializer.bytes.append(UInt8(ascii: ")"))
        try serializer.parameters(parameters)
    }

    /// The components as structured items.
    var structuredItems: [StructuredFields.Item] {
        components.map { StructuredFields.Item(bareItem: .string($0.name), parameters: $0.parameters) }
    }

    init(items: [StructuredFields.Item], parameters innerParameters: StructuredFields.Parameters) throws {
        var components: [ComponentIdentifier] = []
        components.reserveCapacity(items.count)
        for item in items { components.append(try ComponentIdentifier(item: item)) }
        let hasDuplicate =
            components.count <= 16
            ? components.indices.contains { index in components[..<index].contains(components[index]) }
            : Set(components).count != components.count
        guard !hasDuplicate else {
            throw SigilError(.malformedSignature, "a component is covered twice")
        }
        self.init(components: components, parameters: innerParameters)
        // Type-check the parameters Sigil reads.
        _ = try created
        _ = try expires
        _ = try keyID
        _ = try nonce
        _ = try algorithm
        _ = try tag
    }
}

/// The `Signature-Input` and `Signature` fields of a message, by label.
public struct MessageSignatures: Sendable {
    /// `Signature-Input`.
    public static let signatureInputField = HTTPField.Name("Signature-Input")!
    /// `Signature`.
    public static let signatureField = HTTPField.Name("Signature")!
    /// `Accept-Signature`.
    public static let acceptSignatureField = HTTPField.Name("Accept-Signature")!
    /// `Content-Digest`.
    public static let contentDigestField = HTTPField.Name("Content-Digest")!

    /// One labelled signature.
    public struct Entry: Sendable {
        /// The label.
        public let label: String
        /// The covered components and parameters.
        public let input: SignatureInput
        /// The signature bytes.
        public let signature: [UInt8]
    }

    /// The signatures that have both an input and a value, in `Signature-Input` order.
    public let entries: [Entry]

    /// Parses both fields.
    ///
    /// - Throws: `missing-signature` when neither field is present; `malformed-signature` when either is
    ///   missing or not a valid Structured Field dictionary, or a label has no counterpart.
    public init(_ fields: HTTPFields) throws {
        let inputs = fields.values(Self.signatureInputField)
        let signatures = fields.values(Self.signatureField)
        if inputs.isEmpty && signatures.isEmpty {
            throw SigilError(.missingSignature, "the message carries no Signature-Input or Signature")
        }
        guard !inputs.isEmpty, !signatures.isEmpty else {
            throw SigilError(
                .malformedSignature,
                inputs.isEmpty ? "Signature without Signature-Input" : "Signature-Input without Signature"
            )
        }
        let inputMap = try Self.dictionary(inputs, name: "Signature-Input")
        let signatureMap = try Self.dictionary(signatures, name: "Signature")
        var entries: [Entry] = []
        for (label, member) in inputMap {
            guard case .innerList(let items, let parameters) = member else {
                throw SigilError(.malformedSignature, "Signature-Input '\(label)' is not an inner list")
            }
            guard let value = signatureMap.first(where: { $0.0 == label })?.1 else {
                throw SigilError(.malformedSignature, "Signature has no entry for label '\(label)'")
            }
            guard case .item(let item) = value, case .undecodedByteSequence(let base64) = item.bareItem,
                let bytes = Base64.decode(base64), !bytes.isEmpty
            else {
                throw SigilError(.malformedSignature, "Signature '\(label)' is not a byte sequence")
            }
            entries.append(
                Entry(label: label, input: try SignatureInput(items: items, parameters: parameters), signature: bytes))
        }
        self.entries = entries
    }

    /// The signature with `label`.
    public func entry(label: String) -> Entry? { entries.first { $0.label == label } }

    static func dictionary(_ values: [String], name: String) throws -> StructuredFields.Dictionary {
        do {
            return try StructuredFields.parseDictionary(
                Array((values.count == 1 ? values[0] : values.joined(separator: ", ")).utf8))
        } catch {
            throw SigilError(.malformedSignature, "\(name) is not a valid Structured Field dictionary")
        }
    }

    /// Serializes one `label=value` member of `Signature-Input`.
    public static func signatureInputMember(label: String, input: SignatureInput) throws -> String {
        var serializer = StructuredFields.Serializer()
        try serializer.dictionary([(label, .innerList(input.structuredItems, input.parameters))])
        return String(decoding: serializer.bytes, as: UTF8.self)
    }

    /// Serializes one `label=:base64:` member of `Signature`.
    public static func signatureMember(label: String, signature: [UInt8]) throws -> String {
        var serializer = StructuredFields.Serializer()
        try serializer.dictionary([
            (
                label,
                .item(StructuredFields.Item(bareItem: .undecodedByteSequence(Base64.encode(signature)), parameters: []))
            )
        ])
        return String(decoding: serializer.bytes, as: UTF8.self)
    }
}
