import Synchronization

/// The `host ctl watch` clients: every trace record (and, for those that asked, every log
/// line) is handed to each as one JSON line.
///
/// Thread-safe: trace records come from the main thread, log lines and completions from any.
/// A client's sink never blocks the caller: it buffers, and drops its client once its unread
/// output passes a bound (the control connection's ``WatchStream``).
public final class WatchHub: Sendable {
    /// One client.
    final class Sink: Sendable {
        /// Whether it also wants log lines.
        let logs: Bool
        /// Takes one line (newline included); must not block.
        let deliver: @Sendable ([UInt8]) -> Void

        init(logs: Bool, deliver: @escaping @Sendable ([UInt8]) -> Void) {
            self.logs = logs
            self.deliver = deliver
        }
    }

    private let sinks = Locked<[ObjectIdentifier: Sink]>([:])
    // Read on every delivery by the dispatcher's slow path and by every log line: one load.
    private let count = Atomic<Int>(0)
    private let changed = Locked<(@Sendable () -> Void)?>(nil)

    /// A hub without clients.
    public init() {}

    /// Whether any client is watching.
    public var isWatching: Bool { count.load(ordering: .relaxed) > 0 }

    /// Calls `observer` (on the caller's thread) whenever a client comes or goes.
    func whenChanged(_ observer: @escaping @Sendable () -> Void) { changed.withLock { $0 = observer } }

    func add(_ sink: Sink) {
        let total = sinks.withLock { sinks in
            sinks[ObjectIdentifier(sink)] = sink
            return sinks.count
        }
        count.store(total, ordering: .relaxed)
        changed.withLock { $0 }?()
    }

    func remove(_ sink: Sink) {
        let total = sinks.withLock { sinks in
            sinks[ObjectIdentifier(sink)] = nil
            return sinks.count
        }
        count.store(total, ordering: .relaxed)
        changed.withLock { $0 }?()
    }

    /// A trace record (a JSON object, without newline) to every client.
    func publish(trace object: String) {
        let bytes = Array((object + "\n").utf8)
        for sink in sinks.withLock({ Array($0.values) }) { sink.deliver(bytes) }
    }

    /// A log line (as written, newline included) to the clients that asked for logs, as
    /// `{"log":"LINE"}`.
    func publish(log line: String) {
        let targets = sinks.withLock { $0.values.filter(\.logs) }
        guard !targets.isEmpty else { return }
        let bytes = Array((JSONText.object(["log": JSONText.string(String(line.dropLast()))]) + "\n").utf8)
        for sink in targets { sink.deliver(bytes) }
    }
}
