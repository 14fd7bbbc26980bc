/// MQTT 5 properties (OASIS MQTT 5.0, 2.2.2): the list a packet carries after its variable
/// header, each an identifier and a value of the type the identifier fixes. Read with every
/// length checked against what is left of the packet; an unknown identifier, a value of the
/// wrong shape or a property given twice that may appear once is a malformed packet.
public struct MQTTProperties: Sendable, Equatable {
    /// One property's value, by the type its identifier fixes (2.2.2.2).
    public enum Value: Sendable, Equatable {
        case byte(UInt8)
        case twoByte(UInt16)
        case fourByte(UInt32)
        /// A variable byte integer (at most 268 435 455).
        case variable(UInt32)
        case string(String)
        case binary([UInt8])
        case pair(String, String)
    }

    /// The identifiers this codec knows and the shape of each one's value.
    enum Shape { case byte, twoByte, fourByte, variable, string, binary, pair }

    static let shapes: [UInt8: Shape] = [
        0x01: .byte, 0x02: .fourByte, 0x03: .string, 0x08: .string, 0x09: .binary, 0x0B: .variable,
        0x11: .fourByte, 0x12: .string, 0x13: .twoByte, 0x15: .string, 0x16: .binary, 0x17: .byte,
        0x18: .fourByte, 0x19: .byte, 0x1A: .string, 0x1C: .string, 0x1F: .string, 0x21: .twoByte,
        0x22: .twoByte, 0x23: .twoByte, 0x24: .byte, 0x25: .byte, 0x26: .pair, 0x27: .fourByte,
        0x28: .byte, 0x29: .byte, 0x2A: .byte,
    ]

    /// Identifiers that may appear more than once: user properties, subscription identifiers.
    static let repeatable: Set<UInt8> = [0x26, 0x0B]

    /// The properties in the order they came.
    public var items: [(id: UInt8, value: Value)]

    public init(_ items: [(id: UInt8, value: Value)] = []) { self.items = items }

    public static func == (left: MQTTProperties, right: MQTTProperties) -> Bool {
        left.items.count == right.items.count
            && zip(left.items, right.items).allSatisfy { $0.id == $1.id && $0.value == $1.value }
    }

    /// The first value of property `id`.
    public subscript(id: UInt8) -> Value? { items.first { $0.id == id }?.value }

    /// Message Expiry Interval (0x02), seconds.
    public var messageExpiry: UInt32? { if case .fourByte(let value)? = self[0x02] { value } else { nil } }
    /// Response Topic (0x08).
    public var responseTopic: String? { if case .string(let value)? = self[0x08] { value } else { nil } }
    /// Correlation Data (0x09).
    public var correlationData: [UInt8]? { if case .binary(let value)? = self[0x09] { value } else { nil } }
    /// Server Keep Alive (0x13), seconds: the keep-alive the client must use instead of its own.
    public var serverKeepAlive: UInt16? { if case .twoByte(let value)? = self[0x13] { value } else { nil } }
    /// Reason String (0x1F).
    public var reasonString: String? { if case .string(let value)? = self[0x1F] { value } else { nil } }
    /// User Properties (0x26), in order.
    public var userProperties: [(String, String)] {
        items.compactMap { if case .pair(let key, let value) = $0.value, $0.id == 0x26 { (key, value) } else { nil } }
    }

    /// The property length (a variable byte integer) and the properties.
    public func encoded() -> [UInt8] {
        var body: [UInt8] = []
        for (id, value) in items {
            body.append(id)
            switch value {
            case .byte(let byte): body.append(byte)
            case .twoByte(let number): body.appendUInt16(number)
            case .fourByte(let number):
                for shift in stride(from: 24, through: 0, by: -8) {
                    body.append(UInt8(truncatingIfNeeded: number >> shift))
                }
            case .variable(let number): body.appendVariableInteger(Int(number))
            case .string(let text): body.appendString(text)
            case .binary(let bytes): body.appendBytes(bytes)
            case .pair(let key, let text):
                body.appendString(key)
                body.appendString(text)
            }
        }
        var encoded: [UInt8] = []
        encoded.appendVariableInteger(body.count)
        return encoded + body
    }
}

extension BodyReader {
    /// A variable byte integer (1.5.5): at most four bytes.
    mutating func variableInteger() throws(MQTTError) -> Int {
        var value = 0
        var multiplier = 1
        for _ in 0..<4 {
            let digit = try byte()
            value += Int(digit & 0x7F) * multiplier
            if digit & 0x80 == 0 { return value }
            multiplier *= 128
        }
        throw .malformed(packet, "a variable byte integer of more than 4 bytes")
    }

    /// A property list (MQTT 5, 2.2.2): its length, then properties filling exactly that length.
    mutating func properties() throws(MQTTError) -> MQTTProperties {
        let length = try variableInteger()
        guard length <= remaining else {
            throw .malformed(packet, "\(length) bytes of properties with \(remaining) byte(s) left")
        }
        let end = offset + length
        var result = MQTTProperties()
        var seen: Set<UInt8> = []
        while offset < end {
            let id = try byte()
            guard let shape = MQTTProperties.shapes[id] else {
                throw .malformed(packet, "unknown property 0x\(String(id, radix: 16))")
            }
            guard seen.insert(id).inserted || MQTTProperties.repeatable.contains(id) else {
                throw .malformed(packet, "property 0x\(String(id, radix: 16)) given twice")
            }
            let value: MQTTProperties.Value
            switch shape {
            case .byte: value = .byte(try byte())
            case .twoByte: value = .twoByte(try uint16())
            case .fourByte: value = .fourByte(UInt32(try uint16()) << 16 | UInt32(try uint16()))
            case .variable: value = .variable(UInt32(try variableInteger()))
            case .string: value = .string(try string())
            case .binary: value = .binary(try field())
            case .pair: value = .pair(try string(), try string())
            }
            guard offset <= end else {
                throw .malformed(packet, "property 0x\(String(id, radix: 16)) runs past the property length")
            }
            result.items.append((id, value))
        }
        return result
    }
}

extension MQTTProperties {
    /// Reads a property list (its length first) from the front of `bytes`, for `packet` (named
    /// in errors); returns it and the bytes after it.
    public static func read(_ bytes: ArraySlice<UInt8>, packet: String) throws(MQTTError) -> (
        properties: MQTTProperties, rest: ArraySlice<UInt8>
    ) {
        var reader = BodyReader(bytes: bytes)
        reader.packet = packet
        let properties = try reader.properties()
        return (properties, bytes[reader.offset...])
    }
}
