import ServiceABI
import ServiceJSON

/// `sh_request`: a request to the service that answers its name.
extension sh_request: EventPayload {
    static var currentVersion: UInt32 { SH_REQUEST_VERSION }

    static func fields<Coder: PayloadCoder>(_ q: inout sh_request, _ c: inout Coder) throws(WireError) {
        try c.string(&q.name, "request name")
        try c.string(&q.from, "request from")
        try c.optionalBuffer(&q.json, &q.json_len, "request json")
        try c.tape(&q.parsed, "request tape")
    }
}

extension EventArena {
    /// The data of a `request` event; `tape` (the payload, parsed) is kept in the arena.
    func request(name: String, from: String, tape: JSONTape?) -> UnsafePointer<sh_request> {
        var q = sh_request.empty
        q.name = string(name)
        q.from = string(from)
        q.json = tape.map { UnsafePointer($0.text.baseAddress!) }
        q.json_len = tape?.textLength ?? 0
        q.parsed = tape.map(keep)
        return box(q)
    }
}
