import ServiceJSON

/// A `scene` request of the control protocol, validated:
///
/// ```text
/// {"command":"scene","action":"connect","name":"car","role":"car",
///  "urls":["myapp://drive/home"],"activities":[{"type":"com.example.drive","url":"https://…"}]}
/// {"command":"scene","action":"activate","name":"car"}     (resign, background, foreground, disconnect)
/// {"command":"scene","action":"open","name":"car","url":"myapp://drive/work"}
/// {"command":"scene","action":"activity","name":"car","type":"…","url":"…","userInfo":{…}}
/// {"command":"scene","action":"list"}
/// ```
public enum SceneCommand: Sendable {
    case connect(SceneRequest)
    case move(name: String, SceneMove)
    case open(name: String, OpenURLInput)
    case activity(name: String, UserActivityInput)
    case list

    /// The actions, as clients spell them.
    public static let actions = ["connect"] + SceneMove.allCases.map(\.rawValue) + ["open", "activity", "list"]

    static func parse(_ arguments: ControlRequest.Arguments, maxPayload: Int) throws(InputError) -> SceneCommand {
        let choices = "one of \(actions.joined(separator: ", "))"
        guard let action = try arguments.string("action") else { throw InputError("scene: missing \"action\" (\(choices))") }
        guard actions.contains(action) else { throw InputError("scene: unknown action \"\(action)\" (\(choices))") }
        if action == "list" { return .list }
        let name = try arguments.requiredString("name")
        switch action {
        case "connect":
            let urls = try strings(arguments.optional("urls"), "urls").map { (text) throws(InputError) in
                try OpenURLInput(text)
            }
            var activities: [UserActivityInput] = []
            for item in try list(arguments.optional("activities"), "activities") {
                guard case .object(let object) = item else {
                    throw InputError("scene: each of \"activities\" must be an object like {\"type\":\"…\"}")
                }
                activities.append(try activity(ControlRequest.Arguments(command: "scene", object: object), maxPayload))
            }
            return .connect(try SceneRequest(name: name, role: try arguments.string("role"), urls: urls,
                                             activities: activities))
        case "open":
            return .open(name: name, try OpenURLInput(try arguments.requiredString("url")))
        case "activity":
            return .activity(name: name, try activity(arguments, maxPayload))
        default:
            return .move(name: name, SceneMove(rawValue: action)!)
        }
    }

    /// `type`, `url` and `userInfo` of an activity.
    private static func activity(_ arguments: ControlRequest.Arguments, _ maxPayload: Int) throws(InputError) -> UserActivityInput {
        let info = try arguments.optional("userInfo")
        if let info { try ControlRequest.checkSize(info, "userInfo", maxPayload) }
        return try UserActivityInput(type: try arguments.requiredString("type"), webpageURL: try arguments.string("url"),
                                     userInfo: info)
    }

    private static func list(_ value: JSONValue?, _ key: String) throws(InputError) -> [JSONValue] {
        guard let value else { return [] }
        guard let items = value.arrayValue else { throw InputError("scene: \"\(key)\" must be an array") }
        return items
    }

    private static func strings(_ value: JSONValue?, _ key: String) throws(InputError) -> [String] {
        var texts: [String] = []
        for item in try list(value, key) {
            guard let text = item.stringValue else { throw InputError("scene: each of \"\(key)\" must be a string") }
            texts.append(text)
        }
        return texts
    }
}
