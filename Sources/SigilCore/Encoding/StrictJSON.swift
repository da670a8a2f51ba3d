/// A strict, bounded JSON reader for the small documents JOSE uses: a JWS header, a claims set, a
/// JWK Set. Every duplicate member name is refused (RFC 7515 section 5.2 allows refusing them; taking
/// one of two would let two readers disagree), as are invalid UTF-8, a lone surrogate escape, an
/// unescaped control character, and nesting or an object wider than its ``Limits``.
///
/// DPoP proofs are read with it directly; `SigilJWT`'s decoder puts a `Decoder` over it for jwt-kit.
@_spi(Sigil) public enum StrictJSON {
    /// How deep and how wide a document may be.
    public struct Limits: Sendable {
        /// The deepest nesting of objects and arrays (the top-level object is at depth 1).
        public var depth: Int
        /// The most members one object may have.
        public var members: Int

        /// A DPoP proof's header and claims: four levels, 64 members.
        public static let proof = Limits(depth: 4, members: 64)
        /// A JWT's header and claims or a JWK Set read for jwt-kit: 32 levels, 256 members (a duplicate is
        /// looked for by comparing names, so the width bounds the work a hostile header can cause).
        public static let document = Limits(depth: 32, members: 256)

        /// Creates limits.
        public init(depth: Int, members: Int) {
            self.depth = depth
            self.members = members
        }
    }

    /// An object's members in their order, looked up by a linear scan: a JWS header or claims set has
    /// a handful, for which hashing each name costs more than comparing it.
    public struct Members: Equatable, Sendable {
        /// The members, in the document's order.
        public internal(set) var pairs: [(name: String, value: Value)] = []

        /// The value of the member `name`. Names compare by their UTF-8 bytes, as JSON's members do
        /// (not by Unicode equivalence).
        public subscript(name: String) -> Value? {
            pairs.first { $0.name.utf8.elementsEqual(name.utf8) }?.value
        }

        public static func == (lhs: Members, rhs: Members) -> Bool {
            lhs.pairs.elementsEqual(rhs.pairs) { $0.name.utf8.elementsEqual($1.name.utf8) && $0.value == $1.value }
        }
    }

    /// A number as written: its value as a `Double`, and as an integer when the literal is one.
    public struct Number: Equatable, Sendable {
        /// The nearest `Double`.
        public let double: Double
        /// The value, when the literal is an integer (no fraction, no exponent) that fits `Int64`.
        public let exactInteger: Int64?
        /// The value rounded down, when it is a literal without exponent whose integer part fits
        /// `Int64` (RFC 7519's NumericDate may carry a fraction of a second).
        public let integerPart: Int64?
    }

    /// A JSON value.
    public indirect enum Value: Equatable, Sendable {
        case string(String)
        case number(Number)
        case bool(Bool)
        case null
        case array([Value])
        case object(Members)

        /// The string, if this is one.
        public var string: String? {
            if case .string(let value) = self { return value }
            return nil
        }

        /// The number rounded down to an integer, if this is a number without exponent that fits
        /// `Int64` (a JWT's times are).
        public var integer: Int64? {
            if case .number(let number) = self { return number.integerPart }
            return nil
        }

        /// The string members of an object (the members of a JWK), others left out.
        public var stringMembers: [String: String]? {
            guard case .object(let members) = self else { return nil }
            return Dictionary(
                members.pairs.compactMap { pair in pair.value.string.map { (pair.name, $0) } },
                uniquingKeysWith: { first, _ in first })
        }
    }

    /// The members of the object `bytes` holds, or `nil` when it is no single well-formed object
    /// within `limits`.
    public static func object(_ bytes: [UInt8], limits: Limits = .proof) -> Members? {
        guard case .object(let members)? = value(bytes, limits: limits) else { return nil }
        return members
    }

    /// The value `bytes` holds, or `nil` when it is not one well-formed JSON value within `limits`.
    public static func value(_ bytes: [UInt8], limits: Limits) -> Value? {
        var reader = Reader(bytes: bytes, limits: limits)
        guard let value = reader.value(depth: 0) else { return nil }
        reader.skipSpace()
        return reader.index == bytes.count ? value : nil
    }

