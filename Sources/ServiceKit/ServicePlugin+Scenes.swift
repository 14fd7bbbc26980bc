import ServiceABI

extension ServicePlugin {
    /// Used by the generated entry for a service whose manifest lists scene events: the
    /// build fails here when the class does not adopt ``SceneService``.
    public static func sceneService(_ service: some SceneService) -> any ApplicationService { service }

    /// Calls the ``SceneService`` method for a scene event; `SH_UNSUPPORTED` for a service
    /// that does not adopt ``SceneService`` (or a kind that is not a scene event). Scene
    /// lifecycle events reuse the ``Scene`` built at sceneWillConnect, so they allocate
    /// nothing.
    static func dispatchScene(
        _ kind: EventKind, data: UnsafeRawPointer?,
        to instance: any ApplicationService
    ) -> Int32 {
        guard let service = instance as? any SceneService, let data else { return Int32(SH_UNSUPPORTED) }
        switch kind {
        case .configurationForConnecting:
            guard let service = service as? any SceneConfiguring else { return Int32(SH_UNSUPPORTED) }
            let connection = data.assumingMemoryBound(to: sh_scene_connection.self)
            guard covers(connection, \.configuration), let raw = connection.pointee.scene,
                let answer = connection.pointee.configuration
            else { return Int32(SH_INVALID) }
            var options = SceneConnectionOptions(connection.pointee.options)
            defer { options.endEvent() }
            guard let configuration = service.configuration(forConnecting: Scene(raw), options: options) else {
                return Int32(SH_FALSE)
            }
            switch configuration.write(to: answer) {
            case .success: return Int32(SH_OK)
            case .failure(let error):
                service.host.log(.error, "configuration(forConnecting:): cannot answer: \(error)")
                return Int32(SH_INVALID)
            }
        case .sceneWillConnect:
            let connection = data.assumingMemoryBound(to: sh_scene_connection.self)
            guard covers(connection, \.options), let raw = connection.pointee.scene else { return Int32(SH_INVALID) }
            var options = SceneConnectionOptions(connection.pointee.options)
            defer { options.endEvent() }
            service.scene(SceneCache.scene(raw, fresh: true), willConnectWith: options)
        case .sceneWillEnterForeground:
            service.sceneWillEnterForeground(SceneCache.scene(data.assumingMemoryBound(to: sh_scene.self)))
        case .sceneDidBecomeActive:
            service.sceneDidBecomeActive(SceneCache.scene(data.assumingMemoryBound(to: sh_scene.self)))
        case .sceneWillResignActive:
            service.sceneWillResignActive(SceneCache.scene(data.assumingMemoryBound(to: sh_scene.self)))
        case .sceneDidEnterBackground:
            let scene = SceneCache.scene(data.assumingMemoryBound(to: sh_scene.self))
            service.sceneDidEnterBackground(scene)
            saveRestoration(of: scene, from: service)
        case .sceneDidDisconnect:
            let scene = SceneCache.scene(data.assumingMemoryBound(to: sh_scene.self))
            service.sceneDidDisconnect(scene)
            saveRestoration(of: scene, from: service)
            SceneCache.forget(scene)
        case .sceneOpenURLContexts:
            guard let service = service as? any SceneURLHandling else { return Int32(SH_UNSUPPORTED) }
            let open = data.assumingMemoryBound(to: sh_scene_open_url.self)
            guard covers(open, \.url), let raw = open.pointee.scene, let url = open.pointee.url else {
                return Int32(SH_INVALID)
            }
            return answer(service.scene(SceneCache.scene(raw), open: OpenURL(url)))
        case .sceneContinueUserActivity:
            guard let service = service as? any SceneUserActivityHandling else { return Int32(SH_UNSUPPORTED) }
            let continuation = data.assumingMemoryBound(to: sh_scene_user_activity.self)
            guard covers(continuation, \.activity), let raw = continuation.pointee.scene,
                let rawActivity = continuation.pointee.activity
            else { return Int32(SH_INVALID) }
            var activity = UserActivity(rawActivity)
            defer { activity.endEvent() }
            return answer(service.scene(SceneCache.scene(raw), continue: activity))
        default:
            return Int32(SH_UNSUPPORTED)
        }
        return Int32(SH_OK)
    }

    /// Asks `service` for the scene's restoration activity, as UIKit does when a scene goes
    /// away, and hands it to the host; a refusal is logged by the host and here.
    private static func saveRestoration(of scene: Scene, from service: any SceneService) {
        guard let activity = service.stateRestorationActivity(for: scene) else { return }
        do { try service.host.setRestorationActivity(activity, forScene: scene.connectionID) } catch {
            service.host.log(.error, "stateRestorationActivity(for: \(scene.name)): not saved: \(error)")
        }
    }

    /// Whether the host's struct (its `size`, the first member) reaches past `member`.
    private static func covers<S, T>(_ raw: UnsafePointer<S>, _ member: KeyPath<S, T>) -> Bool {
        Int(UnsafeRawPointer(raw).load(as: UInt32.self)) >= MemoryLayout<S>.offset(of: member)! + MemoryLayout<T>.size
    }
}

/// The plugin's ``Scene`` values by connection, built once at sceneWillConnect (or at the
/// first event of a scene seen later) and reused with the new state for every other event.
///
/// Main thread only: the host delivers every event there.
enum SceneCache {
    /// Guarded as ``Registry``: touched only while the host's main thread handles an event.
    nonisolated(unsafe) private static var scenes: [UInt64: Scene] = [:]
    /// Enough for every scene a plugin sees at once; when full it starts over (a scene is
    /// then rebuilt once), so scenes whose disconnect the plugin never hears cannot pile up.
    private static let limit = 64

    /// The scene `raw` describes, with its current state.
    static func scene(_ raw: UnsafePointer<sh_scene>, fresh: Bool = false) -> Scene {
        let idEnd = MemoryLayout<sh_scene>.offset(of: \.id)! + MemoryLayout<UInt64>.size
        guard Int(raw.pointee.size) >= idEnd, raw.pointee.id != 0 else { return Scene(raw) }
        if !fresh, var scene = scenes[raw.pointee.id] {
            scene.state = SceneState(host: raw.pointee.state)
            return scene
        }
        let scene = Scene(raw)
        if scenes.count >= limit { scenes.removeAll(keepingCapacity: true) }
        scenes[scene.connectionID] = scene
        return scene
    }

    static func forget(_ scene: Scene) { scenes[scene.connectionID] = nil }
}
