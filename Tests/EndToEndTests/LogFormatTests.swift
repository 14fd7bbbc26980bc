import Foundation
import TestSupport
import Testing

/// `--log-format json`, the log the other end-to-end tests read: every line one JSON object
/// of the documented shape, whoever wrote it (the host, the loader, a service, a worker).
// A time limit: these tests start processes (a hang must fail the test, not stall the run).
@Suite(.timeLimit(.minutes(10))) struct LogFormatTests {
    /// Starts a host whose log has lines of every kind: a refused file, a service's own lines, an
    /// unclaimed URL, a worker's crash, restart and output, a reload, debug lines; then stops it.
    private func busyHost(_ format: [String]) throws -> CommandResult {
        let host = try IsolatedHost()
        try host.probe(
            "a",
            [
                "PROBE_ID=\"test.a\"", "PROBE_EVENTS=SH_EVENTS_LIFECYCLE|SH_EVENT_BIT(SH_EVENT_OPEN_URL)",
                "PROBE_ANSWER=SH_FALSE",
            ])
        try host.bad(
            "segv",
            [
                "BAD_ID=\"test.segv\"", "BAD_ON_KIND=SH_EVENT_DID_ENTER_BACKGROUND", "BAD_ACTION=1",
                "BAD_ONCE_MARKER=" + host.marker("segv.crashed"),
            ])
        try host.scratch.write("lib/empty.so", [])
        let config = try host.file("services.json", #"{"services": {"test.segv": {"isolation": "process"}}}"#)
        // RunningHost asks for JSON; a later --log-format wins, as any repeated option does.
        try host.start(["--config", config, "--log-level", "debug"] + format)
        #expect(try host.ctl("open", "myapp://nowhere").status == 3)
        #expect(try host.ctl("background").status == 0)
        #expect(eventually { (try? host.service("test.segv"))?["restarts"] as? Int == 1 })
        #expect(try host.ctl("reload").status == 0)
        return host.stop()
    }

    @Test func everyLine_isAJSONObject_withLevelSourceAndMessage_andEventsWithFields() throws {
        let result = try busyHost([])
        #expect(result.status == 0)
        #expect(result.stderr.hasSuffix("\n"))
        let lines = result.stderr.split(separator: "\n")
        for line in lines {
            guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else {
                Issue.record("not a JSON object: \(line)")
                continue
            }
            #expect(Set(object.keys).isSubset(of: ["level", "source", "event", "message", "fields"]), "\(line)")
            #expect(["error", "warn", "info", "debug"].contains(object["level"] as? String ?? ""), "\(line)")
            #expect((object["source"] as? String)?.isEmpty == false, "\(line)")
            #expect(object["message"] is String, "\(line)")
            if let event = object["event"] {
                // One the declaration names (and the reference's table, LogEventTableTests).
                #expect((event as? String).flatMap(LogEvent.init(rawValue:)) != nil, "\(line)")
            }
            if let fields = object["fields"] {
                #expect(object["event"] != nil, "fields without an event: \(line)")
                #expect((fields as? [String: Any])?.isEmpty == false, "\(line)")
            }
        }
        // The scenario did write the lines this checks, so the loop above has something to fail on.
        let records = result.records
        #expect(records.count == lines.count)
        let events = Set(records.compactMap(\.event))
        let expected: [LogEvent] = [
            .loadFailed, .routeUnclaimed, .workerCrashed, .workerRestarted, .reloadDone, .hostReady, .hostShuttingDown,
            .hostTerminated,
        ]
        for event in expected {
            #expect(events.contains(event.name), "no \(event.name) line in:\n\(records.text)")
        }
        #expect(!records.messages(from: "test.a").isEmpty && records.contains { $0.level == "debug" })
    }

    @Test func theTextFormat_isOneLevelSourceMessageLinePerLine() throws {
        let result = try busyHost(["--log-format", "text"])
        #expect(result.status == 0)
        let lines = result.stderr.split(separator: "\n")
        #expect(lines.count > 20)
        for line in lines {
            #expect(line.prefixMatch(of: #/(error|warn|info|debug) \[[^\]]+\] /#) != nil, "\(line)")
        }
        #expect(result.records.isEmpty)
    }
}
