import RawStructuredFieldValues

/// RFC 9651 Structured Field Values, parsed and serialized by concrete, non-generic code over bytes.
///
/// swift-http-structured-headers' parser and serializer are generic over the input collection and
/// not `@inlinable`, so a program that links them without cross-module optimization runs them
/// unspecialized: about 20 µs for one `Signature-Input`, on every request. These do the same in a
/// small fraction of that, produce the library's value types (``RFC9651BareItem``), and are checked
/// against the library by a differential test on generated input.
enum StructuredFields {
    /// Parameters in order; a repeated key keeps its first position and takes the last value.
    typealias Parameters = [(String, RFC9651BareItem)]

    /// An item with its parameters.
    struct Item {
        var bareItem: RFC9651BareItem
        var parameters: Parameters
    }

    /// A member of a list or dictionary.
    enum Member {
        case item(Item)
        case innerList([Item], Parameters)
    }

    /// Dictionary members in order; a repeated key keeps its first position and takes the last value.
    typealias Dictionary = [(String, Member)]

    /// Parses a dictionary field value.
    static func parseDictionary(_ bytes: [UInt8]) throws(StructuredFieldError) -> Dictionary {
        try bytes.withUnsafeBufferPointer { (buffer) throws(StructuredFieldError) in
            var parser = Parser(input: buffer)
            return try parser.field { (parser) throws(StructuredFieldError) in try parser.dictionary() }
        }
    }

    /// Parses a list field value.
    static func parseList(_ bytes: [UInt8]) throws(StructuredFieldError) -> [Member] {
        try bytes.withUnsafeBufferPointer { (buffer) throws(StructuredFieldError) in
            var parser = Parser(input: buffer)
            return try parser.field { (parser) throws(StructuredFieldError) in try parser.list() }
        }
    }

    /// Parses an item field value.
    static func parseItem(_ bytes: [UInt8]) throws(StructuredFieldError) -> Item {
        try bytes.withUnsafeBufferPointer { (buffer) throws(StructuredFieldError) in
            var parser = Parser(input: buffer)
            return try parser.field { (parser) throws(StructuredFieldError) in try parser.item() }
        }
    }

    /// The value of `key` in ordered pairs: the position of the first, the value of the last.
    static func set<Value>(_ key: String, _ value: Value, in pairs: inout [(String, Value)]) {
        if let index = pairs.firstIndex(where: { $0.0 == key }) {
            pairs[index].1 = value
        } else {
            pairs.append((key, value))
        }
    }
}

/// Input that is not a valid Structured Field, or a value that cannot be serialized as one.
struct StructuredFieldError: Error {}

extension StructuredFields {
    struct Parser {
        let input: UnsafeBufferPointer<UInt8>
        var position = 0

        init(input: UnsafeBufferPointer<UInt8>) { self.input = input }

        var isAtEnd: Bool { position >= input.count }

        @inline(__always)
        func peek() -> UInt8? { position < input.count ? input[position] : nil }

        mutating func skipSpaces() {
            while position < input.count && input[position] == 0x20 { position += 1 }
        }

        mutating func skipOptionalWhitespace() {
            while position < input.count && (input[position] == 0x20 || input[position] == 0x09) { position += 1 }
        }

        /// RFC 9651 section 4.2: leading and trailing spaces, nothing else left over.
        mutating func field<Result>(_ parse: (inout Parser) throws(StructuredFieldError) -> Result)
            throws(StructuredFieldError) -> Result
        {
            skipSpaces()
            let result = try parse(&self)
            skipSpaces()
            guard isAtEnd else { throw StructuredFieldError() }
            return result
        }

        /// After a list or dictionary member: `true` at the end of the field, else past a comma and
        /// the whitespace around it (a trailing comma fails).
        mutating func atEndAfterMember() throws(StructuredFieldError) -> Bool {
            skipOptionalWhitespace()
            if isAtEnd { return true }
            guard input[position] == UInt8(ascii: ",") else { throw StructuredFieldError() }
            position += 1
            skipOptionalWhitespace()
            if isAtEnd { throw StructuredFieldError() }  // a trailing comma
            return false
        }

