import Glibc
import Synchronization

/// Notices a call into an in-process service that has outlived its event deadline.
///
/// An in-process service cannot be stopped safely (killing a thread mid-call would leave
/// the host's and the plugin's state undefined), so the watchdog does what can be done: it
/// says so in the log, once per stuck call, and marks the call in the CallTracker, so the
/// control channel answers `state` and `list` from a snapshot instead of waiting for the
/// main thread. Process-isolated services have their own deadline (their worker is killed).
///
/// It samples the tracker a few times a second: the dispatch path pays nothing for it.
final class HangWatchdog: Sendable {
    private let tracker: CallTracker
    private let log: Log
    private let deadline: @Sendable (String) -> Double
    private let isIsolated: @Sendable (String) -> Bool
    private let interval: Double
    private let now: @Sendable () -> Double
    // What the sampling thread watches; only that thread (or a test driving ``check()``) uses it.
    private let watch = Locked<Watch>(Watch())

    private struct Watch {
        // The call being watched: the delivery's count and the service, and when it was first seen.
        var call: (delivery: UInt64, service: Int, since: Double)?
        var reported = false
    }

    /// A watchdog of `tracker`; `deadline` gives a service's event timeout, `isIsolated` skips
    /// services whose worker has its own deadline; `now` is the monotonic clock (a test's own).
    init(
        tracker: CallTracker, log: Log, shortestDeadline: Double,
        deadline: @escaping @Sendable (String) -> Double, isIsolated: @escaping @Sendable (String) -> Bool,
        now: @escaping @Sendable () -> Double = Clock.monotonic
    ) {
        self.tracker = tracker
        self.log = log
        self.deadline = deadline
        self.isIsolated = isIsolated
        self.now = now
        interval = min(1, max(0.05, shortestDeadline / 10))
    }

    /// Starts sampling for the process lifetime, on the signal thread (one thread for both).
    /// Throws when that thread cannot be started.
    func start() throws(SystemError) {
        try SignalThread.sample(every: interval) { [self] in check() }
    }

    /// One sample: notes a new call, reports a call past its deadline once, and clears the mark
    /// of one that returned.
    func check() {
        let sample = tracker.sample()
        let time = now()
        watch.withLock { watch in
            guard sample.service >= 0 else {
                finish(&watch, time)
                watch.call = nil
                return
            }
            guard let call = watch.call, call.delivery == sample.call, call.service == sample.service else {
                finish(&watch, time)
                watch.call = (sample.call, sample.service, time)
                return
            }
            guard !watch.reported else { return }
            let id = tracker.id(at: sample.service)
            let limit = deadline(id)
            guard time - call.since >= limit, !isIsolated(id) else { return }
            let event = EventKind(rawValue: sample.event)?.name ?? "event \(sample.event)"
            watch.reported = true
            // Logged before the stuck call is published: publishing it answers waiting control
            // requests, and a client that has seen `stuck` must find the line already written.
            log.error(
                "host",
                "service \(id) has not returned from \(event) within its \(Seconds.text(limit)) s deadline;"
                    + " an in-process service cannot be stopped safely, so the host waits for it (host ctl state and list"
                    + " still answer; \"isolation\": \"process\" would have killed and restarted it)",
                event: .serviceStuck, .string("service", id), .string("event", event))
            tracker.stuck = CallTracker.StuckCall(service: id, event: event, since: call.since, deadline: limit)
        }
    }

    /// A stuck call that returned: said once, and the mark cleared.
    private func finish(_ watch: inout Watch, _ time: Double) {
        guard watch.reported else { return }
        watch.reported = false
        if let stuck = tracker.stuck {
            log.warn(
                "host",
                "service \(stuck.service) returned from \(stuck.event) after about \(Seconds.text((time - stuck.since).rounded())) s"
            )
        }
        tracker.stuck = nil
    }
}
