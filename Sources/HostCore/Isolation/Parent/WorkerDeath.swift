/// How and why a worker process ended, as the host tells it.
struct WorkerDeath: Sendable, Equatable, CustomStringConvertible {
    /// Why the host stepped in, when it did.
    enum Cause: Sendable, Equatable {
        /// The worker broke the protocol; the host killed it.
        case protocolError(String)
        /// The worker closed its end of the channel but did not exit; the host killed it.
        case closedChannel
        /// The host killed it (a missed deadline).
        case killedByHost
        /// It did not read its channel within the bound (ChannelOutbox.Stall's words); the host
        /// killed it.
        case stalled(String)
    }

    /// The process's end, from `waitpid`.
    var exit: WorkerExit
    /// Why the host killed it, if it did.
    var cause: Cause?
    /// The sandbox's `memoryMax`, when the kernel's OOM killer killed it there (issue 43).
    var memoryMax: UInt64?

    /// "was killed by signal 11 (SIGSEGV)", "broke the worker protocol (…) and was killed".
    var description: String {
        switch cause {
        case .protocolError(let detail): "broke the worker protocol (\(detail)) and was killed"
        case .closedChannel: "closed its channel to the host and was killed"
        case .stalled(let detail): "\(detail) and was killed"
        case .killedByHost: exit.description
        case nil where exit == .exited(WorkerMain.lostChannelStatus):
            exit.description + ": it lost its channel to the host (did the service close descriptor 3?)"
        case nil where memoryMax != nil:
            exit.description + ": out of memory at its memoryMax (\(Sandbox.text(bytes: memoryMax ?? 0)))"
        case nil: exit.description
        }
    }

    /// The signal that ended it, unless the host sent it.
    var signal: Int32? {
        guard cause == nil, case .signaled(let signal) = exit else { return nil }
        return signal
    }

    /// The exit status, when it exited by itself.
    var status: Int32? {
        guard cause == nil, case .exited(let status) = exit else { return nil }
        return status
    }
}
