import ServiceJSON

/// A control request as it travels on the socket: what `host ctl` sends and the host reads,
/// before the host validates its values (``ControlRequest``).
///
/// ```text
/// {"id":1,"command":"open","url":"myapp://item/42"}
/// ```
public struct ControlMessage: Sendable, Equatable {
    /// The client's `id`, echoed in the reply.
    public var id: JSONValue?
    /// The command and its members.
    public var command: Command

    /// A request for `command`.
    public init(_ command: Command, id: JSONValue? = nil) {
        self.command = command
        self.id = id
    }

    /// The commands and their members.
    public enum Command: Sendable, Equatable {
        case state, list, reload, memoryWarning
        case lifecycle(Lifecycle)
        /// `payload` (the payload's JSON text as a string, delivered byte for byte; or an object,
        /// delivered as its serialization), `tap`, `action` (a tap with this action).
        case push(payload: JSONValue, tap: Bool, action: String?)
        case open(url: String)
        case activity(Activity)
        case token(hex: String)
        case tokenError(message: String)
        case post(name: String, payload: JSONValue?)
        /// Ask the service that answers `name` (a request between services, from outside).
        case request(name: String, payload: JSONValue?)
        case scene(Scene)
        /// `status`: the notification authorization to set, as a user toggling it; nil reads it.
        case authorization(status: String?)
        /// Operating the host: statistics, blame, one service, `list --all`, watch.
        case operate(Operate)

        /// The command's name on the wire, which is also its name in `host ctl`.
        public var name: String {
            switch self {
            case .state: "state"
            case .list: "list"
            case .reload: "reload"
            case .memoryWarning: "memory-warning"
            case .lifecycle(let move): move.rawValue
            case .push: "push"
            case .open: "open"
            case .activity: "activity"
            case .token: "token"
            case .tokenError: "token-error"
            case .post: "post"
            case .request: "request"
            case .scene: "scene"
            case .authorization: "authorization"
            case .operate(let operate): operate.name
            }
        }

        /// Every command name, as clients spell them.
        public static let names =
            ["state", "list", "reload"] + Lifecycle.allCases.map(\.rawValue)
            + ["memory-warning", "push", "open", "activity", "token", "token-error", "post", "request", "scene", "authorization"] + Operate.names

        /// The commands without members, by name.
        public static func plain(_ name: String) -> Command? {
            switch name {
            case "state": .state
            case "list": .list
            case "reload": .reload
            case "memory-warning": .memoryWarning
            default: Lifecycle(rawValue: name).map(Command.lifecycle)
            }
        }
    }

    /// The lifecycle commands.
    public enum Lifecycle: String, Sendable, CaseIterable {
        case activate, resign, background, foreground, terminate
    }

    /// A user activity: `type`, and optionally `url` and `userInfo` (an object).
    public struct Activity: Sendable, Equatable {
        public var type: String
        public var url: String?
        public var userInfo: JSONValue?

        /// An activity of `type`.
        public init(type: String, url: String? = nil, userInfo: JSONValue? = nil) {
            self.type = type
            self.url = url
            self.userInfo = userInfo
        }
    }

    /// A `scene` request: `action` and, but for `list`, the scene's `name`.
    public enum Scene: Sendable, Equatable {
        case list
        /// `role`, `urls` and `activities`: the connection options.
        case connect(name: String, role: String?, urls: [String], activities: [Activity])
        /// `activate`, `resign`, `background`, `foreground`, `disconnect`; the host refuses
        /// actions it does not know.
        case move(action: String, name: String)
        case open(name: String, url: String)
        case activity(name: String, Activity)

        /// The action's name on the wire.
        public var action: String {
            switch self {
            case .list: "list"
            case .connect: "connect"
            case .move(let action, _): action
            case .open: "open"
            case .activity: "activity"
            }
        }

        /// Every action, as clients spell them.
        public static let actions = ["connect"] + SceneMove.allCases.map(\.rawValue) + ["open", "activity", "list"]
    }
}

// MARK: - Encoding

extension ControlMessage {
    /// The request as a JSON object.
    public var json: JSONValue {
        var object: [String: JSONValue] = [:]
        object[.command] = .string(command.name)
        if let id { object[.id] = id }
        switch command {
        case .state, .list, .reload, .memoryWarning, .lifecycle:
            break
        case .push(let payload, let tap, let action):
            object[.payload] = payload
            if tap { object[.tap] = true }
            if let action { object[.action] = .string(action) }
        case .open(let url):
            object[.url] = .string(url)
        case .activity(let activity):
            activity.encode(into: &object)
        case .token(let hex):
            object[.hex] = .string(hex)
        case .tokenError(let message):
            object[.message] = .string(message)
        case .post(let name, let payload), .request(let name, let payload):
            object[.name] = .string(name)
            if let payload { object[.payload] = payload }
        case .authorization(let status):
            if let status { object[.status] = .string(status) }
        case .operate(let operate):
            operate.encode(into: &object)
        case .scene(let scene):
            object[.action] = .string(scene.action)
            switch scene {
            case .list:
                break
            case .connect(let name, let role, let urls, let activities):
                object[.name] = .string(name)
                if let role { object[.role] = .string(role) }
                if !urls.isEmpty { object[.urls] = .array(urls.map(JSONValue.string)) }
                if !activities.isEmpty {
                    object[.activities] = .array(
                        activities.map { activity in
                            var members: [String: JSONValue] = [:]
                            activity.encode(into: &members)
                            return .object(members)
                        })
                }
            case .move(_, let name):
                object[.name] = .string(name)
            case .open(let name, let url):
                object[.name] = .string(name)
                object[.url] = .string(url)
            case .activity(let name, let activity):
                object[.name] = .string(name)
                activity.encode(into: &object)
            }
        }
        return .object(object)
    }
}

