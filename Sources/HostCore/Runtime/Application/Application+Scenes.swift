import ServiceABI

/// What connecting a scene did.
public struct SceneConnection: Sendable {
    /// The scene after connecting.
    public let scene: SceneInfo
    /// The delivery of each URL context, then of each user activity, of the connection
    /// options: who received it and who claimed it.
    public let deliveries: [EventOutcome]
}

/// Scenes: connecting, moving and disconnecting them, and the app state that follows them.
///
/// Each scene event goes to the services that handle it and serve the scene's role (no
/// role claims, or one naming it). After each scene event the app moves to the state its
/// scenes imply, so the app's events come right after the scene event that caused them:
/// sceneDidBecomeActive, then didBecomeActive.
extension Application {
    /// Connects a scene: configurationForConnecting (until a service chooses),
    /// sceneWillConnect, sceneWillEnterForeground, sceneDidBecomeActive (with the app
    /// events the app's new state calls for), then each URL context and user activity of
    /// the connection options once, through sceneOpenURLContexts or
    /// sceneContinueUserActivity, falling back to openURL or continueUserActivity.
    func connectScene(_ request: SceneRequest) throws(SceneError) -> SceneConnection {
        try checkScenesRunning()
        if scenes.record(named: request.name) != nil { throw .duplicateName(request.name) }
        let scene = scenes.add(name: request.name, role: request.role ?? "")
        let arena = EventArena()
        return withExtendedLifetime(arena) {
            // The activity a service saved when a scene of this name last went away: once.
            let options = arena.sceneConnectionOptions(request, restoration: restorations.take(request.name))
            let choice = router.chooseConfiguration(
                for: scene, requestedRole: request.role, options: options.options, arena: arena)
            scene.configure(choice)
            log.info(
                "host",
                "scene \(scene.name) connects: role \(choice.role), configuration \(choice.name)"
                    + (choice.service.map { " (chosen by \($0))" } ?? ""), event: .sceneConnected,
                .string("scene", scene.name), .string("role", choice.role), .string("configuration", choice.name))
            deliverScene(
                .sceneWillConnect, scene,
                data: UnsafeRawPointer(arena.sceneConnection(scene.raw, options.options, configuration: nil)))
            bus.drain()
            moveScenes([scene], to: .foregroundActive)
            var deliveries: [EventOutcome] = []
            for (input, data) in zip(request.urls, options.urls) {
                deliveries.append(router.route(input, data: data, in: scene, arena: arena))
            }
            for (input, data) in zip(request.activities, options.activities) {
                deliveries.append(router.route(input, data: data, in: scene, arena: arena))
            }
            return SceneConnection(scene: scene.info, deliveries: deliveries)
        }
    }

    /// Moves one scene (`scene activate|resign|background|foreground|disconnect NAME`) and
    /// returns it as it is afterwards (unattached after a disconnect).
    @discardableResult
    func moveScene(named name: String, _ move: SceneMove) throws(SceneError) -> SceneInfo {
        try checkScenesRunning()
        let scene = try scene(named: name)
        guard move.sources.contains(scene.state) else {
            throw .illegalTransition(move, scene: name, state: scene.state)
        }
        moveScenes([scene], to: move.target)
        return scene.info
    }

    /// The connected scene named `name`.
    func scene(named name: String) throws(SceneError) -> SceneRecord {
        guard let scene = scenes.record(named: name) else {
            throw .unknownScene(name, connected: scenes.records.map(\.name))
        }
        return scene
    }

    func checkScenesRunning() throws(SceneError) {
        if isTerminating || lifecycle.hasTerminated { throw .notRunning("the app is terminating") }
        if lifecycle.state == .notRunning { throw .notRunning("the app has not launched yet") }
    }

    // MARK: The app-level lifecycle, once scenes are in use

    /// An app-level move (`host ctl activate`, …, SIGTERM) applied to every connected scene,
    /// as the system moves all of an app's scenes: activate makes every scene
    /// foregroundActive; background sends every scene to the background; resign (to
    /// inactive from active) resigns the foregroundActive scenes; foreground (to inactive
    /// from the background) brings every scene forward; termination sends every scene to the
    /// background, disconnects each (last connected first), then delivers willTerminate.
    func transitionScenes(to target: AppState) throws(TransitionError) {
        _ = try lifecycle.steps(to: target)  // refuses every move once the app has terminated
        let all = scenes.records
        let noScene = TransitionError(
            from: state, to: target,
            reason:
                "the app uses scenes and none is connected (connect one: host ctl scene connect NAME)")
        switch target {
        case .notRunning:
            isTerminating = true
            moveScenes(all, to: .unattached)
            for kind in try lifecycle.steps(to: .notRunning) { deliverLifecycle(kind) }
        case .active:
            if all.isEmpty { throw noScene }
            moveScenes(all, to: .foregroundActive)
        case .background:
            moveScenes(all, to: .background)
        case .inactive:
            if state == .active {
                moveScenes(all.filter { $0.state == .foregroundActive }, to: .foregroundInactive)
            } else if state == .background {
                if all.isEmpty { throw noScene }
                moveScenes(all, to: .foregroundInactive)
            }
        }
    }

