import Foundation
import HostCore
import ServiceABI
import TestSupport
import Testing

/// Delivery order and failure handling, through the real dispatcher with real C plugins.
@MainActor
// A time limit: these tests start processes (a hang must fail the test, not stall the run).
@Suite(.timeLimit(.minutes(10))) struct HostDispatchTests {
    let scratch: Scratch
    let lib: String

    init() throws {
        scratch = try Scratch()
        lib = try scratch.folder("lib")
    }

    private func probe(_ name: String, _ defines: [String]) throws {
        try Command.compileC(Repository.fixture("CPlugins/probe.c"), to: lib + "/" + name, defines: defines)
    }

    /// (event, service) pairs from a trace file.
    private func trace(_ path: String) throws -> [(event: String, service: String, result: String)] {
        try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n").map { line in
            let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as! [String: Any]
            return (object["event"] as! String, object["service"] as! String, object["result"] as! String)
        }
    }

    @Test func priorityOrder_reverseTearDown_andFailuresNeverSkipTheNext() throws {
        try probe("a.so", ["PROBE_ID=\"test.a\""])
        try probe(
            "b.so",
            [
                "PROBE_ID=\"test.b\"", "PROBE_PRIORITY=10",
                "PROBE_FAIL_KIND=SH_EVENT_WILL_FINISH_LAUNCHING", "PROBE_FAIL_RESULT=SH_ERROR",
            ])
        try probe(
            "c.so",
            ["PROBE_ID=\"test.c\"", "PROBE_FAIL_KIND=SH_EVENT_DID_FINISH_LAUNCHING", "PROBE_FAIL_RESULT=SH_FALSE"])
        // Asks only for didBecomeActive: it must never be called for anything else.
        try probe("d.so", ["PROBE_ID=\"test.d\"", "PROBE_EVENTS=SH_EVENT_BIT(SH_EVENT_DID_BECOME_ACTIVE)"])

        let tracePath = scratch.file("trace.jsonl")
        let host = Host(
            log: Log(level: .error, descriptor: open("/dev/null", O_WRONLY)), trace: try TraceWriter(path: tracePath))
        #expect(try host.load(LoadSettings(directories: [lib])).failures.isEmpty)
        #expect(host.services.map(\.id) == ["test.b", "test.a", "test.c", "test.d"])
        try host.launch()
        #expect(host.state == .active)
        try host.transition(to: .background)
        try host.transition(to: .active)
        try host.terminate()
        #expect(host.state == .notRunning)

        // test.b failed willFinishLaunching: it still gets didFinishLaunching (a failure never
        // skips anything during launch), then it is stopped (policy: optional, the default).
        let order = ["test.b", "test.a", "test.c"]
        let running = ["test.a", "test.c"]
        let reversed = Array(running.reversed())
        func pairs(_ event: String, _ services: [String]) -> [String] { services.map { "\(event) \($0)" } }
        let expected =
            pairs("willFinishLaunching", order) + pairs("didFinishLaunching", order)
            + pairs("didBecomeActive", running + ["test.d"])
            + pairs("willResignActive", reversed) + pairs("didEnterBackground", reversed)
            + pairs("willEnterForeground", running) + pairs("didBecomeActive", running + ["test.d"])
            + pairs("willResignActive", reversed) + pairs("didEnterBackground", reversed)
            + pairs("willTerminate", reversed)
        let lines = try trace(tracePath)
        #expect(lines.map { "\($0.event) \($0.service)" } == expected)
        #expect(lines.first { $0.service == "test.b" }?.result == "error")
        #expect(lines.first { $0.service == "test.c" && $0.event == "didFinishLaunching" }?.result == "false")
        #expect(host.services.map(\.id) == ["test.a", "test.c", "test.d"])
        #expect(throws: TransitionError.self) { try host.launch() }
    }

    @Test func traceStateIsTheStateAfterEachEvent() throws {
        try probe("a.so", ["PROBE_ID=\"test.a\""])
        let tracePath = scratch.file("trace.jsonl")
        let host = Host(log: Log(level: .error), trace: try TraceWriter(path: tracePath))
        try host.load(LoadSettings(directories: [lib]))
        try host.launch()
        try host.terminate()
        let states = try String(contentsOfFile: tracePath, encoding: .utf8).split(separator: "\n").map { line in
            (try JSONSerialization.jsonObject(with: Data(line.utf8)) as! [String: Any])["state"] as! String
        }
        #expect(states == ["inactive", "inactive", "active", "inactive", "background", "notRunning"])
    }

    @Test func appStateDuringEachEvent_isWhatUIKitReports() throws {
        try probe("a.so", ["PROBE_ID=\"test.a\""])
        let logPath = scratch.file("log.txt")
        let logFile = open(logPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        defer { close(logFile) }
        let host = Host(log: Log(level: .info, descriptor: logFile))
        try host.load(LoadSettings(directories: [lib]))
        try host.launch()
        try host.transition(to: .background)
        try host.transition(to: .active)
        try host.terminate()
        // (kind, state in the event, state from sh_host.app_state): both must agree.
        let seen = try String(contentsOfFile: logPath, encoding: .utf8).split(separator: "\n").compactMap {
            line -> String? in
            guard let range = line.range(of: "event ") else { return nil }
            let words = line[range.upperBound...].split(separator: " ")
            return "\(words[0]):\(words[2]):\(words[4])"
        }
        let (inactive, active, background) = (
            SH_APP_INACTIVE.rawValue, SH_APP_ACTIVE.rawValue, SH_APP_BACKGROUND.rawValue
        )
        let expected: [(sh_event_kind, UInt32)] = [
            (SH_EVENT_WILL_FINISH_LAUNCHING, inactive), (SH_EVENT_DID_FINISH_LAUNCHING, inactive),
            (SH_EVENT_DID_BECOME_ACTIVE, active), (SH_EVENT_WILL_RESIGN_ACTIVE, active),
            (SH_EVENT_DID_ENTER_BACKGROUND, background), (SH_EVENT_WILL_ENTER_FOREGROUND, background),
            (SH_EVENT_DID_BECOME_ACTIVE, active), (SH_EVENT_WILL_RESIGN_ACTIVE, active),
            (SH_EVENT_DID_ENTER_BACKGROUND, background), (SH_EVENT_WILL_TERMINATE, background),
        ]
        #expect(seen == expected.map { "\($0.0.rawValue):\($0.1):\($0.1)" })
    }
}
