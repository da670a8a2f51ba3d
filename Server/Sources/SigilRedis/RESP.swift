import NIOCore

/// A reply in the Redis serialization protocol, version 2 (RESP2): all Sigil's commands need.
public enum RESPValue: Sendable, Equatable {
    case simpleString(String)
    case error(String)
    case integer(Int64)
    /// A bulk string; `nil` is the null bulk string (`$-1`), the reply of `SET … NX` that did not set.
    case bulkString([UInt8]?)
    /// An array; `nil` is the null array (`*-1`).
    case array([RESPValue]?)
}

/// Encodes commands: an array of bulk strings.
enum RESPEncoder {
    static func encode(_ arguments: [String], into buffer: inout ByteBuffer) {
        buffer.writeStaticString("*")
        buffer.writeString(String(arguments.count))
        buffer.writeStaticString("\r\n")
        for argument in arguments {
            buffer.writeStaticString("$")
            buffer.writeString(String(argument.utf8.count))
            buffer.writeStaticString("\r\n")
            buffer.writeString(argument)
            buffer.writeStaticString("\r\n")
        }
    }
}

/// A reply that is not RESP2, or larger than a Sigil reply can be: the connection is closed.
struct RESPProtocolError: Error {}

/// Decodes replies as they arrive, however the bytes are split.
struct RESPDecoder: ByteToMessageDecoder {
    typealias InboundOut = RESPValue

    /// Bounds on what a server may send: Sigil's replies are short.
    static let maximumBulkLength = 1 << 20
    static let maximumArrayCount = 1 << 16
    static let maximumDepth = 8
    static let maximumLineLength = 64 * 1024

    mutating func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
        var copy = buffer
        guard let value = try Self.parse(&copy, depth: 0) else { return .needMoreData }
        buffer = copy
        context.fireChannelRead(wrapInboundOut(value))
        return .continue
    }

    mutating func decodeLast(context: ChannelHandlerContext, buffer: inout ByteBuffer, seenEOF: Bool) throws
        -> DecodingState
    {
        while try decode(context: context, buffer: &buffer) == .continue {}
        return .needMoreData
    }

    /// One value from `buffer`, advancing it; `nil` when the value is not complete yet.
    static func parse(_ buffer: inout ByteBuffer, depth: Int) throws -> RESPValue? {
        guard depth <= maximumDepth else { throw RESPProtocolError() }
        guard let type = buffer.getInteger(at: buffer.readerIndex, as: UInt8.self) else { return nil }
        var rest = buffer
        rest.moveReaderIndex(forwardBy: 1)
        guard let line = try readLine(&rest) else { return nil }
        let value: RESPValue
        switch type {
        case UInt8(ascii: "+"):
            value = .simpleString(String(decoding: line, as: UTF8.self))
        case UInt8(ascii: "-"):
            value = .error(String(decoding: line, as: UTF8.self))
        case UInt8(ascii: ":"):
            guard let number = integer(line) else { throw RESPProtocolError() }
            value = .integer(number)
        case UInt8(ascii: "$"):
            guard let length = integer(line), length >= -1, length <= maximumBulkLength else {
                throw RESPProtocolError()
            }
            if length == -1 {
                value = .bulkString(nil)
            } else {
                guard rest.readableBytes >= Int(length) + 2, let bytes = rest.readBytes(length: Int(length)) else {
                    return nil
                }
                guard rest.readBytes(length: 2) == [0x0D, 0x0A] else { throw RESPProtocolError() }
                value = .bulkString(bytes)
            }
        case UInt8(ascii: "*"):
            guard let count = integer(line), count >= -1, count <= maximumArrayCount else { throw RESPProtocolError() }
            if count == -1 {
                value = .array(nil)
            } else {
                var elements: [RESPValue] = []
                for _ in 0..<count {
                    guard let element = try parse(&rest, depth: depth + 1) else { return nil }
                    elements.append(element)
                }
                value = .array(elements)
            }
        default:
            throw RESPProtocolError()
        }
        buffer = rest
        return value
    }

    /// The bytes up to CRLF, consumed with it; `nil` when no CRLF has arrived yet.
    static func readLine(_ buffer: inout ByteBuffer) throws -> [UInt8]? {
        let view = buffer.readableBytesView
        guard let cr = view.firstIndex(of: 0x0D) else {
            if view.count > maximumLineLength { throw RESPProtocolError() }
            return nil
        }
        guard cr - view.startIndex <= maximumLineLength else { throw RESPProtocolError() }
        guard cr + 1 < view.endIndex else { return nil }
        guard view[cr + 1] == 0x0A else { throw RESPProtocolError() }
        let line = Array(view[view.startIndex..<cr])
        buffer.moveReaderIndex(forwardBy: line.count + 2)
        return line
    }

    static func integer(_ bytes: [UInt8]) -> Int64? {
        guard !bytes.isEmpty, bytes.count <= 20 else { return nil }
        return Int64(String(decoding: bytes, as: UTF8.self))
    }
}
