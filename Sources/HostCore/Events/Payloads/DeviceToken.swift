import ServiceABI

/// `sh_device_token`: didRegisterForRemoteNotifications.
extension sh_device_token: EventPayload {
    static var currentVersion: UInt32 { SH_DEVICE_TOKEN_VERSION }

    static func fields<Coder: PayloadCoder>(_ t: inout sh_device_token, _ c: inout Coder) throws(WireError) {
        try c.buffer(&t.bytes, &t.length, "token")
        try c.string(&t.hex, "hex")
    }
}

extension EventArena {
    func deviceToken(_ token: DeviceToken) -> UnsafePointer<sh_device_token> {
        var t = sh_device_token.empty
        t.bytes = bytes(token.bytes)
        t.length = token.bytes.count
        t.hex = string(token.hex)
        return box(t)
    }
}
