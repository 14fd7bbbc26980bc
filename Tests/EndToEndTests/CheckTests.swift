import Foundation
import TestSupport
import Testing

/// `host check` (issue 14): the dry run reads what the host would, through the host's own
/// planner, and runs no plugin code; its JSON report names every problem by code.
@Suite(.timeLimit(.minutes(10))) struct CheckTests {
    /// Runs `host check ARGS --json`; the status and the report.
    private func check(_ arguments: [String], environment: [String: String]? = nil) throws -> (
        status: Int32, report: [String: Any]
    ) {
        let result = try Command.run(
            try Repository.product("host"), ["check"] + arguments + ["--json"], environment: environment)
        let report = (try? JSONSerialization.jsonObject(with: Data(result.stdout.utf8))) as? [String: Any]
        return (result.status, try #require(report, "\(result.stdout)\(result.stderr)"))
    }

    private func problems(_ report: [String: Any]) -> [[String: Any]] { report["problems"] as? [[String: Any]] ?? [] }

    private func codes(_ report: [String: Any]) -> [String] { problems(report).compactMap { $0["code"] as? String } }

    @Test func aCleanDirectory_printsTheStartOrder_andExitsZero_runningNoPluginCode() throws {
        let scratch = try Scratch()
        let lib = try scratch.folder("lib")
        try Plugins.probe(lib + "/low.so", ["PROBE_ID=\"test.low\"", "PROBE_CONSTRUCTOR_MARKER"])
        try Plugins.probe(lib + "/high.so", ["PROBE_ID=\"test.high\"", "PROBE_PRIORITY=10"])
        let marker = scratch.file("constructor-ran")
        let (status, report) = try check(["--plugins", lib], environment: ["PROBE_MARKER": marker])
        #expect(status == 0)
        #expect((report["order"] as? [[String: Any]])?.map { $0["service"] as? String } == ["test.high", "test.low"])
        #expect(report["directories"] as? [String] == [lib] && report["directorySource"] as? String == "--plugins")
        #expect(problems(report).isEmpty)
        #expect(!FileManager.default.fileExists(atPath: marker), "check ran a plugin's ELF constructor")
        // The same order as the host that really loads them starts them in.
        let host = try RunningHost()
        try host.probe("low", ["PROBE_ID=\"test.low\""])
        try host.probe("high", ["PROBE_ID=\"test.high\"", "PROBE_PRIORITY=10"])
        try host.start()
        #expect(try host.ctlJSON("list").reply["services"] as? [[String: Any]] != nil)
        #expect(
            (try host.ctlJSON("list").reply["services"] as? [[String: Any]])?.map { $0["id"] as? String } == [
                "test.high", "test.low",
            ])
        let text = try Command.run(try Repository.product("host"), ["check", "--plugins", lib])
        #expect(text.status == 0 && text.stdout.hasSuffix("no problems\n"), "\(text.stdout)")
    }

    @Test func anInsecureFile_andACorruptOne_areErrors_namingTheirFiles() throws {
        let scratch = try Scratch()
        let lib = try scratch.folder("lib")
        try Plugins.probe(lib + "/good.so", ["PROBE_ID=\"test.good\""])
        let open = try Plugins.probe(lib + "/open.so", ["PROBE_ID=\"test.open\""])
        chmod(open, 0o666)
        // A real plugin cut short: ELF, but its section headers are past the end.
        let whole = try Data(contentsOf: URL(fileURLWithPath: lib + "/good.so"))
        let corrupt = try scratch.write("lib/torn.so", Array(whole.prefix(200)))
        let (status, report) = try check(["--plugins", lib])
        #expect(status == 2)
        let insecure = try #require(problems(report).first { $0["code"] as? String == "insecure" }, "\(report)")
        #expect(insecure["file"] as? String == open && insecure["severity"] as? String == "error")
        let torn = try #require(problems(report).first { $0["file"] as? String == corrupt }, "\(report)")
        #expect(torn["code"] as? String == "corrupt" && torn["severity"] as? String == "error", "\(torn)")
        #expect((report["order"] as? [[String: Any]])?.map { $0["service"] as? String } == ["test.good"])
        // --allow-insecure-plugins is the run's option, and check takes it as the run does.
        #expect(try !codes(check(["--plugins", lib, "--allow-insecure-plugins"]).report).contains("insecure"))
    }

    @Test func twoServicesClaimingOneURLHost_isAWarning_namingBoth() throws {
        let scratch = try Scratch()
        let lib = try scratch.folder("lib")
        try Plugins.probe(lib + "/a.so", ["PROBE_ID=\"test.a\"", "PROBE_URL_CLAIM=\"https://example.com\""])
        try Plugins.probe(lib + "/b.so", ["PROBE_ID=\"test.b\"", "PROBE_URL_CLAIM=\"https://example.com\""])
        try Plugins.probe(lib + "/c.so", ["PROBE_ID=\"test.c\"", "PROBE_URL_CLAIM=\"https://other.example\""])
        let (status, report) = try check(["--plugins", lib])
        #expect(status == 1)
        #expect(codes(report) == ["url-claim-conflict"])
        let conflict = try #require(problems(report).first)
        #expect(conflict["service"] as? String == "test.b" && conflict["severity"] as? String == "warning")
        #expect((conflict["message"] as? String ?? "").contains("test.a"))
        // A disabled service claims nothing.
        let config = try scratch.write("services.json", Array(#"{"services":{"test.b":{"enabled":false}}}"#.utf8))
        let disabled = try check(["--plugins", lib, "--config", config])
        #expect(disabled.status == 0 && disabled.report["disabled"] as? [String] == ["test.b"], "\(disabled.report)")
        #expect(disabled.report["configuration"] as? String == config)
    }

    @Test func aSecondAnswererOfOneName_isAnError_leftOutOfTheOrder_asTheHostLeavesItOut() throws {
        let host = try RunningHost()
        let answers = [
            "PROBE_EVENTS=(SH_EVENTS_LIFECYCLE|SH_EVENT_BIT(SH_EVENT_REQUEST))", "PROBE_ANSWERS=\"geo.locate\"",
        ]
        try host.probe("first", ["PROBE_ID=\"test.first\"", "PROBE_PRIORITY=10"] + answers)
        try host.probe("second", ["PROBE_ID=\"test.second\""] + answers)
        try host.probe("plain", ["PROBE_ID=\"test.plain\""])
        let (status, report) = try check(["--plugins", host.lib, "--state-dir", host.stateDirectory])
        #expect(status == 2)
        let conflict = try #require(problems(report).first, "\(report)")
        #expect(codes(report) == ["answer-conflict"])
        #expect(conflict["service"] as? String == "test.second" && conflict["severity"] as? String == "error")
        #expect(conflict["file"] as? String == host.lib + "/second.so")
        let order = (report["order"] as? [[String: Any]])?.map { $0["service"] as? String }
        #expect(order == ["test.first", "test.plain"], "\(report)")
        let answered = (report["answers"] as? [[String: Any]])?
            .map { [$0["name"] as? String, $0["service"] as? String] }
        #expect(answered == [["geo.locate", "test.first"]])
        // The host starts exactly that order, and logs the same conflict.
        try host.start()
        let listed = try host.ctlJSON("list").reply["services"] as? [[String: Any]]
        #expect(listed?.map { $0["id"] as? String } == order)
        #expect(host.stop().records.named(.requestConflict).map { $0.string("service") } == ["test.second"])
        let text = try Command.run(
            try Repository.product("host"), ["check", "--plugins", host.lib, "--state-dir", host.stateDirectory])
        #expect(text.status == 2, "\(text.stdout)")
        #expect(text.stdout.contains("\nerror: answer-conflict: \(host.lib)/second.so: "), "\(text.stdout)")
        #expect(text.stdout.contains("\nanswers: geo.locate (test.first)\n"), "\(text.stdout)")
    }

    @Test func theLazyServices_areTheOnesTheHostLeavesDormant() throws {
        let host = try RunningHost()
        let lazy = "PROBE_FLAGS=SH_META_SERVICE_LAZY"
        let urls = "PROBE_EVENTS=(SH_EVENTS_LIFECYCLE|SH_EVENT_BIT(SH_EVENT_OPEN_URL))"
        try host.probe("links", ["PROBE_ID=\"test.links\"", lazy, urls, "PROBE_URL_CLAIM=\"myapp\""])
        // Lifecycle events only: the host opens it at start, so it is not lazy.
        try host.probe("idle", ["PROBE_ID=\"test.idle\"", lazy])
        try host.probe("other", ["PROBE_ID=\"test.other\"", urls, "PROBE_URL_CLAIM=\"other\""])
        let (status, report) = try check(["--plugins", host.lib])
        #expect(status == 0, "\(report)")
        #expect(report["lazy"] as? [String] == ["test.links"], "\(report)")
        #expect(report["answers"] as? [Any] != nil)
        let text = try Command.run(try Repository.product("host"), ["check", "--plugins", host.lib])
        #expect(text.stdout.contains("\nlazy (opened at their first event): test.links\n"), "\(text.stdout)")
        // The configuration's activation decides, for check as for the host.
        let config = try host.file(
            "services.json", #"{"services":{"test.other":{"activation":"lazy"},"test.links":{"activation":"eager"}}}"#)
        let configured = try check(["--plugins", host.lib, "--config", config]).report
        #expect(configured["lazy"] as? [String] == ["test.other"], "\(configured)")
        try host.start(["--config", config])
        let listed = try host.ctlJSON("list").reply["services"] as? [[String: Any]] ?? []
        let dormant = listed.filter { $0["activation"] as? String == "lazy" }.map { $0["id"] as? String }
        #expect(dormant == ["test.other"], "\(listed)")
        _ = host.stop()
    }

    @Test func aMissingConfigurationFile_isAnError_namingIt() throws {
        let scratch = try Scratch()
        let lib = try scratch.folder("lib")
        try Plugins.probe(lib + "/a.so", ["PROBE_ID=\"test.a\""])
        let missing = scratch.file("nope.json")
        let (status, report) = try check(["--plugins", lib, "--config", missing])
        #expect(status == 2)
        let problem = try #require(problems(report).first, "\(report)")
        #expect(problem["code"] as? String == "configuration" && problem["file"] as? String == missing)
        #expect((problem["message"] as? String ?? "").contains("No such file"), "\(problem)")
        // The host refuses the same file the same way. Its own state folder: the user's default
        // one is locked while a host of theirs runs (scripts/run), and the start stops there first.
        let state = try scratch.folder("state", mode: 0o700)
        let run = try Command.run(
            try Repository.product("host"),
            ["--plugins", lib, "--config", missing, "--log-format", "json", "--state-dir", state])
        #expect(
            run.status == 2 && run.records.named(.hostLoadFailed).first?.message.contains(missing) == true,
            "\(run.stderr)")
    }

    @Test func theConfigurationsReferences_areChecked_everyOne() throws {
        let scratch = try Scratch()
        let lib = try scratch.folder("lib")
        for id in ["a", "b", "c"] { try Plugins.probe(lib + "/\(id).so", ["PROBE_ID=\"test.\(id)\""]) }
        let cycle = try scratch.write(
            "cycle.json",
            Array(
                #"{"services":{"test.a":{"after":["test.b"]},"test.b":{"requires":["test.a"]},"test.c":{"after":["test.gone"]}}}"#
                    .utf8))
        let cyclic = try check(["--plugins", lib, "--config", cycle])
        #expect(cyclic.status == 2)
        #expect(Set(codes(cyclic.report)) == ["cycle", "after-unknown"], "\(cyclic.report)")
        #expect(
            problems(cyclic.report).first { $0["code"] as? String == "after-unknown" }?["service"] as? String
                == "test.c")
        let references = try scratch.write(
            "refs.json",
            Array(
                #"{"services":{"test.a":{"requires":["test.x","test.y"]},"test.need":{"policy":"required"},"test.want":{}}}"#
                    .utf8))
        let report = try check(["--plugins", lib, "--config", references]).report
        #expect(
            problems(report).filter { $0["code"] as? String == "requires-unknown" }.map { $0["message"] as? String }
                == [
                    "test.a requires test.x, which no plugin provides",
                    "test.a requires test.y, which no plugin provides",
                ], "\(report)")
    }

    @Test func aRequiredServiceMissing_isAnError_anOptionalOneAWarning() throws {
        let scratch = try Scratch()
        let lib = try scratch.folder("lib")
        try Plugins.probe(lib + "/a.so", ["PROBE_ID=\"test.a\""])
        let config = try scratch.write(
            "services.json", Array(#"{"services":{"test.need":{"policy":"required"},"test.want":{}}}"#.utf8))
        let (status, report) = try check(["--plugins", lib, "--config", config])
        #expect(status == 2)
        #expect(
            problems(report).map {
                "\($0["severity"] as? String ?? "") \($0["code"] as? String ?? "") \($0["service"] as? String ?? "")"
            } == [
                "error required-missing test.need", "warning missing test.want",
            ])
    }

    @Test func withoutPlugins_itSaysWhichDirectoriesItSearched() throws {
        let scratch = try Scratch()
        let lib = try scratch.folder("lib")
        try Plugins.probe(lib + "/a.so", ["PROBE_ID=\"test.a\""])
        let fromPath = try check([], environment: ["SERVICEHOST_PLUGIN_PATH": lib])
        #expect(fromPath.status == 0 && fromPath.report["directorySource"] as? String == "SERVICEHOST_PLUGIN_PATH")
        #expect(fromPath.report["directories"] as? [String] == [lib])
        let data = scratch.file("data")
        let xdg = try check([], environment: ["SERVICEHOST_PLUGIN_PATH": "", "XDG_DATA_HOME": data])
        #expect(xdg.status == 2 && xdg.report["directories"] as? [String] == [data + "/servicehost/plugins"])
        #expect(problems(xdg.report).first?["code"] as? String == "plugin-directory", "\(xdg.report)")
        let text = try Command.run(
            try Repository.product("host"), ["check"],
            environment: ["SERVICEHOST_PLUGIN_PATH": "", "XDG_DATA_HOME": data])
        #expect(
            text.stdout.hasPrefix("plugin directories (from XDG_DATA_HOME): \(data)/servicehost/plugins\n"),
            "\(text.stdout)")
        // Bad input: an operand, an unknown option.
        let operand = try Command.run(try Repository.product("host"), ["check", lib])
        #expect(operand.status == 2 && operand.stderr.contains("check: unexpected argument '\(lib)'"))
        let unknown = try Command.run(try Repository.product("host"), ["check", "--plugin", lib])
        #expect(unknown.status == 2 && unknown.stderr.contains("did you mean '--plugins'"), "\(unknown.stderr)")
    }
}
