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
