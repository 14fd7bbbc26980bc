import Foundation
import TestSupport
import Testing

/// Pushes shown on the desktop (issue 39) through a real private `dbus-daemon --session` serving
/// `org.freedesktop.Notifications` with python3-dbusmock's `notification_daemon` template: the
/// real `host` binary and probe plugins, `Notify`'s arguments read from the mock's record of
/// calls, the user's click and dismissal emitted as the server's signals, the order asserted on
/// the probes' event lines and the host's structured log lines.
@Suite(.timeLimit(.minutes(10)), .enabled(if: DBusMock.installed, "needs dbus-daemon and python3-dbusmock"))
struct DesktopNotificationTests {
    static let alert =
        #"{"aps":{"alert":{"title":"New entry","subtitle":"from Ann","body":"Lunch at 1?"},"category":"message","sound":"default"},"id":7}"#
    static let categories = #"{"notificationCategories": {"message": [{"id": "reply", "title": "Reply"}]}}"#
    static let defaultAction = "com.apple.UNNotificationDefaultActionIdentifier"
    static let dismissAction = "com.apple.UNNotificationDismissActionIdentifier"

    /// A host with a probe answering willPresentNotification with `presentation`, its session
    /// bus `daemon`, notifications authorized.
    static func host(
        _ daemon: NotificationDaemon, presentation: String = "SH_PRESENT_BANNER", config: String = categories,
        extra: [String] = [], until state: String = "active"
    ) throws -> RunningHost {
        let host = try RunningHost()
        let events =
            "SH_EVENTS_LIFECYCLE|SH_EVENT_BIT(SH_EVENT_WILL_PRESENT_NOTIFICATION)"
            + "|SH_EVENT_BIT(SH_EVENT_DID_RECEIVE_NOTIFICATION_RESPONSE)"
        try host.probe("a", ["PROBE_ID=\"test.a\"", "PROBE_EVENTS=\(events)", "PROBE_RESULT=\(presentation)"])
        _ = try host.file("lib/services.json", config)
        try host.start(extra, until: state, environment: daemon.environment)
        try host.ctl("authorization", "authorized")  // as the user allowing notifications
        return host
    }

    /// The probe's lines: "KIND ACTION" for responses, "KIND" for the rest, from `kinds`.
    static func sequence(_ records: [LogRecord], _ kinds: Int...) -> [String] {
        records.filter { $0.event == nil && $0.source == "test.a" }.compactMap { record in
            let prefix = "probe test.a: event "
            guard record.message.hasPrefix(prefix) else { return nil }
            let kind = record.message.dropFirst(prefix.count).prefix { $0.isNumber }
            guard let number = Int(kind), kinds.contains(number) else { return nil }
            guard number == 11, let range = record.message.range(of: "action=") else { return String(kind) }
            return "11 " + record.message[range.upperBound...].prefix { $0 != " " }
        }
    }

    static func responded(_ host: RunningHost, count: Int) -> Bool {
        eventually(within: 30) {
            host.events.filter { $0 == "didReceiveNotificationResponse test.a" }.count == count
        }
    }

