import ServiceABI

/// The notification authorization (as UNNotificationSettings): whether the user allowed
/// notifications, and how a push may be presented.
///
/// ```swift
/// switch host.notificationSettings.status {
/// case .notDetermined: host.requestAuthorization([.alert, .sound, .badge])
/// case .denied: host.log(.info, "push is off: suggest the settings")  // seed 002's pushEnable
/// case .authorized, .provisional: try? host.registerForRemoteNotifications()
/// }
/// ```
public struct NotificationSettings: Sendable, Equatable {
    /// Not determined, denied, authorized or provisional.
    public var status: AuthorizationStatus
    /// The options a push may be presented with; the host shows a willPresent answer within these.
    public var allowed: PresentationOptions

    /// Creates settings; for tests and previews.
    public init(status: AuthorizationStatus, allowed: PresentationOptions) {
        self.status = status
        self.allowed = allowed
    }

    init(_ raw: sh_notification_settings) {
        status = AuthorizationStatus(rawValue: raw.status) ?? .notDetermined
        allowed = PresentationOptions(rawValue: raw.allowed)
    }
}
