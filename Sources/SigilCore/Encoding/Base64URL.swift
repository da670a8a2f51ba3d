import Foundation

/// Base64url without padding (RFC 4648 section 5), the encoding of `X-Signature`.
public enum Base64URL {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
    private static let decodeTable: [UInt8] = {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (index, byte) in alphabet.enumerated() { table[Int(byte)] = UInt8(index) }
        return table
    }()

    /// Encodes bytes as base64url without padding.
    public static func encode(_ input: [UInt8]) -> String {
        var out = [UInt8]()
        out.reserveCapacity((input.count * 4 + 2) / 3)
        var index = 0
        while index + 3 <= input.count {
            let value = UInt32(input[index]) << 16 | UInt32(input[index + 1]) << 8 | UInt32(input[index + 2])
            out.append(alphabet[Int(value >> 18 & 63)])
            out.append(alphabet[Int(value >> 12 & 63)])
            out.append(alphabet[Int(value >> 6 & 63)])
            out.append(alphabet[Int(value & 63)])
            index += 3
        }
        let rest = input.count - index
        if rest == 1 {
            let value = UInt32(input[index]) << 16
            out.append(alphabet[Int(value >> 18 & 63)])
            out.append(alphabet[Int(value >> 12 & 63)])
        } else if rest == 2 {
            let value = UInt32(input[index]) << 16 | UInt32(input[index + 1]) << 8
            out.append(alphabet[Int(value >> 18 & 63)])
            out.append(alphabet[Int(value >> 12 & 63)])
            out.append(alphabet[Int(value >> 6 & 63)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Decodes strict base64url without padding.
    ///
    /// Returns `nil` for any other form: padding, the standard alphabet, whitespace, a length that
    /// cannot occur, or non-zero bits after the last byte (so every byte string has one encoding).
    public static func decode(_ text: String) -> [UInt8]? {
        var utf8 = Array(text.utf8)
        return utf8.withUnsafeMutableBufferPointer { decode(UnsafeBufferPointer($0)) }
    }

    /// Decodes strict base64url without padding from raw bytes; see ``decode(_:)-swift.type.method``.
    public static func decode(_ input: UnsafeBufferPointer<UInt8>) -> [UInt8]? {
        Base64Decoder.decode(input, table: decodeTable)
    }
}

/// Standard base64 (RFC 4648 section 4) with padding, as Structured Field byte sequences carry it.
@_spi(Sigil) public enum Base64 {
    private static let decodeTable: [UInt8] = {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (index, byte) in "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8.enumerated() {
            table[Int(byte)] = UInt8(index)
        }
        return table
    }()

    /// Encodes bytes as standard base64 with padding.
    @_spi(Sigil) public static func encode(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString()
    }

    /// Decodes standard base64; padding is optional but, when present, must be complete.
    ///
    /// Returns `nil` for any other character, an impossible length, or non-zero bits after the last byte.
    @_spi(Sigil) public static func decode(_ text: String) -> [UInt8]? {
        var utf8 = Array(text.utf8)
        return utf8.withUnsafeMutableBufferPointer { buffer in
            var count = buffer.count
            if count % 4 == 0 && count >= 4 {
                if buffer[count - 1] == UInt8(ascii: "=") { count -= 1 }
                if buffer[count - 1] == UInt8(ascii: "=") { count -= 1 }
            }
            return Base64Decoder.decode(UnsafeBufferPointer(rebasing: buffer[..<count]), table: decodeTable)
        }
    }
}

/// The shared decoding loop of ``Base64URL`` and ``Base64`` (unpadded input).
enum Base64Decoder {
    /// The bytes of `input`, or `nil` for a character outside `table` (0xFF there), a length that
    /// cannot occur, or non-zero bits after the last byte. Four characters at a time: a signature
    /// of ML-DSA-87 is 6,000 of them.
    static func decode(_ input: UnsafeBufferPointer<UInt8>, table: [UInt8]) -> [UInt8]? {
        let count = input.count
        let rest = count % 4
        if rest == 1 { return nil }
        let blocks = count / 4
        let outputCount = blocks * 3 + (rest == 0 ? 0 : rest - 1)
        return table.withUnsafeBufferPointer { table -> [UInt8]? in
            // Every value in the table is below 64, and 0xFF marks a character outside the alphabet:
            // the OR of all the values read has its high bit set when one was outside.
            var seen: UInt8 = 0
            let out = [UInt8](unsafeUninitializedCapacity: outputCount) { buffer, initialized in
                var source = 0
                var target = 0
                for _ in 0..<blocks {
                    let a = table[Int(input[source])]
                    let b = table[Int(input[source + 1])]
                    let c = table[Int(input[source + 2])]
                    let d = table[Int(input[source + 3])]
                    seen |= a | b | c | d
                    let value = UInt32(a) << 18 | UInt32(b) << 12 | UInt32(c) << 6 | UInt32(d)
                    buffer[target] = UInt8(truncatingIfNeeded: value >> 16)
                    buffer[target + 1] = UInt8(truncatingIfNeeded: value >> 8)
                    buffer[target + 2] = UInt8(truncatingIfNeeded: value)
                    source += 4
                    target += 3
                }
                if rest > 0 {
                    let a = table[Int(input[source])]
                    let b = table[Int(input[source + 1])]
                    let c = rest == 3 ? table[Int(input[source + 2])] : 0
                    seen |= a | b | c
                    let value = UInt32(a) << 18 | UInt32(b) << 12 | UInt32(c) << 6
                    buffer[target] = UInt8(truncatingIfNeeded: value >> 16)
                    if rest == 3 { buffer[target + 1] = UInt8(truncatingIfNeeded: value >> 8) }
                    // The bits after the last byte (4 of two characters, 2 of three) must be zero,
                    // so that every byte string has one encoding.
                    if (rest == 2 ? b & 0x0F : c & 0x03) != 0 { seen |= 0x80 }
                }
                initialized = outputCount
            }
            return seen & 0x80 == 0 ? out : nil
        }
    }
}

/// Lowercase hexadecimal.
@_spi(Sigil) public enum Hex {
    private static let digits = Array("0123456789abcdef".utf8)

    /// The lowercase hex of `count` bytes from the system's CSPRNG, for identifiers.
    @_spi(Sigil) public static func random(bytes count: Int) -> String {
        var generator = SystemRandomNumberGenerator()
        return encode((0..<count).map { _ in UInt8.random(in: .min ... .max, using: &generator) })
    }

    /// Encodes bytes as lowercase hex.
    @_spi(Sigil) public static func encode(_ bytes: [UInt8]) -> String {
        var out = [UInt8]()
        for byte in bytes {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The lowercase hex of `raw` (a digest's bytes) as UTF-8.
    @_spi(Sigil) public static func bytes(_ raw: UnsafeRawBufferPointer) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: raw.count * 2) { out, count in
            for (index, byte) in raw.enumerated() {
                out[2 * index] = digit(byte >> 4)
                out[2 * index + 1] = digit(byte & 0x0F)
            }
            count = raw.count * 2
        }
    }

    private static func digit(_ nibble: UInt8) -> UInt8 {
        nibble < 10 ? UInt8(ascii: "0") + nibble : UInt8(ascii: "a") - 10 + nibble
    }
}
