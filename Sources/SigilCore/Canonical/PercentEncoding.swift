/// Byte-level percent-encoding helpers shared by the canonical forms.
public enum PercentEncoding {
    static let upperHex = Array("0123456789ABCDEF".utf8)

    /// Whether `byte` is an RFC 3986 unreserved character: `A-Z a-z 0-9 - . _ ~`.
    @inline(__always)
    public static func isUnreserved(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
            UInt8(ascii: "~"):
            return true
        default:
            return false
        }
    }

    /// The value of a hex digit, or `nil`.
    @inline(__always)
    static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
        default: return nil
        }
    }

    /// Appends `%XX` with uppercase hex.
    @inline(__always)
    static func appendEscaped(_ byte: UInt8, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "%"))
        out.append(upperHex[Int(byte >> 4)])
        out.append(upperHex[Int(byte & 0x0F)])
    }

    /// Decodes `%XX` triplets; a `%` that does not start a valid triplet stays a literal `%`.
    @_spi(Sigil) public static func decode(_ bytes: ArraySlice<UInt8>) -> [UInt8] {
        var out = [UInt8]()
        out.reserveCapacity(bytes.count)
        var index = bytes.startIndex
        while index < bytes.endIndex {
            let byte = bytes[index]
            if byte == UInt8(ascii: "%"), index + 2 < bytes.endIndex,
                let high = hexValue(bytes[index + 1]), let low = hexValue(bytes[index + 2])
            {
                out.append(high << 4 | low)
                index += 3
            } else {
                out.append(byte)
                index += 1
            }
        }
        return out
    }

    /// Appends `bytes`, escaping every byte outside the unreserved set as `%XX`.
    static func appendEncodingAllButUnreserved(_ bytes: [UInt8], to out: inout [UInt8]) {
        for byte in bytes {
            if isUnreserved(byte) { out.append(byte) } else { appendEscaped(byte, to: &out) }
        }
    }
}
