import ServiceJSON

// Writes a reply's JSON straight into a connection's output: the bytes ``ControlReply/json``'s
// `serialized` gives (keys sorted by their UTF-8 bytes, the same escaping and numbers), without
// building a dictionary per object, sorting its keys and a String per member (issue 13).
// ControlReplyWritingTests compares the two on every member.

extension ControlReply {
    /// Appends the reply's JSON text (no newline) to `out`.
    func write(to out: inout [UInt8]) {
        // The operating replies' members are free-form: those (rare) go through JSONValue.
        guard members.isEmpty else { return json.serialize(into: &out) }
        var object = ObjectWriter()
        // Keys in sorted order, as `serialized` writes them.
        if let reload { object.strings("added", reload.added, &out) }
        if let answers { object.value("answers", .object(answers.mapValues(JSONValue.string)), &out) }
        if let authorization {
            object.key("authorization", &out)
            var inner = ObjectWriter()
            inner.strings("allowed", authorization.allowed, &out)
            inner.string("status", authorization.status, &out)
            inner.end(&out)
        }
        if let busy = status?.busy {
            object.key("busy", &out)
            busy.write(to: &out)
        }
        if let deliveries {
            object.array("deliveries", deliveries, &out) { $0.write(to: &$1) }
        }
        if let status { object.optionalString("deviceToken", status.deviceToken, &out) }
        if let error { object.string("error", error, &out) }
        if let event { object.string("event", event, &out) }
        if let reload { object.strings("failures", reload.failures, &out) }
        if let handled { object.bool("handled", handled, &out) }
        if let handledBy { object.string("handledBy", handledBy, &out) }
        if let id { object.value("id", id, &out) }
        if let note { object.string("note", note, &out) }
        if let ok { object.bool("ok", ok, &out) }
        if let presentation { object.value("presentation", presentation, &out) }
        if let receivers { object.strings("receivers", receivers, &out) }
        if let reload {
            object.strings("removed", reload.removed, &out)
            object.strings("replaced", reload.replaced, &out)
        }
        if let result { object.value("result", result, &out) }
        if let savedScenes { object.strings("savedScenes", savedScenes, &out) }
        if let scene {
            object.key("scene", &out)
            if let scene { scene.write(to: &out) } else { out.append(contentsOf: "null".utf8) }
        }
        if let scenes {
            object.array("scenes", scenes, &out) { $0.write(to: &$1) }
        }
        // `services` is the list when there is one, else `state`'s count (as in `json`).
        if let services {
            object.array("services", services, &out) { $0.write(to: &$1) }
        } else if let status {
            object.key("services", &out)
            JSONValue.serialize(integer: Int64(status.serviceCount), into: &out)
        }
        if snapshot { object.bool("snapshot", true, &out) }
        if let state { object.string("state", state, &out) }
        if let stuck = status?.stuck {
            object.key("stuck", &out)
            stuck.write(to: &out)
        }
        object.end(&out)
    }
}

extension ControlReply.Call {
    fileprivate func write(to out: inout [UInt8]) {
        var object = ObjectWriter()
        if let deadline { object.number("deadline", deadline, &out) }
        object.string("event", event, &out)
        if let seconds { object.number("seconds", seconds, &out) }
        object.string("service", service, &out)
        object.end(&out)
    }
}

extension ControlReply.Service {
    fileprivate func write(to out: inout [UInt8]) {
        // Isolation's members are merged among these by name: those go through JSONValue.
        guard isolation.isEmpty else { return json.serialize(into: &out) }
        var object = ObjectWriter()
        object.optionalString("activatedBy", activatedBy, &out)
        object.string("activation", activation, &out)
        object.strings("activities", activities, &out)
        object.strings("answers", answers, &out)
        object.strings("events", events, &out)
        object.string("id", id, &out)
        object.optionalString("lastError", lastError, &out)
        object.string("name", name, &out)
        object.string("path", path, &out)
        object.number("priority", Double(priority), &out)
        object.number("retiredCopies", Double(retiredCopies), &out)
        object.strings("sceneRoles", sceneRoles, &out)
        object.string("state", state, &out)
        object.strings("subscriptions", subscriptions, &out)
        object.strings("urls", urls, &out)
        object.string("version", version, &out)
        object.end(&out)
    }
}

