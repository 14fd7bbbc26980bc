import ServiceABI

/// `sh_settings_change`: didChangeSettings, a running service's settings before and after.
extension sh_settings_change: EventPayload {
    static var currentVersion: UInt32 { SH_SETTINGS_CHANGE_VERSION }

    static func fields<Coder: PayloadCoder>(_ s: inout sh_settings_change, _ c: inout Coder) throws(WireError) {
        try c.optionalBuffer(&s.old_json, &s.old_len, "old settings")
        try c.optionalBuffer(&s.new_json, &s.new_len, "new settings")
    }
}

extension EventArena {
    /// The data of didChangeSettings: both settings as compact JSON (``ServiceConfiguration/settingsJSON``).
    func settingsChange(old: [UInt8]?, new: [UInt8]?) -> UnsafePointer<sh_settings_change> {
        var s = sh_settings_change.empty
        s.old_json = old.map { EventCodec.charPointer(bytes($0 + [0])) }
        s.old_len = old?.count ?? 0
        s.new_json = new.map { EventCodec.charPointer(bytes($0 + [0])) }
        s.new_len = new?.count ?? 0
        return box(s)
    }
}
