import Foundation
import TestSupport
import Testing

/// ABI version 1 frozen: plugins built with exactly the version-1 sizes and plugins built
/// against a header whose structs grew both load and run, in the host and in a worker; the
/// version answered must come from the plugin's own range; every JSON buffer is NUL-terminated;
/// the README's C example, which negotiates from the offer, builds and runs.
@Suite struct ABITests {
    static let isolation: [[String]] = [[], ["--isolation", "process"]]

    @Test(.timeLimit(.minutes(10)), arguments: isolation)
    func pluginsWithV1Sizes_andWithGrownV2Structs_bothLoadAndRun(_ options: [String]) throws {
        let host = try RunningHost()
        try host.probe("v1", ["PROBE_ID=\"test.v1\"", "PROBE_SHAPE=1"])
        // Built against a "version 2" header: its sh_plugin and sh_service are larger, it
        // declares ABI 1–2 and chooses 1 from the offer.
        try host.probe("v2", ["PROBE_ID=\"test.v2\"", "PROBE_SHAPE=2", "PROBE_ABI_MAX=2"])
        try host.start(options)
        let list = try host.ctlJSON("list").reply["services"] as? [[String: Any]] ?? []
        #expect(Set(list.compactMap { $0["id"] as? String }) == ["test.v1", "test.v2"])
        try host.ctl("background")
        let result = host.stop()
        #expect(result.status == 0, "\(result.stderr)")
        let lifecycle = [
            "willFinishLaunching", "didFinishLaunching", "didBecomeActive", "willResignActive",
            "didEnterBackground", "willTerminate",
        ]
        for id in ["test.v1", "test.v2"] {
            #expect(
                host.events.filter { $0.hasSuffix(" " + id) }.map { String($0.split(separator: " ")[0]) } == lifecycle)
        }
        // The grown plugin reads the host's table only within its size: v2's member is absent.
        // (152 bytes: SH_HOST_SIZE_V4, the table this host hands out.)
        #expect(
            result.records.messages(from: "test.v2").contains(
                "probe test.v2: shape 2 attached: host table 152 bytes, v2 member absent"),
            "\(result.records.text)")
    }

    @Test(.timeLimit(.minutes(10)), arguments: isolation)
    func aVersionOutsideThePluginsOwnRange_isRefusedAsAPluginBug(_ options: [String]) throws {
        let host = try RunningHost()
        try host.probe("good", ["PROBE_ID=\"test.good\""])
        try host.probe("liar", ["PROBE_ID=\"test.liar\"", "PROBE_ANSWER_ABI=5"])
        try host.start(options)
        let list = try host.ctlJSON("list").reply["services"] as? [[String: Any]] ?? []
        #expect(list.compactMap { $0["id"] as? String } == ["test.good"])
        let result = host.stop()
        let refusal = result.records.named(.loadFailed).filter { $0.string("path")?.hasSuffix("/liar.so") == true }
        #expect(
            refusal.count == 1
                && refusal[0].string("reason")?.contains("answered ABI 5, outside the 1–1 its metadata declares")
                    == true,
            "\(result.records.text)")
        #expect(!result.records.contains { $0.message.contains("upgrade the host") })
    }

    @Test(.timeLimit(.minutes(10)), arguments: isolation)
    func settingsAndNotificationJSON_areNULTerminated(_ options: [String]) throws {
        let host = try RunningHost()
        let events = "SH_EVENTS_LIFECYCLE|SH_EVENT_BIT(SH_EVENT_NOTIFICATION)"
        try host.probe(
            "nul",
            [
                "PROBE_ID=\"test.nul\"", "PROBE_EVENTS=\(events)", "PROBE_SUBSCRIBE=\"note\"",
                "PROBE_CHECK_NUL",
            ])
        let config = try host.file("services.json", #"{"services": {"test.nul": {"settings": {"k": [1, 2]}}}}"#)
        try host.start(options + ["--config", config])
        #expect(try host.ctl("post", "note", #"{"a":"b"}"#).status == 0)
        _ = host.stop()
        let launches = host.records.probe(1, 2).map(\.message)
        #expect(launches.count == 2)
        #expect(
            launches.allSatisfy { $0.contains(#"settings={"k":[1,2]}"#) && $0.contains("settings-nul=1") },
            "\(launches)")
        let notes = host.records.probe(8).map(\.message)
        #expect(notes.count == 1)
        #expect(notes.allSatisfy { $0.contains(#"json={"a":"b"}"#) && $0.contains("json-nul=1") }, "\(notes)")
    }

    /// The C block of the README's "Write a service in C", compiled as written and run.
    @Test(.timeLimit(.minutes(10))) func theREADMEsCExample_negotiatesAndRuns() throws {
        let section = try Documentation.section("Write a service in C")
        let block = try #require(section.codeBlocks(language: "c").first).joined(separator: "\n") + "\n"
        #expect(block.contains("offer->abi_max") && block.contains("offer->abi_min"))
        let host = try RunningHost()
        let source = try host.file("readme.c", block)
        try Command.compileC(source, to: host.lib + "/libReadme.so")
        try host.start()
        try host.ctl("background")
        _ = host.stop()
        #expect(
            host.records.messages(from: "com.example.hello-c").filter { $0.hasPrefix("hello-c: event") }.count == 6,
            "\(host.records.text)")
    }
}
