import ServiceABI

extension SceneState {
    /// The scene events that take a scene from this state to `target`, in order; empty
    /// when it is there. Going down passes through every state between (active →
    /// background is sceneWillResignActive then sceneDidEnterBackground), and a
    /// disconnect from the foreground first goes to the background, as UIKit closes a
    /// scene; nothing ever leads back to unattached except sceneDidDisconnect.
    public func steps(to target: SceneState) -> [EventKind] {
        switch (self, target) {
        case (.unattached, .foregroundInactive), (.background, .foregroundInactive): [.sceneWillEnterForeground]
        case (.unattached, .foregroundActive), (.background, .foregroundActive):
            [.sceneWillEnterForeground, .sceneDidBecomeActive]
        case (.unattached, .background): [.sceneWillEnterForeground, .sceneDidEnterBackground]
        case (.foregroundInactive, .foregroundActive): [.sceneDidBecomeActive]
        case (.foregroundInactive, .background): [.sceneDidEnterBackground]
        case (.foregroundActive, .foregroundInactive): [.sceneWillResignActive]
        case (.foregroundActive, .background): [.sceneWillResignActive, .sceneDidEnterBackground]
        case (.unattached, .unattached): [.sceneDidDisconnect]
        case (_, .unattached): steps(to: .background) + [.sceneDidDisconnect]
        case (.foregroundInactive, .foregroundInactive), (.foregroundActive, .foregroundActive),
            (.background, .background):
            []
        }
    }
}

extension SceneState {
    /// The scene events in the order a move of several scenes delivers them: every scene
    /// that goes down resigns before any enters the background, every scene that comes up
    /// enters the foreground before any becomes active.
    private static let phases: [EventKind] = [
        .sceneWillResignActive, .sceneDidEnterBackground, .sceneDidDisconnect,
        .sceneWillEnterForeground, .sceneDidBecomeActive,
    ]

    /// The events of `moves` (each scene with its path, ``steps(to:)``) as one move: phase
    /// by phase; a phase that takes scenes down goes from the last scene to the first, one
    /// that brings them up the other way.
    static func phased<Scene>(_ moves: [(scene: Scene, path: [EventKind])]) -> [(scene: Scene, kind: EventKind)] {
        var events: [(scene: Scene, kind: EventKind)] = []
        for kind in phases {
            let phase = moves.filter { $0.path.contains(kind) }
            for move in kind.isTearDown ? phase.reversed() : phase { events.append((move.scene, kind)) }
        }
        return events
    }
}

extension EventKind {
    /// The state a scene lifecycle event leaves its scene in; nil for other events.
    public var sceneStateAfter: SceneState? {
        switch self {
        case .sceneWillEnterForeground, .sceneWillResignActive: .foregroundInactive
        case .sceneDidBecomeActive: .foregroundActive
        case .sceneDidEnterBackground: .background
        case .sceneDidDisconnect: .unattached
        default: nil
        }
    }

    /// Whether the scene event brings its scene up (toward foregroundActive): the app
    /// state it implies can then only rise, never fall.
    var isSceneRise: Bool { self == .sceneWillEnterForeground || self == .sceneDidBecomeActive }
}

extension AppState {
    /// The app state the scenes' states imply: active when any scene is foregroundActive,
    /// inactive when some scene is in the foreground but none is active, background when
    /// every scene is in the background or none is attached.
    public static func derived(from scenes: some Sequence<SceneState>) -> AppState {
        var result = AppState.background
        for state in scenes {
            if state == .foregroundActive { return .active }
            if state == .foregroundInactive { result = .inactive }
        }
        return result
    }

    /// How far into the foreground the app is: background 0, inactive 1, active 2.
    var foregroundLevel: Int {
        switch self {
        case .notRunning, .background: 0
        case .inactive: 1
        case .active: 2
        }
    }
}
