import ServiceJSON
import Synchronization

/// What `state` and `list` answer while the main thread is stuck in a service past its
/// deadline: the last published service list and the live parts (app state, isolation board,
/// the stuck call), all readable from the control channel's own threads.
///
/// ControlHandler publishes after a request it carries out changed what the list or the token
/// shows, and whenever the service list changes (a reload by SIGHUP included), so they are as
/// fresh as the last request or change; the app state and the isolation states are read live.
public final class ControlSnapshot: Sendable {
    private let tracker: CallTracker
    private let stateCell: AppStateCell
    private let board: IsolationBoard?
    private struct Published {
        var services: [Service] = []
        var deviceToken: String?
    }

    /// What `list` shows of a running service, kept as it is: described (event names and
    /// all) only when a stuck main thread makes the snapshot answer. Describing every service
    /// at each publish cost ~0.7 µs per service before `active`, for an answer rarely asked.
    struct Service: Sendable {
        let metadata: ServiceMetadata
        let path: String
        let lastError: String?
        let retiredCopies: Int
    }
    private let published = Locked(Published())
    // `state` and `list` requests waiting for the main thread, answered from here if it gets stuck.
    private let waiting = Locked<[UInt64: Waiting]>([:])
    private let nextWaiting = Atomic<UInt64>(0)

    /// A request that the main thread or the snapshot answers, whichever comes first.
    public final class Waiting: Sendable {
        let request: ControlRequest
        private let answered = Atomic<Bool>(false)
        private let reply: @Sendable (ControlReply) -> Void

        init(request: ControlRequest, reply: @escaping @Sendable (ControlReply) -> Void) {
            self.request = request
            self.reply = reply
        }

        /// True for the first of the main thread and the snapshot to ask: that one answers.
        public func claim() -> Bool { !answered.exchange(true, ordering: .acquiringAndReleasing) }

        func answer(_ value: ControlReply) { if claim() { reply(value) } }
    }

    init(tracker: CallTracker, stateCell: AppStateCell, board: IsolationBoard?) {
        self.tracker = tracker
        self.stateCell = stateCell
        self.board = board
        tracker.whenStuck { [weak self] in self?.answerWaiting() }
    }

    /// Holds a `state` or `list` request while it waits for the main thread; nil for others.
    /// The main thread must `claim()` it before replying, and `release` it after.
    public func hold(_ request: ControlRequest, reply: @escaping @Sendable (ControlReply) -> Void) -> (
        key: UInt64, waiting: Waiting
    )? {
        // `list --all` is held too (its row's); `reply(to:)` leaves it to the main thread.
        guard request.spec.fromSnapshot else { return nil }
        let key = nextWaiting.add(1, ordering: .relaxed).newValue
        let entry = Waiting(request: request, reply: reply)
        waiting.withLock { $0[key] = entry }
        // The main thread may have got stuck between the first look and now.
        if tracker.stuck != nil { answerWaiting() }
        return (key, entry)
    }

    /// Forgets a held request (it was answered).
    public func release(_ key: UInt64) { waiting.withLock { _ = $0.removeValue(forKey: key) } }

    private func answerWaiting() {
        let entries = waiting.withLock { entries in
            defer { entries = [:] }
            return Array(entries.values)
        }
        for entry in entries {
            if let value = reply(to: entry.request) { entry.answer(value) }
        }
    }

    /// Whether the main thread is stuck in a service past its deadline.
    var isStuck: Bool { tracker.stuck != nil }

    /// Calls `observer` (on the watchdog's thread) each time the main thread gets stuck.
    func whenStuck(_ observer: @escaping @Sendable () -> Void) { tracker.whenStuck(observer) }

    /// Keeps the list (without isolation fields, read live) and the token.
    func publish(services: [Service], deviceToken: String?) {
        published.withLock { $0 = Published(services: services, deviceToken: deviceToken) }
    }

    /// The reply to `request` from the snapshot, when the main thread is stuck and the
    /// request is `state` or `list`; nil otherwise (the request waits for the main thread).
    public func reply(to request: ControlRequest) -> ControlReply? {
        guard let stuck = tracker.stuck else { return nil }
        let snapshot = published.withLock { $0 }
        var body = ControlReply(ok: true, id: request.id)
        body.snapshot = true
        switch request.command {
        case .state:
            body.body = .status(
                ControlReply.Status(
                    state: stateCell.value.name, serviceCount: snapshot.services.count,
                    deviceToken: snapshot.deviceToken,
                    busy: ControlReply.Call(service: stuck.service, event: stuck.event), stuck: Self.describe(stuck)))
        case .list:
            let services = snapshot.services.map { service in
                var entry = ControlHandler.describe(service.metadata, path: service.path, state: "running")
                entry.lastError = service.lastError
                entry.retiredCopies = service.retiredCopies
                entry.isolation = Host.isolationFields(for: service.metadata.id, board: board, tracker: tracker)
                return entry
            }
            body.body = .services(ControlReply.Services(services: services))
        default:
            return nil
        }
        return body
    }

    /// The stuck call, how long it has run and its deadline.
    static func describe(_ stuck: CallTracker.StuckCall) -> ControlReply.Call {
        ControlReply.Call(
            service: stuck.service, event: stuck.event, seconds: (Clock.monotonic() - stuck.since).rounded(),
            deadline: stuck.deadline)
    }
}