    @Test(arguments: ["in-process", "process"])
    func aPushWhileActive_isShownOnce_andItsActionIsTheResponse(isolation: String) throws {
        let scratch = try Scratch()
        let daemon = try NotificationDaemon(in: scratch)
        let host = try Self.host(daemon, extra: ["--isolation", isolation])
        let (status, reply) = try host.ctlJSON("push", try host.file("p.json", Self.alert))
        #expect(status == 0)
        #expect(reply["presentation"] as? [String] == ["banner"])
        #expect(eventually(within: 30) { (try? daemon.notifyCalls().count) == 1 })
        let notify = try #require(try daemon.notifyCalls().first)
        #expect(notify.appName == "ServiceHost" && notify.replacesID == 0 && notify.timeout == -1)
        #expect(notify.summary == "New entry")
        #expect(notify.body == "from Ann\nLunch at 1?")
        #expect(notify.actions.enumerated().filter { $0.offset % 2 == 0 }.map(\.element) == ["default", "reply"])
        #expect(notify.actions.last == "Reply")
        // .banner without .sound and .list: silent, and kept out of the server's list.
        #expect(notify.hints == ["suppress-sound": "1", "transient": "1"])

        try daemon.invokeAction(1, "reply")
        #expect(Self.responded(host, count: 1))
        // The server closes a notification after its action: that is not a dismissal. (The
        // second notification's click, which the bus delivers after it, marks it processed.)
        try daemon.close(1, reason: 2)
        try host.ctl("push", try host.file("p.json", Self.alert))
        #expect(eventually(within: 30) { (try? daemon.notifyCalls().count) == 2 })
        try daemon.invokeAction(2, "default")
        #expect(Self.responded(host, count: 2))
        #expect(host.stop().status == 0)
        let records = host.records
        #expect(records.named(.sourceOn).map { $0.string("source") }.contains("notifications"))
        let shown = records.named(.desktopNotificationShown)
        #expect(shown.map { $0.int("id") } == [1, 2])
        #expect(shown.first?.string("actions") == "reply")
        #expect(
            records.named(.desktopNotificationResponse).map { $0.string("action") } == ["reply", Self.defaultAction])
        #expect(Self.sequence(records, 10, 11) == ["10", "11 reply", "10", "11 \(Self.defaultAction)"])
    }

    /// A server without the `actions` capability shows no buttons: none is sent, not even the
    /// default one; without `body-markup` the body goes as it is.
    @Test func aServerWithoutActions_isSentNone_andABodyWithoutMarkupAsItIs() throws {
        let scratch = try Scratch()
        let daemon = try NotificationDaemon(in: scratch, capabilities: ["body"])
        let host = try Self.host(daemon)
        let alert = Self.alert.replacingOccurrences(of: "Lunch at 1?", with: "Fish & <chips>")
        try host.ctl("push", try host.file("p.json", alert))
        #expect(eventually(within: 30) { (try? daemon.notifyCalls().count) == 1 })
        let notify = try #require(try daemon.notifyCalls().first)
        #expect(notify.actions == [])
        #expect(notify.body == "from Ann\nFish & <chips>")
        host.stop()
        #expect(host.records.named(.desktopNotificationShown).map { $0.string("actions") } == [""])
    }

    /// A server that answers late (being activated) stalls nothing: the host serves meanwhile,
    /// says the source is on once the server answered, and shows then the push made while it
    /// waited. (Started synchronously, the host answered nothing until its start's calls gave up.)
    @Test func aServerAnsweringLate_stallsNothing_andThePushMadeMeanwhileIsShownThen() throws {
        let scratch = try Scratch()
        let daemon = try NotificationDaemon(in: scratch)
        let gate = scratch.file("gate")
        try daemon.answerServerInformation(once: gate)
        let host = try Self.host(daemon)
        let (status, reply) = try host.ctlJSON("push", try host.file("p.json", Self.alert))
        #expect(status == 0 && reply["presentation"] as? [String] == ["banner"])
        _ = try scratch.write("gate", [])
        #expect(eventually(within: 30) { (try? daemon.notifyCalls().count) == 1 })
        #expect(try daemon.notifyCalls().first?.summary == "New entry")
        host.stop()
        let on = host.records.named(.sourceOn).filter { $0.string("source") == "notifications" }
        #expect(on.map { $0.string("reason") } == ["mock-notify 1.0 on the session bus"])
        #expect(host.records.named(.desktopNotificationShown).count == 1)
    }

    /// `host check` lists the source: on with the server's name, off as the configuration says.
    @Test func hostCheck_listsTheSource() throws {
        let scratch = try Scratch()
        let daemon = try NotificationDaemon(in: scratch)
        let lib = try scratch.folder("lib")
        try Plugins.probe(lib + "/a.so", ["PROBE_ID=\"test.a\""])
        func source(_ config: String) throws -> [String: Any]? {
            _ = try scratch.write("lib/services.json", Array(config.utf8))
            let result = try Command.run(
                try Repository.product("host"), ["check", "--json", "--plugins", lib], environment: daemon.environment)
            let report = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
            let sources = report?["sources"] as? [[String: Any]] ?? []
            return sources.first { $0["source"] as? String == "notifications" }
        }
        let on = try source(Self.categories)
        #expect(on?["on"] as? Bool == true)
        #expect(on?["reason"] as? String == "mock-notify 1.0 on the session bus")
        #expect(try source(#"{"notifications": "off"}"#)?["on"] as? Bool == false)
    }

    @Test func aPushWithSoundAndList_asksForTheSound_andADefaultSoundIsTheThemes() throws {
        let scratch = try Scratch()
        let daemon = try NotificationDaemon(in: scratch)
        let host = try Self.host(daemon, presentation: "SH_PRESENT_BANNER|SH_PRESENT_LIST|SH_PRESENT_SOUND")
        try host.ctl("push", try host.file("p.json", Self.alert))
        #expect(eventually(within: 30) { (try? daemon.notifyCalls().count) == 1 })
        #expect(try daemon.notifyCalls().first?.hints == ["sound-name": "message-new-instant"])
        host.stop()
    }

    /// UIKit's order: a tap on a notification of an app in the background brings it to the
    /// foreground (willEnterForeground, didBecomeActive), then the response arrives.
    @Test func inTheBackground_theDesktopShowsTheAlert_andAClickForegroundsFirst() throws {
        let scratch = try Scratch()
        let daemon = try NotificationDaemon(in: scratch)
        let host = try Self.host(daemon)
        try host.ctl("background")
        let result = try host.ctl("push", try host.file("p.json", Self.alert))
        #expect(result.status == 3)  // no service heard of it: the system's to show
        #expect(eventually(within: 30) { (try? daemon.notifyCalls().count) == 1 })
        #expect(try daemon.notifyCalls().first?.summary == "New entry")
        try daemon.invokeAction(1, "default")
        #expect(Self.responded(host, count: 1))
        #expect(try host.ctl("state").stdout.contains("state: active"))
        host.stop()
        let sequence = Self.sequence(host.records, 3, 5, 6, 10, 11).drop { $0 != "5" }
        // (Termination, after, moves it to the background again.)
        #expect(Array(sequence.prefix(4)) == ["5", "6", "3", "11 \(Self.defaultAction)"])
    }

    @Test func aDismissal_isTheDismissResponse_andOtherClosesAreNothing() throws {
        let scratch = try Scratch()
        let daemon = try NotificationDaemon(in: scratch)
        let host = try Self.host(daemon)
        let payload = try host.file("p.json", Self.alert)
        try host.ctl("push", payload)
        try host.ctl("push", payload)
        #expect(eventually(within: 30) { (try? daemon.notifyCalls().count) == 2 })
        try daemon.close(1, reason: 1)  // expired
        try daemon.close(2, reason: 2)  // dismissed by the user
        #expect(Self.responded(host, count: 1))
        try daemon.invokeAction(1, "default")  // forgotten once closed
        // A third, dismissed after that click on the bus, marks it processed.
        try host.ctl("push", payload)
        #expect(eventually(within: 30) { (try? daemon.notifyCalls().count) == 3 })
        try daemon.close(3, reason: 2)
        #expect(Self.responded(host, count: 2))
        host.stop()
        #expect(host.records.named(.desktopNotificationResponse).map { $0.int("id") } == [2, 3])
        #expect(Self.sequence(host.records, 11) == ["11 \(Self.dismissAction)", "11 \(Self.dismissAction)"])
    }

    @Test func turnedOff_inTheConfigurationOrOnTheCommandLine_nothingIsShown() throws {
        for (config, extra, reason) in [
            (#"{"notifications": "off"}"#, [String](), "turned off (\"notifications\""),
            (Self.categories, ["--source", "notifications=off"], "turned off (--source"),
        ] {
            let scratch = try Scratch()
            let daemon = try NotificationDaemon(in: scratch)
            let host = try Self.host(daemon, config: config, extra: extra)
            let (status, _) = try host.ctlJSON("push", try host.file("p.json", Self.alert))
            #expect(status == 0)
            #expect(host.stop().status == 0)
            #expect(try daemon.notifyCalls().isEmpty)
            let off = host.records.named(.sourceOff).filter { $0.string("source") == "notifications" }
            #expect(off.count == 1)
            #expect(off.first?.string("reason")?.hasPrefix(reason) == true, "\(off.first?.string("reason") ?? "")")
        }
    }

    @Test func onOnTheCommandLine_winsOverTheConfiguration() throws {
        let scratch = try Scratch()
        let daemon = try NotificationDaemon(in: scratch)
        let host = try Self.host(daemon, config: #"{"notifications": "off"}"#, extra: ["--source", "notifications=on"])
        try host.ctl("push", try host.file("p.json", Self.alert))
        #expect(eventually(within: 30) { (try? daemon.notifyCalls().count) == 1 })
        host.stop()
        #expect(host.records.named(.sourceOn).contains { $0.string("source") == "notifications" })
    }

    @Test func withoutASessionBus_theSourceSaysWhyOnce_andPushesAreAnsweredAsBefore() throws {
        let scratch = try Scratch()
        let host = try RunningHost()
        try host.probe(
            "a",
            [
                "PROBE_ID=\"test.a\"",
                "PROBE_EVENTS=SH_EVENTS_LIFECYCLE|SH_EVENT_BIT(SH_EVENT_WILL_PRESENT_NOTIFICATION)",
                "PROBE_RESULT=SH_PRESENT_BANNER",
            ])
        try host.start(environment: ["DBUS_SESSION_BUS_ADDRESS": "unix:path=\(scratch.file("absent.sock"))"])
        try host.ctl("authorization", "authorized")
        #expect(try host.ctlJSON("push", try host.file("p.json", Self.alert)).status == 0)
        #expect(host.stop().status == 0)
        let off = host.records.named(.sourceOff).filter { $0.string("source") == "notifications" }
        #expect(off.count == 1)
        #expect(off.first?.string("reason")?.hasPrefix("no session bus") == true)
        #expect(host.records.named(.desktopNotificationShown).isEmpty)
    }
}
