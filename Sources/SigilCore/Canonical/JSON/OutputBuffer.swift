/// A growable byte buffer without copy-on-write or reference counting, for the canonicalizer's
/// hot loops.
struct OutputBuffer: ~Copyable {
    private(set) var base: UnsafeMutablePointer<UInt8>
    private(set) var capacity: Int
    var count = 0

    init(capacity: Int) {
        self.capacity = max(capacity, 32)
        base = .allocate(capacity: self.capacity)
    }

    deinit { base.deallocate() }

    var bytes: UnsafeBufferPointer<UInt8> { UnsafeBufferPointer(start: base, count: count) }

    @inline(__always)
    mutating func append(_ byte: UInt8) {
        if count == capacity { grow(1) }
        base[count] = byte
        count &+= 1
    }

    @inline(__always)
    mutating func append(contentsOf bytes: UnsafeBufferPointer<UInt8>) {
        guard let source = bytes.baseAddress, !bytes.isEmpty else { return }
        let length = bytes.count
        if count + length > capacity { grow(length) }
        let target = base + count
        if length <= 16 {
            // Most runs are a few bytes: a loop beats a call to memcpy.
            for index in 0..<length { target[index] = source[index] }
        } else {
            target.initialize(from: source, count: length)
        }
        count &+= length
    }

    mutating func append(repeating byte: UInt8, count extra: Int) {
        guard extra > 0 else { return }
        if count + extra > capacity { grow(extra) }
        (base + count).initialize(repeating: byte, count: extra)
        count += extra
    }

    mutating func removeLast(_ k: Int = 1) { count -= k }

    mutating func grow(_ extra: Int) {
        let newCapacity = max(capacity * 2, count + extra)
        let newBase = UnsafeMutablePointer<UInt8>.allocate(capacity: newCapacity)
        newBase.initialize(from: base, count: count)
        base.deallocate()
        base = newBase
        capacity = newCapacity
    }
}

/// Where ``ECMAScriptNumber`` writes.
protocol ByteSink: ~Copyable {
    mutating func append(_ byte: UInt8)
    mutating func append(contentsOf bytes: UnsafeBufferPointer<UInt8>)
    mutating func append(repeating byte: UInt8, count: Int)
}

extension OutputBuffer: ByteSink {}

extension Array: ByteSink where Element == UInt8 {
    mutating func append(repeating byte: UInt8, count: Int) {
        append(contentsOf: repeatElement(byte, count: count))
    }
}
