import ServiceABI

/// `sh_push`: didReceiveRemoteNotification, didReceiveNotificationResponse, a launch's notification.
extension sh_push: EventPayload {
    static var currentVersion: UInt32 { SH_PUSH_VERSION }

    static func fields<Coder: PayloadCoder>(_ p: inout sh_push, _ c: inout Coder) throws(WireError) {
        try c.u32(&p.flags, "push flags")
        try c.buffer(&p.json, &p.json_len, "push json")
        try c.tape(&p.parsed, "tape")
        try c.optionalString(&p.action_id, "action id")
    }
}

extension EventArena {
    func push(_ payload: PushPayload, action: String?, fromLaunch: Bool) -> UnsafePointer<sh_push> {
        let tape = payload.tape
        var p = sh_push.empty
        p.flags = fromLaunch ? UInt32(SH_FROM_LAUNCH) : 0
        p.json = UnsafePointer(tape.text.baseAddress)
        p.json_len = tape.textLength
        p.parsed = keep(tape)
        p.action_id = action.map(string)
        return box(p)
    }
}
