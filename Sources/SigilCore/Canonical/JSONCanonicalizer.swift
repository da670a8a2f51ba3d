/// RFC 8785 JSON Canonicalization (JCS) with the I-JSON rules of PROTOCOL.md section 2.5.
///
/// One pass over the bytes, no intermediate tree: values are written to the output as they are
/// parsed, and an object's members are reordered in place only when they arrived out of order.
public enum JSONCanonicalizer {
    /// The deepest nesting of arrays and objects that is still I-JSON here.
    public static let maximumDepth = 128

    /// Returns the JCS serialization of `json`, or `nil` when it is not I-JSON: not UTF-8, not JSON,
    /// a duplicate member name, an escaped lone surrogate, an infinite number, an integer literal
    /// outside ±(2^53 − 1), or nesting deeper than ``maximumDepth``.
    public static func canonicalize(_ json: [UInt8]) -> [UInt8]? {
        withCanonicalForm(of: json) { Array($0) }
    }

    /// Calls `body` with the JCS serialization of `json` without copying it out, or returns `nil`
    /// when `json` is not I-JSON (see ``canonicalize(_:)``).
    public static func withCanonicalForm<Result>(
        of json: [UInt8],
        _ body: (UnsafeBufferPointer<UInt8>) throws -> Result
    ) rethrows -> Result? {
        try json.withUnsafeBufferPointer { try withCanonicalForm(buffer: $0, body) }
    }

    static func withCanonicalForm<Result>(
        buffer: UnsafeBufferPointer<UInt8>,
        _ body: (UnsafeBufferPointer<UInt8>) throws -> Result
    ) rethrows -> Result? {
        var parser = Parser(input: buffer)
        guard parser.document() else { return nil }
        return try body(parser.out.bytes)
    }
}

/// A growable byte buffer without copy-on-write or reference counting, for the canonicalizer's
/// hot loops.
struct OutputBuffer: ~Copyable {
    private(set) var base: UnsafeMutablePointer<UInt8>
    private(set) var capacity: Int
    var count = 0

    init(capacity: Int) {
        self.capacity = max(capacity, 32)
        base = .allocate(capacity: self.capacity)
    }

    deinit { base.deallocate() }

    var bytes: UnsafeBufferPointer<UInt8> { UnsafeBufferPointer(start: base, count: count) }

    @inline(__always)
    mutating func append(_ byte: UInt8) {
        if count == capacity { grow(1) }
        base[count] = byte
        count += 1
    }

    @inline(__always)
    mutating func append(contentsOf bytes: UnsafeBufferPointer<UInt8>) {
        guard let source = bytes.baseAddress, !bytes.isEmpty else { return }
        let length = bytes.count
        if count + length > capacity { grow(length) }
        let target = base + count
        if length <= 16 {
            // Most runs are a few bytes: a loop beats a call to memcpy.
            for index in 0..<length { target[index] = source[index] }
        } else {
            target.initialize(from: source, count: length)
        }
        count += length
    }

    mutating func append(repeating byte: UInt8, count extra: Int) {
        guard extra > 0 else { return }
        if count + extra > capacity { grow(extra) }
        (base + count).initialize(repeating: byte, count: extra)
        count += extra
    }

    mutating func removeLast(_ k: Int = 1) { count -= k }

    mutating func grow(_ extra: Int) {
        let newCapacity = max(capacity * 2, count + extra)
        let newBase = UnsafeMutablePointer<UInt8>.allocate(capacity: newCapacity)
        newBase.initialize(from: base, count: count)
        base.deallocate()
        base = newBase
        capacity = newCapacity
    }
}

private struct Member {
    var keyStart: Int  // range of the decoded key in `keys`
    var keyEnd: Int
    var start: Int  // range of `"key":value` in `out`
    var end: Int
    /// The name's first eight bytes, big-endian, zero-padded; `UInt64.max` when one of them is 0xEE
    /// or above (where UTF-8 and UTF-16 orders can differ), so the full comparison decides.
    var prefix: UInt64 = 0
}

/// The members of the objects being parsed, innermost last: a stack without copy-on-write checks.
private struct MemberStack: ~Copyable {
    private(set) var base: UnsafeMutablePointer<Member>
    private var capacity: Int
    var count = 0

