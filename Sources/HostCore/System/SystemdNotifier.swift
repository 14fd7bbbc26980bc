import Glibc

/// Tells systemd about the host's state through `NOTIFY_SOCKET` (`sd_notify(3)`'s protocol):
/// one `AF_UNIX` datagram per message, newline-separated `KEY=VALUE` lines.
///
/// Thread-safe: the socket is created once and each message is one `sendto(2)`, which the
/// kernel delivers whole; the object holds no other state.
public final class SystemdNotifier: Sendable {
    /// A state change systemd understands.
    public enum Message: Sendable, Equatable {
        /// `READY=1`: start-up (or a reload) finished.
        case ready
        /// `RELOADING=1` with `MONOTONIC_USEC`: a reload began; send ``ready`` when it ends.
        case reloading
        /// `STOPPING=1`: shutdown began.
        case stopping
        /// `WATCHDOG=1`: the host is alive; send every ``SystemdNotifier/watchdogInterval``.
        case watchdog
        /// `STATUS=…`: one line shown by `systemctl status` (newlines become spaces).
        case status(String)

        /// The datagram's text.
        public var text: String {
            switch self {
            case .ready: "READY=1"
            case .reloading: "RELOADING=1\nMONOTONIC_USEC=\(SystemdNotifier.monotonicMicroseconds())"
            case .stopping: "STOPPING=1"
            case .watchdog: "WATCHDOG=1"
            case .status(let line): "STATUS=" + line.map { $0 == "\n" ? " " : $0 }
            }
        }
    }

    /// `NOTIFY_SOCKET` as given: a path, or `@name` for the abstract namespace.
    public let socketPath: String
    /// How often to send ``Message/watchdog``: half of `WATCHDOG_USEC`, or nil when systemd
    /// set no watchdog for this process.
    public let watchdogInterval: Duration?
    private let socket: FileDescriptor
    private let address: UnixSocketAddress

    /// The notifier systemd asked for, or nil when `NOTIFY_SOCKET` is unset or empty (the host
    /// was not started by systemd with `Type=notify`).
    /// - Parameters:
    ///   - environment: reads a variable; the process environment by default.
    ///   - pid: this process's id, compared with `WATCHDOG_PID`.
    /// - Throws: when the socket cannot be created or the address is unusable.
    public static func fromEnvironment(
        _ environment: (String) -> String? = { name in getenv(name).map { String(cString: $0) } },
        pid: pid_t = getpid()
    ) throws(SystemError) -> SystemdNotifier? {
        guard let path = environment("NOTIFY_SOCKET"), !path.isEmpty else { return nil }
        return try SystemdNotifier(socketPath: path, watchdogInterval: watchdogInterval(environment, pid: pid))
    }

    /// Half of `WATCHDOG_USEC` when it is a positive integer and `WATCHDOG_PID` is unset or
    /// `pid` (systemd sets it for the main process only), else nil; at most ``longestPing``.
    public static func watchdogInterval(_ environment: (String) -> String?, pid: pid_t) -> Duration? {
        guard let text = environment("WATCHDOG_USEC"), let usec = UInt64(text), usec > 0 else { return nil }
        if let owner = environment("WATCHDOG_PID"), !owner.isEmpty, pid_t(owner) != pid { return nil }
        return min(.microseconds(Int64(clamping: usec / 2)), longestPing)
    }

    /// The longest time between two watchdog pings, whatever `WATCHDOG_USEC` says: pinging
    /// early is harmless, and a day keeps the timer's nanoseconds far from overflow (a value of
    /// 2⁶⁴ − 1 trapped in that arithmetic at start).
    public static let longestPing = Duration.seconds(86_400)

    /// A notifier sending to `socketPath` (`/run/…` or `@abstract`).
    /// - Throws: `EAFNOSUPPORT` for a socket address that is not a path or `@name` (systemd's
    ///   `vsock:` addresses), `ENAMETOOLONG` for a path longer than `sun_path` holds, or the
    ///   error of `socket(2)`.
    public init(socketPath: String, watchdogInterval: Duration? = nil) throws(SystemError) {
        self.socketPath = socketPath
        self.watchdogInterval = watchdogInterval
        guard socketPath.hasPrefix("/") || socketPath.hasPrefix("@") else {
            throw SystemError(operation: "connect", path: socketPath, errno: EAFNOSUPPORT)
        }
        do { address = try UnixSocketAddress(socketPath, allowingAbstract: true) } catch {
            throw SystemError(operation: "connect", path: socketPath, errno: error.errno)
        }
        socket = try FileDescriptor.socket(SOCK_DGRAM, path: socketPath)
    }

    /// Sends `message` as one datagram.
    /// - Throws: the error of `sendto(2)` (e.g. `ECONNREFUSED` when nobody listens).
    public func send(_ message: Message) throws(SystemError) {
        try send(text: message.text)
    }

    /// Sends `text` as one datagram, for fields ``Message`` does not name.
    public func send(text: String) throws(SystemError) {
        let bytes = Array(text.utf8)
        _ = try retryingOnInterrupt("sendto", socketPath) {
            address.withSocketAddress { socketAddress, length in
                bytes.withUnsafeBytes { buffer in
                    sendto(
                        socket.rawValue, buffer.baseAddress, buffer.count, Int32(MSG_NOSIGNAL), socketAddress, length)
                }
            }
        }
    }

    static func monotonicMicroseconds() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return UInt64(now.tv_sec) * 1_000_000 + UInt64(now.tv_nsec) / 1_000
    }
}
