import Glibc

/// What a log line starts with: `--log-time none|iso|mono`.
public enum LogTime: String, CaseIterable, Sendable {
    /// No time: journald (and most service managers) stamp lines themselves.
    case none
    /// Wall time, ISO 8601 UTC with milliseconds: `2025-11-22T04:30:00.123Z`.
    case iso
    /// Seconds since the host started, as the kernel log counts: `12.345678`.
    case mono

    /// The default for lines written to `descriptor`: none under journald, iso on a
    /// terminal, none otherwise (a pipe's reader stamps or does not need them).
    public static func `default`(for descriptor: Int32 = STDERR_FILENO) -> LogTime {
        if Journal.isStream(descriptor) { return .none }
        return isatty(descriptor) == 1 ? .iso : .none
    }

    /// The stamp for a line written now, or nil for `none`.
    func stamp() -> String? {
        switch self {
        case .none: return nil
        case .iso: return Clock.isoNowMilliseconds()
        case .mono:
            let zero = Clock.start  // read first: the first use sets it
            let nanoseconds = Clock.nanoseconds() &- zero
            let micros = String(nanoseconds / 1000 % 1_000_000)
            return "\(nanoseconds / 1_000_000_000)." + String(repeating: "0", count: 6 - micros.count) + micros
        }
    }
}

/// journald's stream convention (`sd-daemon(3)`): when stderr is the journal, a line that
/// starts with `<N>` is stored at priority N, so `journalctl -p err` finds the errors.
public enum Journal {
    /// Whether `descriptor` is the stream systemd named in `JOURNAL_STREAM` ("DEVICE:INODE"),
    /// the documented test: the variable alone is inherited by children writing elsewhere.
    public static func isStream(
        _ descriptor: Int32, environment: String? = getenv("JOURNAL_STREAM").map { String(cString: $0) }
    ) -> Bool {
        guard let environment else { return false }
        let parts = environment.split(separator: ":")
        guard parts.count == 2, let device = UInt64(parts[0]), let inode = UInt64(parts[1]) else { return false }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { return false }
        return UInt64(info.st_dev) == device && UInt64(info.st_ino) == inode
    }

    /// The syslog priority of `level`: error 3, warn 4, info 6, debug 7.
    static func priority(_ level: LogLevel) -> Int {
        switch level {
        case .error: 3
        case .warn: 4
        case .info: 6
        case .debug: 7
        }
    }
}
