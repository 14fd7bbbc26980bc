import ServiceABI

/// `sh_error_info`: didFailToRegisterForRemoteNotifications.
extension sh_error_info: EventPayload {
    static var currentVersion: UInt32 { SH_ERROR_INFO_VERSION }

    static func fields<Coder: PayloadCoder>(_ e: inout sh_error_info, _ c: inout Coder) throws(WireError) {
        try c.string(&e.message, "message")
    }
}

extension EventArena {
    func errorInfo(_ message: String) -> UnsafePointer<sh_error_info> {
        var e = sh_error_info.empty
        e.message = string(message)
        return box(e)
    }
}
