/// A scene's state, as UIKit's `UIScene.ActivationState` (`sh_scene_state`, scenes.h).
///
/// unattached → foregroundInactive ⇄ foregroundActive, foregroundInactive ⇄ background,
/// and any state → unattached when the scene disconnects.
public enum SceneState: Int32, CaseIterable, NamedCase {
    /// Connecting, or disconnected (`SH_SCENE_UNATTACHED`).
    case unattached = 0
    /// On screen, not receiving events (`SH_SCENE_FOREGROUND_INACTIVE`).
    case foregroundInactive = 1
    /// On screen and receiving events (`SH_SCENE_FOREGROUND_ACTIVE`).
    case foregroundActive = 2
    /// Off screen (`SH_SCENE_BACKGROUND`).
    case background = 3

    /// The state's name in traces, logs and replies: `foregroundActive`.
    public var name: String {
        switch self {
        case .unattached: "unattached"
        case .foregroundInactive: "foregroundInactive"
        case .foregroundActive: "foregroundActive"
        case .background: "background"
        }
    }
}
