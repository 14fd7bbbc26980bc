import Foundation
import TestSupport
import Testing

/// The system sources (issue 38) against a real private `dbus-daemon` serving logind's
/// interface through python3-dbusmock: the real `host` binary, real probe plugins, the order
/// asserted on the probes' event lines and the host's structured log lines, the inhibitor on
/// logind's own list (`ListInhibitors`).
@Suite(.timeLimit(.minutes(10)), .enabled(if: DBusMock.installed, "needs dbus-daemon and python3-dbusmock"))
struct SystemEventsTests {
    /// Kinds of the probe's event lines: willResignActive, didEnterBackground,
    /// willEnterForeground, didBecomeActive, willTerminate.
    static let resign = 4
    static let background = 5
    static let foreground = 6
    static let active = 3
    static let terminate = 7

    /// A host with two probes, its system bus `bus`.
    static func host(_ bus: DBusMock, extra: [String] = []) throws -> RunningHost {
        let host = try RunningHost()
        try host.probe("a", ["PROBE_ID=\"test.a\""])
        try host.probe("b", ["PROBE_ID=\"test.b\""])
        try host.start(extra, environment: bus.environment)
        return host
    }

    static func ours(_ bus: DBusMock) -> Bool {
        (try? bus.inhibitors()) == ["sleep:shutdown ServiceHost delay"]
    }

    static func none(_ bus: DBusMock) -> Bool { (try? bus.inhibitors()) == [] }

    /// The probes' lifecycle lines and the sleep source's lines, in the order the host wrote them.
    static func sequence(_ records: [LogRecord]) -> [String] {
        records.compactMap { record in
            if let event = record.event {
                guard [LogEvent.systemSleep, .inhibitorTaken, .inhibitorReleased].map(\.name).contains(event) else {
                    return nil
                }
                return event == LogEvent.systemSleep.name ? "\(event) \(record.string("sleeping") ?? "")" : event
            }
            guard record.message.hasPrefix("probe \(record.source): event ") else { return nil }
            let kind = record.message.dropFirst("probe \(record.source): event ".count).prefix { $0.isNumber }
            return "\(kind) \(record.source)"
        }
    }