        /// Section 4.2.1.
        mutating func list() throws(StructuredFieldError) -> [Member] {
            var members: [Member] = []
            while !isAtEnd {
                members.append(try itemOrInnerList())
                if try atEndAfterMember() { return members }
            }
            return members
        }

        /// Section 4.2.2.
        mutating func dictionary() throws(StructuredFieldError) -> Dictionary {
            var members: Dictionary = []
            while !isAtEnd {
                let key = try self.key()
                let member: Member
                if peek() == UInt8(ascii: "=") {
                    position += 1
                    member = try itemOrInnerList()
                } else {
                    member = .item(Item(bareItem: .bool(true), parameters: try parameters()))
                }
                StructuredFields.set(key, member, in: &members)
                if try atEndAfterMember() { return members }
            }
            return members
        }

        /// Section 4.2.1.1.
        mutating func itemOrInnerList() throws(StructuredFieldError) -> Member {
            if peek() == UInt8(ascii: "(") { return try innerList() }
            return .item(try item())
        }

        /// Section 4.2.1.2.
        mutating func innerList() throws(StructuredFieldError) -> Member {
            position += 1  // "("
            var items: [Item] = []
            while !isAtEnd {
                skipSpaces()
                if peek() == UInt8(ascii: ")") {
                    position += 1
                    return .innerList(items, try parameters())
                }
                items.append(try item())
                guard let next = peek(), next == 0x20 || next == UInt8(ascii: ")") else {
                    throw StructuredFieldError()
                }
            }
            throw StructuredFieldError()  // no closing parenthesis
        }

        /// Section 4.2.3.
        mutating func item() throws(StructuredFieldError) -> Item {
            let bare = try bareItem()
            return Item(bareItem: bare, parameters: try parameters())
        }

