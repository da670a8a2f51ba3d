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
        var parser = JCSParser(input: buffer)
        guard parser.document() else { return nil }
        return try body(parser.out.bytes)
    }
}
