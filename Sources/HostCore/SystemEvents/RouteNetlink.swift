/// The rtnetlink messages the network source reads (`NETLINK_ROUTE`, rtnetlink(7)): links and
/// routes, new and deleted, and the end of a dump. Bytes from a socket: every length is checked
/// against what is there before it is used, and a message that does not fit is an error with
/// the offset and the reason, never a trap. Numbers are in the machine's byte order, as the
/// kernel writes them (little-endian on every platform ServiceHost builds for).
enum RouteNetlink {
    /// One message of a read.
    enum Message: Equatable, Sendable {
        /// RTM_NEWLINK / RTM_DELLINK: interface `index`, its name when the message carries it,
        /// whether it is up and has carrier (IFF_UP and IFF_RUNNING), and whether it was deleted.
        case link(index: Int32, name: String?, up: Bool, deleted: Bool)
        /// RTM_NEWROUTE / RTM_DELROUTE: a route of `family` in `table`, with a destination
        /// prefix of `prefixLength` bits (0: a default route), out through interface `interface`.
        case route(family: UInt8, table: UInt32, prefixLength: UInt8, interface: Int32?, deleted: Bool)
        /// NLMSG_DONE: a dump ended.
        case done
        /// NLMSG_ERROR: the kernel refused a request (`errno`, positive; 0 is an acknowledgement).
        case error(errno: Int32)
        /// Any other type (NLMSG_NOOP, address messages…), skipped.
        case other(type: UInt16)
    }

    /// Why bytes are not rtnetlink messages.
    struct Malformed: Error, Equatable, CustomStringConvertible {
        /// What is wrong, with the offset.
        let reason: String
        var description: String { "malformed rtnetlink message: \(reason)" }
    }

    // rtnetlink's numbers (linux/netlink.h, linux/rtnetlink.h, linux/if_link.h, net/if.h).
    static let done: UInt16 = 3
    static let error: UInt16 = 2
    static let newLink: UInt16 = 16
    static let deleteLink: UInt16 = 17
    static let getLink: UInt16 = 18
    static let newRoute: UInt16 = 24
    static let deleteRoute: UInt16 = 25
    static let getRoute: UInt16 = 26
    static let headerSize = 16
    static let linkHeaderSize = 16  // struct ifinfomsg
    static let routeHeaderSize = 12  // struct rtmsg
    static let interfaceName: UInt16 = 3  // IFLA_IFNAME
    static let routeTable: UInt16 = 15  // RTA_TABLE
    static let outputInterface: UInt16 = 4  // RTA_OIF
    static let flagUp: UInt32 = 0x1  // IFF_UP
    static let flagRunning: UInt32 = 0x40  // IFF_RUNNING

    /// The messages in `bytes` (one read of the socket), in order.
    static func parse(_ bytes: ArraySlice<UInt8>) throws(Malformed) -> [Message] {
        var messages: [Message] = []
        var offset = bytes.startIndex
        while bytes.endIndex - offset >= headerSize {
            let length = Int(u32(bytes, offset))
            guard length >= headerSize, length <= bytes.endIndex - offset else {
                throw Malformed(
                    reason: "the message at byte \(offset - bytes.startIndex) claims \(length) bytes; "
                        + "\(bytes.endIndex - offset) are there")
            }
            let type = u16(bytes, offset + 4)
            let body = bytes[(offset + headerSize)..<(offset + length)]
            messages.append(try message(type, body, at: offset - bytes.startIndex))
            // Messages are 4-byte aligned; the last one's padding may be cut off.
            let (aligned, overflow) = length.addingReportingOverflow(3)
            guard !overflow else { throw Malformed(reason: "a length overflows") }
            offset += min(aligned & ~3, bytes.endIndex - offset)
        }
        guard offset == bytes.endIndex else {
            throw Malformed(reason: "\(bytes.endIndex - offset) bytes after the last message are not a header")
        }
        return messages
    }