    struct Reader {
        let bytes: [UInt8]
        let limits: Limits
        var index = 0

        init(bytes: [UInt8], limits: Limits) {
            self.bytes = bytes
            self.limits = limits
        }

        mutating func skipSpace() {
            while index < bytes.count,
                bytes[index] == 0x20 || bytes[index] == 0x09 || bytes[index] == 0x0A
                    || bytes[index] == 0x0D
            {
                index += 1
            }
        }

        mutating func value(depth: Int) -> Value? {
            skipSpace()
            guard index < bytes.count else { return nil }
            switch bytes[index] {
            case UInt8(ascii: "{"):
                guard depth < limits.depth else { return nil }
                return object(depth: depth + 1)
            case UInt8(ascii: "["):
                guard depth < limits.depth else { return nil }
                return array(depth: depth + 1)
            case UInt8(ascii: "\""): return string().map(Value.string)
            case UInt8(ascii: "t"): return literal("true", .bool(true))
            case UInt8(ascii: "f"): return literal("false", .bool(false))
            case UInt8(ascii: "n"): return literal("null", .null)
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return number().map(Value.number)
            default: return nil
            }
        }

        mutating func object(depth: Int) -> Value? {
            index += 1
            var members = Members()
            skipSpace()
            if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
                index += 1
                return .object(members)
            }
            while true {
                skipSpace()
                guard index < bytes.count, bytes[index] == UInt8(ascii: "\""), let name = string() else { return nil }
                skipSpace()
                guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { return nil }
                index += 1
                guard let member = value(depth: depth), members.pairs.count < limits.members,
                    !members.pairs.contains(where: { $0.name.utf8.elementsEqual(name.utf8) })
                else { return nil }
                members.pairs.append((name, member))
                guard let closed = next(closing: UInt8(ascii: "}")) else { return nil }
                if closed { return .object(members) }
            }
        }

