import ServiceABI

/// `sh_shortcut_item`: performActionForShortcutItem.
extension sh_shortcut_item: EventPayload {
    static var currentVersion: UInt32 { SH_SHORTCUT_ITEM_VERSION }

    static func fields<Coder: PayloadCoder>(_ u: inout sh_shortcut_item, _ c: inout Coder) throws(WireError) {
        try c.u32(&u.flags, "shortcut flags")
        try c.string(&u.id, "shortcut id")
        try c.string(&u.title, "shortcut title")
    }
}

extension EventArena {
    /// The quick action `shortcut`, SH_FROM_LAUNCH when it is the launch's.
    func shortcutItem(_ shortcut: Shortcut, fromLaunch: Bool) -> UnsafePointer<sh_shortcut_item> {
        var u = sh_shortcut_item.empty
        u.flags = fromLaunch ? UInt32(SH_FROM_LAUNCH) : 0
        u.id = string(shortcut.id)
        u.title = string(shortcut.title)
        return box(u)
    }
}
