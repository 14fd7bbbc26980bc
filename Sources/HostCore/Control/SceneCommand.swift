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

    /// Reads the members of a `scene` request, then checks their values.
    init(_ members: ControlRequest.Members, maxPayload: Int) throws(InputError) {
        let actions = Self.actions
        var choices: String { "one of \(actions.joined(separator: ", "))" }
        guard let action = try members.string(.action) else {
            throw InputError("scene: missing \"\(ControlKey.action.rawValue)\" (\(choices))")
        }
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
                guard let text = item.stringValue else {
                    throw InputError("scene: each of \"\(ControlKey.urls.rawValue)\" must be a string")
                }
                urls.append(text)
            }
            var activities: [ControlMessage.Activity] = []
            for item in try members.list(.activities) {
                guard case .object(let object) = item else {
                    throw InputError(
                        "scene: each of \"\(ControlKey.activities.rawValue)\" must be an object like {\"\(ControlKey.type.rawValue)\":\"…\"}"
                    )
                }
                activities.append(try ControlMessage.Activity(ControlRequest.Members(command: "scene", object: object)))
            }
            let role = try members.string(.role)
            // Every member read, then every value checked (the order of the errors).
            var inputs: [OpenURLInput] = []
            for url in urls { inputs.append(try OpenURLInput(url)) }
            var activityInputs: [UserActivityInput] = []
            for activity in activities { activityInputs.append(try activity.input(maxPayload: maxPayload)) }
            self = .connect(try SceneRequest(name: name, role: role, urls: inputs, activities: activityInputs))
        case "open":
            let url = try members.requiredString(.url)
            self = .open(name: name, try OpenURLInput(url))
        case "activity":
            let activity = try ControlMessage.Activity(members)
            self = .activity(name: name, try activity.input(maxPayload: maxPayload))
        default:
            guard let move = SceneMove(rawValue: action) else {
                throw InputError("scene: unknown action \"\(action)\"")
            }
            self = .move(name: name, move)
        }
    }
}
