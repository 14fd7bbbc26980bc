import ServiceABI
import ServiceJSON

/// `sh_user_activity`: continueUserActivity, and each activity of a launch's or a scene
/// connection's options.
extension sh_user_activity: EventPayload {
    static var currentVersion: UInt32 { SH_USER_ACTIVITY_VERSION }

    static func fields<Coder: PayloadCoder>(_ a: inout sh_user_activity, _ c: inout Coder) throws(WireError) {
        try c.u32(&a.flags, "activity flags")
        try c.string(&a.type, "activity type")
        try c.optionalString(&a.webpage_url, "webpage url")
        try c.optionalBuffer(&a.user_info_json, &a.user_info_len, "user info")
        try c.tape(&a.user_info, "user info tape")
    }
}

extension EventArena {
    func activity(_ activity: UserActivityInput, fromLaunch: Bool) -> UnsafePointer<sh_user_activity> {
        self.activity(activity, flags: fromLaunch ? UInt32(SH_FROM_LAUNCH) : 0)
    }

    /// `flags` as in `openURL(_:flags:)`.
    func activity(_ activity: UserActivityInput, flags: UInt32) -> UnsafePointer<sh_user_activity> {
        var a = sh_user_activity.empty
        a.flags = flags
        a.type = string(activity.type)
        a.webpage_url = activity.webpageURL.map { string($0.url) }
        if let info = activity.userInfo {
            let json = JSONTape(value: info, text: Array(info.serialized.utf8))
            a.user_info_json = UnsafePointer(json.text.baseAddress!)
            a.user_info_len = json.textLength
            a.user_info = keep(json)
        }
        return box(a)
    }
}
