import Dispatch
import Glibc
import Synchronization

/// Turns SIGTERM and SIGINT into an orderly shutdown on the main thread, and makes sure the
/// host exits anyway when a second signal arrives or the shutdown timeout passes while a
/// service has not returned.
///
/// The signals are watched on a private queue, so they are noticed even while the main
/// thread is stuck inside a service.
public final class ShutdownCoordinator: Sendable {
    private let queue: DispatchQueue
    private let signalsSeen = Atomic<Int>(0)
    private let timeout: Double
    private let tracker: CallTracker
    private let log: Log
    private let shutdown: @Sendable () -> Void
    // Immutable after init, and DispatchSource's methods are thread-safe; the sources must
    // stay alive for the process lifetime.
    nonisolated(unsafe) private let sources: [DispatchSourceSignal]

    /// A coordinator that runs `shutdown` on the main queue at the first signal.
    public init(timeout: Double, tracker: CallTracker, log: Log, shutdown: @escaping @Sendable () -> Void) {
        self.timeout = timeout
        self.tracker = tracker
        self.log = log
        self.shutdown = shutdown
        let queue = DispatchQueue(label: "servicehost.shutdown")
        self.queue = queue
        sources = [SIGTERM, SIGINT].map { DispatchSource.makeSignalSource(signal: $0, queue: queue) }
    }

    /// Starts watching SIGTERM and SIGINT (their default action is replaced).
    public func install() {
        for (number, source) in zip([SIGTERM, SIGINT], sources) {
            signal(number, SIG_IGN)
            source.setEventHandler { [self] in received(number) }
            source.resume()
        }
    }

    private func received(_ number: Int32) {
        let name = number == SIGTERM ? "SIGTERM" : "SIGINT"
        guard begin() else { forceExit(because: "second signal (\(name)) during shutdown") }
        log.info("host", "\(name) received: shutting down (a second signal or \(formatted(timeout)) s forces exit)")
        DispatchQueue.main.async(execute: shutdown)
    }

    /// Starts the shutdown deadline for a shutdown that did not come from a signal
    /// (`host ctl terminate`); a signal after it forces exit.
    public func armDeadline() {
        if begin() { log.info("host", "terminating on request (a signal or \(formatted(timeout)) s forces exit)") }
    }

    /// Counts the shutdown request and starts the deadline; false when one was already made.
    private func begin() -> Bool {
        guard signalsSeen.add(1, ordering: .relaxed).newValue == 1 else { return false }
        queue.asyncAfter(deadline: .now() + timeout) { [self] in
            forceExit(because: "shutdown took longer than \(formatted(timeout)) s")
        }
        return true
    }

    private func forceExit(because reason: String) -> Never {
        if let (service, event) = tracker.current {
            log.error("host", "forced exit: \(reason); service \(service) has not returned from \(event)")
        } else {
            log.error("host", "forced exit: \(reason)")
        }
        _exit(1)
    }

    private func formatted(_ seconds: Double) -> String {
        seconds == seconds.rounded() ? String(Int(seconds)) : String(seconds)
    }
}
