/// What one copy of the bridge hands the copy that replaces it in the same process (issue 42
/// item 4: `willReload`, a reload's new version or a restart by request), so the replacement
/// goes on with the broker connection as it is: no DISCONNECT, no new CONNECT, no gap.
///
/// The bytes (``encoded`` and ``parse(_:)``, big-endian, at most ``largest``):
///
///     "SHMQTTho" version(1) pid(u32)
///     delivered(u32 length, the `mqtt.delivered` pairs) retained(u32 length, the digests)
///     connection(u8 0 or 1), then when 1:
///       socket(i32) socketInode(u64) channel(i32) channelInode(u64)
///       identity(u64) keepAliveMS(u32) nextID(u16)
///       lastPingNS(u64) pingOutstandingNS(u64, 0: none) held(u32 length, bytes)
///
/// They come back through the host as a restored state: the parser takes them as untrusted
/// (checked lengths, every field in range; fuzz target `bridge`), and a descriptor number is
/// used only after ``HandOverSocket`` found it is still that socket in this process.
struct BridgeHandOver: Equatable, Sendable {
    static let magic: [UInt8] = Array("SHMQTTho".utf8)
    static let version: UInt8 = 1
    /// The most bytes of a packet not yet whole that are handed over; a copy holding more
    /// (a large packet half read) lets its replacement connect anew.
    static let largestHeld = 512 << 10
    /// Under the host's limit for a handed-over state (1 MiB).
    static let largest = 1 << 20

    /// The process the descriptors belong to (a worker's replacement is another process).
    var pid: UInt32
    /// The delivered pairs (``DeliveredMessages``' store format) and retained digests
    /// (``RetainedMessages``'), as the old copy held them.
    var delivered: [UInt8] = []
    var retained: [UInt8] = []
    /// The live connection, when there was one (connected and between packets).
    var connection: Connection?

    struct Connection: Equatable, Sendable {
        /// The broker socket and its inode (`fstat`), which identifies it while it is open.
        var socket: Int32
        var socketInode: UInt64
        /// The old copy's end of a socketpair it keeps open while it still has requests with the
        /// host: what it would write to the broker and the pairs it would store come through it
        /// (``ChannelRecord``), so one writer keeps the socket and one the store.
        var channel: Int32
        var channelInode: UInt64
        /// A digest of the connection settings it was made with
        /// (``MQTTBridgeSettings/connectionIdentity``): a replacement with others disconnects it
        /// and connects anew.
        var identity: UInt64
        /// The keep-alive in force (MQTT 5: the broker's, when it set one), in milliseconds.
        var keepAliveMS: UInt32
        /// The last packet id used: the replacement starts past ``reservedIDs`` more, which
        /// stay the old copy's for the replies it still publishes.
        var nextID: UInt16
        /// CLOCK_MONOTONIC times (one clock in one process): the last PINGREQ and the one not
        /// answered yet (0: none).
        var lastPingNS: UInt64
        var pingOutstandingNS: UInt64
        /// Bytes read from the socket that do not make a whole packet yet.
        var held: [UInt8]
    }

    /// Packet ids left to the old copy.
    static let reservedIDs = 1024

    /// Why bytes are not a hand-over: said in `mqtt.handOverRefused`.
    struct Problem: Error, CustomStringConvertible, Equatable {
        let description: String
        init(_ description: String) { self.description = description }
    }

    var encoded: [UInt8] {
        var out = Self.magic + [Self.version]
        out.append(u32: pid)
        out.append(u32: UInt32(delivered.count))
        out += delivered
        out.append(u32: UInt32(retained.count))
        out += retained
        guard let connection else {
            out.append(0)
            return out
        }
        out.append(1)
        out.append(u32: UInt32(bitPattern: connection.socket))
        out.append(u64: connection.socketInode)
        out.append(u32: UInt32(bitPattern: connection.channel))
        out.append(u64: connection.channelInode)
        out.append(u64: connection.identity)
        out.append(u32: connection.keepAliveMS)
        out.append(u16: connection.nextID)
        out.append(u64: connection.lastPingNS)
        out.append(u64: connection.pingOutstandingNS)
        out.append(u32: UInt32(connection.held.count))
        out += connection.held
        return out
    }

