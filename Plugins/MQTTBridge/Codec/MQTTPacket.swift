/// One MQTT control packet (OASIS MQTT 3.1.1 and 5.0, section 3): the packets a client sends
/// and receives. The bytes depend on the version spoken (``MQTTVersion``): MQTT 5 adds reason
/// codes and property lists, which an MQTT 3.1.1 encoding leaves out. QoS 2's PUBREC, PUBREL and PUBCOMP are read so a broker that sends them
/// gets a clear error from the client instead of a parse failure.
public enum MQTTPacket: Sendable, Equatable {
    case connect(MQTTConnect)
    /// CONNACK: whether the broker kept a session, and its return code (0: accepted; MQTT 5:
    /// a reason code, ``MQTTReasonCode``) and properties (MQTT 5).
    case connack(sessionPresent: Bool, returnCode: UInt8, properties: MQTTProperties = MQTTProperties())
    case publish(MQTTPublish)
    /// PUBACK: the packet id and (MQTT 5) its reason code.
    case puback(id: UInt16, reason: UInt8 = 0)
    case pubrec(id: UInt16)
    case pubrel(id: UInt16)
    case pubcomp(id: UInt16)
    /// SUBSCRIBE: topic filters with their requested QoS.
    case subscribe(id: UInt16, filters: [MQTTSubscription])
    /// SUBACK: one return code per filter (0–2: the granted QoS; 0x80 and above: refused, an
    /// MQTT 5 reason code).
    case suback(id: UInt16, codes: [UInt8])
    case unsubscribe(id: UInt16, filters: [String])
    case unsuback(id: UInt16)
    case pingreq, pingresp
    /// DISCONNECT: (MQTT 5) a reason code and properties (a reason string).
    case disconnect(reason: UInt8 = 0, properties: MQTTProperties = MQTTProperties())

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
    /// MQTT 5: the CONNECT properties (session expiry interval 0x11); the will's are its own.
    public var properties: MQTTProperties

    public init(
        clientID: String, cleanSession: Bool, keepAlive: UInt16, will: MQTTPublish? = nil,
        username: String? = nil, password: [UInt8]? = nil, properties: MQTTProperties = MQTTProperties()
    ) {
        self.properties = properties
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
    /// MQTT 5: the PUBLISH properties (message expiry, response topic, correlation data, user
    /// properties).
    public var properties: MQTTProperties

    public init(
        topic: String, payload: [UInt8], qos: UInt8 = 0, retain: Bool = false, dup: Bool = false, id: UInt16? = nil,
        properties: MQTTProperties = MQTTProperties()
    ) {
        self.properties = properties
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

/// The MQTT version spoken, by its protocol level.
public enum MQTTVersion: UInt8, Sendable, Equatable {
    case v3_1_1 = 4
    case v5 = 5
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
