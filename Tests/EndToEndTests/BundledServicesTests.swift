import Foundation
import TestSupport
import Testing

/// The bundled services (Plugins/) driven through `host ctl`, as a new user would.
// A time limit: these tests start processes (a hang must fail the test, not stall the run).
@Suite(.timeLimit(.minutes(10))) struct BundledServicesTests {
    private func host(_ extra: [String] = []) throws -> RunningHost {
        let host = try RunningHost()
        for name in ["Logger", "Uptime", "PushNotifications", "DeepLinks", "Analytics", "OfflineQueue", "Onboarding"] {
            try host.scratch.copy(try Repository.product("lib\(name).so"), to: "lib/lib\(name).so")
        }
        return host
    }

    @Test func coldLaunchPush_isHeldUntilActive_thenRoutedOnce() throws {
        let host = try host()
        let payload = try host.file("launch.json", #"{"aps":{"alert":"Hello"},"route":"myapp://item/7"}"#)
        try host.start(["--launch-notification", payload])
        let records = host.stop().records
        func index(_ source: String, _ message: String) -> Int? {
            records.firstIndex { $0.source == source && $0.event == nil && $0.message.hasPrefix(message) }
        }
        let held = index("dev.servicehost.push", "push: launched by a notification; holding it until the app is active")
        let routed = index("dev.servicehost.push", "push: routing myapp://item/7 (launch)")
        let active = index("dev.servicehost.logger", "didBecomeActive")
        #expect(held != nil && routed != nil && active != nil, "\(records.text)")
        if let held, let routed, let active { #expect(held < active && active < routed) }
        #expect(records.messages(from: "dev.servicehost.push").filter { $0.hasPrefix("push: routing") }.count == 1)
    }

    /// Logger's `"level"` setting, applied live by `ctl configure` (didChangeSettings): at
    /// `warn` its event lines (info) are not written; back at `info` they are, without a restart.
    @Test func logger_takesItsLevelLive() throws {
        let host = try host()
        let config = try host.file(
            "services.json", #"{"services": {"dev.servicehost.logger": {"settings": {"level": "warn"}}}}"#)
        try host.start(["--config", config])
        try host.ctl("background")
        let live = try host.ctlJSON("configure", "dev.servicehost.logger", #"{"level": "info"}"#)
        #expect(live.reply["reconfigured"] as? [String] == ["dev.servicehost.logger"], "\(live.reply)")
        try host.ctl("foreground")
        let lines = host.stop().records.messages(from: "dev.servicehost.logger")
        let change = try #require(
            lines.firstIndex { $0.hasPrefix("didChangeSettings from {\"level\":\"warn\"}") }, "\(lines)")
        #expect(
            !lines[..<change].contains { $0.hasPrefix("didBecomeActive") || $0.hasPrefix("didEnterBackground") },
            "\(lines)")
        #expect(lines[change...].contains { $0.hasPrefix("willEnterForeground") }, "\(lines)")
        #expect(lines.filter { $0.hasPrefix("willFinishLaunching") }.isEmpty)  // never restarted (nor written at warn)
    }

    /// Uptime (C) claims "uptime.report" with SH_CLAIM_METADATA (its metadata variable, no id)
    /// and reads the label from the notification's parsed tape (sh_notification v2).
    @Test func uptime_reportsOnANotification_readingItsTape() throws {
        let host = try host()
        try host.start()
        let (status, reply) = try host.ctlJSON("post", "uptime.report", #"{"n":1,"label":"checkpoint"}"#)
        #expect(status == 0)
        #expect((reply["receivers"] as? [String])?.contains("dev.servicehost.uptime") == true)
        let reports = host.stop().records.messages(from: "dev.servicehost.uptime")
        #expect(reports.contains { $0.hasPrefix("checkpoint: up ") && $0.contains(" s: active ") }, "\(reports)")
    }

    @Test func pushes_inEachState_andBackgroundFetch() throws {
        let host = try host()
        try host.start(["--fetch-timeout", "1"])
        let alert = try host.file(
            "alert.json", #"{"aps":{"alert":{"title":"Hi","body":"there"}},"route":"myapp://item/9"}"#)
        let active = try host.ctlJSON("push", alert)
        #expect(active.status == 0)
        #expect(active.reply["presentation"] as? [String] == ["banner", "list", "sound"])
        try host.ctl("background")
        #expect(try host.ctl("push", alert).status == 3)
        #expect(try host.ctl("push", "--tap", alert).status == 0)
        let fetch = { (mode: String) throws -> [String: Any] in
            try host.ctlJSON(
                "push", try host.file("f-\(mode).json", #"{"aps":{"content-available":1},"fetch":"\#(mode)"}"#)
            ).reply
        }
        #expect(try fetch("new")["result"] as? String == "newData")
        #expect(try fetch("none")["result"] as? String == "noData")
        #expect(try fetch("hang")["answers"] as? [String: String] == ["dev.servicehost.push": "timeout"])
        #expect(try fetch("twice")["result"] as? String == "newData")
        let records = host.stop().records
        let push = records.messages(from: "dev.servicehost.push")
        #expect(push.contains(#"push: banner "Hi: there""#), "\(push)")
        #expect(push.filter { $0.hasPrefix("push: routing myapp://item/9") }.count == 1)
        // The host's lines about the push service's answers: its missed deadline and its second call.
        #expect(
            records.named(.completionTimeout).map { [$0.level, $0.source, $0.string("event"), $0.string("deadline")] }
                == [["error", "dev.servicehost.push", "didReceiveRemoteNotification", "1"]], "\(records.text)")
        #expect(
            records.named(.completionTwice).map { [$0.level, $0.source, $0.string("event")] }
                == [["warn", "dev.servicehost.push", "didReceiveRemoteNotification"]])
    }

    @Test func deepLinks_ownMyapp_andAnalyticsCountsAtTermination() throws {
        let host = try host()
        try host.start()
        let item = try host.ctlJSON("open", "myapp://item/42")
        #expect(item.status == 0 && item.reply["handledBy"] as? String == "dev.servicehost.deeplinks")
        #expect(try host.ctl("open", "myapp://nowhere").status == 3)
        let activity = try host.ctlJSON("activity", "dev.servicehost.view-item", "--user-info", #"{"item":5}"#)
        #expect(activity.reply["handledBy"] as? String == "dev.servicehost.deeplinks")
        #expect(try host.ctl("post", "queue.enqueue", #"{"text":"hi"}"#).status == 0)
        #expect(try host.ctl("token", "0a0b").status == 0)
        let records = host.stop().records
        let deeplinks = records.messages(from: "dev.servicehost.deeplinks")
        #expect(deeplinks.contains("deeplinks: open item 42"), "\(deeplinks)")
        #expect(deeplinks.contains("deeplinks: no route for myapp://nowhere"))
        #expect(deeplinks.contains("deeplinks: continue item 5"))
        #expect(records.messages(from: "dev.servicehost.push").contains("push: device token 0a0b"))
        let analytics = records.messages(from: "dev.servicehost.analytics").first { $0.hasPrefix("analytics:") } ?? ""
        #expect(
            analytics.contains("didBecomeActive=1") && analytics.contains("notification:queue.enqueue=1")
                && analytics.contains("willTerminate=1"), "\(analytics)")
    }

    @Test func offlineQueue_survivesKillNine_andOnboardingActsOnlyOnFirstLaunch() throws {
        let host = try host()
        try host.start()
        for text in ["a", "b", "c"] {
            #expect(try host.ctl("post", "queue.enqueue", #"{"text":"\#(text)"}"#).status == 0)
        }
        let killed = host.wait(sending: SIGKILL).records  // no willTerminate, no save at exit
        #expect(
            killed.messages(from: "dev.servicehost.offline-queue").contains(
                #"offline-queue: enqueued {"text":"c"} (3 pending)"#))
        #expect(
            killed.messages(from: "dev.servicehost.onboarding").contains(
                "onboarding: first launch: showing the welcome flow"))

        try host.start()
        #expect(try host.ctl("post", "queue.flush").status == 0)
        let second = host.stop().records
        let queue = second.messages(from: "dev.servicehost.offline-queue")
        #expect(queue.contains("offline-queue: restored 3 item(s)"), "\(second.text)")
        #expect(queue.contains("offline-queue: sent 3 item(s)"))
        #expect(
            !second.messages(from: "dev.servicehost.onboarding").contains { $0.hasPrefix("onboarding: first launch") })

        try host.start()
        #expect(
            host.stop().records.messages(from: "dev.servicehost.offline-queue").contains(
                "offline-queue: restored 0 item(s)"))
    }

    /// Seed 002's diary app: the permission prompt at launch, posts queued offline and sent
    /// once the network is back, and a tapped push that opens its screen.
    @Test(.timeLimit(.minutes(10)))
    func diaryApp_queuesOffline_flushesWhenReachable_andATappedPushOpensItsScreen() throws {
        let host = try host()
        try host.start(["--notification-authorization", "prompt"])
        #expect(try host.ctl("post", "queue.enqueue", #"{"text":"a rainy day"}"#).status == 0)
        let reachable = try host.ctlJSON("post", "network.reachable")
        #expect((reachable.reply["receivers"] as? [String])?.contains("dev.servicehost.offline-queue") == true)
        #expect(try host.ctlJSON("authorization", "denied").reply["receivers"] as? [String] == ["dev.servicehost.push"])
        try host.ctl("background")
        let push = try host.file("tap.json", #"{"aps":{"alert":"A friend wrote"},"route":"myapp://item/42"}"#)
        #expect(try host.ctl("push", "--tap", push).status == 0)
        let records = host.stop().records
        // Whether `source` wrote an info line of its own starting with `text`.
        func said(_ source: String, _ text: String) -> Bool {
            records.contains {
                $0.level == "info" && $0.source == source && $0.event == nil && $0.message.hasPrefix(text)
            }
        }
        #expect(said("dev.servicehost.push", "push: authorization notDetermined"), "\(records.text)")
        #expect(said("dev.servicehost.push", "push: authorization denied: open the settings to turn notifications on"))
        let flushing = said("dev.servicehost.offline-queue", "offline-queue: network reachable: flushing")
        let sent = said("dev.servicehost.offline-queue", "offline-queue: sent 1 item(s)")
        #expect(flushing && sent, "\(records.text)")
        // The push's route reaches DeepLinks through the bus, which opens the screen.
        #expect(said("dev.servicehost.deeplinks", "deeplinks: open item 42 (push)"), "\(records.text)")
    }
}
