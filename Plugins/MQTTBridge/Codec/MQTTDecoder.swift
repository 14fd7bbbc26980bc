extension MQTTPacket {
    /// Decodes one packet from its first byte (type and flags) and its body (the
    /// remaining-length bytes), checking every length and flag the specification fixes.
    public static func decode(first: UInt8, body: ArraySlice<UInt8>) throws(MQTTError) -> MQTTPacket {
        var reader = BodyReader(bytes: body)
        let flags = first & 0x0F
        let packet: MQTTPacket
        switch first >> 4 {
        case 1:
            reader.packet = "CONNECT"
            try reader.expectFlags(flags, 0)
            guard try reader.string() == "MQTT" else { throw .malformed("CONNECT", "protocol name is not MQTT") }
            _ = try reader.byte()  // protocol level: the broker's business
            let connectFlags = try reader.byte()
            guard connectFlags & 1 == 0 else { throw .malformed("CONNECT", "reserved flag set") }
            let keepAlive = try reader.uint16()
            var connect = MQTTConnect(
                clientID: try reader.string(), cleanSession: connectFlags & 0x02 != 0, keepAlive: keepAlive)
            if connectFlags & 0x04 != 0 {
                let topic = try reader.string()
                connect.will = MQTTPublish(
                    topic: topic, payload: try reader.field(), qos: connectFlags >> 3 & 3,
                    retain: connectFlags & 0x20 != 0)
            } else if connectFlags & 0x38 != 0 {
                throw .malformed("CONNECT", "will QoS or retain set without a will")
            }
            if connectFlags & 0x80 != 0 { connect.username = try reader.string() }
            if connectFlags & 0x40 != 0 { connect.password = try reader.field() }
            packet = .connect(connect)
        case 2:
            reader.packet = "CONNACK"
            try reader.expectFlags(flags, 0)
            let ackFlags = try reader.byte()
            guard ackFlags & 0xFE == 0 else {
                throw .malformed("CONNACK", "reserved acknowledge flags set (\(ackFlags))")
            }
            packet = .connack(sessionPresent: ackFlags & 1 != 0, returnCode: try reader.byte())
        case 3:
            var message = try reader.publishHeader(flags: flags)
            message.payload = reader.rest()
            packet = .publish(message)
        case 4:
            reader.packet = "PUBACK"
            try reader.expectFlags(flags, 0)
            packet = .puback(id: try reader.uint16())
        case 5:
            reader.packet = "PUBREC"
            try reader.expectFlags(flags, 0)
            packet = .pubrec(id: try reader.uint16())
        case 6:
            reader.packet = "PUBREL"
            try reader.expectFlags(flags, 2)
            packet = .pubrel(id: try reader.uint16())
        case 7:
            reader.packet = "PUBCOMP"
            try reader.expectFlags(flags, 0)
            packet = .pubcomp(id: try reader.uint16())
        case 8:
            reader.packet = "SUBSCRIBE"
            try reader.expectFlags(flags, 2)
            let id = try reader.uint16()
            var filters: [MQTTSubscription] = []
            repeat {
                let filter = try reader.string()
                let qos = try reader.byte()
                guard qos <= 2 else { throw .malformed("SUBSCRIBE", "requested QoS \(qos)") }
                filters.append(MQTTSubscription(filter, qos: qos))
            } while !reader.isAtEnd
            packet = .subscribe(id: id, filters: filters)
        case 9:
            reader.packet = "SUBACK"
            try reader.expectFlags(flags, 0)
            let id = try reader.uint16()
            let codes = reader.rest()
            guard !codes.isEmpty else { throw .malformed("SUBACK", "no return codes") }
            packet = .suback(id: id, codes: codes)
        case 10:
            reader.packet = "UNSUBSCRIBE"
            try reader.expectFlags(flags, 2)
            let id = try reader.uint16()
            var filters: [String] = []
            repeat { filters.append(try reader.string()) } while !reader.isAtEnd
            packet = .unsubscribe(id: id, filters: filters)
        case 11:
            reader.packet = "UNSUBACK"
            try reader.expectFlags(flags, 0)
            packet = .unsuback(id: try reader.uint16())
        case 12:
            reader.packet = "PINGREQ"
            try reader.expectFlags(flags, 0)
            packet = .pingreq
        case 13:
            reader.packet = "PINGRESP"
            try reader.expectFlags(flags, 0)
            packet = .pingresp
        case 14:
            reader.packet = "DISCONNECT"
            try reader.expectFlags(flags, 0)
            packet = .disconnect
        default:
            throw MQTTError(
                .unknownType, "unknown packet type \(first >> 4) (first byte 0x\(String(first, radix: 16)))")
        }
        guard reader.isAtEnd else {
            throw .malformed(reader.packet, "\(reader.remaining) byte(s) after the packet's last field")
        }
        return packet
    }
}

