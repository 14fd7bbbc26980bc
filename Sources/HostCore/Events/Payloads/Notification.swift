import ServiceABI
import ServiceJSON

/// `sh_notification`: a notification posted by a service or `host ctl post`.
extension sh_notification: EventPayload {
    static var currentVersion: UInt32 { SH_NOTIFICATION_VERSION }

    static func fields<Coder: PayloadCoder>(_ n: inout sh_notification, _ c: inout Coder) throws(WireError) {
        try c.string(&n.name, "name")
        try c.string(&n.sender, "sender")
        try c.optionalBuffer(&n.json, &n.json_len, "json")
        try c.tape(&n.parsed, "tape")
    }
}

extension EventArena {
    /// `json`: the payload's text, and its tape when it is valid JSON.
    func notification(name: String, sender: String, json: [UInt8]?, tape: JSONTape?) -> UnsafePointer<sh_notification> {
        var n = sh_notification.empty
        n.name = string(name)
        n.sender = string(sender)
        // The tape holds the text already (NUL-terminated): no second copy.
        n.json =
            tape.map { UnsafePointer($0.text.baseAddress!) } ?? json.map { EventCodec.charPointer(bytes($0 + [0])) }
        n.json_len = json?.count ?? 0
        n.parsed = tape.map(keep)
        return box(n)
    }
}
