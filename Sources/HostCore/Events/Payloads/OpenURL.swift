import ServiceABI

/// `sh_open_url`: openURL, and each URL of a launch's or a scene connection's options.
extension sh_open_url: EventPayload {
    static var currentVersion: UInt32 { SH_OPEN_URL_VERSION }

    static func fields<Coder: PayloadCoder>(_ u: inout sh_open_url, _ c: inout Coder) throws(WireError) {
        try c.u32(&u.flags, "url flags")
        try c.string(&u.url, "url")
        try c.string(&u.scheme, "scheme")
        try c.string(&u.host, "host")
    }
}

extension EventArena {
    func openURL(_ url: OpenURLInput, fromLaunch: Bool) -> UnsafePointer<sh_open_url> {
        openURL(url, flags: fromLaunch ? UInt32(SH_FROM_LAUNCH) : 0)
    }

    /// `flags`: SH_FROM_LAUNCH, SH_FROM_CONNECTION (a scene's connection options), or both.
    func openURL(_ url: OpenURLInput, flags: UInt32) -> UnsafePointer<sh_open_url> {
        var u = sh_open_url.empty
        u.flags = flags
        u.url = string(url.url)
        u.scheme = string(url.scheme)
        u.host = string(url.host)
        return box(u)
    }
}
