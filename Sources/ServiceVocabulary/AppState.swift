/// The application's state, as UIKit's `UIApplication.State` plus "not running"
/// (`sh_app_state`).
public enum AppState: Int32, CaseIterable, NamedCase {
    /// Not launched yet, or terminated (`SH_APP_NOT_RUNNING`).
    case notRunning = 0
    /// In the foreground, not receiving events: launching or resigning (`SH_APP_INACTIVE`).
    case inactive = 1
    /// In the foreground and receiving events (`SH_APP_ACTIVE`).
    case active = 2
    /// In the background (`SH_APP_BACKGROUND`).
    case background = 3

    /// The state's name in traces, logs and docs: `notRunning`, `inactive`, `active`, `background`.
    public var name: String {
        switch self {
        case .notRunning: "notRunning"
        case .inactive: "inactive"
        case .active: "active"
        case .background: "background"
        }
    }
}
