import ServiceJSON

/// `scene` requests: carried out on the host, answered with the scene and the app state.
extension ControlHandler {
    /// Carries out `command`; `respond` gets the reply, `refuse` the reason for an error.
    func handleScene(_ command: SceneCommand, respond: (consuming ControlReply, After) -> Void, refuse: (String) -> Void) {
        do throws(SceneError) {
            var body = ControlReply()
            switch command {
            case .list:
                let saved = host.savedSceneStates
                body.scenes = host.scenes.list.map { scene in
                    var entry = Self.describe(scene)
                    entry.savedState = saved.contains(scene.name)
                    return entry
                }
                body.savedScenes = saved
            case .connect(let request):
                let connection = try host.connectScene(request)
                let unhandled = connection.deliveries.filter { !$0.handled }
                body.scene = Self.describe(connection.scene)
                body.handled = unhandled.isEmpty
                body.deliveries = connection.deliveries.map(Self.describe)
                if !unhandled.isEmpty { body.note = unhandled.compactMap(\.note).joined(separator: "; ") }
            case .move(let name, let move):
                body.scene = Self.describe(try host.moveScene(named: name, move))
                body.handled = true
            case .open(let name, let url):
                body = Self.describe(try host.open(url, inScene: name))
                body.scene = .some(host.scenes[name].map(Self.describe))
            case .activity(let name, let activity):
                body = Self.describe(try host.continueActivity(activity, inScene: name))
                body.scene = .some(host.scenes[name].map(Self.describe))
            }
            body.state = host.state.name
            respond(body, .keepRunning)
        } catch {
            refuse(error.message)
        }
    }

    /// `{"name":"car","role":"car","state":"foregroundActive","configuration":"car",…}`.
    private static func describe(_ scene: SceneInfo) -> ControlReply.SceneEntry {
        ControlReply.SceneEntry(
            name: scene.name, role: scene.role, state: scene.state.name, configuration: scene.configuration,
            configuredBy: scene.configuredBy, settings: scene.settings)
    }
}
