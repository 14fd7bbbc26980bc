/// Reads a frame's payload in the order WireWriter wrote it; every read is bounds-checked,
/// so a malformed frame is an error, never a crash of the reader.
struct WireReader {
    private let bytes: [UInt8]
    private var offset = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    /// Whether every byte was read.
    var isAtEnd: Bool { offset == bytes.count }

    /// The bytes not read yet: an upper bound for any count the payload declares.
    var remaining: Int { bytes.count - offset }

    private mutating func take(_ count: Int, _ what: String) throws(WireError) -> ArraySlice<UInt8> {
        guard count >= 0, bytes.count - offset >= count else { throw .truncated(what) }
        defer { offset += count }
        return bytes[offset..<offset + count]
    }

    /// A little-endian integer of `size` bytes (1, 2, 4 or 8), read from the array's buffer: a
    /// slice and a loop over it were ~100 instructions per integer, and a registry entry has
    /// seven. `isLength`: the error names `what` as a blob's length (the words are built only then).
    private mutating func integer(_ size: Int, _ what: String, isLength: Bool = false) throws(WireError) -> UInt64 {
        guard bytes.count - offset >= size else { throw .truncated(isLength ? what + " length" : what) }
        let start = offset
        offset += size
        return bytes.withUnsafeBytes { raw in
            switch size {
            case 8: UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: start, as: UInt64.self))
            case 4: UInt64(UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: start, as: UInt32.self)))
            case 2: UInt64(UInt16(littleEndian: raw.loadUnaligned(fromByteOffset: start, as: UInt16.self)))
            default: UInt64(raw[start])
            }
        }
    }

    mutating func u8(_ what: String) throws(WireError) -> UInt8 { UInt8(try integer(1, what)) }

    mutating func bool(_ what: String) throws(WireError) -> Bool {
        switch try u8(what) {
        case 0: return false
        case 1: return true
        case let other: throw .malformed("\(what) is \(other), not a boolean")
        }
    }

    mutating func u16(_ what: String) throws(WireError) -> UInt16 { UInt16(try integer(2, what)) }
    mutating func u32(_ what: String) throws(WireError) -> UInt32 { UInt32(try integer(4, what)) }
    mutating func i32(_ what: String) throws(WireError) -> Int32 { Int32(bitPattern: try u32(what)) }
    mutating func u64(_ what: String) throws(WireError) -> UInt64 { try integer(8, what) }
    mutating func i64(_ what: String) throws(WireError) -> Int64 { Int64(bitPattern: try u64(what)) }
    mutating func f64(_ what: String) throws(WireError) -> Double { Double(bitPattern: try u64(what)) }

    mutating func blob(_ what: String) throws(WireError) -> [UInt8] {
        Array(try blobBytes(what))
    }

    /// A blob's bytes, not copied; its length field is named `what` + " length" in an error
    /// (`lengthNamed: false`: `what` alone).
    private mutating func blobBytes(_ what: String, lengthNamed: Bool = true) throws(WireError) -> ArraySlice<UInt8> {
        let count = Int(UInt32(try integer(4, what, isLength: lengthNamed)))
        return try take(count, what)
    }

    /// A blob's bytes, not copied (its length is named `what` too: no text is built per read).
    mutating func blobSlice(_ what: String) throws(WireError) -> ArraySlice<UInt8> {
        try blobBytes(what, lengthNamed: false)
    }

    /// The next `count` bytes, not copied.
    mutating func bytes(_ count: Int, _ what: String) throws(WireError) -> ArraySlice<UInt8> {
        try take(count, what)
    }

    /// A blob as text; invalid UTF-8 is repaired (for names and messages, never for data).
    mutating func string(_ what: String) throws(WireError) -> String {
        String(decoding: try blobBytes(what), as: UTF8.self)
    }

    /// A presence byte, then a blob when present.
    mutating func optionalBlob(_ what: String) throws(WireError) -> [UInt8]? {
        try bool(what + " presence") ? try blob(what) : nil
    }

    /// Throws unless every byte was read: trailing bytes mean the sides disagree on a layout.
    func finish(_ what: String) throws(WireError) {
        guard isAtEnd else { throw .malformed("\(bytes.count - offset) unexpected bytes after \(what)") }
    }
}
