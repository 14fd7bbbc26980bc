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
}