    init(capacity: Int) {
        self.capacity = capacity
        base = .allocate(capacity: capacity)
    }

    deinit { base.deallocate() }

    @inline(__always)
    mutating func append(_ member: Member) {
        if count == capacity {
            let newBase = UnsafeMutablePointer<Member>.allocate(capacity: capacity * 2)
            newBase.moveInitialize(from: base, count: count)
            base.deallocate()
            base = newBase
            capacity *= 2
        }
        (base + count).initialize(to: member)
        count += 1
    }

    subscript(index: Int) -> Member {
        get { base[index] }
        nonmutating set { base[index] = newValue }
    }
}

private struct Parser: ~Copyable {
    let input: UnsafeBufferPointer<UInt8>
    var position = 0
    var out: OutputBuffer
    var depth = 0
    var members = MemberStack(capacity: 32)
    var keys = OutputBuffer(capacity: 256)
    var digits = OutputBuffer(capacity: 32)
    var scratch = OutputBuffer(capacity: 256)

    init(input: UnsafeBufferPointer<UInt8>) {
        self.input = input
        out = OutputBuffer(capacity: input.count + 16)
    }

    /// Parses the whole input; `false` when it is not I-JSON.
    mutating func document() -> Bool {
        skipWhitespace()
        guard value() else { return false }
        skipWhitespace()
        return position == input.count
    }

    @inline(__always)
    mutating func skipWhitespace() {
        var index = position
        let end = input.count
        while index < end {
            switch input[index] {
            case 0x20, 0x09, 0x0A, 0x0D: index += 1
            default:
                position = index
                return
            }
        }
        position = index
    }

    @inline(__always)
    func peek() -> UInt8? { position < input.count ? input[position] : nil }

    mutating func value() -> Bool {
        guard let byte = peek() else { return false }
        switch byte {
        case UInt8(ascii: "{"): return object()
        case UInt8(ascii: "["): return array()
        case UInt8(ascii: "\""): return string(isKey: false)
        case UInt8(ascii: "t"): return literal("true")
        case UInt8(ascii: "f"): return literal("false")
        case UInt8(ascii: "n"): return literal("null")
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return number()
        default: return false
        }
    }

    mutating func literal(_ word: StaticString) -> Bool {
        let count = word.utf8CodeUnitCount
        guard input.count - position >= count else { return false }
        let expected = UnsafeBufferPointer(start: word.utf8Start, count: count)
        for offset in 0..<count where input[position + offset] != expected[offset] { return false }
        out.append(contentsOf: expected)
        position += count
        return true
    }

    mutating func array() -> Bool {
        depth += 1
        guard depth <= JSONCanonicalizer.maximumDepth else { return false }
        position += 1
        out.append(UInt8(ascii: "["))
        skipWhitespace()
        if peek() == UInt8(ascii: "]") {
            position += 1
        } else {
            while true {
                skipWhitespace()
                guard value() else { return false }
                skipWhitespace()
                guard let next = peek() else { return false }
                position += 1
                if next == UInt8(ascii: "]") { break }
                guard next == UInt8(ascii: ",") else { return false }
                out.append(UInt8(ascii: ","))
            }
        }
        out.append(UInt8(ascii: "]"))
        depth -= 1
        return true
    }

    mutating func object() -> Bool {
        depth += 1
        guard depth <= JSONCanonicalizer.maximumDepth else { return false }
        position += 1
        out.append(UInt8(ascii: "{"))
        let bodyStart = out.count
        let memberBase = members.count
        let keyBase = keys.count
        skipWhitespace()
        if peek() == UInt8(ascii: "}") {
            position += 1
        } else {
            while true {
                skipWhitespace()
                guard peek() == UInt8(ascii: "\"") else { return false }
                let start = out.count
                let keyStart = keys.count
                guard string(isKey: true) else { return false }
                let keyEnd = keys.count
                skipWhitespace()
                guard peek() == UInt8(ascii: ":") else { return false }
                position += 1
                out.append(UInt8(ascii: ":"))
                skipWhitespace()
                guard value() else { return false }
                members.append(
                    Member(
                        keyStart: keyStart, keyEnd: keyEnd, start: start, end: out.count,
                        prefix: Self.prefix(keys.base + keyStart, count: keyEnd - keyStart)))
                skipWhitespace()
                guard let next = peek() else { return false }
                position += 1
                if next == UInt8(ascii: "}") { break }
                guard next == UInt8(ascii: ",") else { return false }
                out.append(UInt8(ascii: ","))
            }
        }
        guard sortMembers(from: memberBase, bodyStart: bodyStart) else { return false }
        members.count = memberBase
        keys.count = keyBase
        out.append(UInt8(ascii: "}"))
        depth -= 1
        return true
    }

