import Foundation
import JWTKit
@_spi(Sigil) import SigilCore

/// jwt-kit's JSON decoder for what Sigil reads with it: JWT headers and claims, and JWK Sets.
///
/// It is a `Decoder` over SigilCore's ``StrictJSON`` reader, so every `Decodable` decodes as it does
/// with jwt-kit's default (Foundation's `JSONDecoder`, dates as seconds since 1970), and it is
/// stricter: a duplicate member name, invalid UTF-8, a lone surrogate escape, nesting deeper than 32
/// or an object of more than 256 members is refused. It is several times faster than Foundation's
/// decoder on a token's few hundred bytes, which is most of what a fresh access token costs beyond
/// its signature.
///
/// `Data` decodes from standard base64 and `URL` from a string, as with Foundation's decoder.
public struct StrictJWTDecoder: JWTJSONDecoder {
    /// How deep and wide a document may be.
    let limits = StrictJSON.Limits.document

    /// Creates a decoder.
    public init() {}

    public func decode<T: Decodable>(_ type: T.Type, from data: Data) throws -> T {
        guard let value = StrictJSON.value(Array(data), limits: limits) else {
            throw DecodingError.dataCorrupted(
                .init(
                    codingPath: [],
                    debugDescription:
                        "not one JSON value of unique member names, valid UTF-8 and at most \(limits.depth) levels"))
        }
        return try ValueDecoder(value: value, codingPath: []).decode(type)
    }
}

/// The `Decoder` of one value, also its own single-value container.
private struct ValueDecoder: Decoder, SingleValueDecodingContainer {
    let value: StrictJSON.Value
    let codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        guard case .object(let members) = value else { throw mismatch([String: Any].self) }
        return KeyedDecodingContainer(KeyedContainer<Key>(members: members, codingPath: codingPath))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        guard case .array(let elements) = value else { throw mismatch([Any].self) }
        return UnkeyedContainer(elements: elements, codingPath: codingPath)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer { self }

    /// The error for a value that is not a `type`: `valueNotFound` for `null`, else `typeMismatch`
    /// (jwt-kit's multi-value claims tell a string from an array by it).
    func mismatch(_ type: Any.Type) -> DecodingError {
        let context = DecodingError.Context(codingPath: codingPath, debugDescription: "expected \(type), found \(kind)")
        return value == .null ? .valueNotFound(type, context) : .typeMismatch(type, context)
    }

    var kind: String {
        switch value {
        case .string: "a string"
        case .number: "a number"
        case .bool: "a boolean"
        case .null: "null"
        case .array: "an array"
        case .object: "an object"
        }
    }

    func number(_ type: Any.Type) throws -> StrictJSON.Number {
        guard case .number(let number) = value else { throw mismatch(type) }
        return number
    }

    func decodeNil() -> Bool { value == .null }

    func decode(_ type: Bool.Type) throws -> Bool {
        guard case .bool(let bool) = value else { throw mismatch(type) }
        return bool
    }

    func decode(_ type: String.Type) throws -> String {
        guard case .string(let string) = value else { throw mismatch(type) }
        return string
    }

    func decode(_ type: Double.Type) throws -> Double {
        let double = try number(type).double
        guard double.isFinite else { throw corrupted("the number does not fit \(type)") }
        return double
    }

    func decode(_ type: Float.Type) throws -> Float {
        let float = Float(try decode(Double.self))
        guard float.isFinite else { throw corrupted("the number does not fit \(type)") }
        return float
    }

    func decode(_ type: Int.Type) throws -> Int { try integer(type) }
    func decode(_ type: Int8.Type) throws -> Int8 { try integer(type) }
    func decode(_ type: Int16.Type) throws -> Int16 { try integer(type) }
    func decode(_ type: Int32.Type) throws -> Int32 { try integer(type) }
    func decode(_ type: Int64.Type) throws -> Int64 { try integer(type) }
    func decode(_ type: UInt.Type) throws -> UInt { try integer(type) }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try integer(type) }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try integer(type) }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try integer(type) }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try integer(type) }

    /// An integer: a literal one that fits `type`, or a number whose value is a whole one of at most
    /// 2^53 (`1.0`, `1e3`), as Foundation's decoder reads them.
    func integer<I: FixedWidthInteger>(_ type: I.Type) throws -> I {
        let number = try number(type)
        if let exact = number.exactInteger {
            guard let value = I(exactly: exact) else { throw corrupted("the number does not fit \(type)") }
            return value
        }
        guard number.double.rounded() == number.double, abs(number.double) <= 9_007_199_254_740_992,
            let value = I(exactly: number.double)
        else { throw corrupted("the number is not a whole number that fits \(type)") }
        return value
    }

    func decode<T: Decodable>(_ type: T.Type) throws -> T {
        // The types Foundation's decoder reads from a value of their own: a date from its seconds
        // (jwt-kit's strategy), data from base64, a URL from its string.
        if type == Date.self, let date = Date(timeIntervalSince1970: try decode(Double.self)) as? T {
            return date
        }
        if type == Data.self {
            guard let bytes = Data(base64Encoded: try decode(String.self)) as? T else {
                throw corrupted("the string is not base64")
            }
            return bytes
        }
        if type == URL.self {
            guard let url = URL(string: try decode(String.self)) as? T else {
                throw corrupted("the string is not a URL")
            }
            return url
        }
        return try T(from: self)
    }

    func corrupted(_ description: String) -> DecodingError {
        .dataCorrupted(.init(codingPath: codingPath, debugDescription: description))
    }
}

