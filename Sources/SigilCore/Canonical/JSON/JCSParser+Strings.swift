extension JCSParser {
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
            index &+= 1
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
                position &+= 1
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
                position &+= length
                continue
            }
            // A backslash escape.
            guard position + 1 < input.count else { return false }
            let escape = input[position + 1]
            position &+= 2
            // The escapes JCS writes as they came (an echoed body is full of `\"`): copied as a pair.
            if !isKey, Self.isKeptEscape(escape) {
                out.append(UInt8(ascii: "\\"))
                out.append(escape)
                continue
            }
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
                    position &+= 2
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

    /// Whether JCS writes the escape `\` `byte` unchanged: `\"`, `\\`, `\b`, `\f`, `\n`, `\r` and `\t`
    /// (RFC 8785 section 3.2.2.2). `\/` and `\u` escapes are rewritten.
    @inline(__always)
    static func isKeptEscape(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "b"), UInt8(ascii: "f"), UInt8(ascii: "n"),
            UInt8(ascii: "r"), UInt8(ascii: "t"):
            return true
        default: return false
        }
    }

    mutating func hex4() -> UInt16? {
        guard input.count - position >= 4 else { return nil }
        var value: UInt16 = 0
        for offset in 0..<4 {
            guard let digit = PercentEncoding.hexValue(input[position + offset]) else { return nil }
            value = value << 4 | UInt16(digit)
        }
        position &+= 4
        return value
    }

    /// Writes a decoded character in its JCS form (RFC 8785 section 3.2.2.2), without allocating: an
    /// echoed body is full of escapes.
    mutating func writeScalar(_ scalar: UInt32, isKey: Bool) {
        guard scalar >= 0x80 else {
            let byte = UInt8(truncatingIfNeeded: scalar)
            if isKey { keys.append(byte) }
            switch byte {
            case 0x22, 0x5C: appendEscape(byte)
            case 0x08: appendEscape(UInt8(ascii: "b"))
            case 0x09: appendEscape(UInt8(ascii: "t"))
            case 0x0A: appendEscape(UInt8(ascii: "n"))
            case 0x0C: appendEscape(UInt8(ascii: "f"))
            case 0x0D: appendEscape(UInt8(ascii: "r"))
            case 0..<0x20:
                appendEscape(UInt8(ascii: "u"))
                out.append(0x30)
                out.append(0x30)
                out.append(Self.hexDigit(byte >> 4))
                out.append(Self.hexDigit(byte & 0xF))
            default:
                out.append(byte)
            }
            return
        }
        // UTF-8, written as it is (JCS escapes nothing above U+001F but `"` and `\`).
        var encoded: UInt32 = 0
        let count: Int
        if scalar < 0x800 {
            encoded = (0xC0 | scalar >> 6) | (0x80 | scalar & 0x3F) << 8
            count = 2
        } else if scalar < 0x10000 {
            encoded = (0xE0 | scalar >> 12) | (0x80 | scalar >> 6 & 0x3F) << 8 | (0x80 | scalar & 0x3F) << 16
            count = 3
        } else {
            encoded =
                (0xF0 | scalar >> 18) | (0x80 | scalar >> 12 & 0x3F) << 8 | (0x80 | scalar >> 6 & 0x3F) << 16
                | (0x80 | scalar & 0x3F) << 24
            count = 4
        }
        encoded = encoded.littleEndian
        withUnsafeBytes(of: &encoded) { raw in
            let bytes = UnsafeBufferPointer(rebasing: raw.bindMemory(to: UInt8.self)[..<count])
            out.append(contentsOf: bytes)
            if isKey { keys.append(contentsOf: bytes) }
        }
    }

    /// The lowercase hexadecimal digit of `value` (0 to 15).
    @inline(__always)
    static func hexDigit(_ value: UInt8) -> UInt8 { value < 10 ? 0x30 + value : 0x57 + value }

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
}
