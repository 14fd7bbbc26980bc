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
