import Glibc
import MQTTCodec
import ServiceKit

/// MQTTBridge's settings, its `settings` object in services.json:
///
///     {"broker": "tcp://127.0.0.1:1883", "hostId": "kiosk-17", "commands": false}
///
/// Only `broker` is required; without settings the bridge does nothing and opens no socket.
/// Any bad value is an error naming the key: the bridge then stays off rather than guess.
struct MQTTBridgeSettings: Equatable {
    /// `broker`: where the broker listens.
    var broker: BrokerAddress
    /// `hostId`: this host's name in the fleet; default the machine's host name.
    var hostID: String
    /// `clientId`: the MQTT client id; default ``hostID``. The broker keeps the session
    /// (subscriptions, QoS 1 messages) under it while the host is away.
    var clientID: String
    /// `username`, and the password read from `passwordFile` (refused when group or others
    /// may read or write it, as ssh refuses a key).
    var username: String?
    var password: [UInt8]?
    /// `keepAlive`: seconds, 1 to 65 535; default 30. A dead host is seen within 1.5× this.
    var keepAlive: UInt16 = 30
    /// `prefix`: this host's topics; default `servicehost/<hostId>`.
    var prefix: String
    /// `qos`: 0 or 1, for what the bridge publishes (state, replies); default 1. Subscriptions
    /// are always QoS 1.
    var qos: UInt8 = 1
    /// `commands`: whether `<prefix>/ctl` requests are carried out; default false (refused).
    var commands = false
    /// `maxPacket`: the largest packet accepted from the broker, in bytes; default 1 MiB.
    var maxPacket = 1 << 20
    /// `protocol`: the MQTT version spoken, `"5"` (the default) or `"3.1.1"` (issue 41).
    var protocolVersion = ProtocolVersion.v5
    /// `sessionExpiry`: MQTT 5, seconds the broker keeps this host's session (subscriptions,
    /// QoS 1 messages) after it disconnects; default 604 800 (a week). MQTT 3.1.1 keeps it for
    /// ever (clean session 0).
    var sessionExpiry: UInt32 = 604_800
    /// `reportInterval`: seconds between looks at the services' state and health for the
    /// fleet's reported state, published only when it changed (issue 41); default 30.
    var reportInterval = 30.0

    /// The versions of MQTT the `protocol` setting names.
    enum ProtocolVersion: String, CaseIterable {
        case v3_1_1 = "3.1.1"
        case v5 = "5"

        /// The codec's version.
        var codec: MQTTVersion { self == .v5 ? .v5 : .v3_1_1 }
    }

    /// The fleet-wide topics every host subscribes to.
    static let fleetPrefix = "servicehost/all"

    static let keys = [
        "broker", "hostId", "clientId", "username", "passwordFile", "keepAlive", "prefix", "qos", "commands",
        "maxPacket", "protocol", "sessionExpiry", "reportInterval",
    ]

    /// Why settings were refused: names the key (the codec's type: ``BrokerAddress`` throws it).
    typealias Problem = MQTTSettingsProblem

