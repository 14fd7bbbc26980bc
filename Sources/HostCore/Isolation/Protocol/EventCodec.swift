import ServiceABI

/// An `sh_event` and its data on the wire, so a service in a worker sees the same bytes it
/// would see in the host: strings byte for byte (even invalid UTF-8), JSON text and the
/// parsed tape node for node, flags, sequence number and app state.
///
/// Payload of an `event` frame: u32 service index, u32 kind, i32 app state, u64 seq,
/// u32 completion id (0: none), then the kind's data (nothing for kinds without data).
/// Scene events carry their scene's whole state (EventCodec+Scenes.swift); the `result`
/// frame of configurationForConnecting carries the service's filled configuration back.
enum EventCodec {
    // MARK: Encoding (host side)

    /// Writes `event` for the service at `service` in its worker.
    static func encode(_ event: UnsafePointer<sh_event>, service: UInt32, completion: UInt32, into w: inout WireWriter) {
        let e = event.pointee
        w.u32(service)
        w.u32(e.kind)
        w.i32(e.app_state)
        w.u64(e.seq)
        w.u32(completion)
        guard let data = e.data, let kind = EventKind(rawValue: e.kind) else {
            w.bool(false)
            return
        }
        w.bool(true)
        // By the kind's data, so a new kind with an existing payload needs nothing here.
        switch kind.data {
        case .launchOptions:
            launchOptions(data.assumingMemoryBound(to: sh_launch_options.self).pointee, &w)
        case .notification:
            let n = data.assumingMemoryBound(to: sh_notification.self).pointee
            w.cString(n.name)
            w.cString(n.sender)
            w.bool(n.json != nil)
            if n.json != nil { w.blob(n.json, count: n.json_len) }
            w.bool(n.parsed != nil)
            if let parsed = n.parsed { tape(parsed.pointee, &w) }
        case .push:
            push(data.assumingMemoryBound(to: sh_push.self).pointee, &w)
        case .deviceToken:
            let t = data.assumingMemoryBound(to: sh_device_token.self).pointee
            w.blob(t.bytes, count: t.length)
            w.cString(t.hex)
        case .errorInfo:
            w.cString(data.assumingMemoryBound(to: sh_error_info.self).pointee.message)
        case .openURL:
            openURL(data.assumingMemoryBound(to: sh_open_url.self).pointee, &w)
        case .userActivity:
            activity(data.assumingMemoryBound(to: sh_user_activity.self).pointee, &w)
        case .none:
            break
        case .notificationSettings:
            let n = data.assumingMemoryBound(to: sh_notification_settings.self).pointee
            w.i32(n.status)
            w.u32(n.allowed)
        case .request:
            let q = data.assumingMemoryBound(to: sh_request.self).pointee
            w.cString(q.name)
            w.cString(q.from)
            w.bool(q.json != nil)
            if q.json != nil { w.blob(q.json, count: q.json_len) }
            w.bool(q.parsed != nil)
            if let parsed = q.parsed { tape(parsed.pointee, &w) }
        case .sceneConnection, .scene, .sceneOpenURL, .sceneUserActivity:
            sceneData(kind, data, &w)
        }
    }

    private static func launchOptions(_ o: sh_launch_options, _ w: inout WireWriter) {
        w.u32(o.flags)
        w.bool(o.settings_json != nil)
        if o.settings_json != nil { w.blob(o.settings_json, count: o.settings_len) }
        w.bool(o.notification != nil)
        if let push = o.notification { self.push(push.pointee, &w) }
        w.bool(o.url != nil)
        if let url = o.url { openURL(url.pointee, &w) }
        w.bool(o.activity != nil)
        if let activity = o.activity { self.activity(activity.pointee, &w) }
    }

    private static func push(_ p: sh_push, _ w: inout WireWriter) {
        w.u32(p.flags)
        w.blob(p.json, count: p.json_len)
        w.bool(p.parsed != nil)
        if let parsed = p.parsed { tape(parsed.pointee, &w) }
        w.optionalCString(p.action_id)
    }

    static func openURL(_ u: sh_open_url, _ w: inout WireWriter) {
        w.u32(u.flags)
        w.cString(u.url)
        w.cString(u.scheme)
        w.cString(u.host)
    }

    static func activity(_ a: sh_user_activity, _ w: inout WireWriter) {
        w.u32(a.flags)
        w.cString(a.type)
        w.optionalCString(a.webpage_url)
        w.bool(a.user_info_json != nil)
        if a.user_info_json != nil { w.blob(a.user_info_json, count: a.user_info_len) }
        w.bool(a.user_info != nil)
        if let info = a.user_info { tape(info.pointee, &w) }
    }

    /// The tape node by node: type, count, next, then a string's bytes or a number's bits.
    static func tape(_ json: sh_json, _ w: inout WireWriter) {
        w.u64(UInt64(json.count))
        for index in 0..<json.count {
            let node = json.nodes[index]
            w.u32(node.type)
            w.u32(node.count)
            w.u32(node.next)
            switch node.type {
            case SH_JSON_STRING.rawValue: w.blob(node.string, count: node.length)
            case SH_JSON_NUMBER.rawValue: w.f64(node.number)
            default: break
            }
        }
    }

