/// The one-pass RFC 8785 parser and writer behind ``JSONCanonicalizer``.
struct JCSParser: ~Copyable {
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
            case 0x20, 0x09, 0x0A, 0x0D: index &+= 1
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
        position &+= count
        return true
    }

    mutating func array() -> Bool {
        depth += 1
        guard depth <= JSONCanonicalizer.maximumDepth else { return false }
        position &+= 1
        out.append(UInt8(ascii: "["))
        skipWhitespace()
        if peek() == UInt8(ascii: "]") {
            position &+= 1
        } else {
            while true {
                skipWhitespace()
                guard value() else { return false }
                skipWhitespace()
                guard let next = peek() else { return false }
                position &+= 1
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
        position &+= 1
        out.append(UInt8(ascii: "{"))
        let bodyStart = out.count
        let memberBase = members.count
        let keyBase = keys.count
        skipWhitespace()
        if peek() == UInt8(ascii: "}") {
            position &+= 1
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
                position &+= 1
                out.append(UInt8(ascii: ":"))
                skipWhitespace()
                guard value() else { return false }
                members.append(
                    Member(
                        keyStart: keyStart, keyEnd: keyEnd, start: start, end: out.count,
                        prefix: Self.prefix(keys.base + keyStart, count: keyEnd - keyStart)))
                skipWhitespace()
                guard let next = peek() else { return false }
                position &+= 1
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
}