    /// Launches into a scene, after willFinishLaunching and didFinishLaunching (the app
    /// stayed inactive): the scene connects with the launch URL and activity in its
    /// connection options (the app becomes active through it), then the launch push is
    /// replayed. The URL and activity are delivered once, through the scene.
    func launch(_ request: LaunchRequest, connecting scene: SceneRequest) {
        var connection = scene
        connection.urls += request.url.map { [$0] } ?? []
        connection.activities += request.activity.map { [$0] } ?? []
        connection.isFromLaunch = true
        do {
            let connected = try connectScene(connection)
            let what = connection.urls.map { "URL \($0.url)" } + connection.activities.map { "activity \($0.type)" }
            for (outcome, what) in zip(connected.deliveries, what) where !outcome.handled {
                log.warn(
                    "host", "the launch \(what): \(outcome.note ?? "not handled")", event: .launchUnhandled,
                    .string("what", what))
            }
        } catch {
            log.error(
                "host", "the launch scene \(scene.name): \(error)", event: .launchSceneFailed,
                .string("scene", scene.name))
        }
        replayLaunchOptions(request)
    }

    // MARK: Steps

    /// Moves `records` to `target` together (``SceneState/phased(_:)``).
    func moveScenes(_ records: [SceneRecord], to target: SceneState) {
        for (scene, kind) in SceneState.phased(records.map { (scene: $0, path: $0.state.steps(to: target)) }) {
            step(scene, kind)
        }
    }

    /// One scene event: the scene's new state (before the event for did-events, after it
    /// for will-events), the event, then the app events the scenes now imply.
    private func step(_ scene: SceneRecord, _ kind: EventKind) {
        guard let next = kind.sceneStateAfter else { return }
        if kind.isDeliveredInNewState { scene.setState(next) }
        deliverScene(kind, scene, data: UnsafeRawPointer(scene.raw))
        if !kind.isDeliveredInNewState { scene.setState(next) }
        if kind == .sceneDidDisconnect {
            scenes.remove(scene)
            log.info(
                "host", "scene \(scene.name) disconnected", event: .sceneDisconnected, .string("scene", scene.name))
        } else if log.enabled(.debug) {
            log.debug("host", "\(kind.name): scene \(scene.name) is \(next.name)")
        }
        bus.drain()
        followScenes(rising: kind.isSceneRise)
    }

    /// Moves the app to the state its scenes imply, in the direction the scene moved only:
    /// the first scene to connect into an app that ran without scenes passes through
    /// foregroundInactive while the app is active, and must not make it resign.
    private func followScenes(rising: Bool) {
        let derived = scenes.derivedAppState
        let level = (derived: derived.foregroundLevel, current: state.foregroundLevel)
        guard state != .notRunning, rising ? level.derived > level.current : level.derived < level.current,
            let steps = try? lifecycle.steps(to: derived)
        else { return }
        for kind in steps { deliverLifecycle(kind) }
    }

    /// Delivers a scene event to every service that handles it and serves the scene's role,
    /// in service order (reverse for the events that take a scene down).
    func deliverScene(_ kind: EventKind, _ scene: SceneRecord, data: UnsafeRawPointer) {
        services.dormant.wake(kind, "scene \(scene.name)") { EventRouter.serves($0, role: scene.role) }
        let list = dispatcher.handlers(kind).filter { router.serves($0, role: scene.role) }
        for index in kind.isTearDown ? list.reversed() : list { dispatcher.call(index, kind, data, scene: scene.name) }
    }

    /// `scene open NAME URL`: sceneOpenURLContexts in the scene named `name`, falling back
    /// to openURL.
    func open(_ url: OpenURLInput, inScene name: String) throws(SceneError) -> EventOutcome {
        try checkScenesRunning()
        let scene = try scene(named: name)
        let arena = EventArena()
        return withExtendedLifetime(arena) {
            router.route(url, data: arena.openURL(url, flags: 0), in: scene, arena: arena)
        }
    }

    /// `scene activity NAME TYPE`: sceneContinueUserActivity in the scene named `name`,
    /// falling back to continueUserActivity.
    func continueActivity(_ activity: UserActivityInput, inScene name: String) throws(SceneError) -> EventOutcome {
        try checkScenesRunning()
        let scene = try scene(named: name)
        let arena = EventArena()
        return withExtendedLifetime(arena) {
            router.route(activity, data: arena.activity(activity, flags: 0), in: scene, arena: arena)
        }
    }
}
