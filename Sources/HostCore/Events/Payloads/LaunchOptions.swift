import ServiceABI

/// `sh_launch_options`: willFinishLaunching and didFinishLaunching.
extension sh_launch_options: EventPayload {
    static var currentVersion: UInt32 { SH_LAUNCH_OPTIONS_VERSION }

    static func fields<Coder: PayloadCoder>(_ o: inout sh_launch_options, _ c: inout Coder) throws(WireError) {
        try c.u32(&o.flags, "launch flags")
        try c.optionalBuffer(&o.settings_json, &o.settings_len, "settings")
        try c.optionalPayload(&o.notification, "notification")
        try c.optionalPayload(&o.url, "url")
        try c.optionalPayload(&o.activity, "activity")
    }
}

extension EventArena {
    func launchOptions(
        _ request: LaunchRequest, flags: UInt32, settings: [UInt8]?
    ) -> UnsafePointer<sh_launch_options> {
        var o = sh_launch_options.empty
        o.flags = flags
        o.settings_json = settings.map { EventCodec.charPointer(bytes($0 + [0])) }
        o.settings_len = settings?.count ?? 0
        o.notification = request.notification.map { push($0, action: nil, fromLaunch: true) }
        o.url = request.url.map { openURL($0, fromLaunch: true) }
        o.activity = request.activity.map { activity($0, fromLaunch: true) }
        return box(o)
    }
}