/// An array's elements, in order.
private struct UnkeyedContainer: UnkeyedDecodingContainer {
    let elements: [StrictJSON.Value]
    let codingPath: [any CodingKey]
    var currentIndex = 0

    init(elements: [StrictJSON.Value], codingPath: [any CodingKey]) {
        self.elements = elements
        self.codingPath = codingPath
    }

    var count: Int? { elements.count }
    var isAtEnd: Bool { currentIndex >= elements.count }

    /// The next element's decoder; the index moves on only once it decoded.
    func next(_ type: Any.Type) throws -> ValueDecoder {
        guard !isAtEnd else {
            throw DecodingError.valueNotFound(
                type, .init(codingPath: codingPath, debugDescription: "the array has no more elements"))
        }
        return ValueDecoder(value: elements[currentIndex], codingPath: codingPath + [IndexKey(currentIndex)])
    }

    mutating func decoded<T>(_ type: Any.Type, _ body: (ValueDecoder) throws -> T) throws -> T {
        let value = try body(next(type))
        currentIndex += 1
        return value
    }

    mutating func decodeNil() throws -> Bool {
        guard try next(Never.self).decodeNil() else { return false }
        currentIndex += 1
        return true
    }

    mutating func decode(_ type: Bool.Type) throws -> Bool { try decoded(type) { try $0.decode(type) } }
    mutating func decode(_ type: String.Type) throws -> String { try decoded(type) { try $0.decode(type) } }
    mutating func decode(_ type: Double.Type) throws -> Double { try decoded(type) { try $0.decode(type) } }
    mutating func decode(_ type: Float.Type) throws -> Float { try decoded(type) { try $0.decode(type) } }
    mutating func decode(_ type: Int.Type) throws -> Int { try decoded(type) { try $0.decode(type) } }
    mutating func decode(_ type: Int8.Type) throws -> Int8 { try decoded(type) { try $0.decode(type) } }
    mutating func decode(_ type: Int16.Type) throws -> Int16 { try decoded(type) { try $0.decode(type) } }
    mutating func decode(_ type: Int32.Type) throws -> Int32 { try decoded(type) { try $0.decode(type) } }
    mutating func decode(_ type: Int64.Type) throws -> Int64 { try decoded(type) { try $0.decode(type) } }
    mutating func decode(_ type: UInt.Type) throws -> UInt { try decoded(type) { try $0.decode(type) } }
    mutating func decode(_ type: UInt8.Type) throws -> UInt8 { try decoded(type) { try $0.decode(type) } }
    mutating func decode(_ type: UInt16.Type) throws -> UInt16 { try decoded(type) { try $0.decode(type) } }
    mutating func decode(_ type: UInt32.Type) throws -> UInt32 { try decoded(type) { try $0.decode(type) } }
    mutating func decode(_ type: UInt64.Type) throws -> UInt64 { try decoded(type) { try $0.decode(type) } }
    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T { try decoded(type) { try $0.decode(type) } }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws
        -> KeyedDecodingContainer<NestedKey>
    {
        try decoded([String: Any].self) { try $0.container(keyedBy: type) }
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        try decoded([Any].self) { try $0.unkeyedContainer() }
    }

    mutating func superDecoder() throws -> any Decoder { try decoded(Any.self) { $0 } }
}

/// An object's members, by name.
private struct KeyedContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let members: StrictJSON.Members
    let codingPath: [any CodingKey]

    var allKeys: [Key] { members.pairs.compactMap { Key(stringValue: $0.name) } }

    func contains(_ key: Key) -> Bool { members[key.stringValue] != nil }

    func decoder(_ key: any CodingKey) throws -> ValueDecoder {
        guard let value = members[key.stringValue] else {
            throw DecodingError.keyNotFound(
                key, .init(codingPath: codingPath, debugDescription: "no member \(key.stringValue.debugDescription)"))
        }
        return ValueDecoder(value: value, codingPath: codingPath + [key])
    }

    func decodeNil(forKey key: Key) throws -> Bool { try decoder(key).decodeNil() }
    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try decoder(key).decode(type) }
    func decode(_ type: String.Type, forKey key: Key) throws -> String { try decoder(key).decode(type) }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try decoder(key).decode(type) }
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float { try decoder(key).decode(type) }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try decoder(key).decode(type) }
    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try decoder(key).decode(type) }
    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try decoder(key).decode(type) }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try decoder(key).decode(type) }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try decoder(key).decode(type) }
    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try decoder(key).decode(type) }
    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try decoder(key).decode(type) }
    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try decoder(key).decode(type) }
    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try decoder(key).decode(type) }
    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try decoder(key).decode(type) }
    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T { try decoder(key).decode(type) }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws
        -> KeyedDecodingContainer<NestedKey>
    {
        try decoder(key).container(keyedBy: type)
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        try decoder(key).unkeyedContainer()
    }

    /// The member `super`, as Foundation's decoder has it (`null` when there is none).
    func superDecoder() throws -> any Decoder {
        ValueDecoder(value: members["super"] ?? .null, codingPath: codingPath + [IndexKey(name: "super")])
    }

    func superDecoder(forKey key: Key) throws -> any Decoder {
        ValueDecoder(value: members[key.stringValue] ?? .null, codingPath: codingPath + [key])
    }
}

/// An array index or a fixed name in a coding path.
private struct IndexKey: CodingKey {
    let stringValue: String
    let intValue: Int?

    init(_ index: Int) {
        stringValue = "Index \(index)"
        intValue = index
    }

    init(name: String) {
        stringValue = name
        intValue = nil
    }

    init?(stringValue: String) { self.init(name: stringValue) }
    init?(intValue: Int) { self.init(intValue) }
}
