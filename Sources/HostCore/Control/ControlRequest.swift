import ServiceABI
import ServiceJSON

/// One request of the control protocol: a JSON object on one line, `{"command": …}`.
///
/// Parsed off the main thread; everything it holds is validated and Sendable.
public struct ControlRequest: Sendable {
    /// What to do.
    public enum Command: Sendable {
        case state, list, reload
        case lifecycle(LifecycleCommand)
        case memoryWarning
        case push(PushPayload, tapAction: String?)
        case open(OpenURLInput)
        case activity(UserActivityInput)
        case token(DeviceToken)
        case tokenError(String)
        case post(name: String, payload: JSONValue?)
        /// A request for the service that answers `name`; `payload` is its JSON text.
        case request(name: String, payload: [UInt8]?)
        case scene(SceneCommand)
        /// Sets the notification authorization (nil: reads it).
        case authorization(AuthorizationStatus?)
        case operate(ControlMessage.Operate)
    }

    /// The lifecycle commands.
    public typealias LifecycleCommand = ControlMessage.Lifecycle

    /// The longest notification name a `post` may carry, in bytes (README, Limits).
    public static let maxName = 255
    /// The longest `token-error` message, in bytes (README, Limits).
    public static let maxMessage = 4096

    /// The client's `id`, echoed in the reply.
    public let id: JSONValue?
    /// The command.
    public let command: Command

    /// Parses one request line. A refusal carries the request's id when it could be read.
    public static func parse(_ line: [UInt8], maxPayload: Int) -> Result<ControlRequest, ControlRefusal> {
        line.withUnsafeBytes { parse($0, maxPayload: maxPayload) }
    }

    /// Parses one request line, read in place.
    public static func parse(_ line: UnsafeRawBufferPointer, maxPayload: Int) -> Result<ControlRequest, ControlRefusal> {
        if let plain = PlainRequest.parse(line) { return .success(plain) }
        return parseFully(line, maxPayload: maxPayload)
    }

    /// Parses one request line through `JSONValue`: every request the fast path
    /// (``PlainRequest``) leaves, and the reference it is tested against.
    static func parseFully(_ line: UnsafeRawBufferPointer, maxPayload: Int) -> Result<ControlRequest, ControlRefusal> {
        guard line.withMemoryRebound(to: UInt8.self, { String(validating: $0, as: UTF8.self) }) != nil else {
            return .failure(ControlRefusal(id: nil, message: "the request is not valid UTF-8"))
        }
        let value: JSONValue
        do { value = try JSONValue(parsing: line) } catch {
            return .failure(ControlRefusal(id: nil, message: "malformed JSON: \(error)"))
        }
        guard case .object(let object) = value else {
            return .failure(ControlRefusal(id: nil, message: "a request must be a JSON object like {\"command\":\"state\"}"))
        }
        let id = object[.id]
        do throws(InputError) {
            let message = try ControlMessage(json: object)
            return .success(ControlRequest(id: id, command: try command(message.command, maxPayload: maxPayload)))
        } catch {
            return .failure(ControlRefusal(id: id, message: error.message))
        }
    }

    /// Checks the values of `message` and turns them into what the host takes.
    private static func command(_ message: ControlMessage.Command, maxPayload: Int) throws(InputError) -> Command {
        switch message {
        case .state: return .state
        case .list: return .list
        case .reload: return .reload
        case .memoryWarning: return .memoryWarning
        case .lifecycle(let move): return .lifecycle(move)
        case .push(let payload, let tap, let action):
            // The text form is the payload's exact bytes; an object is taken as its serialization.
            let text: [UInt8]
            if case .string(let string) = payload { text = Array(string.utf8) } else { text = Array(payload.serialized.utf8) }
            try checkSize(text.count, .payload, maxPayload)
            return .push(try PushPayload(parsing: text), tapAction: action ?? (tap ? SH_ACTION_DEFAULT : nil))
        case .open(let url):
            return .open(try OpenURLInput(url))
        case .activity(let activity):
            return .activity(try activity.input(maxPayload: maxPayload))
        case .token(let hex):
            return .token(try DeviceToken(hex: hex))
        case .tokenError(let message):
            guard message.utf8.count <= maxMessage else {
                throw InputError("token-error: the message is \(message.utf8.count) bytes, over the limit of \(maxMessage)")
            }
            return .tokenError(message)
        case .post(let name, let payload):
            if let payload { try checkSize(payload, .payload, maxPayload) }
            guard !name.isEmpty else { throw InputError("post: \"\(ControlKey.name.rawValue)\" is empty") }
            guard name.utf8.count <= maxName else {
                throw InputError("post: the name is \(name.utf8.count) bytes, over the limit of \(maxName)")
            }
            return .post(name: name, payload: payload)
        case .request(let name, let payload):
            if let payload { try checkSize(payload, .payload, maxPayload) }
            guard !name.isEmpty else { throw InputError("request: \"\(ControlKey.name.rawValue)\" is empty") }
            guard name.utf8.count <= maxName else {
                throw InputError("request: the name is \(name.utf8.count) bytes, over the limit of \(maxName)")
            }
            return .request(name: name, payload: payload.map { Array($0.serialized.utf8) })
        case .scene(let scene):
            return .scene(try SceneCommand(scene, maxPayload: maxPayload))
        case .authorization(let name):
            guard let name else { return .authorization(nil) }
            guard let status = AuthorizationStatus(name: name) else {
                throw InputError(
                    "authorization: unknown status \"\(name)\" (one of "
                        + AuthorizationStatus.allCases.map(\.name).joined(separator: ", ") + ")")
            }
            return .authorization(status)
        case .operate(let operate):
            return .operate(operate)
        }
    }

    static func checkSize(_ value: JSONValue, _ key: ControlKey, _ limit: Int) throws(InputError) {
        try checkSize(value.serialized.utf8.count, key, limit)
    }

    static func checkSize(_ size: Int, _ key: ControlKey, _ limit: Int) throws(InputError) {
        if size > limit { throw InputError("\(key.rawValue) is \(size) bytes, over the limit of \(limit) (--max-payload)") }
    }
}

extension ControlMessage.Activity {
    /// The activity the host delivers, its `userInfo` within `maxPayload`.
    func input(maxPayload: Int) throws(InputError) -> UserActivityInput {
        if let userInfo { try ControlRequest.checkSize(userInfo, .userInfo, maxPayload) }
        return try UserActivityInput(type: type, webpageURL: url, userInfo: userInfo)
    }
}

/// A request the host refuses, answered with `{"ok": false, "error": …}`.
public struct ControlRefusal: Error, Sendable {
    /// The request's id, when it could be read.
    public let id: JSONValue?
    /// Why.
    public let message: String
}