extension BodyReader {
    /// A PUBLISH's fixed-header flags and variable header (topic, packet id), checked; the
    /// payload is left to the caller (read, or skipped when the packet is over the limit).
    mutating func publishHeader(flags: UInt8) throws(MQTTError) -> MQTTPublish {
        packet = "PUBLISH"
        let qos = flags >> 1 & 3
        guard qos != 3 else { throw .malformed("PUBLISH", "QoS 3 does not exist") }
        let topic = try string()
        guard !topic.isEmpty else { throw .malformed("PUBLISH", "empty topic name") }
        guard !topic.utf8.contains(where: { $0 == UInt8(ascii: "+") || $0 == UInt8(ascii: "#") }) else {
            throw .malformed("PUBLISH", "wildcard in topic name \"\(topic)\"")
        }
        let id = qos > 0 ? try uint16() : nil
        if id == 0 { throw .malformed("PUBLISH", "packet identifier 0") }
        guard qos > 0 || flags & 0x08 == 0 else { throw .malformed("PUBLISH", "DUP set on a QoS 0 message") }
        return MQTTPublish(topic: topic, payload: [], qos: qos, retain: flags & 1 != 0, dup: flags & 0x08 != 0, id: id)
    }
}

/// Reads a packet's body front to back; every read checks the bytes are there.
struct BodyReader {
    let bytes: ArraySlice<UInt8>
    var offset: Int
    var packet = ""

    init(bytes: ArraySlice<UInt8>) {
        self.bytes = bytes
        offset = bytes.startIndex
    }

    var isAtEnd: Bool { offset == bytes.endIndex }
    var remaining: Int { bytes.endIndex - offset }

    func expectFlags(_ flags: UInt8, _ expected: UInt8) throws(MQTTError) {
        guard flags == expected else { throw .malformed(packet, "fixed-header flags \(flags), expected \(expected)") }
    }

    mutating func byte() throws(MQTTError) -> UInt8 {
        guard remaining >= 1 else { throw .malformed(packet, "ends early") }
        defer { offset += 1 }
        return bytes[offset]
    }

    mutating func uint16() throws(MQTTError) -> UInt16 {
        guard remaining >= 2 else { throw .malformed(packet, "ends early") }
        defer { offset += 2 }
        return UInt16(bytes[offset]) << 8 | UInt16(bytes[offset + 1])
    }

    mutating func field() throws(MQTTError) -> [UInt8] {
        let count = Int(try uint16())
        guard remaining >= count else {
            throw .malformed(packet, "a \(count)-byte field with \(remaining) byte(s) left")
        }
        defer { offset += count }
        return Array(bytes[offset..<offset + count])
    }

    /// A UTF-8 string field; MQTT forbids U+0000 in it (1.5.3).
    mutating func string() throws(MQTTError) -> String {
        let raw = try field()
        guard let text = String(validating: raw, as: UTF8.self), !raw.contains(0) else {
            throw .malformed(packet, "a string field is not valid UTF-8")
        }
        return text
    }

    mutating func rest() -> [UInt8] {
        defer { offset = bytes.endIndex }
        return Array(bytes[offset...])
    }
}
