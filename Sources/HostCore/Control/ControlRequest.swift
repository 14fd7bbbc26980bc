import ServiceJSON
import ServiceABI

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
        case scene(SceneCommand)
    }

    /// The lifecycle commands and the state each asks for.
    public enum LifecycleCommand: String, Sendable, CaseIterable {
        case activate, resign, background, foreground, terminate
    }

    /// The client's `id`, echoed in the reply.
    public let id: JSONValue?
    /// The command.
    public let command: Command

    /// The command names, as clients spell them.
    public static let commandNames = ["state", "list", "reload", "activate", "resign", "background", "foreground", "terminate",
                                      "memory-warning", "push", "open", "activity", "token", "token-error", "post",
                                      "scene"]

    /// Parses one request line. A refusal carries the request's id when it could be read.
    public static func parse(_ line: [UInt8], maxPayload: Int) -> Result<ControlRequest, ControlRefusal> {
        guard String(validating: line, as: UTF8.self) != nil else {
            return .failure(ControlRefusal(id: nil, message: "the request is not valid UTF-8"))
        }
        let value: JSONValue
        do { value = try JSONValue(parsing: line) } catch {
            return .failure(ControlRefusal(id: nil, message: "malformed JSON: \(error)"))
        }
        guard case .object(let object) = value else {
            return .failure(ControlRefusal(id: nil, message: "a request must be a JSON object like {\"command\":\"state\"}"))
        }
        let id = object["id"]
        do throws(InputError) {
            return .success(ControlRequest(id: id, command: try command(object, maxPayload: maxPayload)))
        } catch {
            return .failure(ControlRefusal(id: id, message: error.message))
        }
    }

    private static func command(_ object: [String: JSONValue], maxPayload: Int) throws(InputError) -> Command {
        guard let name = object["command"]?.stringValue else {
            throw InputError("missing \"command\" (one of \(commandNames.joined(separator: ", ")))")
        }
        let arguments = Arguments(command: name, object: object)
        switch name {
        case "state": return .state
        case "list": return .list
        case "reload": return .reload
        case "memory-warning": return .memoryWarning
        case _ where LifecycleCommand(rawValue: name) != nil: return .lifecycle(LifecycleCommand(rawValue: name)!)
        case "push":
            let payload = try arguments.required("payload")
            try checkSize(payload, "payload", maxPayload)
            let tap = try arguments.bool("tap") ?? false
            let action = try arguments.string("action")
            return .push(try PushPayload(payload), tapAction: action ?? (tap ? SH_ACTION_DEFAULT : nil))
        case "open":
            return .open(try OpenURLInput(try arguments.requiredString("url")))
        case "activity":
            let info = try arguments.optional("userInfo")
            if let info { try checkSize(info, "userInfo", maxPayload) }
            return .activity(try UserActivityInput(type: try arguments.requiredString("type"),
                                                   webpageURL: try arguments.string("url"), userInfo: info))
        case "token":
            return .token(try DeviceToken(hex: try arguments.requiredString("hex")))
        case "token-error":
            return .tokenError(try arguments.requiredString("message"))
        case "post":
            let payload = try arguments.optional("payload")
            if let payload { try checkSize(payload, "payload", maxPayload) }
            let name = try arguments.requiredString("name")
            guard !name.isEmpty else { throw InputError("post: \"name\" is empty") }
            return .post(name: name, payload: payload)
        case "scene":
            return .scene(try SceneCommand.parse(arguments, maxPayload: maxPayload))
        default:
            throw InputError("unknown command \"\(name)\" (one of \(commandNames.joined(separator: ", ")))")
        }
    }

    static func checkSize(_ value: JSONValue, _ key: String, _ limit: Int) throws(InputError) {
        let size = value.serialized.utf8.count
        if size > limit { throw InputError("\(key) is \(size) bytes, over the limit of \(limit) (--max-payload)") }
    }

    /// Typed access to a request's members, with errors naming the command and the key.
    struct Arguments {
        let command: String
        let object: [String: JSONValue]

        func optional(_ key: String) throws(InputError) -> JSONValue? {
            guard let value = object[key], value != .null else { return nil }
            return value
        }

        func required(_ key: String) throws(InputError) -> JSONValue {
            guard let value = try optional(key) else { throw InputError("\(command): missing \"\(key)\"") }
            return value
        }

        func string(_ key: String) throws(InputError) -> String? {
            guard let value = try optional(key) else { return nil }
            guard let text = value.stringValue else { throw InputError("\(command): \"\(key)\" must be a string") }
            return text
        }

        func requiredString(_ key: String) throws(InputError) -> String {
            guard let text = try string(key) else { throw InputError("\(command): missing \"\(key)\"") }
            return text
        }

        func bool(_ key: String) throws(InputError) -> Bool? {
            guard let value = try optional(key) else { return nil }
            guard let flag = value.boolValue else { throw InputError("\(command): \"\(key)\" must be true or false") }
            return flag
        }
    }
}

/// A request the host refuses, answered with `{"ok": false, "error": …}`.
public struct ControlRefusal: Error, Sendable {
    /// The request's id, when it could be read.
    public let id: JSONValue?
    /// Why.
    public let message: String
}
