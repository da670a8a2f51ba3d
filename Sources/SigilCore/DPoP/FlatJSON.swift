/// A strict, bounded reader of the small JSON objects a JWS header or claims set is: the members of
/// one object, objects nested at most ``maximumDepth`` deep, every duplicate member name refused
/// (RFC 7515 section 5.2 allows refusing them; taking one of two would let two readers disagree).
///
/// Faster than Foundation's decoders for the few hundred bytes of a DPoP proof, and it reads only
/// what it is asked for: strings, integers and nested objects; any other value is checked and kept
/// as ``Value/other``. An object has at most ``Members/maximumCount`` members.
struct FlatJSON {
    /// An object's members in their order, looked up by a linear scan: a JWS header or claims set has
    /// a handful, for which hashing each name costs more than comparing it.
    struct Members: Equatable {
        /// The most members one object may have.
        static let maximumCount = 64

        var pairs: [(name: String, value: Value)] = []

        /// Names compare by their UTF-8 bytes, as JSON's members do (not by Unicode equivalence).
        subscript(name: String) -> Value? { pairs.first { $0.name.utf8.elementsEqual(name.utf8) }?.value }

        static func == (lhs: Members, rhs: Members) -> Bool {
            lhs.pairs.elementsEqual(rhs.pairs) { $0.name.utf8.elementsEqual($1.name.utf8) && $0.value == $1.value }
        }
    }

    indirect enum Value: Equatable {
        case string(String)
        case integer(Int64)
        case object(Members)
        case other

        var string: String? {
            if case .string(let value) = self { return value }
            return nil
        }

        var integer: Int64? {
            if case .integer(let value) = self { return value }
            return nil
        }

        /// The string members of an object (the members of a JWK), others left out.
        var stringMembers: [String: String]? {
            guard case .object(let members) = self else { return nil }
            return Dictionary(
                members.pairs.compactMap { pair in pair.value.string.map { (pair.name, $0) } },
                uniquingKeysWith: { first, _ in first })
        }
    }

    static let maximumDepth = 4

    /// The members of the object `bytes` holds, or `nil` when it is no single well-formed object.
    static func object(_ bytes: [UInt8]) -> Members? {
        var reader = FlatJSON(bytes: bytes)
        guard case .object(let members)? = reader.value(depth: 0) else { return nil }
        reader.skipSpace()
        return reader.index == bytes.count ? members : nil
    }

    let bytes: [UInt8]
    var index = 0

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
            guard depth < Self.maximumDepth else { return nil }
            return object(depth: depth + 1)
        case UInt8(ascii: "["):
            guard depth < Self.maximumDepth else { return nil }
            return array(depth: depth + 1)
        case UInt8(ascii: "\""): return string().map(Value.string)
        case UInt8(ascii: "t"): return literal("true")
        case UInt8(ascii: "f"): return literal("false")
        case UInt8(ascii: "n"): return literal("null")
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return number()
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
            guard let member = value(depth: depth), members.pairs.count < Members.maximumCount,
                !members.pairs.contains(where: { $0.name.utf8.elementsEqual(name.utf8) })
            else { return nil }
            members.pairs.append((name, member))
            skipSpace()
            guard index < bytes.count else { return nil }
            if bytes[index] == UInt8(ascii: ",") {
                index += 1
            } else if bytes[index] == UInt8(ascii: "}") {
                index += 1
                return .object(members)
            } else {
                return nil
            }
        }
    }

    mutating func array(depth: Int) -> Value? {
        index += 1
        skipSpace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
            index += 1
            return .other
        }
        while true {
            guard value(depth: depth) != nil else { return nil }
            skipSpace()
            guard index < bytes.count else { return nil }
            if bytes[index] == UInt8(ascii: ",") {
                index += 1
            } else if bytes[index] == UInt8(ascii: "]") {
                index += 1
                return .other
            } else {
                return nil
            }
        }
    }

    mutating func literal(_ word: String) -> Value? {
        let expected = word.utf8
        guard index + expected.count <= bytes.count, bytes[index..<(index + expected.count)].elementsEqual(expected)
        else { return nil }
        index += expected.count
        return .other
    }

    /// An integer when the number is one that fits `Int64` (a JWT's times are), a decimal fraction
    /// rounded down to one (RFC 7519's NumericDate may carry a fraction of a second), `.other` for any
    /// other well-formed number.
    mutating func number() -> Value? {
        let start = index
        if bytes[index] == UInt8(ascii: "-") { index += 1 }
        guard index < bytes.count, isDigit(bytes[index]) else { return nil }
        if bytes[index] == UInt8(ascii: "0") {
            index += 1
        } else {
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
        }
        var isInteger = true
        let integerEnd = index
        var hasFraction = false
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            index += 1
            guard index < bytes.count, isDigit(bytes[index]) else { return nil }
            while index < bytes.count, isDigit(bytes[index]) {
                if bytes[index] != UInt8(ascii: "0") { hasFraction = true }
                index += 1
            }
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            isInteger = false
            index += 1
            if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") {
                index += 1
            }
            guard index < bytes.count, isDigit(bytes[index]) else { return nil }
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
        }
        guard isInteger, integerEnd - start <= 19 else { return .other }
        var value: Int64 = 0
        for byte in bytes[start..<integerEnd] where byte != UInt8(ascii: "-") {
            let (shifted, overflow) = value.multipliedReportingOverflow(by: 10)
            let (sum, carry) = shifted.addingReportingOverflow(Int64(byte - UInt8(ascii: "0")))
            guard !overflow, !carry else { return .other }
            value = sum
        }
        guard bytes[start] == UInt8(ascii: "-") else { return .integer(value) }
        return hasFraction ? (value == .max ? .other : .integer(-value - 1)) : .integer(-value)
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
