extension EventKind {
    /// Whether this event can open a lazy service: URLs and activities (app and scene), a
    /// notification, a scene's connection, a request, a quick action, and the push events. Lifecycle events
    /// cannot.
    public var canActivate: Bool {
        switch self {
        case .openURL, .continueUserActivity, .sceneOpenURLContexts, .sceneContinueUserActivity, .notification,
            .configurationForConnecting, .sceneWillConnect, .request, .performActionForShortcutItem:
            true
        default:
            group == .push
        }
    }
}