    /// Orders the members from `base` on by their names' UTF-16 code units, rejecting duplicates.
    ///
    /// Allocation-free once warm: members are sorted in place on the member stack and the object's
    /// body is rewritten from a reused scratch buffer.
    mutating func sortMembers(from base: Int, bodyStart: Int) -> Bool {
        let count = members.count - base
        guard count > 1 else { return true }
        let names = keys.bytes
        var slice = UnsafeMutableBufferPointer(start: members.base + base, count: count)
        let result: Int? = {
            var inOrder = true
            for index in 1..<count {
                let order = Self.compare(slice[index - 1], slice[index], names)
                if order == 0 { return nil }
                if order > 0 { inOrder = false }
            }
            if inOrder { return 0 }
            if count <= 16 {
                for index in 1..<count {  // insertion sort: objects are small
                    let member = slice[index]
                    var position = index
                    while position > 0 && Self.compare(member, slice[position - 1], names) < 0 {
                        slice[position] = slice[position - 1]
                        position -= 1
                    }
                    slice[position] = member
                }
            } else {
                slice.sort { Self.compare($0, $1, names) < 0 }
            }
            for index in 1..<count where Self.compare(slice[index - 1], slice[index], names) == 0 { return nil }
            return 1
        }()
        guard let result else { return false }  // a duplicate name
        if result == 0 { return true }  // already in order
        // Copy the body aside, then write the members back in order (same total length).
        let bodyLength = out.count - bodyStart
        scratch.count = 0
        scratch.append(contentsOf: UnsafeBufferPointer(start: out.base + bodyStart, count: bodyLength))
        var cursor = out.base + bodyStart
        for index in base..<members.count {
            if index > base {
                cursor.pointee = UInt8(ascii: ",")
                cursor += 1
            }
            let member = members[index]
            let length = member.end - member.start
            cursor.update(from: scratch.base + (member.start - bodyStart), count: length)
            cursor += length
        }
        return true
    }

    /// The ``Member/prefix`` of a decoded name.
    @inline(__always)
    static func prefix(_ name: UnsafeMutablePointer<UInt8>, count: Int) -> UInt64 {
        var value: UInt64 = 0
        for index in 0..<8 {
            let byte = index < count ? name[index] : 0
            if byte >= 0xEE { return .max }
            value = value << 8 | UInt64(byte)
        }
        return value
    }

    /// Compares two decoded (UTF-8) names in UTF-16 code unit order, as RFC 8785 section 3.2.3 asks.
    static func compare(_ lhs: Member, _ rhs: Member, _ names: UnsafeBufferPointer<UInt8>) -> Int {
        // Names that differ in their first eight bytes, none of them 0xEE or above, compare as integers.
        if lhs.prefix != rhs.prefix && lhs.prefix != .max && rhs.prefix != .max {
            return lhs.prefix < rhs.prefix ? -1 : 1
        }
        let lhsCount = lhs.keyEnd - lhs.keyStart
        let rhsCount = rhs.keyEnd - rhs.keyStart
        let shared = min(lhsCount, rhsCount)
        var offset = 0
        while offset < shared {
            let left = names[lhs.keyStart + offset]
            let right = names[rhs.keyStart + offset]
            if left != right {
                // UTF-8 byte order equals code point order; it differs from UTF-16 order only between
                // a supplementary character (4-byte lead 0xF0-0xF4, a surrogate pair in UTF-16) and
                // U+E000-U+FFFF (3-byte lead 0xEE or 0xEF), where surrogates sort first. Both names
                // share the bytes before `offset`, so a lead byte in one is a lead byte in the other.
                let atLead = left & 0xC0 != 0x80
                if atLead && left >= 0xF0 && (right == 0xEE || right == 0xEF) { return -1 }
                if atLead && right >= 0xF0 && (left == 0xEE || left == 0xEF) { return 1 }
                return left < right ? -1 : 1
            }
            offset += 1
        }
        return lhsCount == rhsCount ? 0 : (lhsCount < rhsCount ? -1 : 1)
    }