    /// Reads `options.settings`; nil when there are none (the bridge is not configured).
    static func read(_ settings: JSONValue?) throws(Problem) -> MQTTBridgeSettings? {
        guard let settings else { return nil }
        guard let members = settings.objectValue else {
            throw Problem("settings must be an object such as {\"broker\": \"tcp://127.0.0.1:1883\"}, not \(settings)")
        }
        for key in members.keys.sorted() where !keys.contains(key) {
            throw Problem("unknown setting \"\(key)\" (known: \(keys.joined(separator: ", ")))")
        }
        guard let brokerText = members["broker"]?.stringValue else {
            throw Problem("settings.broker is required: \"tcp://HOST:PORT\" or \"unix:/PATH\"")
        }
        let broker = try BrokerAddress.parse(brokerText)
        let hostID = try string(members, "hostId") ?? machineName()
        guard !hostID.isEmpty,
            !hostID.utf8.contains(where: {
                $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "+") || $0 == UInt8(ascii: "#")
            })
        else {
            throw Problem("settings.hostId \"\(hostID)\" must be non-empty without /, + or #")
        }
        var result = MQTTBridgeSettings(
            broker: broker, hostID: hostID, clientID: try string(members, "clientId") ?? hostID,
            prefix: try string(members, "prefix") ?? "servicehost/\(hostID)")
        guard result.clientID.utf8.count <= 65535, !result.clientID.isEmpty else {
            throw Problem("settings.clientId must be 1 to 65 535 bytes")
        }
        guard !result.prefix.isEmpty, !result.prefix.contains("+"), !result.prefix.contains("#"),
            !result.prefix.hasSuffix("/")
        else {
            throw Problem("settings.prefix \"\(result.prefix)\" must be a topic without wildcards or a trailing /")
        }
        result.username = try string(members, "username")
        if let path = try string(members, "passwordFile") { result.password = try readSecret(path) }
        if let value = members["keepAlive"] {
            guard let seconds = value.intValue, (1...65535).contains(seconds) else {
                throw Problem("settings.keepAlive must be 1 to 65535 seconds, not \(value)")
            }
            result.keepAlive = UInt16(seconds)
        }
        if let value = members["qos"] {
            guard let qos = value.intValue, qos == 0 || qos == 1 else {
                throw Problem("settings.qos must be 0 or 1, not \(value) (QoS 2 is not supported)")
            }
            result.qos = UInt8(qos)
        }
        if let value = members["commands"] {
            guard case .bool(let on) = value else {
                throw Problem("settings.commands must be true or false, not \(value)")
            }
            result.commands = on
        }
        if let value = members["maxPacket"] {
            guard let bytes = value.intValue, (1024...(256 << 20)).contains(bytes) else {
                throw Problem("settings.maxPacket must be 1024 to 268435456 bytes, not \(value)")
            }
            result.maxPacket = bytes
        }
        if let value = members["protocol"] {
            guard let text = value.stringValue, let version = ProtocolVersion(rawValue: text) else {
                throw Problem("settings.protocol must be \"3.1.1\" or \"5\", not \(value)")
            }
            result.protocolVersion = version
        }
        if let value = members["sessionExpiry"] {
            guard let seconds = value.intValue, (0...Int(UInt32.max)).contains(seconds) else {
                throw Problem("settings.sessionExpiry must be 0 to 4294967295 seconds, not \(value)")
            }
            result.sessionExpiry = UInt32(seconds)
        }
        if let value = members["reportInterval"] {
            guard let seconds = value.doubleValue, seconds >= 0.1, seconds <= 86400 else {
                throw Problem("settings.reportInterval must be 0.1 to 86400 seconds, not \(value)")
            }
            result.reportInterval = seconds
        }
        return result
    }

    private static func string(_ members: [String: JSONValue], _ key: String) throws(Problem) -> String? {
        guard let value = members[key] else { return nil }
        guard let text = value.stringValue else { throw Problem("settings.\(key) must be a string, not \(value)") }
        return text
    }

    /// The password file's contents without a trailing newline; refused when group or others
    /// have any access to it (its mode is named).
    static func readSecret(_ path: String) throws(Problem) -> [UInt8] {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw Problem("settings.passwordFile \(path): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            throw Problem("settings.passwordFile \(path): \(String(cString: strerror(errno)))")
        }
        guard info.st_mode & 0o077 == 0 else {
            throw Problem(
                "settings.passwordFile \(path) is readable or writable by group or others (mode 0\(String(info.st_mode & 0o777, radix: 8))): refused (chmod 600 it)"
            )
        }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while bytes.count <= 65535 {
            let count = chunk.withUnsafeMutableBytes { bytes in
                retryingOnInterrupt { Glibc.read(fd, bytes.baseAddress, bytes.count) }
            }
            guard count > 0 else { break }
            bytes += chunk[..<count]
        }
        while let last = bytes.last, last == 10 || last == 13 { bytes.removeLast() }
        guard bytes.count <= 65535 else { throw Problem("settings.passwordFile \(path) is over 65535 bytes") }
        return bytes
    }

    /// The machine's host name (`gethostname`).
    static func machineName() -> String {
        var name = [CChar](repeating: 0, count: 256)
        guard gethostname(&name, name.count - 1) == 0 else { return "localhost" }
        return String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
