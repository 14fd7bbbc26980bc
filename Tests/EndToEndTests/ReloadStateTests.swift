import Foundation
import TestSupport
import Testing

/// State across a reload (issue 42 item 4): a service that handles willReload hands a state to
/// the instance that replaces it, which finds it in its launch options with the old instance's
/// id and version: across a reload's new version and a restart (a new worker under process
/// isolation). A state over 1 MiB is refused naming the service and its size; a service that
/// does not handle the event is caught up as before. In the host's process and in a worker.
// A time limit: these tests start processes (a hang must fail the test, not stall the run).
@Suite(.timeLimit(.minutes(10))) struct ReloadStateTests {
    @Test(arguments: ["in-process", "process"])
    func aState_crossesAReloadsNewVersion_andARestart_andAnOversizedOneIsRefused(_ isolation: String) throws {
        let host = try IsolatedHost()
        let events = "PROBE_EVENTS=(SH_EVENTS_LIFECYCLE|SH_EVENT_BIT(SH_EVENT_WILL_RELOAD))"
        try host.probe("keeper", ["PROBE_ID=\"test.keeper\"", events, "PROBE_STATE=1"])
        try host.probe("big", ["PROBE_ID=\"test.big\"", events, "PROBE_STATE=1", "PROBE_STATE_PAD=1048577"])
        try host.probe("plain", ["PROBE_ID=\"test.plain\""])
        try host.start(["--isolation", isolation])
        // New versions of all three files, then a reload that replaces them.
        for (name, id) in [("keeper", "test.keeper"), ("big", "test.big"), ("plain", "test.plain")] {
            var defines = ["PROBE_ID=\"\(id)\"", "PROBE_VERSION=\"0.2.0\""]
            if name != "plain" { defines += [events, "PROBE_STATE=1"] }
            try Plugins.probe(host.lib + "/.\(name).so.new", defines)
            #expect(rename(host.lib + "/.\(name).so.new", host.lib + "/\(name).so") == 0)
        }
        let reload = try host.reply("reload")
        #expect(Set(reload["replaced"] as? [String] ?? []) == ["test.keeper", "test.big", "test.plain"], "\(reload)")
        // A restart (in a worker: a new worker) hands the new version's state to its next start.
        #expect(try host.reply("service", "restart", "test.keeper")["restarted"] as? [String] == ["test.keeper"])
        let result = host.stop()
        #expect(result.status == 0, "\(result.stderr)")
        let records = result.records

        let restored = records.filter { $0.message.contains(": restored ") }
        #expect(
            restored.map { [$0.source, String($0.message.split(separator: ":").last ?? "")] } == [
                ["test.keeper", " restored gen=1 from test.keeper 0.1.0"],
                ["test.keeper", " restored gen=2 from test.keeper 0.2.0"],
            ], "\(records.text)")
        let handed = records.named(.reloadStateHandedOver)
        #expect(
            handed.map { [$0.string("service"), $0.string("version")] } == [
                ["test.keeper", "0.1.0"], ["test.keeper", "0.2.0"],
            ], "\(records.text)")
        #expect(handed.allSatisfy { $0.int("bytes") == 5 })
        let refused = records.named(.reloadStateRefused)
        #expect(refused.count == 1, "\(records.text)")
        #expect(refused.first?.string("service") == "test.big" && refused.first?.int("bytes") == 1_048_577)
        #expect(refused.first?.int("limit") == 1_048_576 && refused.first?.string("reason") == "tooLarge")
        // Each replaced service launched again; the plain one was never asked.
        for id in ["test.keeper", "test.big", "test.plain"] {
            #expect(records.probe(1).filter { $0.source == id }.count == (id == "test.keeper" ? 3 : 2), "\(id)")
        }
        #expect(records.probe(48).map(\.source).sorted() == ["test.big", "test.keeper", "test.keeper"])
        // willReload comes before the old instance is taken down, and is in the trace.
        #expect(host.events.filter { $0.hasPrefix("willReload ") }.count == 3, "\(host.events)")
    }

    /// A reload to a lazy version: the old instance's state waits (at most 1 MiB, one per
    /// service) until an event opens the new one, whose launch then has it.
    @Test(arguments: ["in-process", "process"])
    func aStateForALazyReplacement_waitsUntilAnEventOpensIt(_ isolation: String) throws {
        let host = try IsolatedHost()
        let events =
            "PROBE_EVENTS=(SH_EVENTS_LIFECYCLE|SH_EVENT_BIT(SH_EVENT_WILL_RELOAD)|SH_EVENT_BIT(SH_EVENT_NOTIFICATION))"
        let defines = ["PROBE_ID=\"test.keeper\"", events, "PROBE_STATE=1", "PROBE_SUBSCRIBE=\"sync\""]
        try host.probe("keeper", defines)
        try host.start(["--isolation", isolation])
        try Plugins.probe(
            host.lib + "/.keeper.so.new", defines + ["PROBE_VERSION=\"0.2.0\"", "PROBE_FLAGS=SH_META_SERVICE_LAZY"])
        #expect(rename(host.lib + "/.keeper.so.new", host.lib + "/keeper.so") == 0)
        _ = try host.reply("reload")
        #expect(try host.service("test.keeper")?["state"] as? String == "lazy (not loaded)")
        #expect(try host.reply("post", "sync")["receivers"] as? [String] == ["test.keeper"])
        let result = host.stop()
        #expect(result.status == 0, "\(result.stderr)")
        let records = result.records
        let restored = records.filter { $0.message.contains(": restored ") }
        #expect(
            restored.map { [$0.source, String($0.message.split(separator: ":").last ?? "")] } == [
                ["test.keeper", " restored gen=1 from test.keeper 0.1.0"]
            ], "\(records.text)")
        #expect(records.named(.reloadStateHandedOver).map { $0.string("version") } == ["0.1.0"], "\(records.text)")
    }
}
