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
    static func decode(_ input: UnsafeBufferPointer<UInt8>, table: [UInt8]) -> [UInt8]? {
        let count = input.count
        if count % 4 == 1 { return nil }
        var out = [UInt8]()
        out.reserveCapacity(count * 3 / 4)
        var accumulator: UInt32 = 0
        var bits = 0
        for byte in input {
            let value = table[Int(byte)]
            if value == 0xFF { return nil }
            accumulator = accumulator << 6 | UInt32(value)
            bits += 6
            if bits >= 8 {
                bits -= 8
                out.append(UInt8(truncatingIfNeeded: accumulator >> UInt32(bits)))
            }
        }
        // Leftover bits must be zero for a canonical encoding.
        if bits > 0 && accumulator & ((1 << UInt32(bits)) - 1) != 0 { return nil }
        return out
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
