import Foundation
import TestSupport
import Testing

/// Lazy services (`SH_META_SERVICE_LAZY`, `"activation": "lazy"`): not opened at start, opened
/// by the first event they would be asked for, which then reaches them in their place in the
/// order, exactly as if they had been eager.
// A time limit: these tests start processes (a hang must fail the test, not stall the run).
@Suite(.timeLimit(.minutes(10))) struct LazyActivationTests {
    private let urlEvents = "SH_EVENTS_LIFECYCLE|SH_EVENT_BIT(SH_EVENT_OPEN_URL)|SH_EVENT_BIT(SH_EVENT_NOTIFICATION)"
    private let lazyFlag = UInt32(8)  // SH_LAUNCH_LAZY
    private let restartFlag = UInt32(4)  // SH_LAUNCH_RESTART

    /// Three services claim `myapp`; the middle one is lazy or not. What the URL and the
    /// notification do, and who hears them in which order, must not depend on it.
    private func scenario(lazyByConfiguration lazy: Bool, isolation: Bool = false) throws -> (
        replies: [[String: Any]], trace: [String], host: RunningHost
    ) {
        let host = try RunningHost()
        try host.probe(
            "a",
            [
                "PROBE_ID=\"test.first\"", "PROBE_EVENTS=\(urlEvents)", "PROBE_PRIORITY=10", "PROBE_ANSWER=SH_FALSE",
                "PROBE_URL_CLAIM=\"myapp\"", "PROBE_SUBSCRIBE=\"sync\"",
            ])
        try host.probe(
            "b",
            [
                "PROBE_ID=\"test.lazy\"", "PROBE_EVENTS=\(urlEvents)", "PROBE_PRIORITY=5", "PROBE_URL_CLAIM=\"myapp\"",
                "PROBE_SUBSCRIBE=\"sync\"",
            ])
        try host.probe(
            "c",
            [
                "PROBE_ID=\"test.last\"", "PROBE_EVENTS=\(urlEvents)", "PROBE_URL_CLAIM=\"myapp\"",
                "PROBE_SUBSCRIBE=\"sync\"",
            ])
        // The same list either way (a listed service starts before unlisted ones).
        let activation = lazy ? "lazy" : "eager"
        let config = try host.file(
            "services.json",
            #"{"services": {"test.first": {}, "test.lazy": {"activation": "\#(activation)"}, "test.last": {}}}"#)
        try host.start(["--config", config] + (isolation ? ["--isolation", "process"] : []))
        var replies: [[String: Any]] = []
        replies.append(try host.ctlJSON("open", "myapp://item/1").reply)
        replies.append(try host.ctlJSON("post", "sync", #"{"n":1}"#).reply)
        replies.append(try host.ctlJSON("open", "myapp://item/2").reply)
        // Only the events that reached services after start: the launch of a lazy service
        // comes later, by design, so the comparison is of what the events did.
        let trace = host.events.filter { $0.hasPrefix("openURL ") || $0.hasPrefix("notification ") }
        return (replies, trace, host)
    }

    private func summary(_ replies: [[String: Any]]) -> [String] {
        replies.map { reply in
            "\(reply["handledBy"] as? String ?? "-") \((reply["receivers"] as? [String] ?? []).joined(separator: ","))"
        }
    }

    @Test func lazyAndEager_giveTheSameAnswersAndTheSameOrder() throws {
        let eager = try scenario(lazyByConfiguration: false)
        let lazy = try scenario(lazyByConfiguration: true)
        #expect(
            summary(eager.replies) == [
                "test.lazy test.first,test.lazy", "- test.first,test.lazy,test.last", "test.lazy test.first,test.lazy",
            ])
        #expect(summary(lazy.replies) == summary(eager.replies))
        #expect(lazy.trace == eager.trace)
        #expect(lazy.trace.count == 7, "\(lazy.trace)")
        eager.host.stop()
        let records = lazy.host.stop().records
        // Opened once, by the first URL, launched with SH_LAUNCH_LAZY (not as a restart).
        let activated = records.named(.serviceActivated)
        #expect(
            activated.map { [$0.string("service"), $0.string("trigger")] } == [["test.lazy", "URL myapp://item/1"]])
        let launches = records.probe(1, 2).filter { $0.source == "test.lazy" }
        #expect(launches.count == 2)
        #expect(
            launches.allSatisfy { $0.launchFlags.map { $0 & lazyFlag != 0 && $0 & restartFlag == 0 } == true },
            "\(launches)")
    }

    @Test func aLazyService_isListedNotLoaded_untilItsFirstEvent_thenWhatOpenedIt() throws {
        let host = try RunningHost()
        // Lazy by its own metadata this time, not by the configuration.
        try host.probe(
            "links",
            [
                "PROBE_ID=\"test.links\"", "PROBE_EVENTS=\(urlEvents)", "PROBE_URL_CLAIM=\"myapp\"",
                "PROBE_FLAGS=SH_META_SERVICE_LAZY",
            ])
        try host.probe("other", ["PROBE_ID=\"test.other\""])
        try host.start()
        var listed = try listEntry(host, "test.links")
        #expect(listed?["state"] as? String == "lazy (not loaded)")
        #expect(listed?["activation"] as? String == "lazy")
        #expect(try listEntry(host, "test.other")?["activation"] as? String == "eager")
        #expect(try host.ctlJSON("open", "myapp://x").reply["handledBy"] as? String == "test.links")
        listed = try listEntry(host, "test.links")
        #expect(listed?["state"] as? String == "running")
        #expect(listed?["activatedBy"] as? String == "URL myapp://x")
        let records = host.stop().records
        // Nothing of it ran before the URL: its first line is its launch, after the host was active.
        let lines = records.filter { $0.source == "test.links" && $0.message.contains(": event ") }
        #expect(lines.first?.message.hasPrefix("probe test.links: event 1 ") == true, "\(lines.prefix(2))")
        let active = records.firstIndex { $0.event == LogEvent.hostReady.name }
        let firstOwn = records.firstIndex { $0.source == "test.links" }
        #expect(active != nil && firstOwn != nil && firstOwn! > active!)
    }

    /// A host whose services are all lazy has services: its ready line counts them and it does
    /// not warn that none loaded (a host with no plugin at all does).
    @Test func aHostOfLazyServicesOnly_countsThemInItsReadyLine_andDoesNotWarnOfNone() throws {
        let lazy = try RunningHost()
        for id in ["test.one", "test.two"] {
            try lazy.probe(
                id,
                [
                    "PROBE_ID=\"\(id)\"", "PROBE_EVENTS=\(urlEvents)", "PROBE_URL_CLAIM=\"myapp\"",
                    "PROBE_FLAGS=SH_META_SERVICE_LAZY",
                ])
        }
        try lazy.start()
        let records = lazy.stop().records
        let ready = try #require(records.named(.hostReady).first)
        #expect(ready.strings("services") == [])
        #expect(ready.int("lazy") == 2)
        #expect(records.named(.hostNoServices).isEmpty)

        let empty = try RunningHost()
        try empty.start()
        let emptyRecords = empty.stop().records
        #expect(emptyRecords.named(.hostReady).first?.int("lazy") == 0)
        #expect(emptyRecords.named(.hostNoServices).count == 1)
    }

    @Test func everyTriggerKind_opensOnlyItsService() throws {
        let host = try RunningHost()
        let activity = "SH_EVENTS_LIFECYCLE|SH_EVENT_BIT(SH_EVENT_CONTINUE_USER_ACTIVITY)"
        let notification = "SH_EVENTS_LIFECYCLE|SH_EVENT_BIT(SH_EVENT_NOTIFICATION)"
        let push = "SH_EVENTS_LIFECYCLE|SH_EVENT_BIT(SH_EVENT_WILL_PRESENT_NOTIFICATION)"
        let scene = "SH_EVENTS_LIFECYCLE|SH_EVENTS_SCENES"
        try host.probe(
            "activity",
            ["PROBE_ID=\"test.activity\"", "PROBE_EVENTS=\(activity)", "PROBE_ACTIVITY_CLAIM=\"com.example.view\""])
        try host.probe(
            "notification",
            ["PROBE_ID=\"test.notification\"", "PROBE_EVENTS=\(notification)", "PROBE_SUBSCRIBE=\"sync\""])
        try host.probe("push", ["PROBE_ID=\"test.push\"", "PROBE_EVENTS=\(push)", "PROBE_RESULT=SH_PRESENT_BANNER"])
        try host.probe("car", ["PROBE_ID=\"test.car\"", "PROBE_EVENTS=\(scene)", "PROBE_SCENE_ROLE=\"car\""])
        try host.probe(
            "manual", ["PROBE_ID=\"test.manual\"", "PROBE_EVENTS=\(notification)", "PROBE_SUBSCRIBE=\"never\""])
        let ids = ["test.activity", "test.notification", "test.push", "test.car", "test.manual"]
        let config = try host.file(
            "services.json",
            #"{"services": {"# + ids.map { #""\#($0)": {"activation": "lazy"}"# }.joined(separator: ",") + "}}")
        try host.start(["--config", config])
        func opened() throws -> [String: String] {
            let list = try host.ctlJSON("list").reply["services"] as? [[String: Any]] ?? []
            return Dictionary(
                uniqueKeysWithValues: list.compactMap { entry in
                    (entry["activatedBy"] as? String).map { (entry["id"] as! String, $0) }
                })
        }
        #expect(try opened().isEmpty)
        #expect(try host.ctlJSON("activity", "com.example.view").reply["handledBy"] as? String == "test.activity")
        #expect(try opened() == ["test.activity": "activity com.example.view"])
        #expect(try host.ctlJSON("post", "sync").reply["receivers"] as? [String] == ["test.notification"])
        #expect(try opened()["test.notification"] == "notification sync")
        try host.ctl("authorization", "authorized")
        #expect(
            try host.ctlJSON("push", try host.file("p.json", #"{"aps":{"alert":"hi"}}"#)).reply["answers"]
                as? [String: String] == ["test.push": "banner"])
        #expect(try opened()["test.push"] == "push")
        // A main scene does not open a service of the car role; a car scene does.
        #expect(try host.ctl("scene", "connect", "main", "--role", "main").status == 0)
        #expect(try opened()["test.car"] == nil)
        #expect(try host.ctl("scene", "connect", "car", "--role", "car").status == 0)
        #expect(try opened()["test.car"] == "scene car")
        #expect(try opened()["test.manual"] == nil)
        #expect(try host.ctl("service", "start", "test.manual").status == 0)
        #expect(try opened()["test.manual"] == "host ctl service start")
        #expect(try opened().count == ids.count)
        let records = host.stop().records
        #expect(Set(records.named(.serviceActivated).compactMap { $0.string("service") }) == Set(ids))
    }

    @Test func lifecycleOnly_cannotBeLazy_andIsOpenedAtStartWithAWarning() throws {
        let host = try RunningHost()
        try host.probe("a", ["PROBE_ID=\"test.plain\"", "PROBE_FLAGS=SH_META_SERVICE_LAZY"])
        try host.start()
        #expect(try listEntry(host, "test.plain")?["state"] as? String == "running")
        let refused = host.stop().records.named(.serviceLazyRefused)
        #expect(
            refused.map { [$0.level, $0.string("service"), $0.string("reason")] } == [
                ["warn", "test.plain", "lifecycleOnly"]
            ])
    }

    @Test func aLazyServiceAnEagerOneRequires_isOpenedAtStart() throws {
        let host = try RunningHost()
        try host.probe("a", ["PROBE_ID=\"test.base\"", "PROBE_EVENTS=\(urlEvents)", "PROBE_URL_CLAIM=\"myapp\""])
        try host.probe("b", ["PROBE_ID=\"test.user\""])
        let config = try host.file(
            "services.json",
            #"{"services": {"test.base": {"activation": "lazy"}, "test.user": {"requires": ["test.base"]}}}"#)
        try host.start(["--config", config])
        #expect(try listEntry(host, "test.base")?["state"] as? String == "running")
        let refused = host.stop().records.named(.serviceLazyRefused)
        #expect(
            refused.map { [$0.string("service"), $0.string("reason"), $0.string("requiredBy")] } == [
                ["test.base", "requiredBy", "test.user"]
            ])
    }

    @Test func isolated_lazyService_opensInAWorker_withTheSameAnswers() throws {
        let eager = try scenario(lazyByConfiguration: false, isolation: true)
        let lazy = try scenario(lazyByConfiguration: true, isolation: true)
        #expect(summary(lazy.replies) == summary(eager.replies))
        #expect(lazy.trace == eager.trace)
        #expect(try listEntry(lazy.host, "test.lazy")?["activatedBy"] as? String == "URL myapp://item/1")
        eager.host.stop()
        lazy.host.stop()
    }

    @Test func configuration_rejectsAnUnknownActivation_namingTheKey() throws {
        let host = try RunningHost()
        try host.probe("a", ["PROBE_ID=\"test.a\""])
        let config = try host.file("services.json", #"{"services": {"test.a": {"activation": "lazzy"}}}"#)
        try host.start(["--config", config], wait: false)
        let result = host.wait()
        #expect(result.status == 2)
        #expect(result.stderr.contains("services.test.a.activation"))
    }

    /// Issue 36 item 9: a request to a lazy answerer made during willTerminate does not open
    /// it (it would run with no launch before and no willTerminate after): it fails, saying why.
    @Test func aRequestDuringWillTerminate_doesNotOpenALazyAnswerer_andFailsWithAReason() throws {
        let host = try RunningHost()
        let willTerminate = 7  // SH_EVENT_WILL_TERMINATE
        try host.probe(
            "asker",
            ["PROBE_ID=\"test.asker\"", "PROBE_ASK_ON_KIND=\(willTerminate)", "PROBE_ASK_NAME=\"geo.locate\""])
        try host.probe(
            "geo",
            [
                "PROBE_ID=\"test.geo\"", "PROBE_EVENTS=(SH_EVENTS_LIFECYCLE|SH_EVENT_BIT(SH_EVENT_REQUEST))",
                "PROBE_ANSWERS=\"geo.locate\"", "PROBE_FLAGS=SH_META_SERVICE_LAZY",
            ])
        try host.start()
        #expect(try listEntry(host, "test.geo")?["state"] as? String == "lazy (not loaded)")
        let result = host.stop()
        #expect(result.status == 0)
        let records = result.records
        // Never opened: no activation, and not one line of its own.
        #expect(records.named(.serviceActivated).isEmpty)
        #expect(records.filter { $0.source == "test.geo" }.isEmpty, "\(records.text)")
        let refused = records.named(.requestRefused)
        #expect(
            refused.map { [$0.level, $0.source, $0.string("name"), $0.string("answerer")] } == [
                ["warn", "test.asker", "geo.locate", "test.geo"]
            ], "\(records.text)")
        // The asker is told: SH_ERROR (-1) with the reason, within its willTerminate.
        let replies = records.filter { $0.source == "test.asker" && $0.message.hasPrefix("probe test.asker: reply ") }
        #expect(replies.count == 1)
        let reply = replies.first.map { String($0.message.dropFirst("probe test.asker: reply ".count)) } ?? ""
        #expect(reply.hasPrefix("-1 "), "\(reply)")
        let json = (try? JSONSerialization.jsonObject(with: Data(reply.dropFirst(3).utf8))) as? [String: Any]
        #expect(json?["error"] as? String == refused.first?.string("reason"))
    }

    /// Issue 36 item 10: a woken lazy service whose lazy requirement's file fails to open is not
    /// attached (`requirement-failed`, as at start); and requirements are opened, attached and
    /// launched before their dependents.
    @Test func aWokenServiceWhoseLazyRequirementFailsToOpen_isNotAttached() throws {
        let host = try RunningHost()
        let notification = "SH_EVENTS_LIFECYCLE|SH_EVENT_BIT(SH_EVENT_NOTIFICATION)"
        try host.probe(
            "app", ["PROBE_ID=\"test.app\"", "PROBE_EVENTS=\(urlEvents)", "PROBE_URL_CLAIM=\"myapp\""])
        // Its file references a symbol nothing defines: inspection passes, dlopen fails.
        try host.probe(
            "base",
            ["PROBE_ID=\"test.base\"", "PROBE_EVENTS=\(notification)", "PROBE_SUBSCRIBE=\"sync\"", "PROBE_UNDEFINED"])
        let config = try host.file(
            "services.json",
            #"{"services": {"test.base": {"activation": "lazy"}, "test.app": {"activation": "lazy", "requires": ["test.base"]}}}"#
        )
        try host.start(["--config", config])
        let reply = try host.ctlJSON("open", "myapp://x").reply
        #expect(reply["handledBy"] == nil, "\(reply)")
        #expect(try listEntry(host, "test.app") == nil)
        let all = try host.ctlJSON("list", "--all").reply
        let skipped = (all["skipped"] as? [[String: Any]]) ?? []
        #expect(
            skipped.contains {
                $0["services"] as? [String] == ["test.app"] && $0["reason"] as? String == "requirement-failed"
            },
            "\(all)")
        let records = host.stop().records
        #expect(records.named(.serviceActivated).isEmpty)
        #expect(
            records.named(.serviceRequirementFailed).map { [$0.string("service"), $0.string("requires")] } == [
                ["test.app", "test.base"]
            ])
        #expect(records.named(.loadFailed).count == 1)
        // The dependent ran no event.
        #expect(records.probe(1, 2, 3).filter { $0.source == "test.app" }.isEmpty)
    }

    @Test func aWokenService_opensAndLaunchesItsLazyRequirementFirst() throws {
        let host = try RunningHost()
        let notification = "SH_EVENTS_LIFECYCLE|SH_EVENT_BIT(SH_EVENT_NOTIFICATION)"
        try host.probe(
            "app", ["PROBE_ID=\"test.app\"", "PROBE_EVENTS=\(urlEvents)", "PROBE_URL_CLAIM=\"myapp\""])
        try host.probe(
            "base", ["PROBE_ID=\"test.base\"", "PROBE_EVENTS=\(notification)", "PROBE_SUBSCRIBE=\"sync\""])
        let config = try host.file(
            "services.json",
            #"{"services": {"test.base": {"activation": "lazy"}, "test.app": {"activation": "lazy", "requires": ["test.base"]}}}"#
        )
        try host.start(["--config", config])
        #expect(try host.ctlJSON("open", "myapp://x").reply["handledBy"] as? String == "test.app")
        let records = host.stop().records
        #expect(records.named(.serviceActivated).map { $0.string("service") } == ["test.base", "test.app"])
        // Launched in start order: the requirement's willFinishLaunching comes first.
        #expect(records.probe(1).map(\.source) == ["test.base", "test.app"])
    }

    private func listEntry(_ host: RunningHost, _ id: String) throws -> [String: Any]? {
        (try host.ctlJSON("list").reply["services"] as? [[String: Any]])?.first { $0["id"] as? String == id }
    }
}