extension ControlReply.SceneEntry {
    fileprivate func write(to out: inout [UInt8]) {
        var object = ObjectWriter()
        object.string("configuration", configuration, &out)
        object.optionalString("configuredBy", configuredBy, &out)
        object.string("name", name, &out)
        object.string("role", role, &out)
        object.bool("savedState", savedState, &out)
        object.value("settings", settings ?? .null, &out)
        object.string("state", state, &out)
        object.end(&out)
    }
}

/// One JSON object being written: members are appended in the order given (the caller's
/// keys are already sorted), commas between them.
private struct ObjectWriter {
    private var count = 0

    mutating func key(_ key: StaticString, _ out: inout [UInt8]) {
        out.append(count == 0 ? UInt8(ascii: "{") : UInt8(ascii: ","))
        count += 1
        out.append(UInt8(ascii: "\""))
        out.append(contentsOf: UnsafeBufferPointer(start: key.utf8Start, count: key.utf8CodeUnitCount))
        out.append(UInt8(ascii: "\""))
        out.append(UInt8(ascii: ":"))
    }

    mutating func string(_ name: StaticString, _ value: String, _ out: inout [UInt8]) {
        key(name, &out)
        JSONValue.serialize(string: value, into: &out)
    }

    mutating func optionalString(_ name: StaticString, _ value: String?, _ out: inout [UInt8]) {
        key(name, &out)
        if let value { JSONValue.serialize(string: value, into: &out) } else { out.append(contentsOf: "null".utf8) }
    }

    mutating func strings(_ name: StaticString, _ values: [String], _ out: inout [UInt8]) {
        key(name, &out)
        StringListText.write(values, &out)
    }

    /// `name: [ … ]`, each element written by `write`.
    mutating func array<Element>(
        _ name: StaticString, _ values: [Element], _ out: inout [UInt8], _ write: (Element, inout [UInt8]) -> Void
    ) {
        key(name, &out)
        out.append(UInt8(ascii: "["))
        for (index, value) in values.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            write(value, &out)
        }
        out.append(UInt8(ascii: "]"))
    }

    mutating func bool(_ name: StaticString, _ value: Bool, _ out: inout [UInt8]) {
        key(name, &out)
        out.append(contentsOf: value ? "true".utf8 : "false".utf8)
    }

    mutating func number(_ name: StaticString, _ value: Double, _ out: inout [UInt8]) {
        key(name, &out)
        JSONValue.serialize(number: value, into: &out)
    }

    mutating func value(_ name: StaticString, _ value: JSONValue, _ out: inout [UInt8]) {
        key(name, &out)
        value.serialize(into: &out)
    }

    func end(_ out: inout [UInt8]) {
        if count == 0 { out.append(UInt8(ascii: "{")) }
        out.append(UInt8(ascii: "}"))
    }
}

/// The JSON text of the last list of strings written, kept with the list: a list the host
/// hands out again and again (an event's receivers, one array per event kind in the
/// dispatcher) is written with one copy instead of escaping each string per reply.
///
/// The same storage is the same list: the memo holds the list, so its storage cannot be
/// freed and its address reused while it is here, and a change to the list would copy it
/// (it is not uniquely referenced) instead of changing these elements.
private enum StringListText {
    // Replies are written on the main thread and, while it is stuck, on connection queues.
    private static let last = Locked<(list: [String], text: [UInt8])?>(nil)

    static func write(_ values: [String], _ out: inout [UInt8]) {
        // A short list costs less to write than to look up.
        guard values.count >= 2 else { return plain(values, &out) }
        let hit = last.withLock { memo -> Bool in
            guard let memo, memo.list.count == values.count, storage(memo.list) == storage(values) else { return false }
            out.append(contentsOf: memo.text)
            return true
        }
        if hit { return }
        var text: [UInt8] = []
        plain(values, &text)
        out.append(contentsOf: text)
        last.withLock { $0 = (values, text) }
    }

    private static func plain(_ values: [String], _ out: inout [UInt8]) {
        out.append(UInt8(ascii: "["))
        for (index, value) in values.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            JSONValue.serialize(string: value, into: &out)
        }
        out.append(UInt8(ascii: "]"))
    }

    private static func storage(_ list: [String]) -> UnsafePointer<String>? { list.withUnsafeBufferPointer { $0.baseAddress } }
}