    /// The end of the run from `start` of bytes a string copies as they are: not `"`, `\\`, a control
    /// character or a non-ASCII byte. Eight bytes at a time while it can (SWAR).
    @inline(__always)
    static func plainRunEnd(_ input: UnsafeBufferPointer<UInt8>, from start: Int) -> Int {
        var index = start
        let end = input.count
        if let base = input.baseAddress {
            let ones: UInt64 = 0x0101_0101_0101_0101
            let highs: UInt64 = 0x8080_8080_8080_8080
            while index + 8 <= end {
                let word = UnsafeRawPointer(base + index).loadUnaligned(as: UInt64.self)
                let quote = word ^ (ones &* 0x22)
                let backslash = word ^ (ones &* 0x5C)
                // A byte below 0x20, a zero byte of `quote` or `backslash`, or a byte with its high bit.
                let special =
                    ((word &- ones &* 0x20) | (quote &- ones) | (backslash &- ones)) & ~word & highs | word & highs
                if special != 0 { return index + (special.littleEndian.trailingZeroBitCount >> 3) }
                index += 8
            }
        }
        while index < end {
            let byte = input[index]
            if byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") || byte >= 0x80 { break }
            index += 1
        }
        return index
    }

    /// Parses a string and writes its JCS form; a member name is also kept decoded in `keys`.
    mutating func string(isKey: Bool) -> Bool {
        position += 1  // opening quote
        out.append(UInt8(ascii: "\""))
        while true {
            // Copy the longest run of bytes that need no attention.
            let runStart = position
            position = Self.plainRunEnd(input, from: position)
            if position > runStart {
                let run = UnsafeBufferPointer(rebasing: input[runStart..<position])
                out.append(contentsOf: run)
                if isKey { keys.append(contentsOf: run) }
            }
            guard position < input.count else { return false }
            let byte = input[position]
            if byte == UInt8(ascii: "\"") {
                position += 1
                out.append(UInt8(ascii: "\""))
                return true
            }
            if byte < 0x20 { return false }  // unescaped control character
            if byte >= 0x80 {
                let length = utf8SequenceLength(at: position)
                guard length > 0 else { return false }
                let sequence = UnsafeBufferPointer(rebasing: input[position..<(position + length)])
                out.append(contentsOf: sequence)
                if isKey { keys.append(contentsOf: sequence) }
                position += length
                continue
            }
            // A backslash escape.
            guard position + 1 < input.count else { return false }
            let escape = input[position + 1]
            position += 2
            var scalar: UInt32
            switch escape {
            case UInt8(ascii: "\""): scalar = 0x22
            case UInt8(ascii: "\\"): scalar = 0x5C
            case UInt8(ascii: "/"): scalar = 0x2F
            case UInt8(ascii: "b"): scalar = 0x08
            case UInt8(ascii: "f"): scalar = 0x0C
            case UInt8(ascii: "n"): scalar = 0x0A
            case UInt8(ascii: "r"): scalar = 0x0D
            case UInt8(ascii: "t"): scalar = 0x09
            case UInt8(ascii: "u"):
                guard let unit = hex4() else { return false }
                scalar = UInt32(unit)
                if (0xD800...0xDBFF).contains(unit) {
                    guard position + 1 < input.count, input[position] == UInt8(ascii: "\\"),
                        input[position + 1] == UInt8(ascii: "u")
                    else { return false }
                    position += 2
                    guard let low = hex4(), (0xDC00...0xDFFF).contains(low) else { return false }
                    scalar = 0x10000 + ((UInt32(unit) - 0xD800) << 10) + (UInt32(low) - 0xDC00)
                } else if (0xDC00...0xDFFF).contains(unit) {
                    return false  // lone low surrogate
                }
            default:
                return false
            }
            writeScalar(scalar, isKey: isKey)
        }
    }

    mutating func hex4() -> UInt16? {
        guard input.count - position >= 4 else { return nil }
        var value: UInt16 = 0
        for offset in 0..<4 {
            guard let digit = PercentEncoding.hexValue(input[position + offset]) else { return nil }
            value = value << 4 | UInt16(digit)
        }
        position += 4
        return value
    }

