import Glibc

/// The memory source's settings (`--memory-pressure`, `--memory-warning-interval`).
public struct MemoryPressureSettings: Sendable, Equatable {
    /// The PSI trigger written to the pressure file: "some|full STALL_US WINDOW_US" (the kernel's
    /// format, Documentation/accounting/psi.rst). The default: tasks stalled on memory for
    /// 200 ms within any 2 s. (A window of a whole multiple of 2 s, as the kernel asks of a host
    /// without CAP_SYS_RESOURCE: containers and systemd units often lack it.)
    public var trigger = "some 200000 2000000"
    /// At most one didReceiveMemoryWarning per this many seconds (on the host's clock).
    public var interval: Double = 10

    /// The default settings.
    public init() {}

    /// `text` as a trigger, checked as the kernel checks it: `some` or `full`, a window of
    /// 500 ms to 10 s, a stall above 0 and at most the window.
    public static func trigger(_ text: String) throws(UsageError) -> String {
        let parts = text.split(separator: " ", omittingEmptySubsequences: true)
        guard parts.count == 3, parts[0] == "some" || parts[0] == "full", let stall = UInt64(parts[1]),
            let window = UInt64(parts[2])
        else { throw UsageError("'\(text)' is not a PSI trigger: some|full STALL_US WINDOW_US") }
        guard (500_000...10_000_000).contains(window) else {
            throw UsageError("'\(text)': the window must be 500000 to 10000000 µs")
        }
        guard stall > 0, stall <= window else { throw UsageError("'\(text)': the stall must be 1 µs to the window") }
        return parts.joined(separator: " ")
    }
}

/// didReceiveMemoryWarning from the kernel's pressure stall information (PSI): a trigger
/// written to the host's cgroup's `memory.pressure` (cgroup v2) or else `/proc/pressure/memory`,
/// which reports through EPOLLPRI on the main loop when tasks stalled on memory for the
/// trigger's time within its window; at most one warning per interval. Where PSI is missing (a
/// kernel without it, or booted with `psi=0`) the source is off and says so.
@MainActor
final class MemorySource: SystemSource {
    let name = "memory"

    private let settings: MemoryPressureSettings
    private var driver: AppDriver?
    private var file: Int32 = -1
    private var watch: MainLoop.Watch?
    /// When the last warning was given (host clock), nil: never.
    private var lastWarning: Double?

    init(_ settings: MemoryPressureSettings) { self.settings = settings }

    /// The pressure file: the host's cgroup v2 `memory.pressure` when it has one, else the
    /// system's.
    static func pressureFile() -> String {
        if let bytes = try? InputFile.read("/proc/self/cgroup", limit: 65_536),
            let line = String(decoding: bytes, as: UTF8.self).split(separator: "\n").first(where: {
                $0.hasPrefix("0::/")
            }),
            line.count > 4
        {
            let path = "/sys/fs/cgroup" + line.dropFirst(3) + "/memory.pressure"
            if access(path, F_OK) == 0 { return path }
        }
        return "/proc/pressure/memory"
    }

    func check() -> SourceState {
        let path = Self.pressureFile()
        let fd = open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else { return .off(Self.reason(path, errno)) }
        close(fd)
        return .on("PSI trigger \"\(settings.trigger)\" on \(path), at most one warning per \(settings.interval) s")
    }

    func start(_ driver: AppDriver) -> SourceState {
        let path = Self.pressureFile()
        file = open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC)
        guard file >= 0 else { return .off(Self.reason(path, errno)) }
        // The kernel takes the trigger with its terminating NUL.
        let trigger = Array(settings.trigger.utf8) + [0]
        let written = trigger.withUnsafeBytes { write(file, $0.baseAddress, $0.count) }
        guard written == trigger.count else {
            var reason = Self.reason(path, errno, writing: true)
            if errno == EINVAL {
                reason += " (without CAP_SYS_RESOURCE the kernel takes only a window of a multiple of 2 s)"
            }
            close(file)
            file = -1
            return .off(reason)
        }
        do throws(SystemError) {
            watch = try driver.watch(file, name: path, priority: true) { [weak self] in self?.pressure() }
        } catch {
            close(file)
            file = -1
            return .off("\(path) could not be watched: \(error)")
        }
        self.driver = driver
        return .on("PSI trigger \"\(settings.trigger)\" on \(path), at most one warning per \(settings.interval) s")
    }

    private static func reason(_ path: String, _ code: Int32, writing: Bool = false) -> String {
        let text = String(cString: strerror(code))
        if code == ENOENT { return "PSI is not available (\(path): \(text); a kernel without CONFIG_PSI, or psi=0)" }
        return "\(path) could not be \(writing ? "given the trigger" : "opened"): \(text)"
    }

    private func pressure() {
        guard let driver, file >= 0 else { return }
        // EPOLLERR as well: the cgroup went away; the trigger is gone with it.
        var poller = pollfd(fd: file, events: Int16(POLLPRI), revents: 0)
        _ = poll(&poller, 1, 0)
        if poller.revents & Int16(POLLERR) != 0 {
            watch?.cancel()
            watch = nil
            close(file)
            file = -1
            driver.log.warn(
                "host", "the memory pressure file went away; the memory source stops", event: .memoryPressure,
                .string("warned", "false"))
            return
        }
        let now = driver.host.clock.now
        if let lastWarning, now - lastWarning < settings.interval {
            driver.log.debug(
                "host", "memory pressure (no warning: one was given less than the interval ago)",
                event: .memoryPressure, .string("warned", "false"))
            return
        }
        lastWarning = now
        driver.log.info(
            "host", "memory pressure: didReceiveMemoryWarning", event: .memoryPressure, .string("warned", "true"))
        driver.memoryWarning()
    }
}
