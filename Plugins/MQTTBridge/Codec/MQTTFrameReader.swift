/// Splits the bytes read from a broker into packets, however the reads cut them.
///
/// A remaining length over ``maxPacket`` is refused as soon as its header is read, before any
/// of the body is buffered: a broker (or anything on the port) announcing 256 MiB costs
/// nothing.
public struct MQTTFrameReader: Sendable {
    /// The largest body accepted, in bytes.
    public let maxPacket: Int
    private var buffer: [UInt8] = []
    private var start = 0

    /// A reader refusing bodies over `maxPacket` bytes.
    public init(maxPacket: Int) { self.maxPacket = maxPacket }

    /// Bytes held that do not make a whole packet yet.
    public var pending: Int { buffer.count - start }

    /// Adds bytes as they were read.
    public mutating func append(_ bytes: some Collection<UInt8>) {
        if start > 0 && start == buffer.count {
            buffer.removeAll(keepingCapacity: true)
            start = 0
        }
        buffer += bytes
    }

    /// The next whole packet, or nil until more bytes arrive. After an error the stream is
    /// unusable (the caller drops the connection).
    public mutating func next() throws(MQTTError) -> MQTTPacket? {
        guard pending >= 2 else { return nil }
        var length = 0
        var multiplier = 1
        var index = start + 1
        while true {
            guard index < buffer.count else { return nil }
            let digit = buffer[index]
            length += Int(digit & 0x7F) * multiplier
            index += 1
            if digit & 0x80 == 0 { break }
            guard index - start - 1 < 4 else {
                throw MQTTError(
                    .malformedLength,
                    "malformed remaining length: more than 4 bytes (first byte 0x\(String(buffer[start], radix: 16)))")
            }
            multiplier *= 128
        }
        guard length <= maxPacket else {
            throw MQTTError(
                .tooLarge,
                "a packet (first byte 0x\(String(buffer[start], radix: 16))) announces \(length) bytes, over the limit of \(maxPacket)"
            )
        }
        guard buffer.count - index >= length else { return nil }
        let packet = try MQTTPacket.decode(first: buffer[start], body: buffer[index..<index + length])
        start = index + length
        // Consumed bytes are dropped once they are most of the buffer, so it stays small.
        if start > 65536 && start * 2 > buffer.count {
            buffer.removeSubrange(..<start)
            start = 0
        }
        return packet
    }
}
