import ServiceABI

/// The one catch-up, and its mirror: what a service that starts late (hot reload, a
/// restarted worker, a lazy service's activation, `service start`) is told to bring it to the
/// app's state, and what one that leaves is told to take it down.
///
/// Connected scenes are part of that state: a late service is told of every connected scene
/// it serves (sceneWillConnect, then the scene's moves to its state) and one that leaves sees
/// each go away, with the app's events following the scenes as they do when the host moves
/// them. A service never gets an event of a scene it was not told connected.
extension ServiceSet {
    /// Brings `late` (running services, in service order) to `state` with the events a
    /// service started with the host would have had: kind by kind, each to every late service
    /// that handles it (in reverse for the events that take the app down), the launch events
    /// with the launch options of a restart, every event carrying the state it leaves the app
    /// in; after the launch, the connected scenes connect and move to their states. `why`
    /// picks the launch flag.
    func catchUp(_ late: [ServiceSlot], to state: AppState, why: LateStart = .restart) {
        guard !late.isEmpty, state != .notRunning else { return }
        let arena = EventArena()
        var replay = AppLifecycle()
        for kind in [EventKind.willFinishLaunching, .didFinishLaunching] {
            deliverLate(kind, to: late, lifecycle: &replay, arena: arena, why: why)
        }
        // Scenes connect after the launch, as at a start; the app follows them.
        moveConnectedScenes(of: late, up: true, lifecycle: &replay, arena: arena, why: why)
        for kind in (try? replay.steps(to: state)) ?? [] {
            deliverLate(kind, to: late, lifecycle: &replay, arena: arena, why: why)
        }
        tellDependents(.dependencyDidStart, of: late, except: Set(late.map(\.id)), state: state)
        // A handed-over state is for this one start (both launch events had it).
        for slot in late where slot.restoredState != nil { slot.restoredState = nil }
    }

    /// Takes `leaving` (running services) down from `lifecycle`'s state with the events that
    /// take the app down, as termination does (every connected scene goes away first, the
    /// app's events following); they receive nothing afterwards.
    func takeDown(_ leaving: [ServiceSlot], from lifecycle: AppLifecycle) {
        tellDependents(.dependencyWillStop, of: leaving, except: Set(leaving.map(\.id)), state: lifecycle.state)
        let arena = EventArena()
        var replay = lifecycle
        moveConnectedScenes(of: leaving, up: false, lifecycle: &replay, arena: arena, why: .restart)
        for kind in (try? replay.steps(to: .notRunning)) ?? [] {
            deliverLate(kind, to: leaving, lifecycle: &replay, arena: arena, why: .restart)
        }
    }

    /// Delivers app lifecycle event `kind` to those of `services` that handle it (in reverse
    /// for the events that take the app down), carrying the state it leaves `lifecycle` in,
    /// and records it there.
    private func deliverLate(
        _ kind: EventKind, to services: [ServiceSlot], lifecycle: inout AppLifecycle, arena: EventArena, why: LateStart
    ) {
        if kind.isDeliveredInNewState { lifecycle.apply(kind) }
        let carried = lifecycle.state
        if !kind.isDeliveredInNewState { lifecycle.apply(kind) }
        let targets = dispatcher.handlers(kind).filter { index in services.contains { $0 === slots[index] } }
        for index in kind.isTearDown ? targets.reversed() : targets {
            let slot = slots[index]
            let launching = kind == .willFinishLaunching || kind == .didFinishLaunching
            let data =
                launching
                ? UnsafeRawPointer(launchOptions(for: slot, arena: arena, request: LaunchRequest(), late: why)) : nil
            let result = dispatcher.call(index, kind, data, state: carried).result
            if kind == .didFinishLaunching && result >= 0 { markLaunched([slot]) }
        }
    }

    /// Delivers to `services` (those that handle each event and serve the scene's role) the
    /// events that connect the connected scenes and move them from unattached to their states,
    /// one after the other (`up`), or from their states to disconnected, phase by phase as
    /// one move of several scenes (``SceneState/phased(_:)``); after each, the app events the
    /// scenes then imply,
    /// as the host's own scene moves deliver them. Each event carries the scene as it was at
    /// that point (a copy: the scene's own struct keeps its state).
    private func moveConnectedScenes(
        of services: [ServiceSlot], up: Bool, lifecycle: inout AppLifecycle, arena: EventArena, why: LateStart
    ) {
        let scenes = scenes.records.filter { $0.state != .unattached }
        guard !scenes.isEmpty else { return }
        var states = Dictionary(uniqueKeysWithValues: scenes.map { ($0.id, up ? SceneState.unattached : $0.state) })
        func deliver(_ scene: SceneRecord, _ kind: EventKind, _ data: (UnsafePointer<sh_scene>) -> UnsafeRawPointer) {
            let before = states[scene.id] ?? .unattached
            let after = kind.sceneStateAfter ?? before
            var copy = scene.raw.pointee
            copy.state = (kind.isDeliveredInNewState ? after : before).rawValue
            let pointer = data(arena.box(copy))
            let role = scene.role
            let targets = dispatcher.handlers(kind).filter { index in
                services.contains { $0 === slots[index] } && EventRouter.serves(slots[index].metadata, role: role)
            }
            for index in kind.isTearDown ? targets.reversed() : targets {
                dispatcher.call(index, kind, pointer, scene: scene.name, state: lifecycle.state)
            }
            states[scene.id] = after
            // The app follows its scenes, in the direction they move (Application.followScenes).
            let derived = AppState.derived(from: states.values)
            let level = (derived: derived.foregroundLevel, current: lifecycle.state.foregroundLevel)
            guard up ? level.derived > level.current : level.derived < level.current else { return }
            for kind in (try? lifecycle.steps(to: derived)) ?? [] {
                deliverLate(kind, to: services, lifecycle: &lifecycle, arena: arena, why: why)
            }
        }
        if up {
            // No options: the scene's URL contexts and activities were delivered once, when it connected.
            let options = arena.box(
                sh_scene_connection_options(
                    size: UInt32(MemoryLayout<sh_scene_connection_options>.size),
                    version: SH_SCENE_CONNECTION_OPTIONS_VERSION,
                    flags: 0, reserved: 0, url_contexts: nil, url_context_count: 0, user_activities: nil,
                    user_activity_count: 0,
                    restoration_activity: nil))
            // One scene after the other, as they connected (a scene's way up to the background
            // first rises, so it cannot be one phased move).
            for scene in scenes {
                deliver(scene, .sceneWillConnect) {
                    UnsafeRawPointer(arena.sceneConnection($0, options, configuration: nil))
                }
                for kind in SceneState.unattached.steps(to: scene.state) {
                    deliver(scene, kind) { UnsafeRawPointer($0) }
                }
            }
        } else {
            let moves = scenes.map { (scene: $0, path: $0.state.steps(to: .unattached)) }
            for (scene, kind) in SceneState.phased(moves) { deliver(scene, kind) { UnsafeRawPointer($0) } }
        }
    }
}
