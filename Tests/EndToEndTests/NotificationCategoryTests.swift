import Foundation
import TestSupport
import Testing

/// Notification categories a service registers at run time (issue 39: extension
/// `dev.servicehost.notifications/1`, UIKit's `setNotificationCategories`), shown as the
/// buttons of the desktop's notifications: a real private `dbus-daemon --session` with
/// dbusmock's notification server, a C service registering them in didFinishLaunching, in
/// process and in a worker.
@Suite(.timeLimit(.minutes(10)), .enabled(if: DBusMock.installed, "needs dbus-daemon and python3-dbusmock"))
struct NotificationCategoryTests {
    /// A host whose `test.categories` registers `json`, with `config` as services.json, in the
    /// background (where a push with an alert is shown without any service answering).
    static func host(
        _ daemon: NotificationDaemon, json: String, config: String, isolation: String = "in-process"
    ) throws -> RunningHost {
        let host = try RunningHost()
        let literal = "\"" + json.replacingOccurrences(of: "\"", with: "\\\"") + "\""
        try Command.compileC(
            Repository.fixture("CPlugins/categories.c"), to: host.lib + "/categories.so",
            defines: ["CATEGORIES_JSON=\(literal)"])
        _ = try host.file("lib/services.json", config)
        try host.start(["--isolation", isolation], environment: daemon.environment)
        try host.ctl("authorization", "authorized")
        try host.ctl("background")
        return host
    }

    static func push(_ category: String) -> String {
        #"{"aps":{"alert":{"title":"Lunch?","body":"at 1"},"category":"\#(category)"}}"#
    }

    @Test(arguments: ["in-process", "process"])
    func aServicesCategories_areTheButtons_andTheConfigurationsWinForACategoryBothName(isolation: String) throws {
        let scratch = try Scratch()
        let daemon = try NotificationDaemon(in: scratch)
        let registered =
            #"{"invite": [{"id": "accept", "title": "Accept"}, {"id": "decline", "title": "Decline"}],"#
            + #" "message": [{"id": "later", "title": "Later"}]}"#
        let host = try Self.host(
            daemon, json: registered,
            config: #"{"notificationCategories": {"message": [{"id": "reply", "title": "Reply"}]}}"#,
            isolation: isolation)
        try host.ctl("push", try host.file("invite.json", Self.push("invite")))
        try host.ctl("push", try host.file("message.json", Self.push("message")))
        #expect(eventually(within: 30) { (try? daemon.notifyCalls().count) == 2 })
        let calls = try daemon.notifyCalls()
        #expect(
            calls.map(\.actions) == [
                ["default", "Open", "accept", "Accept", "decline", "Decline"], ["default", "Open", "reply", "Reply"],
            ])
        try daemon.invokeAction(1, "decline")
        // The click brings the app forward, then the response goes out.
        #expect(eventually(within: 30) { (try? host.ctl("state").stdout.contains("state: active")) == true })
        host.stop()
        let set = host.records.named(.notificationCategoriesSet)
        #expect(set.map { $0.string("service") } == ["test.categories"])
        #expect(set.first?.strings("categories") == ["invite", "message"], "\(host.records.text)")
        #expect(host.records.messages(from: "test.categories").contains("categories set 0"))
        #expect(host.records.named(.desktopNotificationResponse).map { $0.string("action") } == ["decline"])
    }

    /// A document the configuration would refuse is refused (SH_INVALID to the service), with
    /// the reason naming the fault; nothing registered.
    @Test func aBadDocument_isRefused_withItsReason() throws {
        let scratch = try Scratch()
        let daemon = try NotificationDaemon(in: scratch)
        let host = try Self.host(daemon, json: #"{"invite": [{"id": "default", "title": "Go"}]}"#, config: "{}")
        try host.ctl("push", try host.file("invite.json", Self.push("invite")))
        #expect(eventually(within: 30) { (try? daemon.notifyCalls().count) == 1 })
        #expect(try daemon.notifyCalls().first?.actions == ["default", "Open"])
        host.stop()
        let refused = host.records.named(.notificationCategoriesRefused)
        #expect(refused.map { $0.string("service") } == ["test.categories"])
        #expect(refused.first?.string("reason")?.contains("notificationCategories.invite[0].id") == true)
        #expect(host.records.messages(from: "test.categories").contains("categories set -3"))
        #expect(host.records.named(.notificationCategoriesSet).isEmpty)
    }
}
