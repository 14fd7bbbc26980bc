/// MQTT 5 reason codes (OASIS MQTT 5.0, 2.4) by name, for the log's `reason=` field: a stable
/// word a script can match (`notAuthorized`, `sessionTakenOver`), where MQTT 3.1.1 had only
/// CONNACK's six return codes (``MQTTConnectReturn``).
public enum MQTTReasonCode {
    /// The name of `code` as `packet` (`CONNACK`, `PUBACK`, `SUBACK`, `DISCONNECT`, …) uses it;
    /// `unknown0xNN` for a code the specification does not define.
    public static func name(_ code: UInt8, packet: String) -> String {
        switch code {
        case 0x00:
            switch packet {
            case "DISCONNECT": "normalDisconnection"
            case "SUBACK": "grantedQoS0"
            default: "success"
            }
        case 0x01: "grantedQoS1"
        case 0x02: "grantedQoS2"
        default: names[code] ?? "unknown0x" + (code < 16 ? "0" : "") + String(code, radix: 16, uppercase: true)
        }
    }

    /// Whether `code` says the request failed (0x80 and above).
    public static func isFailure(_ code: UInt8) -> Bool { code >= 0x80 }

    static let names: [UInt8: String] = [
        0x04: "disconnectWithWillMessage", 0x10: "noMatchingSubscribers", 0x11: "noSubscriptionExisted",
        0x18: "continueAuthentication", 0x19: "reAuthenticate", 0x80: "unspecifiedError", 0x81: "malformedPacket",
        0x82: "protocolError", 0x83: "implementationSpecificError", 0x84: "unsupportedProtocolVersion",
        0x85: "clientIdentifierNotValid", 0x86: "badUserNameOrPassword", 0x87: "notAuthorized",
        0x88: "serverUnavailable", 0x89: "serverBusy", 0x8A: "banned", 0x8B: "serverShuttingDown",
        0x8C: "badAuthenticationMethod", 0x8D: "keepAliveTimeout", 0x8E: "sessionTakenOver",
        0x8F: "topicFilterInvalid", 0x90: "topicNameInvalid", 0x91: "packetIdentifierInUse",
        0x92: "packetIdentifierNotFound", 0x93: "receiveMaximumExceeded", 0x94: "topicAliasInvalid",
        0x95: "packetTooLarge", 0x96: "messageRateTooHigh", 0x97: "quotaExceeded", 0x98: "administrativeAction",
        0x99: "payloadFormatInvalid", 0x9A: "retainNotSupported", 0x9B: "qosNotSupported", 0x9C: "useAnotherServer",
        0x9D: "serverMoved", 0x9E: "sharedSubscriptionsNotSupported", 0x9F: "connectionRateExceeded",
        0xA0: "maximumConnectTime", 0xA1: "subscriptionIdentifiersNotSupported",
        0xA2: "wildcardSubscriptionsNotSupported",
    ]
}
