import ServiceABI

/// A completion as a service in a worker holds it: every call goes to the host as a
/// `complete` frame, where the host's own CompletionRecord keeps "exactly once" and the
/// deadline, and logs a second or late call, as it does in-process.
///
/// Its `sh_completion` is a slot of the worker's ``CompletionPool``, as the host's are: this
/// object is freed at the first call, and the slot relays later calls until it is reused.
final class WorkerCompletion: CompletionTarget {
    let id: UInt32
    private let channel: FrameChannel
    // Told once, at the first call (the worker then frees the event's data).
    private let firstCall: @Sendable () -> Void
    // The pool slot's C struct, valid for the process lifetime; C calls it, Swift only hands
    // it out.
    nonisolated(unsafe) let table: UnsafePointer<sh_completion>

    init(id: UInt32, event: EventKind, channel: FrameChannel, firstCall: @escaping @Sendable () -> Void) {
        self.id = id
        self.channel = channel
        self.firstCall = firstCall
        let pool = CompletionPool.shared
        let (slot, table) = pool.acquire(serviceID: "", event: event, log: nil) { [channel] result, json in
            Self.relay(id, result, json, channel)
        }
        self.table = table
        pool.attach(self, to: slot)
    }

    func answered(_ result: Int32, _ json: [UInt8]?) {
        Self.relay(id, result, json, channel)
        firstCall()
    }

    private static func relay(_ id: UInt32, _ result: Int32, _ json: [UInt8]?, _ channel: FrameChannel) {
        var w = WireWriter()
        w.u32(id)
        w.i32(result)
        w.bool(json != nil)
        if let json { w.blob(json) }
        try? channel.send(&w, .complete)
    }
}
