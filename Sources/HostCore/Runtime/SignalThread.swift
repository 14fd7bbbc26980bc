import Glibc

/// The host's one thread of its own before `active` (issue 13): it reads the signals that
/// ``ShutdownCoordinator/catchSignals()`` records in the self-pipe and hands them to the
/// coordinator, and between them samples the hang watchdog. One thread instead of two: each
/// thread started before the `active with` line cost the start about 0.1 ms.
///
/// Started by whichever needs it first: the hang watchdog (``sample(every:_:)``, before plugins
/// load), or the coordinator (``deliverSignals(to:)``). Signals read before the coordinator takes
/// them are kept and handed over then, in the order they came, on this thread: a signal during
/// start-up waits for the coordinator, and is never lost.
enum SignalThread {
    private struct State {
        var started = false
        /// The coordinator's handler; nil until ``deliverSignals(to:)``.
        var deliver: (@Sendable (Int32) -> Void)?
        /// Signals read before there was a handler, in order.
        var pending: [Int32] = []
        /// The hang watchdog's sample and how often it runs (seconds).
        var sampler: (interval: Double, check: @Sendable () -> Void)?
    }
    private static let state = Locked(State())

    /// The byte that wakes the thread to look at its state again (signal numbers are never 0).
    private static let wake: UInt8 = 0

    /// Hands every signal read from now on (and those read before) to `deliver`, on this thread.
    /// Throws when the thread cannot be started: then nothing would ever act on a signal.
    static func deliverSignals(to deliver: @escaping @Sendable (Int32) -> Void) throws(SystemError) {
        try startIfNeeded { $0.deliver = deliver }
    }

    /// Calls `check` every `interval` seconds on this thread, between signals. Throws when the
    /// thread cannot be started.
    static func sample(every interval: Double, _ check: @escaping @Sendable () -> Void) throws(SystemError) {
        try startIfNeeded { $0.sampler = (interval, check) }
    }

    /// The name a failure to start the thread gives it (``SystemError/path``).
    private static let threadName = "signal thread"

    private static func startIfNeeded(_ change: (inout State) -> Void) throws(SystemError) {
        let start = state.withLock { state in
            change(&state)
            defer { state.started = true }
            return !state.started
        }
        if start {
            do { try DetachedThread.start(threadName) { run() } } catch {
                // No thread: the next caller tries again (what was set waits for it).
                state.withLock { $0.started = false }
                throw error
            }
        } else {
            // A thread already waiting (perhaps with no timeout): it looks again.
            var byte = wake
            _ = write(signalPipeWrite, &byte, 1)
        }
    }

    private static func run() -> Never {
        var pipe = signalPipeRead
        var next: Double?
        while true {
            let sampler = state.withLock { $0.sampler }
            if let sampler, next == nil { next = Clock.monotonic() + sampler.interval }
            // Without a pipe (catchSignals failed), nothing can wake the thread: it looks again each second.
            var timeout: Int32 = pipe < 0 ? 1000 : -1
            if let next { timeout = Int32(max(0, ((next - Clock.monotonic()) * 1000).rounded(.up))) }
            var polled = pollfd(fd: pipe, events: Int16(POLLIN), revents: 0)
            if poll(&polled, 1, timeout) > 0 && polled.revents != 0 {
                var byte: UInt8 = 0
                let count = read(pipe, &byte, 1)
                if count == 1 {
                    received(byte)
                } else if count == 0 || (errno != EINTR && errno != EAGAIN) {
                    // A broken pipe: no signal will ever arrive; sampling goes on.
                    pipe = -1
                }
            }
            if let sampler, let due = next, Clock.monotonic() >= due {
                sampler.check()
                next = Clock.monotonic() + sampler.interval
            }
        }
    }

    /// One byte from the pipe: a signal to deliver (or keep), or a wake-up that may have
    /// brought a handler for the kept ones.
    private static func received(_ byte: UInt8) {
        let (deliver, signals) = state.withLock { state -> ((@Sendable (Int32) -> Void)?, [Int32]) in
            if byte != wake { state.pending.append(Int32(byte)) }
            guard let deliver = state.deliver, !state.pending.isEmpty else { return (nil, []) }
            defer { state.pending = [] }
            return (deliver, state.pending)
        }
        if let deliver { for number in signals { deliver(number) } }
    }
}
