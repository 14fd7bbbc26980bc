import ServiceJSON

/// `scene` requests: carried out on the host, answered with the scene and the app state.
extension ControlHandler {
    /// Carries out `command`; `respond` gets the reply body, `refuse` the reason for an error.
    func handleScene(_ command: SceneCommand, respond: ([String: JSONValue], After) -> Void,
                     refuse: (String) -> Void) {
        do throws(SceneError) {
            var body: [String: JSONValue]
            switch command {
            case .list:
                body = ["scenes": .array(host.scenes.list.map(Self.describe))]
            case .connect(let request):
                let connection = try host.connectScene(request)
                let unhandled = connection.deliveries.filter { !$0.handled }
                body = ["scene": Self.describe(connection.scene), "handled": .bool(unhandled.isEmpty),
                        "deliveries": .array(connection.deliveries.map { .object(Self.describe($0)) })]
                if !unhandled.isEmpty { body["note"] = .string(unhandled.compactMap(\.note).joined(separator: "; ")) }
            case .move(let name, let move):
                body = ["scene": Self.describe(try host.moveScene(named: name, move)), "handled": true]
            case .open(let name, let url):
                body = Self.describe(try host.open(url, inScene: name))
                body["scene"] = Self.describe(host.scenes[name])
            case .activity(let name, let activity):
                body = Self.describe(try host.continueActivity(activity, inScene: name))
                body["scene"] = Self.describe(host.scenes[name])
            }
            body["state"] = .string(host.state.name)
            respond(body, .keepRunning)
        } catch {
            refuse(error.message)
        }
    }

    /// `{"name":"car","role":"car","state":"foregroundActive","configuration":"car",…}`.
    private static func describe(_ scene: SceneInfo?) -> JSONValue {
        guard let scene else { return .null }
        return [
            "name": .string(scene.name), "role": .string(scene.role), "state": .string(scene.state.name),
            "configuration": .string(scene.configuration),
            "configuredBy": scene.configuredBy.map(JSONValue.string) ?? .null, "settings": scene.settings ?? .null,
        ]
    }
}
