/// The sigil-v1 canonical request target (PROTOCOL.md sections 2.3 and 2.4).
public enum CanonicalTarget {
    /// The canonical target of a request-target as on the wire: canonical path, then `?` and the
    /// canonical query when that is not empty. A fragment is dropped.
    public static func canonicalize(_ requestTarget: some StringProtocol) -> String {
        String(decoding: canonicalBytes(Array(requestTarget.utf8)), as: UTF8.self)
    }

    /// The canonical target as bytes.
    public static func canonicalBytes(_ target: [UInt8]) -> [UInt8] {
        var end = target.endIndex
        if let hash = target.firstIndex(of: UInt8(ascii: "#")) { end = hash }
        let pathEnd = target[..<end].firstIndex(of: UInt8(ascii: "?")) ?? end
        var out = canonicalPath(target[..<pathEnd])
        if pathEnd < end {
            let query = canonicalQuery(target[(pathEnd + 1)..<end])
            if !query.isEmpty {
                out.append(UInt8(ascii: "?"))
                out += query
            }
        }
        return out
    }

    /// Whether `path` is its own canonical path (section 2.3), the hex case of percent-triplets aside:
    /// no letter to lowercase, no unreserved character encoded, no dot segment, no trailing `/`.
    /// A server that routes on the raw path can require it of sigil-v1 requests, whose signature does
    /// not tell `/users/Q9` from `/users/q9`.
    public static func isCanonicalPath(_ path: ArraySlice<UInt8>) -> Bool {
        var raw = Array(path)
        var index = 0
        while index + 2 < raw.count {
            if raw[index] == UInt8(ascii: "%"), PercentEncoding.hexValue(raw[index + 1]) != nil,
                PercentEncoding.hexValue(raw[index + 2]) != nil
            {
                for offset in 1...2 where (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(raw[index + offset]) {
                    raw[index + offset] -= 0x20
                }
                index += 3
            } else {
                index += 1
            }
        }
        return raw == canonicalPath(path)
    }

    /// The canonical path of section 2.3.
    public static func canonicalPath(_ path: ArraySlice<UInt8>) -> [UInt8] {
        // Steps 2 and 3: normalize percent-encoding and lowercase letters outside triplets.
        var normalized = [UInt8]()
        normalized.reserveCapacity(path.count + 1)
        var index = path.startIndex
        while index < path.endIndex {
            let byte = path[index]
            if byte == UInt8(ascii: "%"), index + 2 < path.endIndex,
                let high = PercentEncoding.hexValue(path[index + 1]),
                let low = PercentEncoding.hexValue(path[index + 2])
            {
                let decoded = high << 4 | low
                if PercentEncoding.isUnreserved(decoded) {
                    normalized.append(lowercased(decoded))
                } else {
                    PercentEncoding.appendEscaped(decoded, to: &normalized)
                }
                index += 3
                continue
            }
            if PercentEncoding.isUnreserved(byte) || isPathDelimiter(byte) {
                normalized.append(lowercased(byte))
            } else {
                PercentEncoding.appendEscaped(byte, to: &normalized)
            }
            index += 1
        }
        // Step 4: dot segments; the result starts with "/".
        var out = removeDotSegments(normalized)
        if out.first != UInt8(ascii: "/") { out.insert(UInt8(ascii: "/"), at: 0) }
        // Step 5: one trailing slash.
        if out.count > 1 && out.last == UInt8(ascii: "/") { out.removeLast() }
        return out
    }

    @inline(__always)
    static func lowercased(_ byte: UInt8) -> UInt8 {
        (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) ? byte | 0x20 : byte
    }

    /// Sub-delims, `:`, `@` and `/`, which stay as they are in a path.
    @inline(__always)
    static func isPathDelimiter(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "!"), UInt8(ascii: "$"), UInt8(ascii: "&"), UInt8(ascii: "'"), UInt8(ascii: "("),
            UInt8(ascii: ")"), UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: ","), UInt8(ascii: ";"),
            UInt8(ascii: "="), UInt8(ascii: ":"), UInt8(ascii: "@"), UInt8(ascii: "/"):
            return true
        default:
            return false
        }
    }

    /// RFC 3986 section 5.2.4, in linear time.
    static func removeDotSegments(_ input: [UInt8]) -> [UInt8] {
        let slash = UInt8(ascii: "/")
        let dot = UInt8(ascii: ".")
        var out = [UInt8]()
        out.reserveCapacity(input.count)
        var index = 0
        let count = input.count
        func at(_ offset: Int) -> UInt8? { index + offset < count ? input[index + offset] : nil }
        func removeLastSegment() {
            if let lastSlash = out.lastIndex(of: slash) { out.removeSubrange(lastSlash...) } else { out.removeAll() }
        }
        while index < count {
            if at(0) == dot && at(1) == dot && at(2) == slash {  // A: "../"
                index += 3
            } else if at(0) == dot && at(1) == slash {  // A: "./"
                index += 2
            } else if at(0) == slash && at(1) == dot && at(2) == slash {  // B: "/./" -> "/"
                index += 2
            } else if at(0) == slash && at(1) == dot && index + 2 == count {  // B: "/." -> "/"
                out.append(slash)
                index = count
            } else if at(0) == slash && at(1) == dot && at(2) == dot && at(3) == slash {  // C: "/../" -> "/"
                removeLastSegment()
                index += 3
            } else if at(0) == slash && at(1) == dot && at(2) == dot && index + 3 == count {  // C: "/.." -> "/"
                removeLastSegment()
                out.append(slash)
                index = count
            } else if (at(0) == dot && index + 1 == count) || (at(0) == dot && at(1) == dot && index + 2 == count) {
                index = count  // D
            } else {  // E: move the first segment, with its leading "/", to the output.
                var end = index
                if input[end] == slash { end += 1 }
                while end < count && input[end] != slash { end += 1 }
                out += input[index..<end]
                index = end
            }
        }
        return out
    }

    /// Whether a raw query (without `?`) reads the same to a router as its canonical form (section
    /// 2.4) says: every piece is `name=value`, none is empty, no name occurs twice, and there is no
    /// literal `+`. The canonical query sorts pairs and reads `+` as itself, so `a=1&a=2` and
    /// `a=2&a=1`, or `q=a+b` and `q=a%2Bb`, carry one signature while a router that takes the first
    /// value, or reads `+` as a space, sees two requests. A server that routes on the raw query can
    /// require this of sigil-v1 requests.
    public static func isUnambiguousQuery(_ query: ArraySlice<UInt8>) -> Bool {
        if query.isEmpty { return true }
        var names = Set<[UInt8]>()
        for piece in query.split(separator: UInt8(ascii: "&"), omittingEmptySubsequences: false) {
            guard let equals = piece.firstIndex(of: UInt8(ascii: "=")), !piece.contains(UInt8(ascii: "+")) else {
                return false
            }
            guard names.insert(PercentEncoding.decode(piece[..<equals])).inserted else { return false }
        }
        return true
    }

    /// The canonical query of section 2.4 (without the leading `?`).
    public static func canonicalQuery(_ query: ArraySlice<UInt8>) -> [UInt8] {
        var pairs: [(name: [UInt8], value: [UInt8])] = []
        for piece in query.split(separator: UInt8(ascii: "&"), omittingEmptySubsequences: true) {
            let name: ArraySlice<UInt8>
            let value: ArraySlice<UInt8>
            if let equals = piece.firstIndex(of: UInt8(ascii: "=")) {
                name = piece[..<equals]
                value = piece[(equals + 1)...]
            } else {
                name = piece
                value = []
            }
            var encodedName = [UInt8]()
            var encodedValue = [UInt8]()
            PercentEncoding.appendEncodingAllButUnreserved(PercentEncoding.decode(name), to: &encodedName)
            PercentEncoding.appendEncodingAllButUnreserved(PercentEncoding.decode(value), to: &encodedValue)
            pairs.append((encodedName, encodedValue))
        }
        pairs.sort { lhs, rhs in
            if lhs.name != rhs.name { return lhs.name.lexicographicallyPrecedes(rhs.name) }
            return lhs.value.lexicographicallyPrecedes(rhs.value)
        }
        var out = [UInt8]()
        for (offset, pair) in pairs.enumerated() {
            if offset > 0 { out.append(UInt8(ascii: "&")) }
            out += pair.name
            out.append(UInt8(ascii: "="))
            out += pair.value
        }
        return out
    }
}
