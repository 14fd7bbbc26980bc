import Foundation
import ServiceABI
import ServiceJSON
import TestSupport
import Testing

@testable import HostCore

/// Per-service policies through the real dispatcher and real workers (the built `host`).
@MainActor
// A time limit: these tests start processes (a hang must fail the test, not stall the run).
@Suite(.timeLimit(.minutes(10))) struct IsolationHostTests {
    let scratch: Scratch
    let lib: String

    init() throws {
        scratch = try Scratch()
        lib = try scratch.folder("lib")
    }

    private func compile(_ fixture: String, _ name: String, _ defines: [String]) throws {
        try Command.compileC(Repository.fixture(fixture), to: lib + "/" + name, defines: defines)
    }

    @Test func policiesPlaceEachService_theOrderIsUnchanged_andACrashOrAHangFailsOnlyItsCall() throws {
        try compile("CPlugins/probe.c", "a.so", ["PROBE_ID=\"test.a\"", "PROBE_PRIORITY=10"])
        try compile("CPlugins/probe.c", "b.so", ["PROBE_ID=\"test.b\""])
        try compile(
            "BadPlugins/bad.c", "c.so",
            ["BAD_ID=\"test.c\"", "BAD_ON_KIND=SH_EVENT_DID_ENTER_BACKGROUND", "BAD_ACTION=1"])
        try compile(
            "BadPlugins/bad.c", "d.so",
            ["BAD_ID=\"test.d\"", "BAD_ON_KIND=SH_EVENT_WILL_RESIGN_ACTIVE", "BAD_ACTION=9"])
        let tracePath = scratch.file("trace.jsonl")
        let host = Host(
            log: Log(level: .error, descriptor: open("/dev/null", O_WRONLY)), trace: try TraceWriter(path: tracePath))
        // test.d hangs: its deadline, stretched under a sanitizer (its worker takes longer to load).
        let hangDeadline = Sanitizer.deadline(0.3)
        var settings = IsolationSettings(stateDirectory: scratch.file("state"))
        settings.workerExecutable = try Repository.product("host")
        settings.policies = [
            "test.a": IsolationPolicy(isolation: .process),
            "test.c": IsolationPolicy(isolation: .process),
            "test.d": IsolationPolicy(isolation: .process, eventTimeout: hangDeadline),
        ]
        try host.startIsolation(settings)
        #expect(try host.load(LoadSettings(directories: [lib])).failures.isEmpty)
        #expect(host.services.map(\.id) == ["test.a", "test.b", "test.c", "test.d"])
        #expect(host.isolationFields(for: "test.a")["isolation"] == "process")
        #expect(host.isolationFields(for: "test.b")["isolation"] == "in-process")
        #expect(host.isolationFields(for: "test.a")["state"] == "running")
        try host.launch()
        try host.transition(to: .background)

        let lines = try String(contentsOfFile: tracePath, encoding: .utf8).split(separator: "\n").map { line in
            let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as! [String: Any]
            return "\(object["event"]!) \(object["service"]!) \(object["result"]!)"
        }
        let order = ["test.a", "test.b", "test.c", "test.d"]
        func pairs(_ event: String, _ services: [String], _ result: (String) -> String = { _ in "ok" }) -> [String] {
            services.map { "\(event) \($0) \(result($0))" }
        }
        #expect(
            lines == pairs("willFinishLaunching", order) + pairs("didFinishLaunching", order)
                + pairs("didBecomeActive", order)
                + pairs("willResignActive", order.reversed()) { $0 == "test.d" ? "error" : "ok" }
                // test.d is down (its hang killed its worker), so it answers unsupported until restarted.
                + pairs("didEnterBackground", order.reversed()) {
                    ["test.c": "error", "test.d": "unsupported"][$0] ?? "ok"
                })
        #expect(host.isolationFields(for: "test.c")["state"] == "restarting")
        #expect(
            host.isolationFields(for: "test.c")["lastCrash"]?.stringValue?.contains(
                "was killed by signal 11 (SIGSEGV) while handling didEnterBackground") == true)
        #expect(
            host.isolationFields(for: "test.d")["lastCrash"]?.stringValue?.contains(
                "did not answer willResignActive within \(Seconds.text(hangDeadline)) s") == true)
        #expect(host.isolationFields(for: "test.a")["state"] == "running")
    }

    /// A crash loop lifted on the host's clock (`restartResetAfter`), without a new file: not a
    /// moment early, and once the cause is gone the service runs, caught up; `reset-failed`
    /// lifts the next one at once, and refuses a service that is not failed, naming it.
    @Test func aCrashLoop_isLiftedAfterRestartResetAfter_onTheHostsClock_andByResetFailed() throws {
        let fixed = scratch.file("fixed")
        try compile(
            "BadPlugins/bad.c", "loop.so",
            [
                "BAD_ID=\"test.loop\"", "BAD_ON_KIND=SH_EVENT_DID_BECOME_ACTIVE", "BAD_ACTION=2",
                "BAD_UNTIL_MARKER=\"\(fixed)\"",
            ])
        let logPath = scratch.file("log.jsonl")
        let clock = ManualClock()
        let host = Host(
            log: Log(
                level: .info, format: .json, descriptor: open(logPath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)),
            clock: clock)
        var settings = IsolationSettings(stateDirectory: scratch.file("state"))
        settings.workerExecutable = try Repository.product("host")
        settings.crashLimit = CrashLimit(count: 2, window: 60)
        settings.policies = ["test.loop": IsolationPolicy(isolation: .process, restartResetAfter: 30)]
        try host.startIsolation(settings)
        #expect(try host.load(LoadSettings(directories: [lib])).failures.isEmpty)
        try host.launch()
        func state() -> String? { host.isolationFields(for: "test.loop")["state"]?.stringValue }
        let record = scratch.file("state") + "/failures/test.loop.json"
        // Crash one in the launch's didBecomeActive; crash two in the restart's catch-up.
        #expect(state() == "restarting")
        clock.advance(by: 0.1)
        #expect(state() == "failed")
        #expect(FileManager.default.fileExists(atPath: record))
        let resetAt = try #require(host.isolationFields(for: "test.loop")["resetAt"]?.stringValue)
        #expect(resetAt.hasSuffix("Z") && resetAt.count == "2026-01-01T00:00:00Z".count, "\(resetAt)")
        #expect(throws: ServiceControlError.self) { try host.restartService("test.loop") }
        clock.advance(by: 29.5)
        #expect(state() == "failed")
        // The cause goes away; the file stays as it was.
        #expect(FileManager.default.createFile(atPath: fixed, contents: nil))
        clock.advance(by: 0.6)
        #expect(state() == "running")
        #expect(host.isolationFields(for: "test.loop")["resetAt"] == nil)
        #expect(host.isolationFields(for: "test.loop")["failure"] == nil)
        #expect(!FileManager.default.fileExists(atPath: record))
        #expect(host.skipped.isEmpty)

        // Not failed: refused, naming the service and its state.
        #expect(throws: ServiceControlError.self) { try host.resetFailedService("test.loop") }
        do {
            try host.resetFailedService("test.loop")
        } catch {
            #expect(
                error.description
                    == "service test.loop is not marked failed after a crash loop (it is running); nothing to reset")
        }
        do {
            try host.resetFailedService("test.nothing")
        } catch {
            #expect(error.description.hasPrefix("cannot reset unknown service test.nothing"), "\(error)")
        }

        // The next crash loop (the cause is back), lifted by request before its time.
        #expect(unlink(fixed) == 0)
        try host.transition(to: .background)
        try host.transition(to: .active)
        clock.advance(by: 0.1)
        #expect(state() == "failed")
        #expect(FileManager.default.createFile(atPath: fixed, contents: nil))
        #expect(try host.resetFailedService("test.loop") == ["test.loop"])
        #expect(state() == "running")
        #expect(!FileManager.default.fileExists(atPath: record))
        // Its re-arm was cancelled with the failure: nothing starts it a second time.
        clock.advance(by: 60)
        #expect(state() == "running")
        try host.terminate()

        let records = LogRecord.parse(try String(contentsOfFile: logPath, encoding: .utf8))
        #expect(records.named(.workerFailed).count == 2, "\(records.text)")
        #expect(records.named(.workerFailed).first?.string("resetAt") == resetAt)
        let rearmed = records.named(.workerRearmed)
        #expect(
            rearmed.map { [$0.level, $0.source, $0.string("after"), $0.string("path")] } == [
                ["info", "host", "30", lib + "/loop.so"]
            ], "\(records.text)")
        #expect(rearmed.first?.strings("services") == ["test.loop"])
        let reset = records.named(.workerResetFailed)
        #expect(reset.map { [$0.level, $0.source, $0.string("path")] } == [["info", "host", lib + "/loop.so"]])
        #expect(reset.first?.strings("services") == ["test.loop"])
        // Each lift is followed by the restart's catch-up, up to the app's state.
        let order = records.compactMap(\.event).filter {
            [LogEvent.workerRearmed.name, LogEvent.workerResetFailed.name, LogEvent.workerRestarted.name].contains($0)
        }
        #expect(
            order.suffix(4) == ["worker.rearmed", "worker.restarted", "worker.resetFailed", "worker.restarted"],
            "\(order)")
        // didBecomeActive (event 3): four crashes, and once after each lift, in its restarted worker.
        #expect(
            records.messages(from: "test.loop").filter { $0.hasPrefix("bad test.loop: event 3 state 2") }.count == 6,
            "\(records.messages(from: "test.loop"))")
    }
}
