/// A frame that breaks the worker protocol, or a channel that failed. The worker behind it
/// can no longer be trusted, so the host kills it and names the reason.
struct WireError: Error, CustomStringConvertible, Equatable, Sendable {
    enum Code: Equatable, Sendable {
        /// The header does not start with "SHWP".
        case badMagic(UInt32)
        /// The other side speaks another protocol version.
        case badVersion(UInt16)
        /// A frame type this side does not know.
        case unknownType(UInt16)
        /// A payload over Wire.maxPayload.
        case tooLarge(UInt32)
        /// The payload ended before `what`.
        case truncated(what: String)
        /// A value that cannot be right.
        case malformed(String)
        /// A system call on the channel failed (errno kept).
        case system(SystemError)
    }

    let code: Code

    init(_ code: Code) { self.code = code }

    static func truncated(_ what: String) -> WireError { WireError(.truncated(what: what)) }
    static func malformed(_ what: String) -> WireError { WireError(.malformed(what)) }

    var description: String {
        switch code {
        case .badMagic(let magic): "a frame does not start with SHWP (0x\(String(magic, radix: 16)))"
        case .badVersion(let version): "it speaks protocol version \(version), this host speaks \(Wire.version)"
        case .unknownType(let type): "unknown frame type \(type)"
        case .tooLarge(let length): "a \(length)-byte frame is over the \(Wire.maxPayload)-byte limit"
        case .truncated(let what): "a frame ends before its \(what)"
        case .malformed(let what): "malformed frame: \(what)"
        case .system(let error): "\(error.operation): \(error.reason)"
        }
    }
}