        /// Section 4.2.3.1.
        mutating func bareItem() throws(StructuredFieldError) -> RFC9651BareItem {
            guard let first = peek() else { throw StructuredFieldError() }
            switch first {
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try integerOrDecimal(isDate: false)
            case UInt8(ascii: "\""): return .string(try string())
            case UInt8(ascii: "*"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"):
                return .token(token())
            case UInt8(ascii: ":"): return .undecodedByteSequence(try byteSequence())
            case UInt8(ascii: "?"): return .bool(try boolean())
            case UInt8(ascii: "@"):
                position += 1
                return try integerOrDecimal(isDate: true)
            case UInt8(ascii: "%"): return .displayString(try displayString())
            default: throw StructuredFieldError()
            }
        }

        /// Section 4.2.3.2.
        mutating func parameters() throws(StructuredFieldError) -> Parameters {
            var parameters: Parameters = []
            while peek() == UInt8(ascii: ";") {
                position += 1
                skipSpaces()
                let key = try self.key()
                var value = RFC9651BareItem.bool(true)
                if peek() == UInt8(ascii: "=") {
                    position += 1
                    value = try bareItem()
                }
                StructuredFields.set(key, value, in: &parameters)
            }
            return parameters
        }

        /// Section 4.2.3.3.
        mutating func key() throws(StructuredFieldError) -> String {
            guard let first = peek(), StructuredFields.isLowercaseAlpha(first) || first == UInt8(ascii: "*") else {
                throw StructuredFieldError()
            }
            let start = position
            while let byte = peek(), StructuredFields.isKeyCharacter(byte) { position += 1 }
            return String(decoding: UnsafeBufferPointer(rebasing: input[start..<position]), as: UTF8.self)
        }

        /// Section 4.2.4 (and 4.2.9 for dates).
        mutating func integerOrDecimal(isDate: Bool) throws(StructuredFieldError) -> RFC9651BareItem {
            var negative = false
            if peek() == UInt8(ascii: "-") {
                negative = true
                position += 1
            }
            guard let first = peek(), StructuredFields.isDigit(first) else { throw StructuredFieldError() }
            let start = position
            var periodAt: Int?
            while let byte = peek() {
                if StructuredFields.isDigit(byte) {
                    position += 1
                } else if byte == UInt8(ascii: "."), periodAt == nil {
                    if isDate || position - start > 12 { throw StructuredFieldError() }
                    periodAt = position
                    position += 1
                } else {
                    break
                }
                let length = position - start
                if periodAt == nil ? length > 15 : length > 16 { throw StructuredFieldError() }
            }
            guard let periodAt else {
                var value: Int64 = 0
                for index in start..<position { value = value * 10 + Int64(input[index] - UInt8(ascii: "0")) }
                if negative { value = -value }
                return isDate ? .date(value) : .integer(value)
            }
            let fractionDigits = position - periodAt - 1
            guard fractionDigits >= 1 && fractionDigits <= 3 else { throw StructuredFieldError() }
            var mantissa = 0
            for index in start..<position where index != periodAt {
                mantissa = mantissa * 10 + Int(input[index] - UInt8(ascii: "0"))
            }
            return .decimal(PseudoDecimal(mantissa: negative ? -mantissa : mantissa, exponent: -fractionDigits))
        }

        /// Section 4.2.5.
        mutating func string() throws(StructuredFieldError) -> String {
            position += 1  // opening quote
            var bytes: [UInt8] = []
            let runStart = position
            // The common case, a string with no escape, is copied in one piece.
            while let byte = peek(), byte != UInt8(ascii: "\\"), byte != UInt8(ascii: "\"") {
                guard byte >= 0x20 && byte < 0x7F else { throw StructuredFieldError() }
                position += 1
            }
            if peek() == UInt8(ascii: "\"") {
                position += 1
                return String(decoding: UnsafeBufferPointer(rebasing: input[runStart..<(position - 1)]), as: UTF8.self)
            }
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: input[runStart..<position]))
            while let byte = peek() {
                position += 1
                if byte == UInt8(ascii: "\\") {
                    guard let escaped = peek(), escaped == UInt8(ascii: "\"") || escaped == UInt8(ascii: "\\") else {
                        throw StructuredFieldError()
                    }
                    position += 1
                    bytes.append(escaped)
                } else if byte == UInt8(ascii: "\"") {
                    return String(decoding: bytes, as: UTF8.self)
                } else {
                    guard byte >= 0x20 && byte < 0x7F else { throw StructuredFieldError() }
                    bytes.append(byte)
                }
            }
            throw StructuredFieldError()  // no closing quote
        }

        /// Section 4.2.6.
        mutating func token() -> String {
            let start = position
            position += 1  // ALPHA or "*", checked by the caller
            while let byte = peek(), StructuredFields.isTokenCharacter(byte) { position += 1 }
            return String(decoding: UnsafeBufferPointer(rebasing: input[start..<position]), as: UTF8.self)
        }

        /// Section 4.2.7: the base64 text, undecoded.
        mutating func byteSequence() throws(StructuredFieldError) -> String {
            let start = position + 1  // after ":"
            var end = start
            while end < input.count && input[end] != UInt8(ascii: ":") {
                guard StructuredFields.isBase64Character(input[end]) else { throw StructuredFieldError() }
                end += 1
            }
            guard end < input.count else { throw StructuredFieldError() }  // no closing ":"
            position = end + 1
            return String(decoding: UnsafeBufferPointer(rebasing: input[start..<end]), as: UTF8.self)
        }

        /// Section 4.2.8.
        mutating func boolean() throws(StructuredFieldError) -> Bool {
            position += 1  // "?"
            guard let byte = peek() else { throw StructuredFieldError() }
            position += 1
            switch byte {
            case UInt8(ascii: "1"): return true
            case UInt8(ascii: "0"): return false
            default: throw StructuredFieldError()
            }
        }

