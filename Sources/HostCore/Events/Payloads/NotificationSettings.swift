import ServiceABI

/// `sh_notification_settings`: didChangeNotificationAuthorization.
extension sh_notification_settings: EventPayload {
    static var currentVersion: UInt32 { SH_NOTIFICATION_SETTINGS_VERSION }

    static func fields<Coder: PayloadCoder>(_ n: inout sh_notification_settings, _ c: inout Coder) throws(WireError) {
        try c.i32(&n.status, "status")
        try c.u32(&n.allowed, "allowed")
    }
}

extension EventArena {
    func notificationSettings(
        _ settings: NotificationAuthorization.Settings
    ) -> UnsafePointer<sh_notification_settings> {
        var n = sh_notification_settings.empty
        n.status = settings.status.rawValue
        n.allowed = settings.allowed.rawValue
        return box(n)
    }
}