    /// Writes a decoded character in its JCS form (RFC 8785 section 3.2.2.2).
    mutating func writeScalar(_ scalar: UInt32, isKey: Bool) {
        var utf8: [UInt8] = []
        if scalar < 0x80 {
            utf8 = [UInt8(scalar)]
        } else if scalar < 0x800 {
            utf8 = [UInt8(0xC0 | scalar >> 6), UInt8(0x80 | scalar & 0x3F)]
        } else if scalar < 0x10000 {
            utf8 = [UInt8(0xE0 | scalar >> 12), UInt8(0x80 | scalar >> 6 & 0x3F), UInt8(0x80 | scalar & 0x3F)]
        } else {
            utf8 = [
                UInt8(0xF0 | scalar >> 18), UInt8(0x80 | scalar >> 12 & 0x3F), UInt8(0x80 | scalar >> 6 & 0x3F),
                UInt8(0x80 | scalar & 0x3F),
            ]
        }
        if isKey { utf8.withUnsafeBufferPointer { keys.append(contentsOf: $0) } }
        switch scalar {
        case 0x22: appendEscape(0x22)
        case 0x5C: appendEscape(0x5C)
        case 0x08: appendEscape(UInt8(ascii: "b"))
        case 0x09: appendEscape(UInt8(ascii: "t"))
        case 0x0A: appendEscape(UInt8(ascii: "n"))
        case 0x0C: appendEscape(UInt8(ascii: "f"))
        case 0x0D: appendEscape(UInt8(ascii: "r"))
        case 0..<0x20:
            let hex = Array("0123456789abcdef".utf8)
            appendEscape(UInt8(ascii: "u"))
            out.append(0x30)
            out.append(0x30)
            out.append(hex[Int(scalar >> 4)])
            out.append(hex[Int(scalar & 0xF)])
        default:
            utf8.withUnsafeBufferPointer { out.append(contentsOf: $0) }
        }
    }

    mutating func appendEscape(_ byte: UInt8) {
        out.append(0x5C)
        out.append(byte)
    }

    /// The length of the well-formed UTF-8 sequence at `index`, or 0 (overlong forms, surrogates and
    /// code points past U+10FFFF are ill-formed).
    func utf8SequenceLength(at index: Int) -> Int {
        let lead = input[index]
        let length: Int
        var lowerBound: UInt8 = 0x80
        var upperBound: UInt8 = 0xBF
        switch lead {
        case 0xC2...0xDF: length = 2
        case 0xE0: length = 3; lowerBound = 0xA0
        case 0xE1...0xEC, 0xEE...0xEF: length = 3
        case 0xED: length = 3; upperBound = 0x9F
        case 0xF0: length = 4; lowerBound = 0x90
        case 0xF1...0xF3: length = 4
        case 0xF4: length = 4; upperBound = 0x8F
        default: return 0
        }
        guard index + length <= input.count else { return 0 }
        let second = input[index + 1]
        guard second >= lowerBound && second <= upperBound else { return 0 }
        for offset in 2..<max(2, length) where input[index + offset] & 0xC0 != 0x80 { return 0 }
        return length
    }

