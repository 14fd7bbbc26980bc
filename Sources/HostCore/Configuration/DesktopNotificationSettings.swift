/// The configuration's `notifications` and `notificationCategories`: whether pushes are shown on
/// the desktop (the `notifications` source), and the action buttons of each category, as an app
/// registers `UNNotificationCategory`s:
///
/// ```json
/// {
///   "notifications": "on",
///   "notificationCategories": { "message": [{ "id": "reply", "title": "Reply" }] }
/// }
/// ```
///
/// A push whose `aps.category` is `message` is shown with a Reply button; clicking it delivers
/// didReceiveNotificationResponse with the action `reply`.
public struct DesktopNotificationSettings: Sendable, Equatable {
    /// `"notifications": "off"` turns the source off (`--source notifications=on|off` wins).
    public var enabled = true
    /// Each category's actions, by category id.
    var categories: [String: [DesktopNotification.Action]] = [:]

    /// On, with no categories.
    public init() {}

    /// The actions a category may have, as iOS allows (UNNotificationCategory shows at most 10).
    static let maxActions = 10
}
