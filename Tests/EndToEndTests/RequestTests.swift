import Foundation
import TestSupport
import Testing

/// Request/reply between services (issue 15 item 2): a service answers the names it claims
/// (`SH_CLAIM_ANSWER`), another asks through `sh_host.request` or `host ctl request`, and every
/// request gets exactly one reply: the answer, or an error saying why there is none.
// A time limit: these tests start processes (a hang must fail the test, not stall the run).
@Suite(.timeLimit(.minutes(10))) struct RequestTests {
    private let answers = "SH_EVENTS_LIFECYCLE|SH_EVENT_BIT(SH_EVENT_REQUEST)"
    private let didBecomeActive = 3
    private let memoryWarning = "SH_EVENT_DID_RECEIVE_MEMORY_WARNING"

    private func answerer(
        _ host: RunningHost, _ name: String = "geo", id: String = "test.geo", events: String? = nil,
        extra: [String] = []
    ) throws {
        try host.probe(
            name, ["PROBE_ID=\"\(id)\"", "PROBE_EVENTS=(\(events ?? answers))", "PROBE_ANSWERS=\"geo.locate\""] + extra)
    }

    private func asker(_ host: RunningHost, _ extra: [String] = []) throws {
        try host.probe(
            "asker",
            ["PROBE_ID=\"test.asker\"", "PROBE_ASK_ON_KIND=\(didBecomeActive)", "PROBE_ASK_NAME=\"geo.locate\""] + extra
        )
    }

    /// The asker's logged replies: "RESULT JSON".
    private func replies(_ records: [LogRecord]) -> [String] {
        records.filter { $0.source == "test.asker" }.compactMap { record in
            record.message.range(of: "probe test.asker: reply ").map { String(record.message[$0.upperBound...]) }
        }
    }

    private func answered(isolation: Bool) throws {
        let host = try RunningHost()
        try answerer(host)
        try asker(host)
        try host.start(isolation ? ["--isolation", "process"] : [])
        let asked = try host.ctlJSON("request", "geo.locate", #"{"lat":1}"#)
        #expect(asked.status == 0)
        #expect(asked.reply["handled"] as? Bool == true)
        let result = asked.reply["result"] as? [String: Any]
        #expect(result?["by"] as? String == "test.geo")
        #expect(result?["from"] as? String == "host")
        #expect((result?["payload"] as? [String: Any])?["lat"] as? Int == 1)
        // The text form prints the answer itself.
        let text = try host.ctl("request", "geo.locate")
        #expect(text.status == 0)
        #expect(text.stdout.contains(#""payload":null"#), "\(text.stdout)")
        let records = host.stop().records
        // The service's own request, asked during didBecomeActive, answered after it.
        #expect(replies(records) == [#"0 {"by":"test.geo","from":"test.asker","name":"geo.locate","payload":{"n":1}}"#])
        let delivered = records.probe(27).filter { $0.source == "test.geo" }.map(\.message)
        #expect(delivered.count == 3)
        #expect(
            delivered.first?.contains("request=geo.locate from=test.asker nodes=3 json={\"n\":1}") == true,
            "\(delivered)")
    }

    @Test func aRequest_isAnsweredInProcess_fromAServiceAndFromCtl() throws { try answered(isolation: false) }

    @Test func aRequest_isAnsweredAcrossWorkerProcesses() throws { try answered(isolation: true) }

    @Test func nobodyAnswering_isExit3ForCtl_andAnErrorReplyForAService() throws {
        let host = try RunningHost()
        try asker(host)
        try host.start()
        let asked = try host.ctlJSON("request", "geo.locate")
        #expect(asked.status == 3)
        #expect(asked.reply["handled"] as? Bool == false)
        #expect(asked.reply["note"] as? String == "no service answers geo.locate")
        let records = host.stop().records
        #expect(replies(records) == [#"-4 {"error":"no service answers geo.locate"}"#])
        #expect(records.named(.requestRefused).map { $0.string("name") }.contains("geo.locate"))
    }

    @Test func anAnswererPastItsDeadline_givesAnErrorReply_andItsLateAnswerIsLogged() throws {
        let host = try RunningHost()
        // Holds the completion until its next event: the memory warning after the deadline.
        try answerer(host, events: "\(answers)|SH_EVENT_BIT(\(memoryWarning))", extra: ["PROBE_COMPLETE=4"])
        try host.start(["--request-timeout", "0.2"])
        let asked = try host.ctlJSON("request", "geo.locate")
        #expect(asked.status == 1)
        #expect(asked.reply["error"] as? String == "test.geo did not answer geo.locate within 0.2 s", "\(asked.reply)")
        try host.ctl("memory-warning")
        let records = host.stop().records
        #expect(records.named(.requestFailed).map { [$0.source, $0.string("reason")] } == [["test.geo", "timeout"]])
        #expect(records.named(.completionTimeout).map { $0.string("event") } == ["request"])
        #expect(records.named(.completionLate).map { [$0.source, $0.string("event")] } == [["test.geo", "request"]])
    }

    @Test func aSecondAnswer_isLoggedAndIgnored() throws {
        let host = try RunningHost()
        try answerer(host, extra: ["PROBE_COMPLETE=2"])
        try host.start()
        let asked = try host.ctlJSON("request", "geo.locate")
        #expect(asked.status == 0)
        #expect((asked.reply["result"] as? [String: Any])?["by"] as? String == "test.geo")
        let records = host.stop().records
        #expect(records.named(.completionTwice).map { [$0.source, $0.string("event")] } == [["test.geo", "request"]])
    }

    @Test func aCrashingIsolatedAnswerer_givesAnErrorReply_andTheHostKeepsServing() throws {
        let host = try RunningHost()
        try answerer(host, extra: ["PROBE_CRASH_KIND=27"])
        try host.start(["--isolation", "process"])
        let asked = try host.ctlJSON("request", "geo.locate")
        #expect(asked.status == 1)
        #expect((asked.reply["error"] as? String)?.hasPrefix("test.geo failed geo.locate") == true, "\(asked.reply)")
        #expect(try host.ctl("state").stdout.contains("state: active"))
        let records = host.stop().records
        #expect(records.named(.requestFailed).map(\.source) == ["test.geo"])
    }

    @Test func aPayloadOverMaxPayload_isRefusedNamingTheLimit() throws {
        let host = try RunningHost()
        try answerer(host)
        try asker(host, ["PROBE_ASK_PAD=2097152"])
        try host.start()
        _ = try host.ctl("state")
        let records = host.stop().records
        let reply = replies(records)
        #expect(reply.count == 1)
        #expect(reply.first?.hasPrefix("-3 ") == true)
        #expect(reply.first?.contains("over the limit of 65536 (--max-payload)") == true, "\(reply)")
        // Refused before it reached the answerer.
        #expect(records.probe(27).isEmpty)
    }

    @Test func twoServicesAnsweringOneName_startOnlyTheFirst_andTheLogNamesBoth() throws {
        let host = try RunningHost()
        try answerer(host, "a", id: "test.first", extra: ["PROBE_PRIORITY=10"])
        try answerer(host, "b", id: "test.second")
        let config = try host.file("services.json", #"{"services": {"test.first": {}, "test.second": {}}}"#)
        try host.start(["--config", config])
        let asked = try host.ctlJSON("request", "geo.locate")
        #expect((asked.reply["result"] as? [String: Any])?["by"] as? String == "test.first")
        let listed = try host.ctl("list").stdout
        #expect(!listed.contains("test.second"), "\(listed)")
        let records = host.stop().records
        let conflict = records.named(.requestConflict)
        #expect(
            conflict.map { [$0.string("service"), $0.string("answerer"), $0.string("name")] } == [
                ["test.second", "test.first", "geo.locate"]
            ])
        #expect(conflict.first?.level == "error")
    }

    @Test func aLazyAnswerer_isOpenedByARequestForItsName() throws {
        let host = try RunningHost()
        try answerer(host, extra: ["PROBE_FLAGS=SH_META_SERVICE_LAZY"])
        try host.start()
        #expect(try host.ctl("list").stdout.contains("lazy (not loaded)"))
        // `list --json` says it is lazy and what it answers, before it is opened and after.
        func listed() throws -> [String: Any]? {
            let services = try host.ctlJSON("list").reply["services"] as? [[String: Any]]
            return services?.first { $0["id"] as? String == "test.geo" }
        }
        #expect(try listed()?["activation"] as? String == "lazy")
        #expect(try listed()?["answers"] as? [String] == ["geo.locate"])
        let asked = try host.ctlJSON("request", "geo.locate")
        #expect((asked.reply["result"] as? [String: Any])?["by"] as? String == "test.geo")
        #expect(try listed()?["activation"] as? String == "lazy")
        #expect(try listed()?["answers"] as? [String] == ["geo.locate"])
        // A payload that is not JSON is a bad argument (exit 2): `host ctl` sends nothing.
        let bad = try host.ctl("request", "geo.locate", "{nope")
        #expect(bad.status == 2 && bad.stderr.contains("not valid JSON"))
        let records = host.stop().records
        let activated = records.named(.serviceActivated)
        #expect(
            activated.map { [$0.string("service"), $0.string("trigger")] } == [["test.geo", "request geo.locate"]])
    }
}
