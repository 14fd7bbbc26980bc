import ServiceJSON

/// `scene` requests: carried out on the host, answered with the scene and the app state.
extension ControlHandler {
    /// Carries out `command`; `respond` gets the reply, `refuse` the reason for an error.
    func handleScene(
        _ command: SceneCommand, respond: (consuming ControlReply, After) -> Void, refuse: (String) -> Void
    ) {
        do throws(SceneError) {
            var reply = ControlReply.Scene(state: "")
            switch command {
            case .list:
                let saved = host.savedSceneStates
                reply.scenes = host.scenes.list.map { scene in
                    var entry = Self.describe(scene)
                    entry.savedState = saved.contains(scene.name)
                    return entry
                }
                reply.savedScenes = saved
            case .connect(let request):
                let connection = try host.connectScene(request)
                let unhandled = connection.deliveries.filter { !$0.handled }
                reply.scene = Self.describe(connection.scene)
                reply.delivery.handled = unhandled.isEmpty
                reply.deliveries = connection.deliveries.map(Self.delivery)
                if !unhandled.isEmpty { reply.delivery.note = unhandled.compactMap(\.note).joined(separator: "; ") }
            case .move(let name, let move):
                reply.scene = Self.describe(try host.moveScene(named: name, move))
                reply.delivery.handled = true
            case .open(let name, let url):
                reply.delivery = Self.delivery(try host.open(url, inScene: name))
                reply.scene = .some(host.scenes[name].map(Self.describe))
            case .activity(let name, let activity):
                reply.delivery = Self.delivery(try host.continueActivity(activity, inScene: name))
                reply.scene = .some(host.scenes[name].map(Self.describe))
            }
            reply.state = host.state.name
            respond(ControlReply(.scene(reply)), .keepRunning)
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
