import Glibc

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

    /// A watchdog of `tracker`; `deadline` gives a service's event timeout, `isIsolated` skips
    /// services whose worker has its own deadline.
    init(tracker: CallTracker, log: Log, shortestDeadline: Double,
         deadline: @escaping @Sendable (String) -> Double, isIsolated: @escaping @Sendable (String) -> Bool) {
        self.tracker = tracker
        self.log = log
        self.deadline = deadline
        self.isIsolated = isIsolated
        interval = min(1, max(0.05, shortestDeadline / 10))
    }

    /// Starts sampling on a thread of its own, for the process lifetime.
    func start() {
        DetachedThread.start { [self] in run() }
    }

    private func run() {
        var watched: (call: UInt64, since: Double)?
        var reported = false
        while true {
            var pause = timespec(tv_sec: Int(interval), tv_nsec: Int((interval - interval.rounded(.down)) * 1e9))
            var left = timespec()
            while nanosleep(&pause, &left) != 0 && errno == EINTR { pause = left }
            let sample = tracker.sample()
            let now = Clock.monotonic()
            guard sample.service >= 0 else {
                finish(&reported, watched, now)
                watched = nil
                continue
            }
            if watched?.call != sample.call {
                finish(&reported, watched, now)
                watched = (sample.call, now)
                continue
            }
            guard !reported, let since = watched?.since else { continue }
            let id = tracker.id(at: sample.service)
            let limit = deadline(id)
            guard now - since >= limit, !isIsolated(id) else { continue }
            let event = EventKind(rawValue: sample.event)?.name ?? "event \(sample.event)"
            reported = true
            tracker.stuck = CallTracker.StuckCall(service: id, event: event, since: since, deadline: limit)
            log.error("host", "service \(id) has not returned from \(event) within its \(Seconds.text(limit)) s deadline;"
                + " an in-process service cannot be stopped safely, so the host waits for it (host ctl state and list"
                + " still answer; \"isolation\": \"process\" would have killed and restarted it)")
        }
    }

    /// A stuck call that returned: said once, and the mark cleared.
    private func finish(_ reported: inout Bool, _ watched: (call: UInt64, since: Double)?, _ now: Double) {
        guard reported else { return }
        reported = false
        if let stuck = tracker.stuck {
            log.warn("host", "service \(stuck.service) returned from \(stuck.event) after about \(Seconds.text((now - stuck.since).rounded())) s")
        }
        tracker.stuck = nil
    }
}
