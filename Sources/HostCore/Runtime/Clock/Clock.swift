import Glibc

/// The clocks supervision needs: monotonic for deadlines and windows, wall for records.
enum Clock {
    /// Seconds on CLOCK_MONOTONIC.
    static func monotonic() -> Double {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
    }

    /// Nanoseconds on CLOCK_MONOTONIC: one vDSO call, no allocation (the dispatcher's timing).
    @inline(__always) static func nanoseconds() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return UInt64(now.tv_sec) &* 1_000_000_000 &+ UInt64(now.tv_nsec)
    }

    /// When this process started counting (first use, early in `main`): the zero of the
    /// trace's `t` and of `--log-time mono`.
    static let start = nanoseconds()

    /// The wall time as ISO 8601 UTC with milliseconds: "2025-11-22T04:30:00.123Z".
    static func isoNowMilliseconds() -> String {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        let base = iso(seconds: Int(now.tv_sec))
        let millis = Int(now.tv_nsec / 1_000_000)
        return base.dropLast() + "." + (millis < 10 ? "00" : millis < 100 ? "0" : "") + String(millis) + "Z"
    }

    /// The wall time as ISO 8601 UTC: "2025-11-22T04:30:00Z".
    static func isoNow() -> String { iso(seconds: time(nil)) }

    /// `seconds` since the epoch as ISO 8601 UTC.
    static func iso(seconds: Int) -> String {
        var value = time_t(seconds)
        var parts = tm()
        gmtime_r(&value, &parts)
        let year = Int(parts.tm_year) + 1900
        // Written by hand for four-digit years: strftime calls tzset, which reads /etc/localtime
        // (at each start after an unclean exit, for the sentinel's report), and UTC needs no zone.
        if (1000...9999).contains(year) {
            func two(_ value: Int32) -> String { value < 10 ? "0" + String(value) : String(value) }
            return String(year) + "-" + two(parts.tm_mon + 1) + "-" + two(parts.tm_mday) + "T" + two(parts.tm_hour)
                + ":"
                + two(parts.tm_min) + ":" + two(parts.tm_sec) + "Z"
        }
        var buffer = [CChar](repeating: 0, count: 32)
        let count = strftime(&buffer, buffer.count, "%Y-%m-%dT%H:%M:%SZ", &parts)
        return String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

/// Seconds as people read them: "10", "0.5".
enum Seconds {
    static func text(_ value: Double) -> String {
        if value == value.rounded() && abs(value) < 1e15 { return String(Int(value)) }
        let tenths = (value * 10).rounded() / 10
        return tenths == value ? String(value) : String((value * 1000).rounded() / 1000)
    }
}

/// The zero of the trace's `t` and of `--log-time mono`, fixed when `host` starts.
public enum HostClockStart {
    /// Fixes the zero now (it is otherwise fixed at its first use).
    public static func touch() { _ = Clock.start }
}
