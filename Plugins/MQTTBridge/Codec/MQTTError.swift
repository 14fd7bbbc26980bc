/// Why bytes from the broker are not a packet the client accepts: the packet and the reason.
public struct MQTTError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What kind of problem, for code that reacts to it; its raw value is the bridge's
    /// `error=` log field.
    public enum Code: String, Sendable, Equatable {
        /// The remaining length uses more than four bytes.
        case malformedLength
        /// The remaining length is over the client's limit.
        case tooLarge
        /// The packet's bytes break its layout (too short, extra bytes, bad flags, bad UTF-8).
        case malformed
        /// A packet type 0 or 15 (reserved).
        case unknownType
    }

    public let code: Code
    /// The packet's name (`PUBACK`) when its type was read.
    public let packet: String?
    /// The sentence for the log: names the packet and the reason.
    public let description: String

    init(_ code: Code, packet: String? = nil, _ description: String) {
        self.code = code
        self.packet = packet
        self.description = description
    }

    static func malformed(_ packet: String, _ reason: String) -> MQTTError {
        MQTTError(.malformed, packet: packet, "malformed \(packet) packet: \(reason)")
    }
}