        /// Section 4.2.10.
        mutating func displayString() throws(StructuredFieldError) -> String {
            position += 1  // "%"
            guard peek() == UInt8(ascii: "\"") else { throw StructuredFieldError() }
            position += 1
            var bytes: [UInt8] = []
            while let byte = peek() {
                position += 1
                guard byte >= 0x20 && byte < 0x7F else { throw StructuredFieldError() }
                if byte == UInt8(ascii: "%") {
                    guard position + 2 <= input.count, let high = StructuredFields.lowercaseHex(input[position]),
                        let low = StructuredFields.lowercaseHex(input[position + 1])
                    else { throw StructuredFieldError() }
                    position += 2
                    bytes.append(high << 4 | low)
                } else if byte == UInt8(ascii: "\"") {
                    guard let text = String(validating: bytes, as: UTF8.self) else { throw StructuredFieldError() }
                    return text
                } else {
                    bytes.append(byte)
                }
            }
            throw StructuredFieldError()  // no closing quote
        }
    }

    // MARK: Character classes

    @inline(__always)
    static func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }

    @inline(__always)
    static func isLowercaseAlpha(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z") }

    @inline(__always)
    static func isAlpha(_ byte: UInt8) -> Bool { isLowercaseAlpha(byte | 0x20) }

    /// lcalpha / DIGIT / "_" / "-" / "." / "*".
    static func isKeyCharacter(_ byte: UInt8) -> Bool {
        isLowercaseAlpha(byte) || isDigit(byte) || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "-")
            || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "*")
    }

    /// tchar (RFC 9110) / ":" / "/".
    static func isTokenCharacter(_ byte: UInt8) -> Bool {
        if isAlpha(byte) || isDigit(byte) { return true }
        switch byte {
        case UInt8(ascii: "!"), UInt8(ascii: "#"), UInt8(ascii: "$"), UInt8(ascii: "%"), UInt8(ascii: "&"),
            UInt8(ascii: "'"), UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "."),
            UInt8(ascii: "^"), UInt8(ascii: "_"), UInt8(ascii: "`"), UInt8(ascii: "|"), UInt8(ascii: "~"),
            UInt8(ascii: ":"), UInt8(ascii: "/"):
            return true
        default:
            return false
        }
    }

    static func isBase64Character(_ byte: UInt8) -> Bool {
        isAlpha(byte) || isDigit(byte) || byte == UInt8(ascii: "+") || byte == UInt8(ascii: "/")
            || byte == UInt8(ascii: "=")
    }

    static func lowercaseHex(_ byte: UInt8) -> UInt8? {
        if isDigit(byte) { return byte - UInt8(ascii: "0") }
        if byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "f") { return byte - UInt8(ascii: "a") + 10 }
        return nil
    }
}

// MARK: Serializing (RFC 9651 section 4.1)

extension StructuredFields {
    /// Writes structured values to bytes.
    struct Serializer {
        var bytes: [UInt8] = []

        init(capacity: Int = 128) { bytes.reserveCapacity(capacity) }

        /// Section 4.1.2.
        mutating func dictionary(_ members: Dictionary) throws(StructuredFieldError) {
            for (index, (key, member)) in members.enumerated() {
                if index > 0 { bytes += [UInt8(ascii: ","), 0x20] }
                try self.key(key)
                if case .item(let item) = member, case .bool(true) = item.bareItem {
                    try parameters(item.parameters)
                } else {
                    bytes.append(UInt8(ascii: "="))
                    try self.member(member)
                }
            }
        }

        /// Section 4.1.1.
        mutating func list(_ members: [Member]) throws(StructuredFieldError) {
            for (index, member) in members.enumerated() {
                if index > 0 { bytes += [UInt8(ascii: ","), 0x20] }
                try self.member(member)
            }
        }

