/// Splits the bytes read from a broker into packets, however the reads cut them.
///
/// A remaining length over ``maxPacket`` is never buffered. A PUBLISH that long is read
/// past: its variable header (topic and packet id, at most 65 539 bytes) is read, the rest is
/// dropped as it arrives, and ``nextFrame()`` then gives it as ``MQTTFrame/skipped(_:)`` so the
/// client can acknowledge it without delivering it (a broker redelivers an unacknowledged
/// message at every reconnection, so refusing it would cut the client off for good). Any other
/// packet that long is refused as soon as its header is read: a broker (or anything on the
/// port) announcing 256 MiB of SUBACK costs nothing.
///
/// A PUBLISH whose bytes have not all come yet is collected: once its variable header is here
/// and reads, the payload is gathered in an array of its own as the bytes arrive, which the
/// packet then takes, rather than buffered whole and copied out (a fleet bundle's pieces: one
/// copy and one fresh allocation less per piece, issue 41).
public struct MQTTFrameReader: Sendable {
    /// The largest body accepted, in bytes.
    public let maxPacket: Int
    /// The version the packets are laid out in.
    public let version: MQTTVersion
    private var buffer: [UInt8] = []
    private var start = 0
    /// The PUBLISH being read past, and how many of its bytes are still to drop.
    private var skipping: (message: MQTTSkippedPublish, left: Int)?
    /// The PUBLISH being collected (its payload in `payload`), and how many bytes are to come.
    private var collecting: (message: MQTTPublish, left: Int)?
    private var payload: [UInt8] = []

    /// A reader of `version` packets refusing bodies over `maxPacket` bytes.
    public init(maxPacket: Int, version: MQTTVersion = .v3_1_1) {
        self.maxPacket = maxPacket
        self.version = version
    }

    /// Bytes held that do not make a whole packet yet.
    public var pending: Int { buffer.count - start }

    /// The bytes held that do not make a whole packet yet, for a reader that takes the stream
    /// over (MQTTBridge's hand-over across a reload appends them to its new reader first).
    public var held: [UInt8] { Array(buffer[start...]) }

    /// Whether a PUBLISH over the limit is being read past, or one is being collected (what is
    /// left of it is still to come, and ``held`` alone cannot say so).
    public var isReadingPast: Bool { skipping != nil || collecting != nil }

    /// Adds bytes as they were read: those of the PUBLISH being collected go to its payload.
    public mutating func append(_ bytes: some Collection<UInt8>) {
        if start > 0 && start == buffer.count { empty() }
        guard let left = collecting?.left, left > 0, pending == 0 else {
            buffer += bytes
            return
        }
        let taken = min(left, bytes.count)
        payload += bytes.prefix(taken)
        collecting?.left -= taken
        if taken < bytes.count { buffer += bytes.dropFirst(taken) }
    }

    /// The next whole packet, or nil until more bytes arrive; a PUBLISH over ``maxPacket`` is
    /// passed over (see ``nextFrame()`` to see those). After an error the stream is unusable
    /// (the caller drops the connection).
    public mutating func next() throws(MQTTError) -> MQTTPacket? {
        while let frame = try nextFrame() {
            if case .packet(let packet) = frame { return packet }
        }
        return nil
    }

