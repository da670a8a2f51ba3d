extension JCSParser {
    mutating func number() -> Bool {
        let start = position
        var negative = false
        if input[position] == UInt8(ascii: "-") {
            negative = true
            position &+= 1
        }
        let integerStart = position
        guard let first = peek(), isDigit(first) else { return false }
        if first == UInt8(ascii: "0") {
            position &+= 1
        } else {
            while let byte = peek(), isDigit(byte) { position += 1 }
        }
        let integerEnd = position
        var isInteger = true
        var hasExponent = false
        if peek() == UInt8(ascii: ".") {
            isInteger = false
            position &+= 1
            guard let byte = peek(), isDigit(byte) else { return false }
            while let byte = peek(), isDigit(byte) { position += 1 }
        }
        if let byte = peek(), byte == UInt8(ascii: "e") || byte == UInt8(ascii: "E") {
            isInteger = false
            hasExponent = true
            position &+= 1
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
