import ServiceABI

/// The application's state, as UIKit's `UIApplication.State` plus "not running".
public enum AppState: Int32, Sendable {
    case notRunning = 0
    case inactive = 1
    case active = 2
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
