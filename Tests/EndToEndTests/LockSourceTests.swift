import Foundation
import TestSupport
import Testing

/// The lock source (issue 38, item 2) against a real private `dbus-daemon` serving logind through
/// python3-dbusmock, with a session added for the host (`XDG_SESSION_ID`): the session's `Lock`
/// and `Unlock` signals, its `LockedHint` and its `Active`, asserted on the probes' event lines,
/// in process and under `--isolation process`.
@Suite(.timeLimit(.minutes(10)), .enabled(if: DBusMock.installed, "needs dbus-daemon and python3-dbusmock"))
struct LockSourceTests {
    /// Kinds of the probe's event lines.
    static let unavailable = 49
    static let available = 50
    static let resign = 4
    static let background = 5
    static let foreground = 6
    static let active = 3

    static let events =
        "SH_EVENTS_LIFECYCLE|SH_EVENT_BIT(SH_EVENT_PROTECTED_DATA_WILL_BECOME_UNAVAILABLE)"
        + "|SH_EVENT_BIT(SH_EVENT_PROTECTED_DATA_DID_BECOME_AVAILABLE)"

    /// A host in session "7" of `bus`, with probes a and b (b does not ask for the protected-data events).
    static func host(_ bus: DBusMock, extra: [String] = []) throws -> RunningHost {
        try bus.addSession("7")
        let host = try RunningHost()
        try host.probe("a", ["PROBE_ID=\"test.a\"", "PROBE_EVENTS=\(events)"])
        try host.probe("b", ["PROBE_ID=\"test.b\""])
        try host.start(extra, environment: bus.environment.merging(["XDG_SESSION_ID": "7"]) { $1 })
        // Sources start before the main loop serves: a ctl reply (start's wait) means the source runs.
        return host
    }

    static func state(_ host: RunningHost, _ state: String) -> Bool {
        eventually { (try? host.ctl("state").stdout.contains("state: \(state)")) == true }
    }

    /// The probes' lines and the lock source's lines, in the order the host wrote them.
    static func sequence(_ records: [LogRecord]) -> [String] {
        records.compactMap { record in
            if let event = record.event {
                if event == LogEvent.sessionLock.name { return "lock \(record.string("locked") ?? "")" }
                if event == LogEvent.sessionActive.name { return "active \(record.string("active") ?? "")" }
                return nil
            }
            guard record.message.hasPrefix("probe \(record.source): event ") else { return nil }
            let kind = record.message.dropFirst("probe \(record.source): event ".count).prefix { $0.isNumber }
            return "\(kind) \(record.source)"
        }
    }

    @Test(arguments: ["in-process", "process"])
    func lockAndUnlock_inUIKitsOrder(isolation: String) throws {
        let scratch = try Scratch()
        let bus = try DBusMock(in: scratch)
        let host = try Self.host(bus, extra: ["--isolation", isolation])

        // Lock, then the screen locker's LockedHint: one lock.
        try bus.session("7", "session.Lock()")
        #expect(Self.state(host, "inactive"))
        try bus.session("7", "session.SetLockedHint(True)")
        // Unlock by the hint alone.
        try bus.session("7", "session.SetLockedHint(False)")
        #expect(Self.state(host, "active"))
        // Lock by the hint alone, unlock by the signal.
        try bus.session("7", "session.SetLockedHint(True)")
        #expect(Self.state(host, "inactive"))
        try bus.session("7", "session.Unlock()")
        #expect(Self.state(host, "active"))
        #expect(host.stop().status == 0)

        #expect(host.records.named(.sourceOn).contains { $0.string("source") == "lock" })
        let sequence = Self.sequence(host.records).drop { !$0.hasPrefix("lock ") }
        let lock = ["lock true", "49 test.a", "4 test.b", "4 test.a"]
        let unlock = ["lock false", "50 test.a", "3 test.a", "3 test.b"]
        #expect(Array(sequence.prefix(16)) == lock + unlock + lock + unlock)
    }

    @Test func aUserSwitch_movesTheAppToTheBackground_andBack() throws {
        let scratch = try Scratch()
        let bus = try DBusMock(in: scratch)
        let host = try Self.host(bus)
        try bus.setSessionActive("7", false)
        #expect(Self.state(host, "background"))
        try bus.setSessionActive("7", true)
        #expect(Self.state(host, "active"))
        #expect(host.stop().status == 0)
        let sequence = Self.sequence(host.records).drop { !$0.hasPrefix("active ") }
        #expect(
            Array(sequence.prefix(10)) == [
                "active false", "4 test.b", "4 test.a", "5 test.b", "5 test.a",
                "active true", "6 test.a", "6 test.b", "3 test.a", "3 test.b",
            ])
    }

    @Test func aSessionThatLocksInTheBackground_staysThere() throws {
        let scratch = try Scratch()
        let bus = try DBusMock(in: scratch)
        let host = try Self.host(bus)
        try host.ctl("background")
        #expect(Self.state(host, "background"))
        try bus.session("7", "session.Lock()")
        try bus.session("7", "session.Unlock()")
        #expect(eventually { host.events.contains("protectedDataDidBecomeAvailable test.a") })
        #expect(Self.state(host, "background"))
        host.stop()
        let sequence = Self.sequence(host.records).drop { !$0.hasPrefix("lock ") }
        #expect(Array(sequence) == ["lock true", "49 test.a", "lock false", "50 test.a", "7 test.b", "7 test.a"])
    }

    @Test func theBundledLogger_logsLockAndUnlock() throws {
        let scratch = try Scratch()
        let bus = try DBusMock(in: scratch)
        try bus.addSession("7")
        let host = try RunningHost()
        try host.scratch.copy(try Repository.product("libLogger.so"), to: "lib/libLogger.so")
        try host.start(environment: bus.environment.merging(["XDG_SESSION_ID": "7"]) { $1 })
        try bus.session("7", "session.Lock()")
        #expect(Self.state(host, "inactive"))
        try bus.session("7", "session.Unlock()")
        #expect(Self.state(host, "active"))
        let logged = host.stop().records.messages(from: "dev.servicehost.logger").filter {
            $0.hasPrefix("protectedData")
        }
        #expect(
            logged == [
                "protectedDataWillBecomeUnavailable (app state: active)",
                "protectedDataDidBecomeAvailable (app state: inactive)",
            ])
    }

    @Test func withoutASession_theSourceIsOff_andSaysWhy() throws {
        let scratch = try Scratch()
        let bus = try DBusMock(in: scratch)
        let host = try RunningHost()
        try host.probe("a", ["PROBE_ID=\"test.a\""])
        // dbusmock's logind has no GetSessionByPID: the host's PID has no session.
        try host.start(environment: bus.environment.merging(["XDG_SESSION_ID": ""]) { $1 })
        #expect(host.stop().status == 0)
        let off = host.records.named(.sourceOff).filter { $0.string("source") == "lock" }
        #expect(off.count == 1)
        #expect(off.first?.string("reason")?.hasPrefix("the host runs in no logind session") == true)
        let check = try Command.run(
            try Repository.product("host"), ["check", "--plugins", host.lib, "--json"],
            environment: bus.environment.merging(["XDG_SESSION_ID": ""]) { $1 })
        #expect(check.stdout.contains("\"source\":\"lock\""), "\(check.stdout)")
    }
}
