extension MQTTPacket {
    /// Decodes one packet from its first byte (type and flags) and its body (the
    /// remaining-length bytes) as `version` lays it out, checking every length and flag the
    /// specification fixes (and, in MQTT 5, every property: ``MQTTProperties``).
    public static func decode(first: UInt8, body: ArraySlice<UInt8>, version: MQTTVersion = .v3_1_1)
        throws(MQTTError) -> MQTTPacket
    {
        var reader = BodyReader(bytes: body)
        reader.v5 = version == .v5
        let v5 = reader.v5
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
            let properties = v5 ? try reader.properties() : MQTTProperties()
            var connect = MQTTConnect(
                clientID: try reader.string(), cleanSession: connectFlags & 0x02 != 0, keepAlive: keepAlive,
                properties: properties)
            if connectFlags & 0x04 != 0 {
                let willProperties = v5 ? try reader.properties() : MQTTProperties()
                let topic = try reader.string()
                connect.will = MQTTPublish(
                    topic: topic, payload: try reader.field(), qos: connectFlags >> 3 & 3,
                    retain: connectFlags & 0x20 != 0, properties: willProperties)
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
            let code = try reader.byte()
            packet = .connack(
                sessionPresent: ackFlags & 1 != 0, returnCode: code,
                // A 3.1.1 broker answers a version 5 CONNECT with its own 2-byte CONNACK (code 1):
                // no properties follow, and the refusal must still be read as one.
                properties: v5 && !reader.isAtEnd ? try reader.properties() : MQTTProperties())
        case 3:
            var message = try reader.publishHeader(flags: flags)
            if v5 { message.properties = try reader.properties() }
            message.payload = reader.rest()
            packet = .publish(message)
        case 4:
            reader.packet = "PUBACK"
            try reader.expectFlags(flags, 0)
            let id = try reader.uint16()
            packet = .puback(id: id, reason: try reader.ackTail())
        case 5:
            reader.packet = "PUBREC"
            try reader.expectFlags(flags, 0)
            let id = try reader.uint16()
            _ = try reader.ackTail()
            packet = .pubrec(id: id)
        case 6:
            reader.packet = "PUBREL"
            try reader.expectFlags(flags, 2)
            let id = try reader.uint16()
            _ = try reader.ackTail()
            packet = .pubrel(id: id)
        case 7:
            reader.packet = "PUBCOMP"
            try reader.expectFlags(flags, 0)
            let id = try reader.uint16()
            _ = try reader.ackTail()
            packet = .pubcomp(id: id)
        case 8:
            reader.packet = "SUBSCRIBE"
            try reader.expectFlags(flags, 2)
            let id = try reader.uint16()
            if v5 { _ = try reader.properties() }
            var filters: [MQTTSubscription] = []
            repeat {
                let filter = try reader.string()
                let options = try reader.byte()
                // MQTT 5 3.8.3.1: QoS in bits 0-1, then no-local, retain-as-published, retain
                // handling (bits 4-5, 3 is reserved); MQTT 3.1.1 has QoS alone.
                let qos = options & 3
                guard qos <= 2, options & (v5 ? 0xC0 : 0xFC) == 0, options & 0x30 != 0x30 else {
                    throw .malformed("SUBSCRIBE", "subscription options \(options)")
                }
                filters.append(MQTTSubscription(filter, qos: qos))
            } while !reader.isAtEnd
            packet = .subscribe(id: id, filters: filters)
        case 9:
            reader.packet = "SUBACK"
            try reader.expectFlags(flags, 0)
            let id = try reader.uint16()
            if v5 { _ = try reader.properties() }
            let codes = reader.rest()
            guard !codes.isEmpty else { throw .malformed("SUBACK", "no return codes") }
            packet = .suback(id: id, codes: codes)
        case 10:
            reader.packet = "UNSUBSCRIBE"
            try reader.expectFlags(flags, 2)
            let id = try reader.uint16()
            if v5 { _ = try reader.properties() }
            var filters: [String] = []
            repeat { filters.append(try reader.string()) } while !reader.isAtEnd
            packet = .unsubscribe(id: id, filters: filters)
        case 11:
            reader.packet = "UNSUBACK"
            try reader.expectFlags(flags, 0)
            let id = try reader.uint16()
            if v5 {
                _ = try reader.properties()
                guard !reader.isAtEnd else { throw .malformed("UNSUBACK", "no reason codes") }
                _ = reader.rest()
            }
            packet = .unsuback(id: id)
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
            guard v5, !reader.isAtEnd else {
                packet = .disconnect()
                break
            }
            let reason = try reader.byte()
            packet = .disconnect(
                reason: reason, properties: reader.isAtEnd ? MQTTProperties() : try reader.properties())
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
    /// The body is laid out as MQTT 5 does (reason codes, properties).
    var v5 = false

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

    /// An acknowledgement's tail after its packet id (MQTT 5 3.4.2): an optional reason code,
    /// then optional properties; nothing in MQTT 3.1.1. The reason code (0 when left out).
    mutating func ackTail() throws(MQTTError) -> UInt8 {
        guard v5, !isAtEnd else { return 0 }
        let reason = try byte()
        if !isAtEnd { _ = try properties() }
        return reason
    }

    mutating func rest() -> [UInt8] {
        defer { offset = bytes.endIndex }
        return Array(bytes[offset...])
    }
}
