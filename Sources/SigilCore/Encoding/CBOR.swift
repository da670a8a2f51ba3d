/// A CBOR data item (RFC 8949), as far as App Attest uses CBOR: integers, byte and text strings,
/// arrays, maps, tags and the simple values `false`, `true` and `null`.
///
/// Decoded with limits (``CBOR/decode(_:)``): definite lengths only, at most 16 levels deep and 64
/// pairs a map, no repeated map key, no length beyond the input's end, nothing after the item. Floats and indefinite lengths, which
/// Apple's objects never hold, are refused.
public indirect enum CBOR: Sendable, Hashable {
    /// A non-negative integer (major type 0).
    case unsigned(UInt64)
    /// A negative integer `-1 - n` (major type 1), holding `n`.
    case negative(UInt64)
    /// A byte string.
    case bytes([UInt8])
    /// A text string.
    case text(String)
    /// An array.
    case array([CBOR])
    /// A map, its pairs in the order they came.
    case map([Pair])
    /// A tagged item.
    case tagged(UInt64, CBOR)
    /// `false` or `true`.
    case bool(Bool)
    /// `null`.
    case null

    /// A key and its value in a map.
    public struct Pair: Sendable, Hashable {
        /// The key.
        public var key: CBOR
        /// The value.
        public var value: CBOR

        /// Creates a pair.
        public init(key: CBOR, value: CBOR) {
            self.key = key
            self.value = value
        }
    }

    /// The deepest nesting decoded.
    public static let maximumDepth = 16
    /// The most pairs a map may hold (each key is compared with the others: kept small).
    public static let maximumMapCount = 64

    /// Decodes exactly one item that fills `bytes`.
    ///
    /// - Throws: ``CBOR/DecodingError`` for truncated, oversized, too deep or unsupported input, or
    ///   bytes after the item.
    public static func decode(_ bytes: some Collection<UInt8>) throws -> CBOR {
        var reader = Reader(bytes: Array(bytes))
        let item = try reader.item(depth: 0)
        guard reader.offset == reader.bytes.count else { throw DecodingError("bytes after the CBOR item") }
        return item
    }

    /// Why a CBOR item did not decode.
    public struct DecodingError: Error, Sendable, Hashable, CustomStringConvertible {
        /// What was wrong.
        public let description: String
        init(_ description: String) { self.description = description }
    }

    // MARK: Reading

    /// The value of `key` (a text key) in a map, or `nil`.
    public subscript(key: String) -> CBOR? { self[.text(key)] }

    /// The value of `key` in a map, or `nil` (also when this is not a map).
    public subscript(key: CBOR) -> CBOR? {
        guard case .map(let pairs) = self else { return nil }
        return pairs.first { $0.key == key }?.value
    }

    /// The bytes of a byte string, or `nil`.
    public var bytesValue: [UInt8]? {
        if case .bytes(let bytes) = self { return bytes }
        return nil
    }

    /// The string of a text string, or `nil`.
    public var textValue: String? {
        if case .text(let text) = self { return text }
        return nil
    }

    /// The items of an array, or `nil`.
    public var arrayValue: [CBOR]? {
        if case .array(let items) = self { return items }
        return nil
    }

    /// The value of an integer that fits `Int64`, or `nil`.
    public var integerValue: Int64? {
        switch self {
        case .unsigned(let value): return value <= UInt64(Int64.max) ? Int64(value) : nil
        case .negative(let value): return value <= UInt64(Int64.max) ? -1 - Int64(value) : nil
        default: return nil
        }
    }

    struct Reader {
        let bytes: [UInt8]
        var offset = 0

        var remaining: Int { bytes.count - offset }

        mutating func byte() throws -> UInt8 {
            guard offset < bytes.count else { throw DecodingError("truncated CBOR") }
            defer { offset += 1 }
            return bytes[offset]
        }

        mutating func take(_ count: UInt64) throws -> ArraySlice<UInt8> {
            guard count <= UInt64(remaining) else { throw DecodingError("a CBOR length passes the end of the input") }
            defer { offset += Int(count) }
            return bytes[offset..<(offset + Int(count))]
        }

        /// The argument of a head whose low five bits are `info`.
        mutating func argument(_ info: UInt8) throws -> UInt64 {
            switch info {
            case 0..<24: return UInt64(info)
            case 24...27:
                var value: UInt64 = 0
                for byte in try take(1 << (info - 24)) { value = value << 8 | UInt64(byte) }
                return value
            case 31: throw DecodingError("indefinite-length CBOR is not accepted")
            default: throw DecodingError("a reserved CBOR head")
            }
        }

        /// A count of items, each of which takes at least one byte of what is left.
        mutating func count(_ info: UInt8, perItem: UInt64) throws -> Int {
            let count = try argument(info)
            guard count <= UInt64(remaining) / perItem else {
                throw DecodingError("a CBOR count passes the end of the input")
            }
            return Int(count)
        }

        mutating func item(depth: Int) throws -> CBOR {
            guard depth <= CBOR.maximumDepth else { throw DecodingError("CBOR nested too deep") }
            let head = try byte()
            let info = head & 0x1F
            switch head >> 5 {
            case 0: return .unsigned(try argument(info))
            case 1: return .negative(try argument(info))
            case 2: return .bytes(Array(try take(try argument(info))))
            case 3:
                guard let text = String(validating: try take(try argument(info)), as: UTF8.self) else {
                    throw DecodingError("a CBOR text string is not UTF-8")
                }
                return .text(text)
            case 4:
                let count = try count(info, perItem: 1)
                var items: [CBOR] = []
                items.reserveCapacity(count)
                for _ in 0..<count { items.append(try item(depth: depth + 1)) }
                return .array(items)
            case 5:
                let count = try count(info, perItem: 2)
                guard count <= CBOR.maximumMapCount else { throw DecodingError("a CBOR map is too large") }
                var pairs: [Pair] = []
                pairs.reserveCapacity(count)
                for _ in 0..<count {
                    let key = try item(depth: depth + 1)
                    let value = try item(depth: depth + 1)
                    guard !pairs.contains(where: { $0.key == key }) else {
                        throw DecodingError("a CBOR map repeats a key")
                    }
                    pairs.append(Pair(key: key, value: value))
                }
                return .map(pairs)
            case 6: return .tagged(try argument(info), try item(depth: depth + 1))
            default:
                switch info {
                case 20: return .bool(false)
                case 21: return .bool(true)
                case 22: return .null
                default: throw DecodingError("an unsupported CBOR simple value or float")
                }
            }
        }
    }
}