    /// The next whole packet or PUBLISH read past, or nil until more bytes arrive. After an
    /// error the stream is unusable (the caller drops the connection).
    public mutating func nextFrame() throws(MQTTError) -> MQTTFrame? {
        if let skipped = skip() { return .skipped(skipped) }
        if let collected = collect() { return .packet(.publish(collected)) }
        guard skipping == nil, collecting == nil, pending >= 2 else { return nil }
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
            guard buffer[start] >> 4 == 3 else {
                throw MQTTError(
                    .tooLarge,
                    "a packet (first byte 0x\(String(buffer[start], radix: 16))) announces \(length) bytes, over the limit of \(maxPacket)"
                )
            }
            return try startSkipping(first: buffer[start], bodyAt: index, length: length)
        }
        guard buffer.count - index >= length else {
            if buffer[start] >> 4 == 3, startCollecting(first: buffer[start], bodyAt: index, length: length) {
                return collect().map { .packet(.publish($0)) }
            }
            // The rest of a long packet is coming: room for all of it at once, not growth by
            // doubling, each step a copy into fresh pages.
            if length > Self.keptCapacity && buffer.capacity < index + length { buffer.reserveCapacity(index + length) }
            return nil
        }
        let packet = try MQTTPacket.decode(first: buffer[start], body: buffer[index..<index + length], version: version)
        start = index + length
        compact()
        return .packet(packet)
    }

    /// Reads an oversized PUBLISH's variable header once it is all here, then skips the rest.
    private mutating func startSkipping(first: UInt8, bodyAt index: Int, length: Int) throws(MQTTError)
        -> MQTTFrame?
    {
        // The topic's length field, then the topic and (QoS > 0) the packet id.
        guard buffer.count - index >= 2 else { return nil }
        let topicLength = Int(buffer[index]) << 8 | Int(buffer[index + 1])
        let headerLength = 2 + topicLength + (first >> 1 & 3 == 0 ? 0 : 2)
        guard headerLength <= length else {
            throw .malformed("PUBLISH", "a \(topicLength)-byte topic in a \(length)-byte packet")
        }
        guard buffer.count - index >= headerLength else { return nil }
        var reader = BodyReader(bytes: buffer[index..<index + headerLength])
        let header = try reader.publishHeader(flags: first & 0x0F)
        start = index + headerLength
        skipping = (
            MQTTSkippedPublish(
                topic: header.topic, qos: header.qos, retain: header.retain, dup: header.dup, id: header.id,
                size: length),
            length - headerLength
        )
        return skip().map { .skipped($0) }
    }

    /// Starts collecting the PUBLISH whose `length`-byte body begins at `index`, once its
    /// variable header is here and reads (the same fields a whole packet's decoding checks:
    /// a header that does not read yet, or never will, leaves the packet to be buffered whole
    /// and decoded, which says why). False when it is not collected.
    private mutating func startCollecting(first: UInt8, bodyAt index: Int, length: Int) -> Bool {
        var reader = BodyReader(bytes: buffer[index..<buffer.count])
        reader.v5 = version == .v5
        guard var message = try? reader.publishHeader(flags: first & 0x0F) else { return false }
        if reader.v5 {
            guard let properties = try? reader.properties() else { return false }
            message.properties = properties
        }
        let size = length - (reader.offset - index)
        payload = []
        payload.reserveCapacity(size)
        payload += buffer[reader.offset..<buffer.count]
        collecting = (message, size - (buffer.count - reader.offset))
        start = buffer.count
        compact()
        return true
    }

    /// Moves the bytes held of the PUBLISH being collected to its payload; the message once
    /// it is all here.
    private mutating func collect() -> MQTTPublish? {
        guard var current = collecting else { return nil }
        let taken = min(current.left, pending)
        if taken > 0 {
            payload += buffer[start..<start + taken]
            start += taken
            compact()
            current.left -= taken
        }
        guard current.left == 0 else {
            collecting = current
            return nil
        }
        collecting = nil
        current.message.payload = payload
        payload = []
        return current.message
    }

    /// Drops the bytes held of the PUBLISH being read past; the message once it is all gone.
    private mutating func skip() -> MQTTSkippedPublish? {
        guard var current = skipping else { return nil }
        let dropped = min(current.left, pending)
        start += dropped
        current.left -= dropped
        compact()
        guard current.left == 0 else {
            skipping = current
            return nil
        }
        skipping = nil
        return current.message
    }

    /// Consumed bytes are dropped once they are most of the buffer, so it stays small.
    private mutating func compact() {
        if start == buffer.count {
            empty()
        } else if start > 65536 && start * 2 > buffer.count {
            buffer.removeSubrange(..<start)
            start = 0
        }
    }
}

extension MQTTFrameReader {
    /// The capacity an emptied buffer keeps: every packet of a usual session fits in it. A
    /// larger one (a fleet bundle's piece, up to ``maxPacket``) is given back once read, or the
    /// bridge would hold the largest packet it ever read for its whole life (issue 41: 1 MiB
    /// per host after the first rollout, the host's heap growth).
    static let keptCapacity = 64 << 10

    /// The buffer's capacity, for the tests.
    var bufferCapacity: Int { buffer.capacity }

    private mutating func empty() {
        if buffer.capacity > Self.keptCapacity {
            buffer = []
        } else {
            buffer.removeAll(keepingCapacity: true)
        }
        start = 0
    }
}

/// What ``MQTTFrameReader/nextFrame()`` gives: a packet, or a PUBLISH over the limit read past.
public enum MQTTFrame: Sendable, Equatable {
    case packet(MQTTPacket)
    case skipped(MQTTSkippedPublish)
}

/// A PUBLISH over the reader's limit: everything but its payload, which was dropped unread.
public struct MQTTSkippedPublish: Sendable, Equatable {
    public var topic: String
    public var qos: UInt8
    public var retain: Bool
    public var dup: Bool
    /// The packet identifier; present when `qos > 0`.
    public var id: UInt16?
    /// The packet's remaining length (variable header and payload), in bytes.
    public var size: Int

    public init(topic: String, qos: UInt8, retain: Bool, dup: Bool, id: UInt16?, size: Int) {
        self.topic = topic
        self.qos = qos
        self.retain = retain
        self.dup = dup
        self.id = id
        self.size = size
    }
}
