import CSystem
import Glibc

/// significantTimeChange where UIKit sends it (no bus needed):
/// - the wall clock was set: a CLOCK_REALTIME `timerfd` armed with `TFD_TIMER_CANCEL_ON_SET`,
///   whose read fails with `ECANCELED` when anyone sets the clock (`clock_settime`, NTP's step,
///   `timedatectl set-time`), even to the time it was;
/// - local midnight: the same timer, armed at the next local midnight (absolute wall-clock
///   time, so it is right across a suspend, where a monotonic delay would be late);
/// - the time zone changed: `/etc/localtime` replaced (inotify on `/etc`: timedated and
///   `ln -sf` both rename a new link over it), after which the host re-reads it (`tzset`).
///
/// Each is one `time.changed` line with its `reason` (`clock`, `midnight`, `timeZone`) and one
/// significantTimeChange to the services that handle it; the timer is armed again for the next
/// midnight every time.
@MainActor
final class TimeSource: SystemSource {
    let name = "time"

    /// The file the time zone is read from, and its directory (watched: the file is replaced).
    static let localtime = "/etc/localtime"
    static let directory = "/etc"

    private var driver: AppDriver?
    private var timer: Int32 = -1
    private var inotify: Int32 = -1
    private var watches: [MainLoop.Watch] = []

    func check() -> SourceState {
        let timer = csystem_realtime_timer()
        guard timer >= 0 else { return .off(Self.timerReason(errno)) }
        close(timer)
        return .on("the wall clock and local midnight (timerfd), \(Self.localtime) (inotify)")
    }

    func start(_ driver: AppDriver) -> SourceState {
        timer = csystem_realtime_timer()
        guard timer >= 0 else { return .off(Self.timerReason(errno)) }
        self.driver = driver
        do throws(SystemError) {
            try arm()
            watches.append(
                try driver.watch(timer, name: "the time source's timer") { [weak self] in self?.timerFired() })
        } catch {
            stop()
            return .off("the wall-clock timer could not be armed: \(error)")
        }
        var detail = "the wall clock and local midnight (timerfd)"
        inotify = csystem_inotify_init()
        if inotify >= 0, csystem_inotify_watch_directory(inotify, Self.directory) >= 0,
            let watch = try? driver.watch(
                inotify, name: "the time source's watch of \(Self.directory)",
                handler: {
                    [weak self] in self?.directoryChanged()
                })
        {
            watches.append(watch)
            detail += ", \(Self.localtime) (inotify)"
        } else {
            // The clock still works without it: the on line says what is not watched.
            detail += "; \(Self.localtime) not watched: \(String(cString: strerror(errno)))"
            if inotify >= 0 { close(inotify) }
            inotify = -1
        }
        return .on(detail)
    }

    private static func timerReason(_ code: Int32) -> String {
        "timerfd_create(CLOCK_REALTIME) failed: \(String(cString: strerror(code)))"
    }

    private func stop() {
        for watch in watches { watch.cancel() }
        watches = []
        if timer >= 0 { close(timer) }
        if inotify >= 0 { close(inotify) }
        timer = -1
        inotify = -1
        driver = nil
    }

    /// Arms the timer at the next local midnight, cancelled if the clock is set before.
    private func arm() throws(SystemError) {
        let midnight = Self.nextMidnight(after: time(nil))
        guard csystem_realtime_timer_arm(timer, Int64(midnight)) == 0 else {
            throw .current("timerfd_settime", "the time source's timer")
        }
    }

    /// The first local midnight after `now` (the time zone the process has: `tzset`).
    nonisolated static func nextMidnight(after now: time_t) -> time_t {
        var now = now
        var parts = tm()
        guard localtime_r(&now, &parts) != nil else { return now + 86_400 }
        parts.tm_mday += 1
        parts.tm_hour = 0
        parts.tm_min = 0
        parts.tm_sec = 0
        parts.tm_isdst = -1
        let midnight = mktime(&parts)
        return midnight > now ? midnight : now + 86_400
    }

    private func timerFired() {
        var expirations: UInt64 = 0
        let count = read(timer, &expirations, 8)
        let reason: String
        if count == 8 {
            reason = "midnight"
        } else if count < 0, errno == ECANCELED {
            reason = "clock"
        } else {
            return
        }
        changed(reason)
    }

    private func directoryChanged() {
        var buffer = [UInt8](repeating: 0, count: 4096)
        var localtimeChanged = false
        while true {
            let count = buffer.withUnsafeMutableBytes { read(inotify, $0.baseAddress, $0.count) }
            guard count > 0 else { break }
            // The kernel's records; a malformed one (never seen) ends the read, not the host.
            let names = (try? InotifyRecords.names(in: buffer[..<count])) ?? []
            if names.contains("localtime") { localtimeChanged = true }
        }
        guard localtimeChanged else { return }
        tzset()
        changed("timeZone")
    }

    private func changed(_ reason: String) {
        guard let driver else { return }
        do { try arm() } catch {
            // A cancelled timer not armed again stays readable: its watch ends, or the loop would spin.
            watches.first?.cancel()
            driver.log.warn(
                "host", "the time source's timer could not be armed again: \(error)", event: .timeFailed,
                .string("reason", "\(error)"))
        }
        driver.log.info("host", "significant time change: \(reason)", event: .timeChanged, .string("reason", reason))
        driver.significantTimeChange()
    }
}

/// The records an inotify descriptor reads: `struct inotify_event` (wd, mask, cookie, len: four
/// 32-bit words) followed by `len` bytes of name, NUL-padded.
enum InotifyRecords {
    /// Why bytes are not whole records.
    struct Malformed: Error, Equatable {
        /// What is wrong, with the offset.
        let reason: String
    }

    /// The names of the records in `bytes`, in order (empty for a record without one).
    static func names(in bytes: ArraySlice<UInt8>) throws(Malformed) -> [String] {
        var names: [String] = []
        var offset = bytes.startIndex
        while offset < bytes.endIndex {
            guard bytes.endIndex - offset >= 16 else {
                throw Malformed(reason: "a record at byte \(offset) is cut short (\(bytes.endIndex - offset) bytes)")
            }
            var length = 0
            for index in 0..<4 { length |= Int(bytes[offset + 12 + index]) << (8 * index) }
            let nameStart = offset + 16
            guard length <= bytes.endIndex - nameStart else {
                throw Malformed(reason: "a record at byte \(offset) claims \(length) name bytes")
            }
            let name = bytes[nameStart..<(nameStart + length)].prefix { $0 != 0 }
            names.append(String(decoding: name, as: UTF8.self))
            offset = nameStart + length
        }
        return names
    }
}
