/// Cuts a byte stream into frames: bytes go in as they are read, whole frames come out.
struct FrameDecoder {
    private var buffer: [UInt8] = []
    private var start = 0

    /// Appends bytes read from the channel.
    mutating func append(_ bytes: UnsafeRawBufferPointer) {
        // Drop what was consumed before growing, so the buffer stays the size of one frame.
        if start > 0 && start == buffer.count {
            buffer.removeAll(keepingCapacity: true)
            start = 0
        } else if start > 65536 {
            buffer.removeSubrange(0..<start)
            start = 0
        }
        buffer.append(contentsOf: bytes)
    }

    /// The next whole frame, or nil until more bytes arrive. Throws on a header that breaks the
    /// protocol: the stream cannot be resynchronised after that.
    mutating func next() throws(WireError) -> Frame? {
        let available = buffer.count - start
        guard available >= Wire.headerSize else { return nil }
        func field(_ offset: Int, _ size: Int) -> UInt64 {
            var value: UInt64 = 0
            for index in 0..<size { value |= UInt64(buffer[start + offset + index]) << UInt64(8 * index) }
            return value
        }
        let magic = UInt32(field(0, 4))
        guard magic == Wire.magic else { throw WireError(.badMagic(magic)) }
        let version = UInt16(field(4, 2))
        guard version == Wire.version else { throw WireError(.badVersion(version)) }
        let rawType = UInt16(field(6, 2))
        let length = UInt32(field(12, 4))
        guard length <= Wire.maxPayload else { throw WireError(.tooLarge(length)) }
        guard available >= Wire.headerSize + Int(length) else { return nil }
        guard let type = FrameType(rawValue: rawType) else { throw WireError(.unknownType(rawType)) }
        let payloadStart = start + Wire.headerSize
        let frame = Frame(
            type: type, sequence: UInt32(field(8, 4)),
            payload: Array(buffer[payloadStart..<payloadStart + Int(length)]))
        start = payloadStart + Int(length)
        return frame
    }
}