    /// Reads `bytes` written by ``encoded``; anything else is a ``Problem`` naming the field.
    static func parse(_ bytes: [UInt8]) throws(Problem) -> BridgeHandOver {
        guard bytes.count <= largest else { throw Problem("\(bytes.count) bytes, over \(largest)") }
        var reader = FieldReader(bytes: bytes)
        guard try reader.take(magic.count, "magic").elementsEqual(magic) else {
            throw Problem("not a bridge hand-over (magic)")
        }
        let version = try reader.u8("version")
        guard version == Self.version else { throw Problem("version \(version), not \(Self.version)") }
        var handOver = BridgeHandOver(pid: try reader.u32("pid"))
        handOver.delivered = Array(try reader.counted("delivered", at: DeliveredMessages.capacity * 10))
        guard handOver.delivered.count % 10 == 0 else { throw Problem("delivered: not whole pairs") }
        handOver.retained = Array(try reader.counted("retained", at: RetainedMessages.capacity * 8))
        guard handOver.retained.count % 8 == 0 else { throw Problem("retained: not whole digests") }
        switch try reader.u8("connection") {
        case 0: break
        case 1:
            let socket = Int32(bitPattern: try reader.u32("socket"))
            let socketInode = try reader.u64("socketInode")
            let channel = Int32(bitPattern: try reader.u32("channel"))
            let channelInode = try reader.u64("channelInode")
            guard socket >= 0, channel >= 0, socket != channel else {
                throw Problem("descriptors \(socket) and \(channel): not two descriptors")
            }
            let identity = try reader.u64("identity")
            let keepAliveMS = try reader.u32("keepAliveMS")
            guard (1...65_535_000).contains(keepAliveMS) else {
                throw Problem("keepAliveMS \(keepAliveMS) out of range")
            }
            handOver.connection = Connection(
                socket: socket, socketInode: socketInode, channel: channel, channelInode: channelInode,
                identity: identity, keepAliveMS: keepAliveMS, nextID: try reader.u16("nextID"),
                lastPingNS: try reader.u64("lastPingNS"), pingOutstandingNS: try reader.u64("pingOutstandingNS"),
                held: Array(try reader.counted("held", at: largestHeld)))
        case let other: throw Problem("connection flag \(other), not 0 or 1")
        }
        guard reader.remaining == 0 else { throw Problem("\(reader.remaining) bytes after the end") }
        return handOver
    }
}

/// One record on the channel from the old copy to its replacement (``BridgeHandOver``): a type
/// byte, a u32 length, the body.
enum ChannelRecord: Equatable, Sendable {
    /// Bytes for the broker (a PUBACK, a command's reply), written whole by the replacement.
    case write([UInt8])
    /// A delivered pair to remember (``DeliveredMessages/Key``): stored before its PUBACK comes.
    case delivered(id: UInt16, digest: UInt64)
    /// A retained message's digest to remember (``RetainedMessages``).
    case retained(UInt64)

    /// The longest body: a packet the bridge writes is far smaller.
    static let largestBody = 64 << 20

    var encoded: [UInt8] {
        var out: [UInt8] = []
        switch self {
        case .write(let bytes):
            out.append(UInt8(ascii: "W"))
            out.append(u32: UInt32(bytes.count))
            out += bytes
        case .delivered(let id, let digest):
            out.append(UInt8(ascii: "D"))
            out.append(u32: 10)
            out.append(u16: id)
            out.append(u64: digest)
        case .retained(let digest):
            out.append(UInt8(ascii: "R"))
            out.append(u32: 8)
            out.append(u64: digest)
        }
        return out
    }

