import Foundation
import TestSupport
import Testing

/// The time source (issue 38, item 5): the real `host` binary, a probe asking for
/// significantTimeChange (51). The wall clock is set for real (`clock_settime` to the time it
/// is, which cancels every `TFD_TIMER_CANCEL_ON_SET` timer without moving the clock: root), and
/// `/etc/localtime` is replaced inside a mount namespace the host runs in (a copy of `/etc`
/// bound over it), so the machine's own file is never touched.
@Suite(.timeLimit(.minutes(10)))
struct TimeSourceTests {
    static let timeChange = 51
    static let events = "SH_EVENTS_LIFECYCLE|SH_EVENT_BIT(SH_EVENT_SIGNIFICANT_TIME_CHANGE)"

    static func host(extra: [String] = [], executable: String? = nil) throws -> RunningHost {
        let host = try RunningHost()
        try host.probe("a", ["PROBE_ID=\"test.a\"", "PROBE_EVENTS=\(events)"])
        try host.probe("b", ["PROBE_ID=\"test.b\""])
        try host.start(["--source", "time=on"] + extra, executable: executable)
        // Sources start before the main loop serves: a ctl reply (start's wait) means the source runs.
        return host
    }

    /// The time source's lines (`time.changed REASON`) and the probes' significantTimeChange lines.
    static func sequence(_ records: [LogRecord]) -> [String] {
        records.compactMap { record in
            if record.event == LogEvent.timeChanged.name { return "time \(record.string("reason") ?? "")" }
            guard record.event == nil, record.message.hasPrefix("probe \(record.source): event \(timeChange) ") else {
                return nil
            }
            return "\(timeChange) \(record.source)"
        }
    }

    /// Sets CLOCK_REALTIME to the time it is.
    static func setTheClock() -> Bool {
        var now = timespec()
        guard clock_gettime(CLOCK_REALTIME, &now) == 0 else { return false }
        return clock_settime(CLOCK_REALTIME, &now) == 0
    }

    @Test(.enabled(if: getuid() == 0, "setting the clock needs root"), arguments: ["in-process", "process"])
    func settingTheClock_isASignificantTimeChange(isolation: String) throws {
        let host = try Self.host(extra: ["--isolation", isolation])
        #expect(Self.setTheClock())
        #expect(eventually { host.events.contains("significantTimeChange test.a") })
        #expect(host.stop().status == 0)
        #expect(host.records.named(.sourceOn).contains { $0.string("source") == "time" })
        // Another test setting the clock at the same time may add a pair: each is the same pair.
        let sequence = Self.sequence(host.records)
        #expect(sequence.count.isMultiple(of: 2) && sequence.count >= 2)
        #expect(Array(sequence.prefix(2)) == ["time clock", "51 test.a"])
    }

    @Test(.enabled(if: getuid() == 0, "a mount namespace needs root"))
    func replacingLocaltime_isASignificantTimeChange() throws {
        let scratch = try Scratch()
        let etc = scratch.file("etc")
        #expect(try Command.run("/bin/cp", ["-a", "/etc", etc]).status == 0)
        // The host runs in its own mount namespace with the copy bound over /etc.
        let wrapper = try scratch.script(
            "host-in-namespace",
            """
            #!/bin/sh
            exec /usr/bin/unshare --mount --propagation private /bin/sh -c \
              'mount --bind "$1" /etc && shift && exec "$@"' sh "\(etc)" "\(try Repository.product("host"))" "$@"
            """)
        let host = try Self.host(executable: wrapper)
        // As timedatectl does: a new link renamed over the old one.
        try? FileManager.default.removeItem(atPath: etc + "/localtime.new")
        try FileManager.default.createSymbolicLink(
            atPath: etc + "/localtime.new", withDestinationPath: "/usr/share/zoneinfo/Asia/Tokyo")
        #expect(rename(etc + "/localtime.new", etc + "/localtime") == 0)
        #expect(eventually { host.events.contains("significantTimeChange test.a") })
        #expect(host.stop().status == 0)
        // Tests that set the clock run beside this one: their changes reach this host too, each
        // a "time clock" line and its event, before or after the zone's pair.
        let sequence = Self.sequence(host.records)
        let zone = try #require(sequence.firstIndex(of: "time timeZone"))
        #expect(Array(sequence[zone...].prefix(2)) == ["time timeZone", "51 test.a"])
        // The machine's own zone is untouched.
        #expect((try? FileManager.default.destinationOfSymbolicLink(atPath: "/etc/localtime")) != etc + "/localtime")
    }

    @Test(.enabled(if: getuid() == 0, "setting the clock needs root"))
    func theBundledLogger_logsASignificantTimeChange() throws {
        let host = try RunningHost()
        try host.scratch.copy(try Repository.product("libLogger.so"), to: "lib/libLogger.so")
        try host.start(["--source", "time=on"])
        #expect(Self.setTheClock())
        #expect(eventually { host.events.contains("significantTimeChange dev.servicehost.logger") })
        let logged = host.stop().records.messages(from: "dev.servicehost.logger")
        #expect(logged.contains("significantTimeChange (app state: active)"))
    }

    @Test func turnedOff_theSourceSaysSo() throws {
        let host = try RunningHost()
        try host.probe("a", ["PROBE_ID=\"test.a\"", "PROBE_EVENTS=\(Self.events)"])
        try host.start(["--source", "time=off"])
        #expect(host.stop().status == 0)
        let off = host.records.named(.sourceOff).filter { $0.string("source") == "time" }
        #expect(off.count == 1 && off.first?.string("reason")?.hasPrefix("turned off") == true)
    }
}
