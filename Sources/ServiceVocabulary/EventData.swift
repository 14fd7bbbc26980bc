/// What an event's `sh_event.data` points at (the kind's payload struct in events.h or scenes.h).
public enum EventData: Sendable, CaseIterable {
    /// Nothing: `data` is NULL.
    case none
    /// `sh_launch_options`.
    case launchOptions
    /// `sh_notification`.
    case notification
    /// `sh_push`.
    case push
    /// `sh_device_token`.
    case deviceToken
    /// `sh_error_info`.
    case errorInfo
    /// `sh_open_url`.
    case openURL
    /// `sh_user_activity`.
    case userActivity
    /// `sh_scene_connection`.
    case sceneConnection
    /// `sh_scene`.
    case scene
    /// `sh_scene_open_url`.
    case sceneOpenURL
    /// `sh_scene_user_activity`.
    case sceneUserActivity
    /// `sh_notification_settings`.
    case notificationSettings
    /// `sh_request`.
    case request
    /// `sh_settings_change`.
    case settingsChange
    /// `sh_dependency`.
    case dependency
    /// `sh_shortcut_item`.
    case shortcutItem

    /// The C struct's name, or nil for `none`.
    public var cStruct: String? {
        switch self {
        case .none: nil
        case .launchOptions: "sh_launch_options"
        case .notification: "sh_notification"
        case .push: "sh_push"
        case .deviceToken: "sh_device_token"
        case .errorInfo: "sh_error_info"
        case .openURL: "sh_open_url"
        case .userActivity: "sh_user_activity"
        case .sceneConnection: "sh_scene_connection"
        case .scene: "sh_scene"
        case .sceneOpenURL: "sh_scene_open_url"
        case .sceneUserActivity: "sh_scene_user_activity"
        case .notificationSettings: "sh_notification_settings"
        case .request: "sh_request"
        case .settingsChange: "sh_settings_change"
        case .dependency: "sh_dependency"
        case .shortcutItem: "sh_shortcut_item"
        }
    }
}
