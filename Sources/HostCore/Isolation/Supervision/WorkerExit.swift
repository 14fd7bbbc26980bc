import Glibc

/// How a worker process ended, from `waitpid`.
public enum WorkerExit: Sendable, Equatable, CustomStringConvertible {
    /// It called `exit` (or returned from main) with this status.
    case exited(Int32)
    /// A signal killed it.
    case signaled(Int32)

    /// Decodes a `waitpid` status.
    init(waitStatus raw: Int32) {
        let signal = raw & 0x7F
        self = signal == 0 ? .exited((raw >> 8) & 0xFF) : .signaled(signal)
    }

    /// "was killed by signal 11 (SIGSEGV)", "exited with status 3".
    public var description: String {
        switch self {
        case .exited(let status): "exited with status \(status)"
        case .signaled(let signal): "was killed by signal \(signal) (\(Self.signalName(signal)))"
        }
    }

    /// The signal's name: "SIGSEGV"; "signal N" for one without a common name.
    public static func signalName(_ signal: Int32) -> String {
        switch signal {
        case SIGHUP: "SIGHUP"
        case SIGINT: "SIGINT"
        case SIGQUIT: "SIGQUIT"
        case SIGILL: "SIGILL"
        case SIGTRAP: "SIGTRAP"
        case SIGABRT: "SIGABRT"
        case SIGBUS: "SIGBUS"
        case SIGFPE: "SIGFPE"
        case SIGKILL: "SIGKILL"
        case SIGUSR1: "SIGUSR1"
        case SIGSEGV: "SIGSEGV"
        case SIGUSR2: "SIGUSR2"
        case SIGPIPE: "SIGPIPE"
        case SIGALRM: "SIGALRM"
        case SIGTERM: "SIGTERM"
        case SIGXCPU: "SIGXCPU"
        case SIGXFSZ: "SIGXFSZ"
        case SIGSYS: "SIGSYS"
        default: "signal \(signal)"
        }
    }
}
