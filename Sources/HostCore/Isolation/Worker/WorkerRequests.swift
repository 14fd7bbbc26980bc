import ServiceABI

/// The requests a worker's services sent (`sh_host.request`) and still wait for: each
/// reply by request id, until the host's `requestReply` comes. It
/// is called on the worker's main thread, as host.h promises (in-process: the host's).
final class WorkerRequests: Sendable {
    /// The worker's one table: a worker process runs one session.
    static let shared = WorkerRequests()

    private let waiting = Locked<(next: UInt32, targets: [UInt32: @Sendable (RequestReply) -> Void])>((0, [:]))

    /// Keeps `reply` (HostAdapter's call of the service's function) until the host's reply;
    /// returns the request's id.
    func add(_ reply: @escaping @Sendable (RequestReply) -> Void) -> UInt32 {
        waiting.withLock { state in
            state.next &+= 1
            state.targets[state.next] = reply
            return state.next
        }
    }

    /// A `requestReply` frame, on the main thread: the reply runs here.
    @MainActor
    func deliver(_ frame: Frame) throws(WireError) {
        var r = frame.reader
        let id = try r.u32("request id")
        let result = try r.i32("result")
        let json = try r.blob("reply")
        try r.finish("request reply")
        guard let target = waiting.withLock({ $0.targets.removeValue(forKey: id) }) else {
            throw .malformed("a reply to request \(id), which is not waiting")
        }
        target(RequestReply(result: result, json: json))
    }
}