extension ControlMessage.Activity {
    fileprivate func encode(into object: inout [String: JSONValue]) {
        object[.type] = .string(type)
        if let url { object[.url] = .string(url) }
        if let userInfo { object[.userInfo] = userInfo }
    }
}

// MARK: - Decoding

extension ControlMessage {
    /// Reads a request object; the error names the command and the member that is wrong.
    public init(json object: [String: JSONValue]) throws(InputError) {
        id = object[.id]
        // Worded only for an error: joining every name cost more than the rest of a request.
        var choices: String { "one of \(Command.names.joined(separator: ", "))" }
        guard let name = object[.command]?.stringValue else { throw InputError("missing \"\(ControlKey.command.rawValue)\" (\(choices))") }
        let members = Members(command: name, object: object)
        if let operate = try Operate(name, members) {
            command = .operate(operate)
            return
        }
        if let plain = Command.plain(name) {
            command = plain
            return
        }
        switch name {
        case "push":
            let payload = try members.required(.payload)
            command = .push(payload: payload, tap: try members.bool(.tap) ?? false, action: try members.string(.action))
        case "open":
            command = .open(url: try members.requiredString(.url))
        case "activity":
            command = .activity(try Activity(members))
        case "token":
            command = .token(hex: try members.requiredString(.hex))
        case "token-error":
            command = .tokenError(message: try members.requiredString(.message))
        case "post":
            let payload = try members.optional(.payload)
            command = .post(name: try members.requiredString(.name), payload: payload)
        case "request":
            let payload = try members.optional(.payload)
            command = .request(name: try members.requiredString(.name), payload: payload)
        case "scene":
            command = .scene(try Scene(Members(command: "scene", object: object)))
        case "authorization":
            command = .authorization(status: try members.string(.status))
        default:
            throw InputError("unknown command \"\(name)\" (\(choices))")
        }
    }

    /// Typed access to a request's members, with errors naming the command and the key.
    struct Members {
        let command: String
        let object: [String: JSONValue]

        /// The member, or nil when it is missing or null.
        func optional(_ key: ControlKey) throws(InputError) -> JSONValue? {
            guard let value = object[key], value != .null else { return nil }
            return value
        }

        func required(_ key: ControlKey) throws(InputError) -> JSONValue {
            guard let value = try optional(key) else { throw InputError("\(command): missing \"\(key.rawValue)\"") }
            return value
        }

        func string(_ key: ControlKey) throws(InputError) -> String? {
            guard let value = try optional(key) else { return nil }
            guard let text = value.stringValue else { throw InputError("\(command): \"\(key.rawValue)\" must be a string") }
            return text
        }

        func requiredString(_ key: ControlKey) throws(InputError) -> String {
            guard let text = try string(key) else { throw InputError("\(command): missing \"\(key.rawValue)\"") }
            return text
        }

        func bool(_ key: ControlKey) throws(InputError) -> Bool? {
            guard let value = try optional(key) else { return nil }
            guard let flag = value.boolValue else { throw InputError("\(command): \"\(key.rawValue)\" must be true or false") }
            return flag
        }

        /// An array member; empty when missing.
        func list(_ key: ControlKey) throws(InputError) -> [JSONValue] {
            guard let value = try optional(key) else { return [] }
            guard let items = value.arrayValue else { throw InputError("\(command): \"\(key.rawValue)\" must be an array") }
            return items
        }
    }
}

extension ControlMessage.Activity {
    /// `type`, `url` and `userInfo` of `members`.
    init(_ members: ControlMessage.Members) throws(InputError) {
        let userInfo = try members.optional(.userInfo)
        self.init(type: try members.requiredString(.type), url: try members.string(.url), userInfo: userInfo)
    }
}

extension ControlMessage.Scene {
    init(_ members: ControlMessage.Members) throws(InputError) {
        let actions = Self.actions
        var choices: String { "one of \(actions.joined(separator: ", "))" }
        guard let action = try members.string(.action) else { throw InputError("scene: missing \"\(ControlKey.action.rawValue)\" (\(choices))") }
        guard actions.contains(action) else { throw InputError("scene: unknown action \"\(action)\" (\(choices))") }
        if action == "list" {
            self = .list
            return
        }
        let name = try members.requiredString(.name)
        switch action {
        case "connect":
            var urls: [String] = []
            for item in try members.list(.urls) {
                guard let text = item.stringValue else { throw InputError("scene: each of \"\(ControlKey.urls.rawValue)\" must be a string") }
                urls.append(text)
            }
            var activities: [ControlMessage.Activity] = []
            for item in try members.list(.activities) {
                guard case .object(let object) = item else {
                    throw InputError("scene: each of \"\(ControlKey.activities.rawValue)\" must be an object like {\"\(ControlKey.type.rawValue)\":\"…\"}")
                }
                activities.append(try ControlMessage.Activity(ControlMessage.Members(command: "scene", object: object)))
            }
            self = .connect(name: name, role: try members.string(.role), urls: urls, activities: activities)
        case "open":
            self = .open(name: name, url: try members.requiredString(.url))
        case "activity":
            self = .activity(name: name, try ControlMessage.Activity(members))
        default:
            self = .move(action: action, name: name)
        }
    }
}