    // MARK: Decoding (worker side)

    /// One event read back, its data built in `arena`.
    struct Decoded {
        var service: Int
        var kind: UInt32
        var appState: Int32
        var seq: UInt64
        var completion: UInt32
        var data: UnsafeRawPointer?
        /// configurationForConnecting: the out-struct the service fills, sent back with the result.
        var answer: ConfigurationAnswer?
    }

    /// Reads an `event` frame's payload; the data's C structs live in `arena`, except each
    /// scene's `sh_scene`, which lives in `scenes` (one stable struct per connection).
    static func decode(_ r: inout WireReader, arena: EventArena, scenes: WorkerScenes) throws(WireError) -> Decoded {
        var decoded = Decoded(
            service: Int(try r.u32("service")), kind: try r.u32("kind"), appState: try r.i32("app state"),
            seq: try r.u64("seq"), completion: try r.u32("completion"), data: nil)
        // A scene whose sceneDidDisconnect returned is freed before any other event.
        if EventKind(rawValue: decoded.kind)?.isSceneEvent != true { scenes.retire() }
        guard try r.bool("data presence") else {
            try r.finish("the event")
            return decoded
        }
        guard let kind = EventKind(rawValue: decoded.kind) else { throw .malformed("data for unknown event kind \(decoded.kind)") }
        switch kind.data {
        case .launchOptions:
            decoded.data = UnsafeRawPointer(try launchOptions(&r, arena))
        case .notification:
            let name = try cString(&r, arena, "name")
            let sender = try cString(&r, arena, "sender")
            let json = try r.optionalBlob("json")
            let parsed = try r.bool("tape presence") ? try tape(&r, arena) : nil
            decoded.data = UnsafeRawPointer(
                arena.box(
                    sh_notification(
                        size: UInt32(MemoryLayout<sh_notification>.size), version: SH_NOTIFICATION_VERSION,
                        name: name, sender: sender, json: json.map { charPointer(arena.bytes($0 + [0])) }, json_len: json?.count ?? 0,
                        parsed: parsed)))
        case .push:
            decoded.data = UnsafeRawPointer(try push(&r, arena))
        case .deviceToken:
            let bytes = try r.blob("token")
            decoded.data = UnsafeRawPointer(
                arena.box(
                    sh_device_token(
                        size: UInt32(MemoryLayout<sh_device_token>.size), version: SH_DEVICE_TOKEN_VERSION,
                        bytes: arena.bytes(bytes), length: bytes.count, hex: try cString(&r, arena, "hex"))))
        case .errorInfo:
            decoded.data = UnsafeRawPointer(
                arena.box(
                    sh_error_info(
                        size: UInt32(MemoryLayout<sh_error_info>.size), version: SH_ERROR_INFO_VERSION,
                        message: try cString(&r, arena, "message"))))
        case .openURL:
            decoded.data = UnsafeRawPointer(try openURL(&r, arena))
        case .userActivity:
            decoded.data = UnsafeRawPointer(try activity(&r, arena))
        case .none:
            throw .malformed("\(kind.name) carries no data")
        case .notificationSettings:
            decoded.data = UnsafeRawPointer(
                arena.box(
                    sh_notification_settings(
                        size: UInt32(MemoryLayout<sh_notification_settings>.size), version: SH_NOTIFICATION_SETTINGS_VERSION,
                        status: try r.i32("status"), allowed: try r.u32("allowed"))))
        case .request:
            let name = try cString(&r, arena, "request name")
            let from = try cString(&r, arena, "request from")
            let json = try r.optionalBlob("request json")
            let parsed = try r.bool("request tape presence") ? try tape(&r, arena) : nil
            decoded.data = UnsafeRawPointer(
                arena.box(
                    sh_request(
                        size: UInt32(MemoryLayout<sh_request>.size), version: SH_REQUEST_VERSION, name: name, from: from,
                        json: json.map { charPointer(arena.bytes($0 + [0])) }, json_len: json?.count ?? 0, parsed: parsed)))
        case .sceneConnection, .scene, .sceneOpenURL, .sceneUserActivity:
            try sceneData(kind, &r, arena, scenes, into: &decoded)
        }
        try r.finish("the event")
        return decoded
    }

    static func charPointer(_ bytes: UnsafePointer<UInt8>) -> UnsafePointer<CChar> {
        UnsafeRawPointer(bytes).assumingMemoryBound(to: CChar.self)
    }

    /// A blob as a NUL-terminated copy in the arena, byte for byte.
    static func cString(_ r: inout WireReader, _ arena: EventArena, _ what: String) throws(WireError) -> UnsafePointer<CChar> {
        charPointer(arena.bytes(try r.blob(what) + [0]))
    }

    private static func optionalCString(_ r: inout WireReader, _ arena: EventArena, _ what: String) throws(WireError) -> UnsafePointer<CChar>? {
        try r.bool(what + " presence") ? try cString(&r, arena, what) : nil
    }