    /// The first whole record in `buffer`, removed from it; nil until one is whole.
    static func next(from buffer: inout [UInt8]) throws(BridgeHandOver.Problem) -> ChannelRecord? {
        guard buffer.count >= 5 else { return nil }
        var reader = FieldReader(bytes: buffer)
        let type = try reader.u8("type")
        let length = Int(try reader.u32("length"))
        guard length <= largestBody else { throw BridgeHandOver.Problem("a record of \(length) bytes") }
        guard reader.remaining >= length else { return nil }
        let body = try reader.take(length, "body")
        let record: ChannelRecord
        var fields = FieldReader(bytes: Array(body))
        switch (type, length) {
        case (UInt8(ascii: "W"), _): record = .write(Array(body))
        case (UInt8(ascii: "D"), 10): record = .delivered(id: try fields.u16("id"), digest: try fields.u64("digest"))
        case (UInt8(ascii: "R"), 8): record = .retained(try fields.u64("digest"))
        default: throw BridgeHandOver.Problem("a record of type \(type) and \(length) bytes")
        }
        buffer.removeFirst(5 + length)
        return record
    }
}

/// Reads big-endian fields, each checked against what is left.
private struct FieldReader {
    let bytes: [UInt8]
    var offset = 0

    var remaining: Int { bytes.count - offset }

    mutating func take(_ count: Int, _ field: String) throws(BridgeHandOver.Problem) -> ArraySlice<UInt8> {
        guard count >= 0, count <= remaining else {
            throw BridgeHandOver.Problem("\(field): \(count) bytes wanted, \(remaining) left")
        }
        defer { offset += count }
        return bytes[offset..<offset + count]
    }

    mutating func u8(_ field: String) throws(BridgeHandOver.Problem) -> UInt8 { try take(1, field).first! }

    mutating func integer(_ count: Int, _ field: String) throws(BridgeHandOver.Problem) -> UInt64 {
        try take(count, field).reduce(0) { $0 << 8 | UInt64($1) }
    }

    mutating func u16(_ field: String) throws(BridgeHandOver.Problem) -> UInt16 { UInt16(try integer(2, field)) }
    mutating func u32(_ field: String) throws(BridgeHandOver.Problem) -> UInt32 { UInt32(try integer(4, field)) }
    mutating func u64(_ field: String) throws(BridgeHandOver.Problem) -> UInt64 { try integer(8, field) }

    /// A u32 length, then that many bytes, at most `largest`.
    mutating func counted(_ field: String, at largest: Int) throws(BridgeHandOver.Problem) -> ArraySlice<UInt8> {
        let length = Int(try u32(field))
        guard length <= largest else { throw BridgeHandOver.Problem("\(field): \(length) bytes, over \(largest)") }
        return try take(length, field)
    }
}

extension [UInt8] {
    fileprivate mutating func append(u16 value: UInt16) {
        append(contentsOf: [UInt8(value >> 8), UInt8(value & 0xFF)])
    }
    fileprivate mutating func append(u32 value: UInt32) {
        for shift in stride(from: 24, through: 0, by: -8) { append(UInt8(truncatingIfNeeded: value >> UInt32(shift))) }
    }
    fileprivate mutating func append(u64 value: UInt64) {
        for shift in stride(from: 56, through: 0, by: -8) { append(UInt8(truncatingIfNeeded: value >> UInt64(shift))) }
    }
}

extension MQTTBridgeSettings {
    /// A digest (FNV-1a) of what a connection is made with: the broker, the client id, the
    /// credentials, the protocol, the keep-alive and session expiry it asked for, the topics
    /// it subscribed to and the largest packet it reads. A replacement whose settings give
    /// another connects anew rather than going on with a connection made for others.
    var connectionIdentity: UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        func add(_ bytes: some Sequence<UInt8>) {
            for byte in bytes { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
            hash = (hash ^ 0) &* 0x100_0000_01b3  // a separator: "ab","c" is not "a","bc"
        }
        add("\(broker)".utf8)
        add(clientID.utf8)
        add((username ?? "").utf8)
        add(password ?? [])
        add(protocolVersion.rawValue.utf8)
        add("\(keepAlive) \(sessionExpiry) \(maxPacket) \(username == nil) \(password == nil)".utf8)
        add(prefix.utf8)
        return hash
    }
}