        mutating func array(depth: Int) -> Value? {
            index += 1
            var elements: [Value] = []
            skipSpace()
            if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
                index += 1
                return .array(elements)
            }
            while true {
                guard let element = value(depth: depth) else { return nil }
                elements.append(element)
                guard let closed = next(closing: UInt8(ascii: "]")) else { return nil }
                if closed { return .array(elements) }
            }
        }

        /// After a member or an element: `true` past `closing`, `false` past a comma (another
        /// follows), `nil` for anything else.
        mutating func next(closing: UInt8) -> Bool? {
            skipSpace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: ",") || bytes[index] == closing else { return nil }
            index += 1
            return bytes[index - 1] == closing
        }

        mutating func literal(_ word: StaticString, _ value: Value) -> Value? {
            let expected = UnsafeBufferPointer(start: word.utf8Start, count: word.utf8CodeUnitCount)
            guard index + expected.count <= bytes.count, bytes[index..<(index + expected.count)].elementsEqual(expected)
            else { return nil }
            index += expected.count
            return value
        }

        /// A number of JSON's grammar (RFC 8259 section 6), with its integer readings.
        mutating func number() -> Number? {
            let start = index
            if bytes[index] == UInt8(ascii: "-") { index += 1 }
            guard index < bytes.count, isDigit(bytes[index]) else { return nil }
            if bytes[index] == UInt8(ascii: "0") {
                index += 1
            } else {
                while index < bytes.count, isDigit(bytes[index]) { index += 1 }
            }
            let integerEnd = index
            var hasFraction = false
            var isLiteralInteger = true
            if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
                isLiteralInteger = false
                index += 1
                guard index < bytes.count, isDigit(bytes[index]) else { return nil }
                while index < bytes.count, isDigit(bytes[index]) {
                    if bytes[index] != UInt8(ascii: "0") { hasFraction = true }
                    index += 1
                }
            }
            var hasExponent = false
            if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
                hasExponent = true
                isLiteralInteger = false
                index += 1
                if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") {
                    index += 1
                }
                guard index < bytes.count, isDigit(bytes[index]) else { return nil }
                while index < bytes.count, isDigit(bytes[index]) { index += 1 }
            }
            let negative = bytes[start] == UInt8(ascii: "-")
            var magnitude: UInt64? = integerEnd - start <= 21 ? 0 : nil
            for byte in bytes[start..<integerEnd] where byte != UInt8(ascii: "-") {
                guard let value = magnitude else { break }
                let (shifted, overflow) = value.multipliedReportingOverflow(by: 10)
                let (sum, carry) = shifted.addingReportingOverflow(UInt64(byte - UInt8(ascii: "0")))
                magnitude = overflow || carry ? nil : sum
            }
            // The integer part, rounded down: −1.5 is −2.
            var integerPart: Int64?
            if !hasExponent, let magnitude {
                if !negative {
                    integerPart = Int64(exactly: magnitude)
                } else if magnitude <= UInt64(Int64.max) + (hasFraction ? 0 : 1) {
                    integerPart = Int64(truncatingIfNeeded: 0 &- (magnitude + (hasFraction ? 1 : 0)))
                }
            }
            let exactInteger = isLiteralInteger ? integerPart : nil
            let double: Double
            if let exactInteger {
                double = Double(exactInteger)
            } else {
                // Swift's parser rounds correctly; a literal too large for a Double is infinite.
                guard let parsed = Double(String(decoding: bytes[start..<index], as: UTF8.self)) else { return nil }
                double = parsed
            }
            return Number(double: double, exactInteger: exactInteger, integerPart: integerPart)
        }

        func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }

        /// A string, its escapes resolved; `nil` for a control character, a bad escape, a lone
        /// surrogate or invalid UTF-8.
        mutating func string() -> String? {
            index += 1
            // The common case, ASCII without escapes, read straight from the input.
            let start = index
            while index < bytes.count, bytes[index] >= 0x20, bytes[index] < 0x80, bytes[index] != UInt8(ascii: "\""),
                bytes[index] != UInt8(ascii: "\\")
            {
                index += 1
            }
            if index < bytes.count, bytes[index] == UInt8(ascii: "\"") {
                index += 1
                return String(decoding: bytes[start..<(index - 1)], as: UTF8.self)
            }
            var scalars = Array(bytes[start..<index])
            var runStart = index
            while index < bytes.count {
                let byte = bytes[index]
                if byte == UInt8(ascii: "\"") {
                    scalars += bytes[runStart..<index]
                    index += 1
                    return String(validating: scalars, as: UTF8.self)
                }
                if byte < 0x20 { return nil }
                if byte == UInt8(ascii: "\\") {
                    scalars += bytes[runStart..<index]
                    index += 1
                    guard index < bytes.count else { return nil }
                    let escape = bytes[index]
                    index += 1
                    switch escape {
                    case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): scalars.append(escape)
                    case UInt8(ascii: "b"): scalars.append(0x08)
                    case UInt8(ascii: "f"): scalars.append(0x0C)
                    case UInt8(ascii: "n"): scalars.append(0x0A)
                    case UInt8(ascii: "r"): scalars.append(0x0D)
                    case UInt8(ascii: "t"): scalars.append(0x09)
                    case UInt8(ascii: "u"):
                        guard var unit = hex4() else { return nil }
                        if (0xD800..<0xDC00).contains(unit) {
                            guard index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"),
                                bytes[index + 1] == UInt8(ascii: "u")
                            else { return nil }
                            index += 2
                            guard let low = hex4(), (0xDC00..<0xE000).contains(low) else { return nil }
                            unit = 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00)
                        } else if (0xDC00..<0xE000).contains(unit) {
                            return nil
                        }
                        guard let scalar = Unicode.Scalar(unit) else { return nil }
                        scalars += Array(String(Character(scalar)).utf8)
                    default: return nil
                    }
                    runStart = index
                    continue
                }
                index += 1
            }
            return nil
        }

        mutating func hex4() -> UInt32? {
            guard index + 4 <= bytes.count else { return nil }
            var value: UInt32 = 0
            for byte in bytes[index..<(index + 4)] {
                let digit: UInt8
                switch byte {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
                case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
                case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
                default: return nil
                }
                value = value << 4 | UInt32(digit)
            }
            index += 4
            return value
        }
    }
}
