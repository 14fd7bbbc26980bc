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
        // Version 2: the state a reload hands over (willReload).
        try c.optionalBuffer(&o.restored_state, &o.restored_state_len, "restored state")
        try c.optionalString(&o.restored_from_id, "restored from id")
        try c.optionalString(&o.restored_from_version, "restored from version")
    }
}

extension EventArena {
    func launchOptions(
        _ request: LaunchRequest, flags: UInt32, settings: [UInt8]?, restored: HandedOverState? = nil
    ) -> UnsafePointer<sh_launch_options> {
        var o = sh_launch_options.empty
        o.flags = flags
        o.settings_json = settings.map { EventCodec.charPointer(bytes($0 + [0])) }
        o.settings_len = settings?.count ?? 0
        o.notification = request.notification.map { push($0, action: nil, fromLaunch: true) }
        o.url = request.url.map { openURL($0, fromLaunch: true) }
        o.activity = request.activity.map { activity($0, fromLaunch: true) }
        if let restored {
            // NUL-terminated as every buffer the host hands over (a state that is text reads as C).
            o.restored_state = bytes(restored.bytes + [0])
            o.restored_state_len = restored.bytes.count
            o.restored_from_id = string(restored.serviceID)
            o.restored_from_version = string(restored.version)
        }
        return box(o)
    }
}