    private static func message(_ type: UInt16, _ body: ArraySlice<UInt8>, at offset: Int) throws(Malformed)
        -> Message
    {
        switch type {
        case done: return .done
        case error:
            guard body.count >= 4 else { throw Malformed(reason: "the error message at byte \(offset) is cut short") }
            return .error(errno: 0 &- Int32(bitPattern: u32(body, body.startIndex)))
        case newLink, deleteLink:
            guard body.count >= linkHeaderSize else {
                throw Malformed(reason: "the link message at byte \(offset) is cut short (\(body.count) bytes)")
            }
            let index = Int32(bitPattern: u32(body, body.startIndex + 4))
            let flags = u32(body, body.startIndex + 8)
            var name: String?
            try attributes(body.dropFirst(linkHeaderSize), at: offset) { kind, value in
                if kind == interfaceName { name = String(decoding: value.prefix { $0 != 0 }, as: UTF8.self) }
            }
            return .link(
                index: index, name: name, up: flags & (flagUp | flagRunning) == flagUp | flagRunning,
                deleted: type == deleteLink)
        case newRoute, deleteRoute:
            guard body.count >= routeHeaderSize else {
                throw Malformed(reason: "the route message at byte \(offset) is cut short (\(body.count) bytes)")
            }
            let family = body[body.startIndex]
            let prefixLength = body[body.startIndex + 1]
            var table = UInt32(body[body.startIndex + 4])
            var interface: Int32?
            try attributes(body.dropFirst(routeHeaderSize), at: offset) { kind, value in
                guard value.count >= 4 else { return }
                if kind == routeTable { table = u32(value, value.startIndex) }
                if kind == outputInterface { interface = Int32(bitPattern: u32(value, value.startIndex)) }
            }
            return .route(
                family: family, table: table, prefixLength: prefixLength, interface: interface,
                deleted: type == deleteRoute)
        default:
            return .other(type: type)
        }
    }

    /// Calls `each` with every attribute (struct rtattr: a 16-bit length including its 4-byte
    /// header, a 16-bit type, the value, padded to 4 bytes) of `bytes`.
    private static func attributes(
        _ bytes: ArraySlice<UInt8>, at offset: Int, _ each: (UInt16, ArraySlice<UInt8>) -> Void
    ) throws(Malformed) {
        var position = bytes.startIndex
        while bytes.endIndex - position >= 4 {
            let length = Int(u16(bytes, position))
            guard length >= 4, length <= bytes.endIndex - position else {
                throw Malformed(reason: "an attribute of the message at byte \(offset) claims \(length) bytes")
            }
            // NLA_TYPE_MASK: the top two bits are flags.
            each(u16(bytes, position + 2) & 0x3FFF, bytes[(position + 4)..<(position + length)])
            position += min((length + 3) & ~3, bytes.endIndex - position)
        }
    }

    private static func u16(_ bytes: ArraySlice<UInt8>, _ at: Int) -> UInt16 {
        UInt16(bytes[at]) | UInt16(bytes[at + 1]) << 8
    }

    private static func u32(_ bytes: ArraySlice<UInt8>, _ at: Int) -> UInt32 {
        UInt32(bytes[at]) | UInt32(bytes[at + 1]) << 8 | UInt32(bytes[at + 2]) << 16 | UInt32(bytes[at + 3]) << 24
    }

    /// A dump request (`getLink` or `getRoute`, NLM_F_REQUEST | NLM_F_DUMP) with sequence `sequence`:
    /// the header and an all-zero `struct rtgenmsg` (AF_UNSPEC: every family), padded to 4 bytes.
    static func dumpRequest(_ type: UInt16, sequence: UInt32) -> [UInt8] {
        let length: UInt32 = 20
        let flags: UInt16 = 0x1 | 0x300  // NLM_F_REQUEST | NLM_F_DUMP
        var bytes: [UInt8] = []
        bytes += withUnsafeBytes(of: length.littleEndian) { Array($0) }
        bytes += withUnsafeBytes(of: type.littleEndian) { Array($0) }
        bytes += withUnsafeBytes(of: flags.littleEndian) { Array($0) }
        bytes += withUnsafeBytes(of: sequence.littleEndian) { Array($0) }
        bytes += [0, 0, 0, 0]  // nlmsg_pid: the kernel
        bytes += [0, 0, 0, 0]  // rtgenmsg, padded
        return bytes
    }
}
