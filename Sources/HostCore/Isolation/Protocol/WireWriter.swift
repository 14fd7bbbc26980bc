/// Builds one frame: the header's 16 bytes are reserved first and filled by `finish`, so a
/// frame is written with one buffer and one `send`.
struct WireWriter {
    private(set) var bytes: [UInt8]

    /// An empty frame, with room for the header.
    init(capacity: Int = 64) {
        bytes = []
        bytes.reserveCapacity(Wire.headerSize + capacity)
        bytes.append(contentsOf: repeatElement(0, count: Wire.headerSize))
    }

    /// The payload's size so far.
    var payloadCount: Int { bytes.count - Wire.headerSize }

    mutating func u8(_ value: UInt8) { bytes.append(value) }
    mutating func bool(_ value: Bool) { bytes.append(value ? 1 : 0) }

    mutating func u16(_ value: UInt16) {
        bytes.append(UInt8(truncatingIfNeeded: value))
        bytes.append(UInt8(truncatingIfNeeded: value >> 8))
    }

    mutating func u32(_ value: UInt32) {
        for shift in stride(from: 0, to: 32, by: 8) { bytes.append(UInt8(truncatingIfNeeded: value >> UInt32(shift))) }
    }

    mutating func i32(_ value: Int32) { u32(UInt32(bitPattern: value)) }

    mutating func u64(_ value: UInt64) {
        for shift in stride(from: 0, to: 64, by: 8) { bytes.append(UInt8(truncatingIfNeeded: value >> UInt64(shift))) }
    }

    mutating func i64(_ value: Int64) { u64(UInt64(bitPattern: value)) }
    mutating func f64(_ value: Double) { u64(value.bitPattern) }

    /// A u32 length, then the bytes.
    mutating func blob(_ value: UnsafeRawBufferPointer) {
        u32(UInt32(value.count))
        bytes.append(contentsOf: value)
    }

    mutating func blob(_ value: [UInt8]) { value.withUnsafeBytes { blob($0) } }

    /// `count` bytes at `pointer` (NULL with count 0 is an empty blob).
    mutating func blob(_ pointer: UnsafeRawPointer?, count: Int) {
        blob(UnsafeRawBufferPointer(start: count > 0 ? pointer : nil, count: pointer == nil ? 0 : count))
    }

    mutating func string(_ value: String) { blob(Array(value.utf8)) }

    /// A presence byte, then the blob when there is one.
    mutating func optionalBlob(_ value: [UInt8]?) {
        bool(value != nil)
        if let value { blob(value) }
    }

    /// A NUL-terminated C string's bytes (without the NUL), kept byte for byte.
    mutating func cString(_ pointer: UnsafePointer<CChar>) {
        blob(UnsafeRawPointer(pointer), count: strlen(pointer))
    }

    /// A presence byte, then the C string when there is one.
    mutating func optionalCString(_ pointer: UnsafePointer<CChar>?) {
        bool(pointer != nil)
        if let pointer { cString(pointer) }
    }

    /// Fills in the header and returns the frame's bytes.
    mutating func finish(_ type: FrameType, sequence: UInt32) -> [UInt8] {
        let length = UInt32(payloadCount)
        func put(_ value: UInt64, at offset: Int, size: Int) {
            for index in 0..<size { bytes[offset + index] = UInt8(truncatingIfNeeded: value >> UInt64(8 * index)) }
        }
        put(UInt64(Wire.magic), at: 0, size: 4)
        put(UInt64(Wire.version), at: 4, size: 2)
        put(UInt64(type.rawValue), at: 6, size: 2)
        put(UInt64(sequence), at: 8, size: 4)
        put(UInt64(length), at: 12, size: 4)
        return bytes
    }
}

private func strlen(_ pointer: UnsafePointer<CChar>) -> Int {
    var count = 0
    while pointer[count] != 0 { count += 1 }
    return count
}