    mutating func number() -> Bool {
        let start = position
        var negative = false
        if input[position] == UInt8(ascii: "-") {
            negative = true
            position += 1
        }
        let integerStart = position
        guard let first = peek(), isDigit(first) else { return false }
        if first == UInt8(ascii: "0") {
            position += 1
        } else {
            while let byte = peek(), isDigit(byte) { position += 1 }
        }
        let integerEnd = position
        var isInteger = true
        var hasExponent = false
        if peek() == UInt8(ascii: ".") {
            isInteger = false
            position += 1
            guard let byte = peek(), isDigit(byte) else { return false }
            while let byte = peek(), isDigit(byte) { position += 1 }
        }
        if let byte = peek(), byte == UInt8(ascii: "e") || byte == UInt8(ascii: "E") {
            isInteger = false
            hasExponent = true
            position += 1
            if let sign = peek(), sign == UInt8(ascii: "+") || sign == UInt8(ascii: "-") { position += 1 }
            guard let digit = peek(), isDigit(digit) else { return false }
            while let byte = peek(), isDigit(byte) { position += 1 }
        }
        if isInteger {
            let digits = UnsafeBufferPointer(rebasing: input[integerStart..<integerEnd])
            guard isSafeInteger(digits) else { return false }
            if negative && !(digits.count == 1 && digits[0] == UInt8(ascii: "0")) { out.append(UInt8(ascii: "-")) }
            out.append(contentsOf: digits)
            return true
        }
        if !hasExponent
            && appendShortDecimal(
                integer: UnsafeBufferPointer(rebasing: input[integerStart..<integerEnd]),
                fraction: UnsafeBufferPointer(rebasing: input[(integerEnd + 1)..<position]),
                negative: negative
            )
        {
            return true
        }
        let literal = UnsafeBufferPointer(rebasing: input[start..<position])
        let text = String(decoding: literal, as: UTF8.self)
        guard let value = Double(text), value.isFinite else { return false }
        var serialized = ECMAScriptNumber.serialize(value)
        // A literal more precise than its double (or one that underflows) would sign alike with
        // another literal that a decimal-exact parser reads as a different value: not I-JSON.
        let exact = serialized.withUTF8 { serializedBytes in
            ExactDecimal(literal) == ExactDecimal(serializedBytes)
        }
        guard exact else { return false }
        serialized.withUTF8 { out.append(contentsOf: $0) }
        return true
    }

    /// The fast path for a decimal without exponent of at most 15 significant digits: every such
    /// decimal is recovered exactly from its double, so its own digits are the shortest that
    /// round-trip and only the layout needs ECMAScript's rules. Returns `false` to take the slow path.
    mutating func appendShortDecimal(
        integer: UnsafeBufferPointer<UInt8>,
        fraction: UnsafeBufferPointer<UInt8>,
        negative: Bool
    ) -> Bool {
        // Most decimals are already in their ECMAScript form: no trailing zero, few enough
        // significant digits, not so small that the exponent form applies.
        if let last = fraction.last, last != UInt8(ascii: "0"), integer.count + fraction.count <= 15 {
            let integerIsZero = integer.count == 1 && integer[0] == UInt8(ascii: "0")
            if !integerIsZero || fraction.prefix(6).contains(where: { $0 != UInt8(ascii: "0") }) {
                if negative { out.append(UInt8(ascii: "-")) }
                out.append(contentsOf: integer)
                out.append(UInt8(ascii: "."))
                out.append(contentsOf: fraction)
                return true
            }
        }
        digits.count = 0
        var n: Int
        if integer.count == 1 && integer[0] == UInt8(ascii: "0") {
            var leadingZeros = 0
            while leadingZeros < fraction.count && fraction[leadingZeros] == UInt8(ascii: "0") { leadingZeros += 1 }
            n = -leadingZeros
            digits.append(contentsOf: UnsafeBufferPointer(rebasing: fraction[leadingZeros...]))
        } else {
            n = integer.count
            digits.append(contentsOf: integer)
            digits.append(contentsOf: fraction)
        }
        while digits.count > 0 && digits.base[digits.count - 1] == UInt8(ascii: "0") { digits.removeLast() }
        if digits.count == 0 {
            out.append(UInt8(ascii: "0"))
            return true
        }
        guard digits.count <= 15 && n > -6 && n <= 21 else { return false }
        ECMAScriptNumber.appendFixed(digits: digits.bytes, n: n, negative: negative, to: &out)
        return true
    }

    @inline(__always)
    func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }

    /// Whether an integer literal's digits are at most 2^53 − 1 = 9007199254740991.
    func isSafeInteger(_ digits: UnsafeBufferPointer<UInt8>) -> Bool {
        if digits.count < 16 { return true }
        if digits.count > 16 { return false }
        return !"9007199254740991".utf8.lexicographicallyPrecedes(digits)
    }
}

/// The exact decimal value of a JSON number literal: its significant digits (no leading or trailing
/// zero) and the position of the decimal point, value = ±0.digits × 10^point. Every zero is one value.
struct ExactDecimal: Equatable {
    var negative = false
    var digits: [UInt8] = []
    var point = 0

