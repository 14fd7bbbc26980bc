/// One MQTT 3.1.1 control packet (OASIS MQTT 3.1.1, section 3): the packets a client sends
/// and receives. QoS 2's PUBREC, PUBREL and PUBCOMP are read so a broker that sends them
/// gets a clear error from the client instead of a parse failure.
public enum MQTTPacket: Sendable, Equatable {
    case connect(MQTTConnect)
    /// CONNACK: whether the broker kept a session, and its return code (0: accepted).
    case connack(sessionPresent: Bool, returnCode: UInt8)
    case publish(MQTTPublish)
    case puback(id: UInt16)
    case pubrec(id: UInt16)
    case pubrel(id: UInt16)
    case pubcomp(id: UInt16)
    /// SUBSCRIBE: topic filters with their requested QoS.
    case subscribe(id: UInt16, filters: [MQTTSubscription])
    /// SUBACK: one return code per filter (0–2: the granted QoS; 0x80: refused).
    case suback(id: UInt16, codes: [UInt8])
    case unsubscribe(id: UInt16, filters: [String])
    case unsuback(id: UInt16)
    case pingreq, pingresp, disconnect

    /// The packet type's name, as the specification spells it.
    public var name: String {
        switch self {
        case .connect: "CONNECT"
        case .connack: "CONNACK"
        case .publish: "PUBLISH"
        case .puback: "PUBACK"
        case .pubrec: "PUBREC"
        case .pubrel: "PUBREL"
        case .pubcomp: "PUBCOMP"
        case .subscribe: "SUBSCRIBE"
        case .suback: "SUBACK"
        case .unsubscribe: "UNSUBSCRIBE"
        case .unsuback: "UNSUBACK"
        case .pingreq: "PINGREQ"
        case .pingresp: "PINGRESP"
        case .disconnect: "DISCONNECT"
        }
    }
}

/// CONNECT's variable header and payload.
public struct MQTTConnect: Sendable, Equatable {
    public var clientID: String
    /// `false`: the broker keeps the session (subscriptions, QoS 1 messages) while we are away.
    public var cleanSession: Bool
    /// Seconds; 0 turns keep-alive off.
    public var keepAlive: UInt16
    public var will: MQTTPublish?
    public var username: String?
    public var password: [UInt8]?

    public init(
        clientID: String, cleanSession: Bool, keepAlive: UInt16, will: MQTTPublish? = nil,
        username: String? = nil, password: [UInt8]? = nil
    ) {
        self.clientID = clientID
        self.cleanSession = cleanSession
        self.keepAlive = keepAlive
        self.will = will
        self.username = username
        self.password = password
    }
}

/// PUBLISH: a message on a topic.
public struct MQTTPublish: Sendable, Equatable {
    public var topic: String
    public var payload: [UInt8]
    /// 0 or 1 (2 is read, and refused by the client).
    public var qos: UInt8
    public var retain: Bool
    /// A redelivery of a message the receiver may have seen (QoS > 0).
    public var dup: Bool
    /// The packet identifier; present when `qos > 0`.
    public var id: UInt16?

    public init(
        topic: String, payload: [UInt8], qos: UInt8 = 0, retain: Bool = false, dup: Bool = false, id: UInt16? = nil
    ) {
        self.topic = topic
        self.payload = payload
        self.qos = qos
        self.retain = retain
        self.dup = dup
        self.id = id
    }
}

/// One SUBSCRIBE entry.
public struct MQTTSubscription: Sendable, Equatable {
    public var filter: String
    public var qos: UInt8

    public init(_ filter: String, qos: UInt8) {
        self.filter = filter
        self.qos = qos
    }
}

/// CONNACK's return codes (3.2.2.3), as sentences for the log.
public enum MQTTConnectReturn {
    /// Why the broker refused a connection with `code`.
    public static func describe(_ code: UInt8) -> String {
        switch code {
        case 0: "accepted"
        case 1: "unacceptable protocol version (the broker does not speak MQTT 3.1.1)"
        case 2: "identifier rejected (the broker refuses the client id)"
        case 3: "server unavailable"
        case 4: "bad user name or password"
        case 5: "not authorized"
        default: "unknown return code \(code)"
        }
    }
}
