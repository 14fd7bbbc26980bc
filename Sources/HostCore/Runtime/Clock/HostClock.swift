import Dispatch
import Glibc

/// Time for the host's deadlines and delays on the main thread: completion deadlines, worker
/// restart backoff, file watching.
///
/// Injectable so tests advance time instead of sleeping (swift-nio's EmbeddedEventLoop is
/// the model): ``SystemClock`` runs work on the main queue after real time passes,
/// ``ManualClock`` runs it when a test calls ``ManualClock/advance(by:)``.
@MainActor
public protocol HostClock: AnyObject {
    /// Monotonic seconds (CLOCK_MONOTONIC for the system clock).
    var now: Double { get }
    /// Runs `work` on the main thread `seconds` from now, unless cancelled first.
    @discardableResult
    func schedule(after seconds: Double, _ work: @escaping @MainActor () -> Void) -> ScheduledWork
}

/// Work scheduled on a ``HostClock``; cancelling it before it runs means it never runs.
@MainActor
public final class ScheduledWork {
    private(set) var isCancelled = false
    let deadline: Double
    let work: @MainActor () -> Void

    init(deadline: Double, work: @escaping @MainActor () -> Void) {
        self.deadline = deadline
        self.work = work
    }

    /// Makes sure the work does not run (if it has not run yet).
    public func cancel() { isCancelled = true }

    func run() {
        if !isCancelled {
            isCancelled = true
            work()
        }
    }
}

/// Real time: the main dispatch queue and CLOCK_MONOTONIC.
@MainActor
public final class SystemClock: HostClock {
    /// The system clock.
    public init() {}

    public var now: Double { Clock.monotonic() }

    @discardableResult
    public func schedule(after seconds: Double, _ work: @escaping @MainActor () -> Void) -> ScheduledWork {
        let item = ScheduledWork(deadline: now + seconds, work: work)
        DispatchQueue.main.asyncAfter(deadline: .now() + seconds) { MainActor.assumeIsolated { item.run() } }
        return item
    }
}

/// Time that moves only when a test says so.
@MainActor
public final class ManualClock: HostClock {
    public private(set) var now: Double
    private var scheduled: [ScheduledWork] = []

    /// A clock at `start` seconds.
    public init(start: Double = 0) { now = start }

    @discardableResult
    public func schedule(after seconds: Double, _ work: @escaping @MainActor () -> Void) -> ScheduledWork {
        let item = ScheduledWork(deadline: now + seconds, work: work)
        scheduled.append(item)
        return item
    }

    /// Moves time forward by `seconds`, running every work that falls due, earliest first
    /// (work scheduled by work that runs is run too when it falls due within the step).
    public func advance(by seconds: Double) {
        let end = now + seconds
        while let next = scheduled.filter({ !$0.isCancelled && $0.deadline <= end }).min(by: {
            $0.deadline < $1.deadline
        }) {
            scheduled.removeAll { $0 === next }
            now = max(now, next.deadline)
            next.run()
        }
        scheduled.removeAll { $0.isCancelled }
        now = end
    }

    /// How many works wait to run.
    public var pendingCount: Int { scheduled.filter { !$0.isCancelled }.count }
}
