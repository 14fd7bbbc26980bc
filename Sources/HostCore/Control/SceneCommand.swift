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
    public static let actions = ControlMessage.Scene.actions

    /// Checks the values of `scene`.
    init(_ scene: ControlMessage.Scene, maxPayload: Int) throws(InputError) {
        switch scene {
        case .list:
            self = .list
        case .connect(let name, let role, let urls, let activities):
            var inputs: [OpenURLInput] = []
            for url in urls { inputs.append(try OpenURLInput(url)) }
            var activityInputs: [UserActivityInput] = []
            for activity in activities { activityInputs.append(try activity.input(maxPayload: maxPayload)) }
            self = .connect(try SceneRequest(name: name, role: role, urls: inputs, activities: activityInputs))
        case .move(let action, let name):
            guard let move = SceneMove(rawValue: action) else { throw InputError("scene: unknown action \"\(action)\"") }
            self = .move(name: name, move)
        case .open(let name, let url):
            self = .open(name: name, try OpenURLInput(url))
        case .activity(let name, let activity):
            self = .activity(name: name, try activity.input(maxPayload: maxPayload))
        }
    }
}
