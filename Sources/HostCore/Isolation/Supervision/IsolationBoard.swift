import ServiceJSON
import Synchronization

/// What `host ctl list` says about each process-isolated service, readable from any thread,
/// so the control channel can answer even while the main thread is stuck.
final class IsolationBoard: Sendable {
    /// One service's entry.
    struct Entry: Sendable {
        /// "starting", "running", "restarting", "failed", "stopped".
        var state: String
        /// Its worker's pid, while it has one.
        var pid: Int32?
        /// How often it was restarted.
        var restarts = 0
        /// Why it is failed.
        var failure: FailureRecord?
        /// Its last crash, in words.
        var lastCrash: String?
        /// While failed with `restartResetAfter`: when it starts again by itself, ISO 8601 UTC.
        var resetAt: String?
    }

    private let entries = Locked<[String: Entry]>([:])

    func update(_ id: String, _ change: (inout Entry) -> Void) {
        entries.withLock { entries in
            var entry = entries[id] ?? Entry(state: "starting")
            change(&entry)
            entries[id] = entry
        }
    }

    /// Removes service `id` (its plugin did not load).
    func forget(_ id: String) { entries.withLock { _ = $0.removeValue(forKey: id) } }

    /// Whether service `id` runs in a worker.
    func isIsolated(_ id: String) -> Bool { entries.withLock { $0[id] != nil } }

    /// The `list` members of service `id`: isolation, state, pid, restarts, failure, resetAt.
    func fields(for id: String) -> [String: JSONValue] {
        guard let entry = entries.withLock({ $0[id] }) else { return ["isolation": "in-process"] }
        var fields: [String: JSONValue] = [
            "isolation": "process", "state": .string(entry.state),
            "restarts": .number(Double(entry.restarts)),
        ]
        if let pid = entry.pid { fields["pid"] = .number(Double(pid)) }
        if let failure = entry.failure { fields[.failure] = failure.json }
        if let crash = entry.lastCrash { fields["lastCrash"] = .string(crash) }
        if let resetAt = entry.resetAt { fields["resetAt"] = .string(resetAt) }
        return fields
    }
}
