import Foundation
import TestSupport
import Testing

/// Dependencies a plugin declares (`SH_CLAIM_REQUIRES`, `SH_CLAIM_AFTER`): the real host on
/// real C probes, merged with the configuration's, version ranges checked.
// A time limit: these tests start processes (a hang must fail the test, not stall the run).
@Suite(.timeLimit(.minutes(10))) struct PluginDependencyTests {
    private let urlEvents = "SH_EVENTS_LIFECYCLE|SH_EVENT_BIT(SH_EVENT_OPEN_URL)"

    /// The services in the order they were launched (didFinishLaunching in the trace).
    private func launched(_ host: RunningHost) -> [String] {
        host.events.filter { $0.hasPrefix("didFinishLaunching ") }.map {
            String($0.dropFirst("didFinishLaunching ".count))
        }
    }

    private func listed(_ host: RunningHost) throws -> [String] {
        (try host.ctlJSON("list").reply["services"] as? [[String: Any]] ?? []).compactMap { $0["id"] as? String }
    }

    @Test func pluginAfterAndRequires_orderTheStart_overPriority() throws {
        let host = try RunningHost()
        // By priority: first, second, third. The plugins say: first after second, second requires third.
        try host.probe("a", ["PROBE_ID=\"test.first\"", "PROBE_PRIORITY=10", "PROBE_AFTER=\"test.second\""])
        try host.probe("b", ["PROBE_ID=\"test.second\"", "PROBE_PRIORITY=5", "PROBE_REQUIRES=\"test.third >=1.2 <2\""])
        try host.probe("c", ["PROBE_ID=\"test.third\"", "PROBE_VERSION=\"1.4.0\""])
        try host.start()
        #expect(try listed(host) == ["test.third", "test.second", "test.first"])
        host.stop()
        #expect(launched(host) == ["test.third", "test.second", "test.first"])
    }

    @Test func theBundledOfflineQueue_startsAfterTheLogger_asInspectShows() throws {
        let result = try Command.run(
            try Repository.product("host"), ["inspect", "--json", try Repository.product("libOfflineQueue.so")])
        let files = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [[String: Any]])
        let service = try #require((files.first?["services"] as? [[String: Any]])?.first)
        #expect(service["after"] as? [String] == ["dev.servicehost.logger"])
        #expect(service["requires"] as? [String] == [])
        let probe = try RunningHost()
        try probe.probe("a", ["PROBE_ID=\"test.a\"", "PROBE_REQUIRES=\"test.b >=1.2 <2\"", "PROBE_AFTER=\"test.c\""])
        let text = try Command.run(try Repository.product("host"), ["inspect", probe.lib + "/a.so"]).stdout
        #expect(
            text.contains("    requires:  test.b >=1.2 <2\n") && text.contains("    after:     test.c\n"), "\(text)")
    }

    @Test func pluginEdges_mergeWithTheConfigurations() throws {
        let host = try RunningHost()
        try host.probe("a", ["PROBE_ID=\"test.a\"", "PROBE_REQUIRES=\"test.b\""])
        try host.probe("b", ["PROBE_ID=\"test.b\""])
        try host.probe("c", ["PROBE_ID=\"test.c\"", "PROBE_PRIORITY=-5"])
        // The configuration adds a → c; b and c come first either way, c by its edge from a.
        let config = try host.file("services.json", #"{"services": {"test.a": {"requires": ["test.c"]}}}"#)
        try host.start(["--config", config])
        #expect(try listed(host) == ["test.b", "test.c", "test.a"])
        host.stop()
    }

    @Test func aRequirementOutOfRange_leavesAnOptionalServiceOut_namingBothServicesAndVersions() throws {
        let host = try RunningHost()
        try host.probe(
            "a", ["PROBE_ID=\"test.a\"", "PROBE_VERSION=\"1.0.0\"", "PROBE_REQUIRES=\"test.logger >=1.2 <2\""])
        try host.probe("logger", ["PROBE_ID=\"test.logger\"", "PROBE_VERSION=\"1.1.0\""])
        try host.start()
        #expect(try listed(host) == ["test.logger"])
        let skipped = try host.ctlJSON("list", "--all").reply["skipped"] as? [[String: Any]] ?? []
        let entry = try #require(skipped.first { ($0["services"] as? [String]) == ["test.a"] }, "\(skipped)")
        #expect(entry["reason"] as? String == "requirement-failed")
        #expect(entry["message"] as? String == "test.a 1.0.0 requires test.logger >=1.2 <2, but 1.1.0 is installed")
        let records = host.stop().records
        let failed = records.named(.serviceRequirementFailed)
        #expect(
            failed.map { [$0.level, $0.string("service"), $0.string("requires")] } == [
                ["error", "test.a", "test.logger"]
            ])
        #expect(!host.events.contains { $0.hasSuffix(" test.a") }, "test.a ran")
    }

    @Test func aRequirementOutOfRange_ofARequiredService_exitsTwo() throws {
        let host = try RunningHost()
        try host.probe(
            "a", ["PROBE_ID=\"test.a\"", "PROBE_VERSION=\"1.0.0\"", "PROBE_REQUIRES=\"test.logger >=1.2 <2\""])
        try host.probe("logger", ["PROBE_ID=\"test.logger\"", "PROBE_VERSION=\"2.0.0\""])
        let config = try host.file("services.json", #"{"services": {"test.a": {"policy": "required"}}}"#)
        try host.start(["--config", config], wait: false)
        let result = host.wait()
        #expect(result.status == 2)
        let failure = try #require(result.records.named(.hostLoadFailed).first, "\(result.stderr)")
        for part in ["test.a", "1.0.0", "test.logger", ">=1.2 <2", "2.0.0"] {
            #expect(failure.message.contains(part), "\(failure.message)")
        }
        #expect(!traceEvents(host.tracePath).contains { $0.hasSuffix(" test.a") })
    }

    @Test func aMissingRequirement_leavesTheServiceOut_andWhatRequiresIt() throws {
        let host = try RunningHost()
        try host.probe("a", ["PROBE_ID=\"test.a\"", "PROBE_REQUIRES=\"test.gone\""])
        try host.probe("b", ["PROBE_ID=\"test.b\"", "PROBE_REQUIRES=\"test.a\""])
        try host.probe("c", ["PROBE_ID=\"test.c\""])
        try host.start()
        #expect(try listed(host) == ["test.c"])
        let records = host.stop().records
        #expect(
            records.named(.serviceRequirementFailed).map { [$0.string("service"), $0.string("requires")] } == [
                ["test.a", "test.gone"], ["test.b", "test.a"],
            ])
    }

    @Test func aCycleThroughPluginEdges_stopsTheHost_namingWhereEachEdgeComesFrom() throws {
        let host = try RunningHost()
        try host.probe("a", ["PROBE_ID=\"test.a\"", "PROBE_REQUIRES=\"test.b\""])
        try host.probe("b", ["PROBE_ID=\"test.b\"", "PROBE_AFTER=\"test.a\""])
        try host.start(wait: false)
        let result = host.wait()
        #expect(result.status == 2)
        let failure = try #require(result.records.named(.hostLoadFailed).first, "\(result.stderr)")
        #expect(failure.message.contains("test.a → test.b → test.a"), "\(failure.message)")
        #expect(
            failure.message.contains("requires declared by its plugin")
                && failure.message.contains("after declared by its plugin"))
    }

    @Test func hostCheck_reportsVersionConflictsMissingRequirementsAndCycles() throws {
        let scratch = try Scratch()
        let lib = try scratch.folder("lib")
        let a = try Plugins.probe(
            lib + "/a.so",
            ["PROBE_ID=\"test.a\"", "PROBE_VERSION=\"1.0.0\"", "PROBE_REQUIRES=\"test.logger >=1.2 <2\""])
        try Plugins.probe(lib + "/logger.so", ["PROBE_ID=\"test.logger\"", "PROBE_VERSION=\"1.1.0\""])
        try Plugins.probe(lib + "/b.so", ["PROBE_ID=\"test.b\"", "PROBE_REQUIRES=\"test.gone\""])
        let result = try Command.run(try Repository.product("host"), ["check", "--plugins", lib, "--json"])
        #expect(result.status == 2)
        let report = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        let problems = (report["problems"] as? [[String: Any]] ?? []).map {
            [$0["code"] as? String, $0["service"] as? String, $0["file"] as? String]
        }
        #expect(
            problems == [["requires-unknown", "test.b", lib + "/b.so"], ["requires-version", "test.a", a]], "\(report)")
        #expect((report["order"] as? [[String: Any]])?.map { $0["service"] as? String } == ["test.logger"])
        let text = try Command.run(try Repository.product("host"), ["check", "--plugins", lib])
        #expect(
            text.stdout.contains("test.a 1.0.0 requires test.logger >=1.2 <2, but 1.1.0 is installed"), "\(text.stdout)"
        )

        try Plugins.probe(
            lib + "/logger.so", ["PROBE_ID=\"test.logger\"", "PROBE_VERSION=\"1.2.0\"", "PROBE_AFTER=\"test.a\""])
        let cycle = try Command.run(try Repository.product("host"), ["check", "--plugins", lib, "--json"])
        let cycleReport = try #require(
            try JSONSerialization.jsonObject(with: Data(cycle.stdout.utf8)) as? [String: Any])
        let codes = (cycleReport["problems"] as? [[String: Any]] ?? []).compactMap { $0["code"] as? String }
        #expect(codes == ["requires-unknown", "cycle"], "\(cycleReport)")
    }

    @Test func aLazyServicesRequirement_isOpenedBeforeIt() throws {
        let host = try RunningHost()
        try host.probe(
            "base",
            [
                "PROBE_ID=\"test.base\"", "PROBE_EVENTS=\(urlEvents)", "PROBE_URL_CLAIM=\"base\"",
                "PROBE_FLAGS=SH_META_SERVICE_LAZY",
            ])
        try host.probe(
            "user",
            [
                "PROBE_ID=\"test.user\"", "PROBE_EVENTS=\(urlEvents)", "PROBE_URL_CLAIM=\"myapp\"",
                "PROBE_FLAGS=SH_META_SERVICE_LAZY",
                "PROBE_REQUIRES=\"test.base\"",
            ])
        try host.start()
        #expect(launched(host).isEmpty)
        #expect(try host.ctlJSON("open", "myapp://x").reply["handledBy"] as? String == "test.user")
        host.stop()
        #expect(launched(host) == ["test.base", "test.user"])
        #expect(
            host.records.named(.serviceActivated).compactMap { $0.string("service") }.sorted() == [
                "test.base", "test.user",
            ])
    }

    @Test func aLazyServiceAnEagerOneRequiresByItsPlugin_isOpenedAtStart() throws {
        let host = try RunningHost()
        try host.probe(
            "base",
            [
                "PROBE_ID=\"test.base\"", "PROBE_EVENTS=\(urlEvents)", "PROBE_URL_CLAIM=\"base\"",
                "PROBE_FLAGS=SH_META_SERVICE_LAZY",
            ])
        try host.probe("user", ["PROBE_ID=\"test.user\"", "PROBE_REQUIRES=\"test.base\""])
        try host.start()
        let records = host.stop().records
        #expect(launched(host) == ["test.base", "test.user"])
        #expect(
            records.named(.serviceLazyRefused).map {
                [$0.string("service"), $0.string("reason"), $0.string("requiredBy")]
            } == [
                ["test.base", "requiredBy", "test.user"]
            ])
    }
}