    private static func launchOptions(_ r: inout WireReader, _ arena: EventArena) throws(WireError) -> UnsafePointer<sh_launch_options> {
        let flags = try r.u32("launch flags")
        let settings = try r.optionalBlob("settings")
        let notification = try r.bool("notification presence") ? try push(&r, arena) : nil
        let url = try r.bool("url presence") ? try openURL(&r, arena) : nil
        let activity = try r.bool("activity presence") ? try activity(&r, arena) : nil
        return arena.box(
            sh_launch_options(
                size: UInt32(MemoryLayout<sh_launch_options>.size), version: SH_LAUNCH_OPTIONS_VERSION,
                flags: flags, reserved: 0, settings_json: settings.map { charPointer(arena.bytes($0 + [0])) },
                settings_len: settings?.count ?? 0, notification: notification, url: url, activity: activity))
    }

    private static func push(_ r: inout WireReader, _ arena: EventArena) throws(WireError) -> UnsafePointer<sh_push> {
        let flags = try r.u32("push flags")
        let json = try r.blob("push json")
        let parsed = try r.bool("tape presence") ? try tape(&r, arena) : nil
        let action = try optionalCString(&r, arena, "action id")
        return arena.box(
            sh_push(
                size: UInt32(MemoryLayout<sh_push>.size), version: SH_PUSH_VERSION, flags: flags, reserved: 0,
                json: charPointer(arena.bytes(json + [0])), json_len: json.count, parsed: parsed, action_id: action))
    }

    static func openURL(_ r: inout WireReader, _ arena: EventArena) throws(WireError) -> UnsafePointer<sh_open_url> {
        let flags = try r.u32("url flags")
        let url = try cString(&r, arena, "url")
        let scheme = try cString(&r, arena, "scheme")
        let host = try cString(&r, arena, "host")
        return arena.box(
            sh_open_url(
                size: UInt32(MemoryLayout<sh_open_url>.size), version: SH_OPEN_URL_VERSION,
                flags: flags, reserved: 0, url: url, scheme: scheme, host: host))
    }

    static func activity(_ r: inout WireReader, _ arena: EventArena) throws(WireError) -> UnsafePointer<sh_user_activity> {
        let flags = try r.u32("activity flags")
        let type = try cString(&r, arena, "activity type")
        let webpage = try optionalCString(&r, arena, "webpage url")
        let info = try r.optionalBlob("user info")
        let tape = try r.bool("user info tape presence") ? try tape(&r, arena) : nil
        return arena.box(
            sh_user_activity(
                size: UInt32(MemoryLayout<sh_user_activity>.size), version: SH_USER_ACTIVITY_VERSION, flags: flags,
                reserved: 0, type: type, webpage_url: webpage, user_info_json: info.map { charPointer(arena.bytes($0 + [0])) },
                user_info_len: info?.count ?? 0, user_info: tape))
    }

    /// Rebuilds a tape: one block of strings, one array of nodes pointing into it.
    static func tape(_ r: inout WireReader, _ arena: EventArena) throws(WireError) -> UnsafePointer<sh_json> {
        let count = try r.u64("tape size")
        // Every node takes at least 12 bytes on the wire: a count the rest of the payload cannot
        // hold is a lie, refused before anything is reserved for it.
        guard count <= UInt64(r.remaining / 12) else { throw .malformed("a tape of \(count) nodes in \(r.remaining) bytes") }
        var nodes: [sh_json_node] = []
        nodes.reserveCapacity(Int(count))
        var strings: [UInt8] = []
        var stringOffsets: [Int: Int] = [:]  // node index → offset in strings
        for index in 0..<Int(count) {
            var node = sh_json_node()
            node.type = try r.u32("node type")
            node.count = try r.u32("node count")
            node.next = try r.u32("node next")
            guard node.next > index && node.next <= count else { throw .malformed("tape node \(index) jumps to \(node.next)") }
            switch node.type {
            case SH_JSON_STRING.rawValue:
                let bytes = try r.blob("string node")
                stringOffsets[index] = strings.count
                node.length = bytes.count
                strings += bytes
                strings.append(0)
            case SH_JSON_NUMBER.rawValue:
                node.number = try r.f64("number node")
            case SH_JSON_NULL.rawValue, SH_JSON_FALSE.rawValue, SH_JSON_TRUE.rawValue, SH_JSON_ARRAY.rawValue,
                SH_JSON_OBJECT.rawValue:
                break
            default:
                throw .malformed("tape node type \(node.type)")
            }
            nodes.append(node)
        }
        let block = strings.isEmpty ? nil : charPointer(arena.bytes(strings))
        for (index, offset) in stringOffsets { nodes[index].string = block.map { $0 + offset } }
        let nodeBytes = nodes.withUnsafeBytes { Array($0) }
        let stored = UnsafeRawPointer(arena.bytes(nodeBytes)).assumingMemoryBound(to: sh_json_node.self)
        return arena.box(
            sh_json(
                size: UInt32(MemoryLayout<sh_json>.size), version: SH_JSON_VERSION,
                nodes: nodes.isEmpty ? nil : stored, count: nodes.count))
    }
}
