import ServiceJSON

// Writes a reply's JSON straight into a connection's output: the bytes ``ControlReply/json``'s
// `serialized` gives (keys sorted by their UTF-8 bytes, the same escaping and numbers), without
// building a dictionary per object, sorting its keys and a String per member (issue 13).
// ControlProtocolTests compares the two for every family, every member set.

extension ControlReply {
    /// Appends the reply's JSON text (no newline) to `out`.
    func write(to out: inout [UInt8]) {
        // Keys in sorted order, as `serialized` writes them: the envelope's (`error`, `id`,
        // `ok`, `snapshot`) among the family's.
        var object = ObjectWriter()
        switch body {
        case .none:
            writeEnvelope(&object, &out)
        case .delivery(let delivery):
            if let answers = delivery.answers {
                object.value("answers", .object(answers.mapValues(JSONValue.string)), &out)
            }
            if let error { object.string("error", error, &out) }
            if let event = delivery.event { object.string("event", event, &out) }
            if let handled = delivery.handled { object.bool("handled", handled, &out) }
            if let handledBy = delivery.handledBy { object.string("handledBy", handledBy, &out) }
            if let id { object.value("id", id, &out) }
            if let note = delivery.note { object.string("note", note, &out) }
            if let ok { object.bool("ok", ok, &out) }
            if let presentation = delivery.presentation { object.value("presentation", presentation, &out) }
            if let receivers = delivery.receivers { object.strings("receivers", receivers, &out) }
            if let result = delivery.result { object.value("result", result, &out) }
            if snapshot { object.bool("snapshot", true, &out) }
        case .status(let status):
            if let busy = status.busy {
                object.key("busy", &out)
                busy.write(to: &out)
            }
            object.optionalString("deviceToken", status.deviceToken, &out)
            if let error { object.string("error", error, &out) }
            if let id { object.value("id", id, &out) }
            if let ok { object.bool("ok", ok, &out) }
            object.key("services", &out)
            JSONValue.serialize(integer: Int64(status.serviceCount), into: &out)
            if snapshot { object.bool("snapshot", true, &out) }
            object.string("state", status.state, &out)
            if let stuck = status.stuck {
                object.key("stuck", &out)
                stuck.write(to: &out)
            }
        case .services(let list) where list.skipped == nil:
            if let error { object.string("error", error, &out) }
            if let id { object.value("id", id, &out) }
            if let ok { object.bool("ok", ok, &out) }
            object.array("services", list.services, &out) { $0.write(to: &$1) }
            if snapshot { object.bool("snapshot", true, &out) }
        case .reload(let reload):
            object.strings("added", reload.added, &out)
            if let error { object.string("error", error, &out) }
            object.strings("failures", reload.failures, &out)
            if let id { object.value("id", id, &out) }
            if let ok { object.bool("ok", ok, &out) }
            if !reload.reconfigured.isEmpty { object.strings("reconfigured", reload.reconfigured, &out) }
            object.strings("removed", reload.removed, &out)
            object.strings("replaced", reload.replaced, &out)
            if !reload.restartNeeded.isEmpty { object.strings("restartNeeded", reload.restartNeeded, &out) }
            if snapshot { object.bool("snapshot", true, &out) }
        case .moved(let state):
            if let error { object.string("error", error, &out) }
            object.bool("handled", true, &out)
            if let id { object.value("id", id, &out) }
            if let ok { object.bool("ok", ok, &out) }
            if snapshot { object.bool("snapshot", true, &out) }
            object.string("state", state, &out)
        case .services, .scene, .authorization, .operated:
            // The rarer families (and `list --all`'s free-form entries) go through JSONValue.
            return json.serialize(into: &out)
        }
        object.end(&out)
    }

    private func writeEnvelope(_ object: inout ObjectWriter, _ out: inout [UInt8]) {
        if let error { object.string("error", error, &out) }
        if let id { object.value("id", id, &out) }
        if let ok { object.bool("ok", ok, &out) }
        if snapshot { object.bool("snapshot", true, &out) }
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

    private static func storage(_ list: [String]) -> UnsafePointer<String>? {
        list.withUnsafeBufferPointer { $0.baseAddress }
    }
}
