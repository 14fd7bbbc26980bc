extension MQTTPacket {
    /// The packet's bytes on the wire in `version`: fixed header, remaining length, body. MQTT
    /// 3.1.1 leaves reason codes and properties out.
    public func encoded(version: MQTTVersion = .v3_1_1) -> [UInt8] {
        let v5 = version == .v5
        var body: [UInt8] = []
        let first: UInt8
        switch self {
        case .connect(let connect):
            first = 0x10
            body.appendString("MQTT")
            body.append(version.rawValue)
            var flags: UInt8 = connect.cleanSession ? 0x02 : 0
            if let will = connect.will { flags |= 0x04 | (will.qos & 3) << 3 | (will.retain ? 0x20 : 0) }
            if connect.password != nil { flags |= 0x40 }
            if connect.username != nil { flags |= 0x80 }
            body.append(flags)
            body.appendUInt16(connect.keepAlive)
            if v5 { body += connect.properties.encoded() }
            body.appendString(connect.clientID)
            if let will = connect.will {
                if v5 { body += will.properties.encoded() }
                body.appendString(will.topic)
                body.appendBytes(will.payload)
            }
            if let username = connect.username { body.appendString(username) }
            if let password = connect.password { body.appendBytes(password) }
        case .connack(let sessionPresent, let code, let properties):
            first = 0x20
            body = [sessionPresent ? 1 : 0, code]
            if v5 { body += properties.encoded() }
        case .publish(let publish):
            first = 0x30 | (publish.dup ? 0x08 : 0) | (publish.qos & 3) << 1 | (publish.retain ? 1 : 0)
            body.appendString(publish.topic)
            if publish.qos > 0 { body.appendUInt16(publish.id ?? 0) }
            if v5 { body += publish.properties.encoded() }
            body += publish.payload
        case .puback(let id, let reason):
            first = 0x40
            body.appendUInt16(id)
            // MQTT 5 3.4.2.1: a success with no properties may leave the reason code out.
            if v5 && reason != 0 { body.append(reason) }
        case .pubrec(let id):
            first = 0x50
            body.appendUInt16(id)
        case .pubrel(let id):
            first = 0x62
            body.appendUInt16(id)
        case .pubcomp(let id):
            first = 0x70
            body.appendUInt16(id)
        case .subscribe(let id, let filters):
            first = 0x82
            body.appendUInt16(id)
            if v5 { body.append(0) }  // no properties
            for entry in filters {
                body.appendString(entry.filter)
                body.append(entry.qos)
            }
        case .suback(let id, let codes):
            first = 0x90
            body.appendUInt16(id)
            if v5 { body.append(0) }
            body += codes
        case .unsubscribe(let id, let filters):
            first = 0xA2
            body.appendUInt16(id)
            if v5 { body.append(0) }
            for filter in filters { body.appendString(filter) }
        case .unsuback(let id):
            first = 0xB0
            body.appendUInt16(id)
            if v5 { body += [0, 0] }  // no properties; one reason code, success
        case .pingreq: first = 0xC0
        case .pingresp: first = 0xD0
        case .disconnect(let reason, let properties):
            first = 0xE0
            // MQTT 5 3.14.2: a normal disconnection with no properties is an empty body.
            if v5 && (reason != 0 || !properties.items.isEmpty) { body = [reason] + properties.encoded() }
        }
        var bytes = [first]
        bytes.appendVariableInteger(body.count)
        return bytes + body
    }
}

extension [UInt8] {
    mutating func appendUInt16(_ value: UInt16) {
        append(UInt8(value >> 8))
        append(UInt8(value & 0xFF))
    }

    /// A length-prefixed byte string (at most 65 535 bytes; longer is cut, which callers prevent).
    mutating func appendBytes(_ bytes: [UInt8]) {
        let count = Swift.min(bytes.count, 65535)
        appendUInt16(UInt16(count))
        self += bytes[..<count]
    }

    mutating func appendString(_ text: String) { appendBytes(Array(text.utf8)) }

    /// A variable byte integer (1.5.5): the remaining length, a property length, 0x0B's value.
    mutating func appendVariableInteger(_ value: Int) {
        var value = value
        repeat {
            var digit = UInt8(value % 128)
            value /= 128
            if value > 0 { digit |= 0x80 }
            append(digit)
        } while value > 0
    }
}
