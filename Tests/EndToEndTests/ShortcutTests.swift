import Foundation
import TestSupport
import Testing

/// Quick actions (issue 39 item 3): declared by a C claim, listed by `host inspect`, delivered
/// to their claimant warm (`host ctl action`, `host action`) and cold (`host action` with no
/// host running: `--launch-shortcut`), two claimants of one id reported by `host check`.
// A time limit: these tests start processes (a hang must fail the test, not stall the run).
@Suite(.timeLimit(.minutes(10))) struct ShortcutTests {
    private static let events = "SH_EVENTS_LIFECYCLE|SH_EVENT_BIT(SH_EVENT_PERFORM_ACTION_FOR_SHORTCUT_ITEM)"
    /// The kind's number, as the probe logs it.
    private static let kind = 44

    private func composer(_ host: RunningHost, priority: Int = 0) throws {
        try host.probe(
            "composer",
            [
                "PROBE_ID=\"test.composer\"", "PROBE_EVENTS=\(Self.events)", "PROBE_PRIORITY=\(priority)",
                "PROBE_SHORTCUT=\"compose New entry\"", "PROBE_SHORTCUT_ICON=\"compose document-new\"",
            ])
    }

    @Test func aCClaim_isListedByInspect_withItsTitleAndIcon() throws {
        let host = try RunningHost()
        try composer(host)
        let result = try Command.run(try Repository.product("host"), ["inspect", "--json", host.lib + "/composer.so"])
        #expect(result.status == 0, "\(result.stderr)")
        let files = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [[String: Any]])
        let service = try #require((files.first?["services"] as? [[String: Any]])?.first)
        let shortcuts = try #require(service["shortcuts"] as? [[String: Any]])
        #expect(shortcuts.count == 1)
        #expect(shortcuts.first?["id"] as? String == "compose")
        #expect(shortcuts.first?["title"] as? String == "New entry")
        #expect(shortcuts.first?["icon"] as? String == "document-new")
        #expect((service["events"] as? [String])?.contains("performActionForShortcutItem") == true)
    }

    @Test func ctlAction_goesToTheClaimantOnly_andAnUnclaimedIdExitsThree() throws {
        let host = try RunningHost()
        try composer(host)
        // Handles the event, claims another id and outranks the composer: never asked for compose.
        try host.probe(
            "other",
            [
                "PROBE_ID=\"test.other\"", "PROBE_EVENTS=\(Self.events)", "PROBE_PRIORITY=10",
                "PROBE_SHORTCUT=\"search\"",
            ])
        try host.start()
        let (status, reply) = try host.ctlJSON("action", "compose")
        #expect(status == 0, "\(reply)")
        #expect(reply["handledBy"] as? String == "test.composer")
        #expect(reply["receivers"] as? [String] == ["test.composer"])
        let unclaimed = try host.ctl("action", "nobody")
        #expect(unclaimed.status == 3, "\(unclaimed.stdout)\(unclaimed.stderr)")
        #expect(try host.ctl("action", "not/an/id").status == 1)
        let records = host.stop().records
        let delivered = records.probe(Self.kind)
        #expect(delivered.map(\.source) == ["test.composer"], "\(records.text)")
        #expect(delivered.first?.message.hasSuffix("shortcut=compose title=New entry launch=0") == true)
        #expect(records.named(.routeUnclaimed).map { $0.string("event") } == ["performActionForShortcutItem"])
    }

    @Test func hostAction_reachesARunningHost_andColdStartsOneWithLaunchShortcut() throws {
        let host = try RunningHost()
        try composer(host)
        let options = [
            "--plugins", host.lib, "--control", host.control, "--trace", host.tracePath, "--state-dir",
            host.stateDirectory, "--log-format", "json",
        ]
        // Warm: a host runs; `host action` asks it and exits as `host ctl action` would.
        try host.start()
        let warm = try Command.run(try Repository.product("host"), ["action", "compose"] + options)
        #expect(warm.status == 0, "\(warm.stdout)\(warm.stderr)")
        #expect(warm.stdout.contains("test.composer"))
        let warmRecords = host.stop().records
        #expect(
            warmRecords.probe(Self.kind).map { String($0.message.suffix(8)) } == ["launch=0"], "\(warmRecords.text)")

        // Cold: nothing listens, so `host action` becomes the host, launched with the action.
        try FileManager.default.removeItem(atPath: host.tracePath)
        let cold = try Command.start(try Repository.product("host"), ["action", "compose"] + options)
        #expect(eventually { (try? host.ctl("state").stdout.contains("state: active")) == true })
        #expect(
            eventually { host.events.contains { $0.hasPrefix("performActionForShortcutItem") } }, "\(host.events)")
        cold.send(SIGTERM)
        let coldResult = cold.wait()
        #expect(coldResult.status == 0, "\(coldResult.stderr)")
        let delivered = coldResult.records.probe(Self.kind)
        // Once, after the launch, flagged as the launch's.
        #expect(delivered.map { String($0.message.suffix(8)) } == ["launch=1"], "\(coldResult.stderr)")
        #expect(host.events.filter { $0.hasPrefix("performActionForShortcutItem") }.count == 1)
    }

    @Test func twoClaimantsOfOneId_areAWarningOfCheck_namingBoth() throws {
        let host = try RunningHost()
        try composer(host, priority: 10)
        try host.probe(
            "second",
            ["PROBE_ID=\"test.second\"", "PROBE_EVENTS=\(Self.events)", "PROBE_SHORTCUT=\"compose Write\""])
        let result = try Command.run(try Repository.product("host"), ["check", "--plugins", host.lib, "--json"])
        #expect(result.status == 1, "\(result.stdout)\(result.stderr)")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        let problems = report["problems"] as? [[String: Any]] ?? []
        #expect(problems.compactMap { $0["code"] as? String } == ["shortcut-claim-conflict"])
        #expect(problems.first?["service"] as? String == "test.second")
        #expect((problems.first?["message"] as? String ?? "").contains("test.composer"))
    }

    @Test func aMalformedClaim_isRefused_namingTheService() throws {
        let host = try RunningHost()
        try host.probe(
            "bad", ["PROBE_ID=\"test.bad\"", "PROBE_EVENTS=\(Self.events)", "PROBE_SHORTCUT=\"com.example/x Title\""])
        let result = try Command.run(try Repository.product("host"), ["inspect", "--json", host.lib + "/bad.so"])
        #expect(result.status == 1)
        let files = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [[String: Any]])
        #expect(files.first?["valid"] as? Bool == false)
        #expect((files.first?["reason"] as? String ?? "").contains("test.bad"))
    }
}
