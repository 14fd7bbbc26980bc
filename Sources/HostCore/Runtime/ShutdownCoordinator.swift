import Dispatch
import Glibc
import Synchronization

/// Turns SIGTERM and SIGINT into an orderly shutdown on the main thread (and SIGHUP into a
/// reload), and makes sure the host exits anyway when a second signal arrives or the shutdown
/// timeout passes while a service has not returned.
///
/// Why a self-pipe: ``catchSignals()`` installs a handler first thing, so a signal that arrives
/// at any moment, even during start-up, is recorded; the handler only writes the signal's number
/// to a pipe (async-signal-safe), and a dedicated thread (``SignalThread``, which also samples the
/// hang watchdog) reads the pipe and acts, so a signal is noticed even while the main thread is
/// stuck inside a service. (Blocking the signals and
/// calling `sigwait` does not work here: libdispatch resets the signal mask of the threads it
/// runs, including the one that drains the main queue.)
public final class ShutdownCoordinator: Sendable {
    private let queue = DispatchQueue(label: "servicehost.shutdown")
    private let signalsSeen = Atomic<Int>(0)
    private let timeout: Double
    private let tracker: CallTracker
    private let log: Log
    private let shutdown: @Sendable () -> Void
    private let hangup: @Sendable () -> Void

    /// The signals the coordinator takes: SIGTERM, SIGINT, SIGHUP.
    public static let handled: [Int32] = [SIGTERM, SIGINT, SIGHUP]

    /// Installs the handlers that record the signals in the pipe. Call it first thing on the
    /// main thread; the signals are then never lost, and never kill the host by default.
    public static func catchSignals() {
        // Close-on-exec from the start: workers never inherit it. Kept open for the process lifetime.
        guard let ends = try? FileDescriptor.pipe(path: "the signal pipe") else { return }
        signalPipeRead = ends.first.release()
        signalPipeWrite = ends.second.release()
        // The handler runs on its own stack on this (the main) thread. Needed when main ends
        // with dispatchMain's pthread_exit (no longer the host or the worker, which run
        // MainLoop; kept as it is cheap and safe): the dispatch thread that then lives on this
        // stack sits below main's dead frame, whose AddressSanitizer red zones are never
        // cleared (a signal there was reported as a stack overflow). Allocated once.
        let size = 64 * 1024
        var alternate = stack_t()
        alternate.ss_sp = UnsafeMutableRawPointer.allocate(byteCount: size, alignment: 16)
        alternate.ss_size = size
        alternate.ss_flags = 0
        sigaltstack(&alternate, nil)
        // Unblocked on this thread (and so on the threads it starts): a parent that spawned
        // the host from a thread blocking them (libdispatch's threads block every signal) would
        // otherwise leave SIGTERM pending forever. dispatchMain unblocked them by parking the
        // main thread in sigsuspend; MainLoop's epoll_wait on this thread takes them instead.
        var unblocked = sigset_t()
        sigemptyset(&unblocked)
        for number in handled { sigaddset(&unblocked, number) }
        pthread_sigmask(SIG_UNBLOCK, &unblocked, nil)
        for number in handled {
            var action = sigaction()
            action.__sigaction_handler.sa_handler = { number in
                var byte = UInt8(truncatingIfNeeded: number)
                let saved = errno
                _ = write(signalPipeWrite, &byte, 1)
                errno = saved
            }
            action.sa_flags = SA_RESTART | SA_ONSTACK
            sigemptyset(&action.sa_mask)
            sigaction(number, &action, nil)
        }
    }

    /// A coordinator that runs `shutdown` on the main queue at the first SIGTERM or SIGINT,
    /// and `hangup` at each SIGHUP.
    public init(
        timeout: Double, tracker: CallTracker, log: Log,
        hangup: @escaping @Sendable () -> Void = {}, shutdown: @escaping @Sendable () -> Void
    ) {
        self.timeout = timeout
        self.tracker = tracker
        self.log = log
        self.hangup = hangup
        self.shutdown = shutdown
    }

    /// Takes the signals ``catchSignals()`` records (those already recorded first), on the
    /// signal thread (``SignalThread``, started here unless the hang watchdog started it).
    /// Throws when that thread cannot be started (a limit on threads): the host could not stop.
    public func install() throws(SystemError) {
        try SignalThread.deliverSignals { [self] number in
            if number == SIGHUP {
                DispatchQueue.main.async(execute: hangup)
            } else {
                received(number)
            }
        }
    }

    private func received(_ number: Int32) {
        let name = number == SIGTERM ? "SIGTERM" : "SIGINT"
        guard begin() else {
            forceExit(
                because: "second signal (\(name)) during shutdown", .string("cause", "signal"), .string("signal", name))
        }
        log.info(
            "host",
            "\(name) received: shutting down (a second signal or \(OptionValue.secondsText(timeout)) s forces exit)",
            event: .hostShuttingDown, .string("by", name))
        DispatchQueue.main.async(execute: shutdown)
    }

    /// Starts the shutdown deadline for a shutdown that did not come from a signal
    /// (`host ctl terminate`); a signal after it forces exit.
    public func armDeadline() {
        if begin() {
            log.info(
                "host", "terminating on request (a signal or \(OptionValue.secondsText(timeout)) s forces exit)",
                event: .hostShuttingDown, .string("by", "request"))
        }
    }

    /// Counts the shutdown request and starts the deadline; false when one was already made.
    private func begin() -> Bool {
        guard signalsSeen.add(1, ordering: .relaxed).newValue == 1 else { return false }
        queue.asyncAfter(deadline: .now() + timeout) { [self] in
            forceExit(
                because: "shutdown took longer than \(OptionValue.secondsText(timeout)) s", .string("cause", "timeout"),
                .string("deadline", OptionValue.secondsText(timeout)))
        }
        return true
    }

    private func forceExit(because reason: String, _ fields: LogField...) -> Never {
        if let (service, event) = tracker.current {
            log.write(
                .error, "host", "forced exit: \(reason); service \(service) has not returned from \(event)",
                event: .hostForcedExit, fields: fields + [.string("service", service), .string("event", event)])
        } else {
            log.write(.error, "host", "forced exit: \(reason)", event: .hostForcedExit, fields: fields)
        }
        _exit(HostExitStatus.forcedOrWarnings.rawValue)
    }
}

// The self-pipe: written once by catchSignals() before the handlers are installed, then only
// read (the handler writes to the write end, the signal thread reads the read end and writes
// a wake-up byte to the write end).
nonisolated(unsafe) var signalPipeRead: Int32 = -1
nonisolated(unsafe) var signalPipeWrite: Int32 = -1