    /// Reads a literal of RFC 8259's number grammar (already checked by the parser).
    init(_ literal: UnsafeBufferPointer<UInt8>) {
        var index = 0
        if index < literal.count && literal[index] == UInt8(ascii: "-") {
            negative = true
            index += 1
        }
        var seenPoint = false
        var integerDigits = 0
        while index < literal.count {
            let byte = literal[index]
            if byte == UInt8(ascii: ".") {
                seenPoint = true
            } else if byte == UInt8(ascii: "e") || byte == UInt8(ascii: "E") {
                break
            } else {
                if !(digits.isEmpty && byte == UInt8(ascii: "0")) {
                    digits.append(byte)
                } else if seenPoint {
                    integerDigits -= 1  // a leading zero after the point moves the point
                }
                if !seenPoint && !digits.isEmpty { integerDigits += 1 }
            }
            index += 1
        }
        var exponent = 0
        if index < literal.count {
            index += 1
            var exponentNegative = false
            if literal[index] == UInt8(ascii: "+") || literal[index] == UInt8(ascii: "-") {
                exponentNegative = literal[index] == UInt8(ascii: "-")
                index += 1
            }
            while index < literal.count {
                // Saturate: any exponent this large makes the double infinite or zero anyway.
                exponent = min(exponent * 10 + Int(literal[index] - UInt8(ascii: "0")), 1 << 40)
                index += 1
            }
            if exponentNegative { exponent = -exponent }
        }
        while digits.last == UInt8(ascii: "0") { digits.removeLast() }
        if digits.isEmpty {
            negative = false
            point = 0
        } else {
            point = integerDigits + exponent
        }
    }
}

extension ECMAScriptNumber {
    /// Appends the ECMAScript form of 0.`digits` × 10^`n` when −6 < n ≤ 21 (no exponent), where
    /// `digits` has no leading or trailing zeros.
    static func appendFixed<Sink: ByteSink & ~Copyable>(
        digits: UnsafeBufferPointer<UInt8>,
        n: Int,
        negative: Bool,
        to out: inout Sink
    ) {
        if negative { out.append(UInt8(ascii: "-")) }
        let k = digits.count
        if k <= n {
            out.append(contentsOf: digits)
            out.append(repeating: UInt8(ascii: "0"), count: n - k)
        } else if n > 0 {
            out.append(contentsOf: UnsafeBufferPointer(rebasing: digits[..<n]))
            out.append(UInt8(ascii: "."))
            out.append(contentsOf: UnsafeBufferPointer(rebasing: digits[n...]))
        } else {
            out.append(UInt8(ascii: "0"))
            out.append(UInt8(ascii: "."))
            out.append(repeating: UInt8(ascii: "0"), count: -n)
            out.append(contentsOf: digits)
        }
    }
}

/// Where ``ECMAScriptNumber`` writes.
protocol ByteSink: ~Copyable {
    mutating func append(_ byte: UInt8)
    mutating func append(contentsOf bytes: UnsafeBufferPointer<UInt8>)
    mutating func append(repeating byte: UInt8, count: Int)
}

extension OutputBuffer: ByteSink {}

extension Array: ByteSink where Element == UInt8 {
    mutating func append(repeating byte: UInt8, count: Int) {
        append(contentsOf: repeatElement(byte, count: count))
    }
}

/// Number serialization of ECMAScript's `Number.prototype.toString` (ECMA-262 Number::toString),
/// which RFC 8785 section 3.2.2.3 requires.
public enum ECMAScriptNumber {
    /// Serializes a finite double; `-0` is `0`.
    public static func serialize(_ value: Double) -> String {
        if value == 0 { return "0" }
        // Swift's description gives the shortest digits that round-trip, closest to the value.
        var text = value.magnitude.description
        let shortest = text.withUTF8 { ExactDecimal($0) }
        let digits = shortest.digits
        let n = shortest.point
        var out = [UInt8]()
        if -6 < n && n <= 21 {
            digits.withUnsafeBufferPointer { appendFixed(digits: $0, n: n, negative: value < 0, to: &out) }
        } else {
            if value < 0 { out.append(UInt8(ascii: "-")) }
            out.append(digits[0])
            if digits.count > 1 {
                out.append(UInt8(ascii: "."))
                out.append(contentsOf: digits[1...])
            }
            let e = n - 1
            out += (e < 0 ? "e-" : "e+").utf8
            out += String(e.magnitude).utf8
        }
        return String(decoding: out, as: UTF8.self)
    }
}