    @Test(arguments: ["in-process", "process"])
    func sleepAndWake_inUIKitsOrder_withTheInhibitorHeldAndReleased(isolation: String) throws {
        let scratch = try Scratch()
        let bus = try DBusMock(in: scratch)
        let host = try Self.host(bus, extra: ["--isolation", isolation])
        #expect(eventually(within: 30) { Self.ours(bus) })

        try bus.prepareForSleep(true)
        #expect(eventually(within: 30) { Self.none(bus) })
        #expect(eventually { (try? host.ctl("state").stdout.contains("state: background")) == true })
        try bus.prepareForSleep(false)
        #expect(eventually(within: 30) { Self.ours(bus) })
        #expect(eventually { (try? host.ctl("state").stdout.contains("state: active")) == true })
        #expect(host.stop().status == 0)

        let records = host.records
        #expect(records.named(.sourceOn).map { $0.string("source") }.filter { $0 == "sleep" } == ["sleep"])
        let sequence = Self.sequence(records).drop { $0 != "system.sleep true" }
        // Services are taken down in reverse order, brought up in order.
        #expect(
            Array(sequence.prefix(11)) == [
                "system.sleep true", "4 test.b", "4 test.a", "5 test.b", "5 test.a", "inhibitor.released",
                "system.sleep false", "inhibitor.taken", "6 test.a", "6 test.b", "3 test.a",
            ])
    }

    @Test func aHostInTheBackground_staysThereAfterWake() throws {
        let scratch = try Scratch()
        let bus = try DBusMock(in: scratch)
        let host = try RunningHost()
        try host.probe("a", ["PROBE_ID=\"test.a\""])
        try host.start(["--launch-state", "background"], until: "background", environment: bus.environment)
        #expect(eventually(within: 30) { Self.ours(bus) })
        try bus.prepareForSleep(true)
        #expect(eventually(within: 30) { Self.none(bus) })
        try bus.prepareForSleep(false)
        #expect(eventually(within: 30) { Self.ours(bus) })
        #expect((try host.ctl("state").stdout.contains("state: background")))
        host.stop()
        let sequence = Self.sequence(host.records).drop { $0 != "system.sleep true" }
        #expect(
            Array(sequence) == [
                "system.sleep true", "inhibitor.released", "system.sleep false", "inhibitor.taken", "7 test.a",
            ])
    }

    @Test func prepareForShutdown_terminatesAsSIGTERMDoes() throws {
        let scratch = try Scratch()
        let bus = try DBusMock(in: scratch)
        let host = try Self.host(bus)
        #expect(eventually(within: 30) { Self.ours(bus) })
        try bus.prepareForShutdown()
        let result = host.wait()
        #expect(result.status == 0)
        let records = host.records
        #expect(records.named(.systemShutdown).count == 1)
        #expect(records.named(.hostTerminated).count == 1)
        let lines = Self.sequence(records).filter { $0.hasPrefix("\(Self.terminate) ") }
        #expect(lines == ["7 test.b", "7 test.a"])
    }

    @Test func withoutABus_orTurnedOff_theSourceSaysWhyOnce_andTheHostRuns() throws {
        let scratch = try Scratch()
        for (extra, environment, reason) in [
            ([], ["DBUS_SYSTEM_BUS_ADDRESS": "unix:path=\(scratch.file("absent.sock"))"], "no system bus"),
            (["--source", "sleep=off"], [:], "turned off"),
        ] {
            let host = try RunningHost()
            try host.probe("a", ["PROBE_ID=\"test.a\""])
            try host.start(extra, environment: environment)
            #expect(host.stop().status == 0)
            // The notifications source (session bus) says its own line; these are the sleep source's.
            let off = host.records.named(.sourceOff).filter { $0.string("source") == "sleep" }
            #expect(off.map { $0.string("source") } == ["sleep"])
            #expect(off.first?.string("reason")?.hasPrefix(reason) == true, "\(off.first?.string("reason") ?? "")")
            #expect(host.records.named(.sourceOn).filter { $0.string("source") == "sleep" }.isEmpty)
        }
    }

    /// The messages of the background-task fixture's lines ("task begun 1").
    static func taskLines(_ records: [LogRecord]) -> [String] {
        records.filter { $0.source == "test.task" && $0.event == nil }.map(\.message)
    }

    /// A host with the background-task fixture (and `defines`), its system bus `bus`.
    static func taskHost(_ bus: DBusMock, _ defines: [String] = [], extra: [String] = []) throws -> RunningHost {
        let host = try RunningHost()
        try Command.compileC(
            Repository.fixture("CPlugins/background_task.c"), to: host.lib + "/task.so", defines: defines)
        try host.start(extra, environment: bus.environment)
        return host
    }

    @Test(arguments: ["in-process", "process"])
    func anOpenBackgroundTask_keepsTheInhibitor_untilItEnds(isolation: String) throws {
        let scratch = try Scratch()
        let bus = try DBusMock(in: scratch, delayMax: 60_000_000)
        let host = try Self.taskHost(bus, extra: ["--isolation", isolation])
        #expect(eventually(within: 30) { Self.ours(bus) })
        try bus.prepareForSleep(true)
        #expect(eventually { (try? host.ctl("state").stdout.contains("state: background")) == true })
        // The service returned from didEnterBackground with its task open: the machine still waits.
        #expect(Self.ours(bus))
        try host.ctl("post", "task.end")
        #expect(eventually(within: 30) { Self.none(bus) })
        host.stop()
        #expect(Self.taskLines(host.records) == ["task begun 1", "task ended 0"])
        #expect(host.records.named(.backgroundTaskExpired).isEmpty)
        let records = host.records
        let released = records.firstIndex { $0.event == LogEvent.inhibitorReleased.name }
        // Released after the service's end call returned.
        let ended = records.firstIndex { $0.source == "test.task" && $0.message.hasPrefix("task ended") }
        #expect(released != nil && ended != nil && released! > ended!)
    }

    @Test(arguments: [false, true])
    func aTaskNeverEnded_expiresBeforeLogindStopsWaiting_andTheInhibitorIsReleased(handlerEnds: Bool) throws {
        let scratch = try Scratch()
        let bus = try DBusMock(in: scratch, delayMax: 1_000_000)
        let host = try Self.taskHost(bus, handlerEnds ? ["TASK_END_ON_EXPIRY"] : [])
        #expect(eventually(within: 30) { Self.ours(bus) })
        try bus.prepareForSleep(true)
        #expect(eventually(within: 30) { Self.none(bus) })
        host.stop()
        let records = host.records
        #expect(
            Self.taskLines(records)
                == (handlerEnds
                    ? ["task begun 1", "task expired 1", "task ended 0"] : ["task begun 1", "task expired 1"]))
        let expired = records.named(.backgroundTaskExpired)
        #expect(expired.map { $0.string("service") } == (handlerEnds ? [] : ["test.task"]))
        #expect(expired.first.map { $0.string("task") == "save" } ?? true)
    }

    /// In a worker the expiry crosses back to it: its handler runs there, after the host ended
    /// the task (its own end answers SH_NOT_FOUND, -4).
    @Test func inAWorker_aTaskNeverEnded_expiresInTheWorker_andTheInhibitorIsReleased() throws {
        let scratch = try Scratch()
        let bus = try DBusMock(in: scratch, delayMax: 1_000_000)
        let host = try Self.taskHost(bus, ["TASK_END_ON_EXPIRY"], extra: ["--isolation", "process"])
        #expect(eventually(within: 30) { Self.ours(bus) })
        try bus.prepareForSleep(true)
        #expect(eventually(within: 30) { Self.none(bus) })
        host.stop()
        let records = host.records
        #expect(Self.taskLines(records) == ["task begun 1", "task expired 1", "task ended -4"])
        #expect(records.named(.backgroundTaskExpired).map { $0.string("service") } == ["test.task"])
    }

    /// A worker that crashes with a task open: nothing will end it, so the host ends it and
    /// releases the inhibitor at once, not at logind's bound (60 s here).
    @Test func aWorkerCrashingWithATaskOpen_hasItEnded_andTheInhibitorIsReleased() throws {
        let scratch = try Scratch()
        let bus = try DBusMock(in: scratch, delayMax: 60_000_000)
        let host = try Self.taskHost(bus, extra: ["--isolation", "process"])
        #expect(eventually(within: 30) { Self.ours(bus) })
        try bus.prepareForSleep(true)
        #expect(eventually { (try? host.ctl("state").stdout.contains("state: background")) == true })
        #expect(Self.ours(bus))
        try host.ctl("post", "task.crash")
        #expect(eventually(within: 30) { Self.none(bus) })
        host.stop()
        let records = host.records
        // The restarted worker is caught up to the background and may open a task again (which
        // the host's termination then expires): only the first task is this test's.
        #expect(Self.taskLines(records).first == "task begun 1")
        let ended = records.firstIndex { $0.event == LogEvent.backgroundTaskExpired.name }
        #expect(ended.map { records[$0].string("reason") } == "its worker crashed")
        let released = records.firstIndex { $0.event == LogEvent.inhibitorReleased.name }
        #expect(released != nil && ended != nil && released! > ended!)
    }

    /// SIGTERM with a task open: the app goes to the background, willTerminate waits until the
    /// task ends (here: the service ends it on a notification), then the host exits 0; a task
    /// never ended expires at a quarter of --shutdown-timeout, and the host exits 0 all the same.
    @Test(arguments: [true, false])
    func termination_waitsForOpenBackgroundTasks(ended: Bool) throws {
        let scratch = try Scratch()
        let bus = try DBusMock(in: scratch)
        // The task expires at a quarter of the timeout: when the test ends it, a loaded machine
        // must still get the post in before then (0.5 s was not always enough under a full suite).
        let host = try Self.taskHost(bus, extra: ["--shutdown-timeout", ended ? "40" : "2"])
        host.process?.send(SIGTERM)
        #expect(eventually { (try? host.ctl("state").stdout.contains("state: background")) == true })
        if ended {
            let posted = try host.ctl("post", "task.end")
            #expect(posted.status == 0, "\(posted.stderr)")
        }
        #expect(host.wait().status == 0)
        let records = host.records
        #expect(
            Self.taskLines(records) == (ended ? ["task begun 1", "task ended 0"] : ["task begun 1", "task expired 1"]))
        #expect(records.named(.backgroundTaskExpired).count == (ended ? 0 : 1))
        #expect(records.named(.hostTerminated).count == 1 && records.named(.hostForcedExit).isEmpty)
    }
}
