import Foundation
import TestSupport
import Testing

/// Service-to-service notifications: subscriptions, service order, never re-entrant.
// A time limit: these tests start processes (a hang must fail the test, not stall the run).
@Suite(.timeLimit(.minutes(10))) struct BusTests {
    private let events = "SH_EVENTS_LIFECYCLE|SH_EVENT_BIT(SH_EVENT_NOTIFICATION)"

    @Test func ctlPost_reachesSubscribersInServiceOrder() throws {
        let host = try RunningHost()
        try host.probe("a", ["PROBE_ID=\"test.a\"", "PROBE_EVENTS=\(events)", "PROBE_SUBSCRIBE=\"queue.enqueue\""])
        try host.probe(
            "b",
            ["PROBE_ID=\"test.b\"", "PROBE_EVENTS=\(events)", "PROBE_SUBSCRIBE=\"queue.enqueue\"", "PROBE_PRIORITY=1"])
        try host.probe("c", ["PROBE_ID=\"test.c\"", "PROBE_EVENTS=\(events)", "PROBE_SUBSCRIBE=\"other\""])
        try host.start()
        let (status, reply) = try host.ctlJSON("post", "queue.enqueue", #"{"item":"x"}"#)
        #expect(status == 0)
        #expect(reply["receivers"] as? [String] == ["test.b", "test.a"])
        #expect(try host.ctl("post", "nobody.listens").status == 3)
        let notifications = host.stop().records.probe(8)
        #expect(notifications.map(\.source) == ["test.b", "test.a"])
        // The payload as text and as the host's tape (sh_notification v2: 3 nodes, first key "item").
        #expect(
            notifications.first?.message.contains(#"name=queue.enqueue sender=host nodes=3 key=item json={"item":"x"}"#)
                == true)
    }

    /// A C service reads a notification's tape (sh_notification v2) in process and in a
    /// worker; a payload that is not JSON arrives as posted, without a tape, and is logged.
    @Test(arguments: [[], ["--isolation", "process"]])
    func aCServiceReadsTheNotificationsTape(isolation: [String]) throws {
        let host = try RunningHost()
        try host.probe(
            "a",
            [
                "PROBE_ID=\"test.a\"", "PROBE_EVENTS=\(events)", "PROBE_SUBSCRIBE=\"*\"",
                "PROBE_POST_ON_KIND=SH_EVENT_DID_BECOME_ACTIVE", "PROBE_POST_NAME=\"a.ready\"",
            ])
        try host.probe("b", ["PROBE_ID=\"test.b\"", "PROBE_EVENTS=\(events)", "PROBE_SUBSCRIBE=\"*\""])
        try host.start(isolation)
        #expect(try host.ctl("post", "list", #"{"z":[1,2,{"k":null}],"a":"\u00e9"}"#).status == 0)
        let records = host.stop().records
        let notifications = records.probe(8).filter { $0.source == "test.b" }.map(\.message)
        // Posted by test.a (C): {"from":"test.a"} is 3 nodes.
        #expect(
            notifications.contains {
                $0.hasSuffix(#"name=a.ready sender=test.a nodes=3 key=from json={"from":"test.a"}"#)
            }, "\(notifications)")
        // Posted by the host: keys sorted ("a" first), 10 nodes: the object, "a", "é", "z", the array, 1, 2, {"k": null} (3).
        #expect(
            notifications.contains {
                $0.hasSuffix(#"name=list sender=host nodes=10 key=a json={"a":"é","z":[1,2,{"k":null}]}"#)
            }, "\(notifications)")
    }

    @Test func aPostDuringAnEvent_isDeliveredAfterIt_neverToThePoster() throws {
        let host = try RunningHost()
        try host.probe(
            "a",
            [
                "PROBE_ID=\"test.a\"", "PROBE_EVENTS=\(events)", "PROBE_SUBSCRIBE=\"*\"", "PROBE_PRIORITY=2",
                "PROBE_POST_ON_KIND=SH_EVENT_DID_BECOME_ACTIVE", "PROBE_POST_NAME=\"a.ready\"",
            ])
        try host.probe(
            "b", ["PROBE_ID=\"test.b\"", "PROBE_EVENTS=\(events)", "PROBE_SUBSCRIBE=\"*\"", "PROBE_PRIORITY=1"])
        try host.start()
        _ = host.stop()
        // test.a posts inside didBecomeActive; test.b still gets didBecomeActive first.
        #expect(
            Array(host.events.prefix(7)) == [
                "willFinishLaunching test.a", "willFinishLaunching test.b", "didFinishLaunching test.a",
                "didFinishLaunching test.b", "didBecomeActive test.a", "didBecomeActive test.b", "notification test.b",
            ])
    }
}
