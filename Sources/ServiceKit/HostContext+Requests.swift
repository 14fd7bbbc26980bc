import ServiceABI

extension HostContext {
    /// Hands the host one control request, as a line on the control socket
    /// (`{"command": "push", "payload": {…}}`, `open`, `post`, …): the same parser, limits
    /// and handler, so a push follows the app state exactly as `host ctl push` does.
    ///
    /// `reply` runs once on the host's main thread with the reply object (`ok`, and
    /// `error` or the event's `handled`, `receivers`, …), only after the host carried the
    /// request out or refused it. The configuration must grant the service requests
    /// (`"requests": "events"` or `"all"` in services.json); otherwise the reply is an
    /// error naming the key. Any thread.
    /// - Throws: ``HostError/unsupported`` when the host predates requests or takes none
    ///   (a service in a worker process), ``HostError/invalid`` for an empty request.
    public func control(_ request: JSONValue, reply: @escaping @Sendable (JSONValue) -> Void) throws(HostError) {
        try control(Array(request.serialized.utf8), reply: reply)
    }

    /// ``control(_:reply:)`` with the request already serialized (`json`: one JSON object).
    public func control(_ json: [UInt8], reply: @escaping @Sendable (JSONValue) -> Void) throws(HostError) {
        let raw = try attached()
        guard has(\.control), let submit = raw.pointee.control else { throw .unsupported }
        guard !json.isEmpty else { throw .invalid }
        let box = Unmanaged.passRetained(ReplyBox(reply)).toOpaque()
        let code = json.withUnsafeBytes { bytes in
            submit(
                raw, bytes.baseAddress!.assumingMemoryBound(to: CChar.self), bytes.count,
                { context, text, length in
                    guard let context else { return }
                    let box = Unmanaged<ReplyBox>.fromOpaque(context).takeRetainedValue()
                    let bytes = text.map { Array(UnsafeRawBufferPointer(start: $0, count: length)) } ?? []
                    box.reply(
                        (try? JSONValue(parsing: bytes))
                            ?? .object(["ok": .bool(false), "error": .string("unreadable reply")]))
                }, box)
        }
        if code != SH_OK {
            Unmanaged<ReplyBox>.fromOpaque(box).release()  // the host will not call back
            throw HostError(code: code)
        }
    }
}

/// A request's reply closure, kept alive across the C call until the host answers.
private final class ReplyBox: Sendable {
    let reply: @Sendable (JSONValue) -> Void
    init(_ reply: @escaping @Sendable (JSONValue) -> Void) { self.reply = reply }
}
