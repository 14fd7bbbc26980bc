import Foundation
import TestSupport
import Testing

/// A settings schema (issue 42 item 3): a C plugin's SH_CLAIM_SETTINGS_SCHEMA pieces put
/// together; the settings checked at load, at each reload and at `ctl configure`, defaults
/// filled in, a violation refused by key and rule (the service keeps the settings it had), and
/// `host check` reporting it. In the host's process and in a worker.
@Suite(.timeLimit(.minutes(10))) struct SettingsSchemaTests {
    /// The schema in two claims (each at most 119 bytes): a level with a default, a short host.
    static let schema = [
        #"PROBE_SETTINGS_SCHEMA="{\"type\":\"object\",\"properties\":{\"level\":{\"enum\":[\"info\",\"debug\"],\"default\":\"info\"},""#,
        #"PROBE_SETTINGS_SCHEMA_2="\"host\":{\"type\":\"string\",\"maxLength\":8}}}""#,
    ]

    @Test(arguments: ["in-process", "process"])
    func settings_areCheckedAtLoadReloadAndConfigure_withDefaults_andAViolationKeepsTheOldOnes(_ isolation: String)
        throws
    {
        let host = try IsolatedHost()
        try host.probe(
            "typed",
            [
                "PROBE_ID=\"test.typed\"",
                "PROBE_EVENTS=(SH_EVENTS_LIFECYCLE|SH_EVENT_BIT(SH_EVENT_DID_CHANGE_SETTINGS))",
            ] + Self.schema)
        func configure(_ settings: String) throws -> String {
            try host.file("services.json", #"{"services": {"test.typed": {"settings": \#(settings)}}}"#)
        }
        // At load: refused, the defaults alone.
        let config = try configure(#"{"host": "far-too-long"}"#)
        try host.start(["--isolation", isolation, "--config", config])
        // A reload with valid settings: delivered live, the default filled in.
        _ = try configure(#"{"host": "ok"}"#)
        #expect(try host.reply("reload")["reconfigured"] as? [String] == ["test.typed"])
        // A reload that breaks the schema: refused, nothing told, nothing restarted.
        _ = try configure(#"{"host": "ok", "level": "loud"}"#)
        let refusedReload = try host.reply("reload")
        #expect(
            (refusedReload["reconfigured"] as? [String] ?? []).isEmpty
                && (refusedReload["replaced"] as? [String] ?? []).isEmpty, "\(refusedReload)")
        // ctl configure: refused by key and rule, then a valid one delivered with the default.
        let refused = try host.ctlJSON("configure", "test.typed", #"{"level": "loud"}"#)
        let error = refused.reply["error"] as? String ?? ""
        #expect(refused.status == 1 && error.contains("setting level must be one of"), "\(refused.reply)")
        #expect(
            try host.reply("configure", "test.typed", #"{"host": "b"}"#)["reconfigured"] as? [String] == ["test.typed"])
        let result = host.stop()
        #expect(result.status == 0, "\(result.stderr)")
        let records = result.records

        let launches = records.probe(1).filter { $0.source == "test.typed" }.map(\.message)
        #expect(launches.count == 1 && launches.first?.contains(#"settings={"level":"info"} "#) == true, "\(launches)")
        let changes = records.probe(40).filter { $0.source == "test.typed" }.map(\.message)
        #expect(changes.count == 2, "\(records.text)")
        #expect(
            changes.first?.hasSuffix(#" old={"level":"info"} new={"host":"ok","level":"info"}"#) == true, "\(changes)")
        #expect(changes.last?.hasSuffix(#" old={"host":"ok","level":"info"} new={"host":"b","level":"info"}"#) == true)
        let refusals = records.named(.serviceSettingsRefused)
        #expect(
            refusals.map { [$0.string("service"), $0.string("key"), $0.string("kept")] } == [
                ["test.typed", "host", "defaults"], ["test.typed", "level", "previous"],
                ["test.typed", "level", "previous"],
            ], "\(records.text)")
        #expect(refusals.first?.string("reason") == "must be at most 8 characters (it has 12)")
    }

    /// `host check` reports settings that break the schema by service, key and rule.
    @Test func hostCheck_reportsSettingsThatBreakTheSchema() throws {
        let scratch = try Scratch()
        let lib = try scratch.folder("lib")
        try Plugins.probe(lib + "/typed.so", ["PROBE_ID=\"test.typed\""] + Self.schema)
        let config = try scratch.write(
            "services.json", Array(#"{"services":{"test.typed":{"settings":{"level":"loud"}}}}"#.utf8))
        let run = try Command.run(
            try Repository.product("host"), ["check", "--plugins", lib, "--config", config, "--json"])
        let report = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])
        let problems = report["problems"] as? [[String: Any]] ?? []
        #expect(run.status == 2, "\(run.stdout)\(run.stderr)")
        #expect(
            problems.map { [$0["severity"] as? String, $0["code"] as? String, $0["service"] as? String] } == [
                ["error", "settings-invalid", "test.typed"]
            ], "\(problems)")
        #expect(
            (problems.first?["message"] as? String ?? "").contains(#"setting level must be one of "info", "debug""#))
    }
}
