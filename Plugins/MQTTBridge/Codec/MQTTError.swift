/// Why bytes from the broker are not a packet the client accepts: the packet and the reason.
public struct MQTTError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What kind of problem, for code that reacts to it.
    public enum Code: Sendable, Equatable {
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
    /// The sentence for the log: names the packet and the reason.
    public let description: String

    init(_ code: Code, _ description: String) {
        self.code = code
        self.description = description
    }

    static func malformed(_ packet: String, _ reason: String) -> MQTTError {
        MQTTError(.malformed, "malformed \(packet) packet: \(reason)")
    }
}