        mutating func member(_ member: Member) throws(StructuredFieldError) {
            switch member {
            case .item(let item): try self.item(item)
            case .innerList(let items, let parameters): try innerList(items, parameters: parameters)
            }
        }

        /// Section 4.1.1.1.
        mutating func innerList(_ items: [Item], parameters: Parameters) throws(StructuredFieldError) {
            bytes.append(UInt8(ascii: "("))
            for (index, item) in items.enumerated() {
                if index > 0 { bytes.append(0x20) }
                try self.item(item)
            }
            bytes.append(UInt8(ascii: ")"))
            try self.parameters(parameters)
        }

        /// Section 4.1.3.
        mutating func item(_ item: Item) throws(StructuredFieldError) {
            try bareItem(item.bareItem)
            try parameters(item.parameters)
        }

        /// Section 4.1.1.2.
        mutating func parameters(_ parameters: Parameters) throws(StructuredFieldError) {
            for (key, value) in parameters {
                bytes.append(UInt8(ascii: ";"))
                try self.key(key)
                if case .bool(true) = value { continue }
                bytes.append(UInt8(ascii: "="))
                try bareItem(value)
            }
        }

        /// Section 4.1.1.3.
        mutating func key(_ key: String) throws(StructuredFieldError) {
            let utf8 = key.utf8
            guard let first = utf8.first, isLowercaseAlpha(first) || first == UInt8(ascii: "*"),
                utf8.allSatisfy(isKeyCharacter)
            else { throw StructuredFieldError() }
            bytes += utf8
        }

        /// Section 4.1.3.1.
        mutating func bareItem(_ item: RFC9651BareItem) throws(StructuredFieldError) {
            switch item {
            case .integer(let value):
                try integer(value)
            case .decimal(let value):
                bytes += String(value).utf8
            case .string(let text):
                bytes.append(UInt8(ascii: "\""))
                for byte in text.utf8 {
                    guard byte >= 0x20 && byte < 0x7F else { throw StructuredFieldError() }
                    if byte == UInt8(ascii: "\\") || byte == UInt8(ascii: "\"") { bytes.append(UInt8(ascii: "\\")) }
                    bytes.append(byte)
                }
                bytes.append(UInt8(ascii: "\""))
            case .token(let token):
                let utf8 = token.utf8
                guard let first = utf8.first, isAlpha(first) || first == UInt8(ascii: "*"),
                    utf8.allSatisfy(isTokenCharacter)
                else { throw StructuredFieldError() }
                bytes += utf8
            case .undecodedByteSequence(let base64):
                bytes.append(UInt8(ascii: ":"))
                bytes += base64.utf8
                bytes.append(UInt8(ascii: ":"))
            case .bool(let value):
                bytes += [UInt8(ascii: "?"), value ? UInt8(ascii: "1") : UInt8(ascii: "0")]
            case .date(let value):
                bytes.append(UInt8(ascii: "@"))
                try integer(value)
            case .displayString(let text):
                bytes += [UInt8(ascii: "%"), UInt8(ascii: "\"")]
                let hex = Array("0123456789abcdef".utf8)
                for byte in text.utf8 {
                    if byte == UInt8(ascii: "%") || byte == UInt8(ascii: "\"") || byte < 0x20 || byte >= 0x7F {
                        bytes += [UInt8(ascii: "%"), hex[Int(byte >> 4)], hex[Int(byte & 0xF)]]
                    } else {
                        bytes.append(byte)
                    }
                }
                bytes.append(UInt8(ascii: "\""))
            }
        }

        mutating func integer(_ value: Int64) throws(StructuredFieldError) {
            guard value >= -999_999_999_999_999 && value <= 999_999_999_999_999 else { throw StructuredFieldError() }
            bytes += String(value).utf8
        }
    }
}
