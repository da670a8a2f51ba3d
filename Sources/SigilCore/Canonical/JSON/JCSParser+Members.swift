/// A member of an object being parsed: where its name and its text are.
struct Member {
    var keyStart: Int  // range of the decoded key in `keys`
    var keyEnd: Int
    var start: Int  // range of `"key":value` in `out`
    var end: Int
    /// The name's first eight bytes, big-endian, zero-padded; `UInt64.max` when one of them is 0xEE
    /// or above (where UTF-8 and UTF-16 orders can differ), so the full comparison decides.
    var prefix: UInt64 = 0
}

/// The members of the objects being parsed, innermost last: a stack without copy-on-write checks.
struct MemberStack: ~Copyable {
    private(set) var base: UnsafeMutablePointer<Member>
    private var capacity: Int
    var count = 0

    init(capacity: Int) {
        self.capacity = capacity
        base = .allocate(capacity: capacity)
    }

    deinit { base.deallocate() }

    @inline(__always)
    mutating func append(_ member: Member) {
        if count == capacity {
            let newBase = UnsafeMutablePointer<Member>.allocate(capacity: capacity * 2)
            newBase.moveInitialize(from: base, count: count)
            base.deallocate()
            base = newBase
            capacity *= 2
        }
        (base + count).initialize(to: member)
        count += 1
    }

    subscript(index: Int) -> Member {
        get { base[index] }
        nonmutating set { base[index] = newValue }
    }
}

extension JCSParser {
    /// Orders the members from `base` on by their names' UTF-16 code units, rejecting duplicates.
    ///
    /// Allocation-free once warm: members are sorted in place on the member stack and the object's
    /// body is rewritten from a reused scratch buffer.
    mutating func sortMembers(from base: Int, bodyStart: Int) -> Bool {
        let count = members.count - base
        guard count > 1 else { return true }
        let names = keys.bytes
        var slice = UnsafeMutableBufferPointer(start: members.base + base, count: count)
        let result: Int? = {
            var inOrder = true
            for index in 1..<count {
                let order = Self.compare(slice[index - 1], slice[index], names)
                if order == 0 { return nil }
                if order > 0 { inOrder = false }
            }
            if inOrder { return 0 }
            if count <= 16 {
                // Insertion sort: objects are small. A member stops at the first name not after its
                // own, so a duplicate is the name it stops at.
                for index in 1..<count {
                    let member = slice[index]
                    var position = index
                    while position > 0 {
                        let order = Self.compare(member, slice[position - 1], names)
                        if order == 0 { return nil }
                        if order > 0 { break }
                        slice[position] = slice[position - 1]
                        position -= 1
                    }
                    slice[position] = member
                }
                return 1
            }
            slice.sort { Self.compare($0, $1, names) < 0 }
            for index in 1..<count where Self.compare(slice[index - 1], slice[index], names) == 0 { return nil }
            return 1
        }()
        guard let result else { return false }  // a duplicate name
        if result == 0 { return true }  // already in order
        // Copy the body aside, then write the members back in order (same total length).
        let bodyLength = out.count - bodyStart
        scratch.count = 0
        scratch.append(contentsOf: UnsafeBufferPointer(start: out.base + bodyStart, count: bodyLength))
        let copy = scratch.base
        var cursor = out.base + bodyStart
        for index in base..<members.count {
            if index > base {
                cursor.pointee = UInt8(ascii: ",")
                cursor += 1
            }
            let member = members[index]
            let length = member.end - member.start
            cursor.update(from: copy + (member.start - bodyStart), count: length)
            cursor += length
        }
        return true
    }

    /// The ``Member/prefix`` of a decoded name.
    @inline(__always)
    static func prefix(_ name: UnsafeMutablePointer<UInt8>, count: Int) -> UInt64 {
        var value: UInt64 = 0
        let length = min(count, 8)
        for index in 0..<length { value |= UInt64(name[index]) << UInt64(56 - 8 * index) }
        // An ASCII prefix (the usual name) needs no further look; otherwise check for 0xEE and above.
        if value & 0x8080_8080_8080_8080 != 0 {
            for index in 0..<length where name[index] >= 0xEE { return .max }
        }
        return value
    }

    /// Compares two decoded (UTF-8) names in UTF-16 code unit order, as RFC 8785 section 3.2.3 asks.
    static func compare(_ lhs: Member, _ rhs: Member, _ names: UnsafeBufferPointer<UInt8>) -> Int {
        // Names that differ in their first eight bytes, none of them 0xEE or above, compare as integers.
        if lhs.prefix != rhs.prefix && lhs.prefix != .max && rhs.prefix != .max {
            return lhs.prefix < rhs.prefix ? -1 : 1
        }
        let lhsCount = lhs.keyEnd - lhs.keyStart
        let rhsCount = rhs.keyEnd - rhs.keyStart
        let shared = min(lhsCount, rhsCount)
        var offset = 0
        while offset < shared {
            let left = names[lhs.keyStart + offset]
            let right = names[rhs.keyStart + offset]
            if left != right {
                // UTF-8 byte order equals code point order; it differs from UTF-16 order only between
                // a supplementary character (4-byte lead 0xF0-0xF4, a surrogate pair in UTF-16) and
                // U+E000-U+FFFF (3-byte lead 0xEE or 0xEF), where surrogates sort first. Both names
                // share the bytes before `offset`, so a lead byte in one is a lead byte in the other.
                let atLead = left & 0xC0 != 0x80
                if atLead && left >= 0xF0 && (right == 0xEE || right == 0xEF) { return -1 }
                if atLead && right >= 0xF0 && (left == 0xEE || left == 0xEF) { return 1 }
                return left < right ? -1 : 1
            }
            offset += 1
        }
        return lhsCount == rhsCount ? 0 : (lhsCount < rhsCount ? -1 : 1)
    }
}
