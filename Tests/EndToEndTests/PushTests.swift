import Foundation
import TestSupport
import Testing

/// Push notifications by app state, completions, deadlines, and cold launch, through the
/// real binary and `host ctl`.
// A time limit: these tests start processes (a hang must fail the test, not stall the run).
@Suite(.timeLimit(.minutes(10))) struct PushTests {
    private let alert = #"{"aps":{"alert":{"title":"Hi","body":"there"}},"route":"myapp://item/7"}"#
    private let fetch = #"{"aps":{"content-available":1},"feed":"news"}"#

    @Test func active_willPresentAnswersAreUnited() throws {
        let host = try RunningHost()
        let events = "SH_EVENTS_LIFECYCLE|SH_EVENT_BIT(SH_EVENT_WILL_PRESENT_NOTIFICATION)"
        try host.probe("a", ["PROBE_ID=\"test.a\"", "PROBE_EVENTS=\(events)", "PROBE_RESULT=SH_PRESENT_BANNER"])
        try host.probe(
            "b", ["PROBE_ID=\"test.b\"", "PROBE_EVENTS=\(events)", "PROBE_RESULT=SH_PRESENT_SOUND|SH_PRESENT_LIST"])
        try host.start()
        try host.ctl("authorization", "authorized")  // as the user allowing notifications
        let (status, reply) = try host.ctlJSON("push", try host.file("p.json", alert))
        #expect(status == 0)
        #expect(reply["event"] as? String == "willPresentNotification")
        #expect(reply["presentation"] as? [String] == ["banner", "list", "sound"])
        #expect(reply["answers"] as? [String: String] == ["test.a": "banner", "test.b": "list+sound"])
        // The payload reached the service as text and as the host's parsed tape (11 nodes).
        let presented = host.stop().records.probe(10)
        #expect(presented.map(\.source) == ["test.a", "test.b"])
        #expect(
            presented.allSatisfy {
                $0.message.contains("nodes=11") && $0.message.contains(#""route":"myapp://item/7""#)
            },
            "\(presented)")
    }

    @Test func tap_deliversTheResponseWithItsAction_inAnyState() throws {
        let host = try RunningHost()
        let events = "SH_EVENTS_LIFECYCLE|SH_EVENT_BIT(SH_EVENT_DID_RECEIVE_NOTIFICATION_RESPONSE)"
        try host.probe("a", ["PROBE_ID=\"test.a\"", "PROBE_EVENTS=\(events)"])
        try host.start()
        let payload = try host.file("p.json", alert)
        try host.ctl("background")
        #expect(try host.ctl("push", "--tap", payload).status == 0)
        #expect(try host.ctl("push", "--tap", "reply", payload).status == 0)
        #expect(try host.ctl("push", "--tap", "dismiss", payload).status == 0)
        let responses = host.stop().records.probe(11).map(\.message)
        let actions = responses.map { $0.components(separatedBy: "action=").last?.prefix { $0 != " " } }
        #expect(
            actions == [
                "com.apple.UNNotificationDefaultActionIdentifier", "reply",
                "com.apple.UNNotificationDismissActionIdentifier",
            ])
        // The first tap brought the app forward from the background (UIKitSemanticsTests has
        // the order): every response arrives with the app active.
        #expect(responses.allSatisfy { $0.hasPrefix("probe test.a: event 11 state 2 ") })
    }

    @Test func alertWhileNotActive_isTheSystemsToShow_exitThree() throws {
        let host = try RunningHost()
        try host.probe(
            "a",
            [
                "PROBE_ID=\"test.a\"",
                "PROBE_EVENTS=SH_EVENTS_LIFECYCLE|SH_EVENT_BIT(SH_EVENT_WILL_PRESENT_NOTIFICATION)",
            ])
        try host.start()
        try host.ctl("background")
        let result = try host.ctl("push", try host.file("p.json", alert))
        #expect(result.status == 3)
        #expect(result.stdout.contains("the app is background: the system shows the notification"))
    }

    @Test func backgroundFetch_mergesNewDataOverNoDataOverFailed() throws {
        let host = try RunningHost()
        let events = "SH_EVENTS_LIFECYCLE|SH_EVENT_BIT(SH_EVENT_DID_RECEIVE_REMOTE_NOTIFICATION)"
        try host.probe("a", ["PROBE_ID=\"test.a\"", "PROBE_EVENTS=\(events)", "PROBE_RESULT=SH_FETCH_FAILED"])
        try host.probe(
            "b", ["PROBE_ID=\"test.b\"", "PROBE_EVENTS=\(events)", "PROBE_RESULT=SH_FETCH_NO_DATA", "PROBE_COMPLETE=3"])
        try host.probe("c", ["PROBE_ID=\"test.c\"", "PROBE_EVENTS=\(events)", "PROBE_RESULT=SH_FETCH_NEW_DATA"])
        try host.start()
        let (status, reply) = try host.ctlJSON("push", try host.file("f.json", fetch))
        #expect(status == 0)
        #expect(reply["event"] as? String == "didReceiveRemoteNotification")
        #expect(reply["result"] as? String == "newData")
        #expect(reply["answers"] as? [String: String] == ["test.a": "failed", "test.b": "noData", "test.c": "newData"])
        // The trace records each completion as it arrives.
        let trace = try String(contentsOfFile: host.tracePath, encoding: .utf8)
        #expect(lines(trace, containing: #""completion":"#).count == 3)
    }

    @Test func missingCompletion_timesOutNamingTheService_andTheMainThreadStaysFree() throws {
        let host = try RunningHost()
        let events = "SH_EVENTS_LIFECYCLE|SH_EVENT_BIT(SH_EVENT_DID_RECEIVE_REMOTE_NOTIFICATION)"
        try host.probe("a", ["PROBE_ID=\"test.never\"", "PROBE_EVENTS=\(events)", "PROBE_COMPLETE=1"])
        try host.probe("b", ["PROBE_ID=\"test.nodata\"", "PROBE_EVENTS=\(events)", "PROBE_RESULT=SH_FETCH_NO_DATA"])
        // The deadline only has to outlast two `host ctl` runs, however loaded the machine.
        try host.start(["--fetch-timeout", "5"])
        let payload = try host.file("f.json", fetch)
        let pushing = try Command.start(
            try Repository.product("host"), ["ctl", "--control", host.control, "--json", "push", payload])
        // Once test.never has returned from the push (it is traced then), its fetch is pending.
        try #require(eventually { host.events.contains("didReceiveRemoteNotification test.never") })
        #expect(try host.ctl("state").stdout.contains("state: active"))
        #expect(try host.ctl("background").status == 0)
        let result = pushing.wait()
        #expect(result.status == 0)
        let reply = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as! [String: Any]
        #expect(reply["answers"] as? [String: String] == ["test.never": "timeout", "test.nodata": "noData"])
        #expect(reply["result"] as? String == "noData")
        let records = host.stop().records
        #expect(
            records.named(.completionTimeout).map { [$0.level, $0.source, $0.string("event"), $0.string("deadline")] }
                == [["error", "test.never", "didReceiveRemoteNotification", "5"]], "\(records.text)")
        // The main thread stayed free: the background request was handled while the fetch still
        // waited, so its events are traced before test.never's timeout.
        let trace = try String(contentsOfFile: host.tracePath, encoding: .utf8).split(separator: "\n").map(String.init)
        let timeout = trace.firstIndex { $0.contains(#""service":"test.never","completion":"timeout""#) }
        let background = trace.firstIndex { $0.contains(#""event":"didEnterBackground","service":"test.never""#) }
        #expect(timeout != nil && background != nil)
        #expect(
            background ?? .max < timeout ?? .min,
            "the background request waited for the fetch:\n\(trace.joined(separator: "\n"))")
    }

    @Test func secondCompletion_isIgnoredAndLogged() throws {
        let host = try RunningHost()
        let events = "SH_EVENTS_LIFECYCLE|SH_EVENT_BIT(SH_EVENT_DID_RECEIVE_REMOTE_NOTIFICATION)"
        try host.probe(
            "a",
            ["PROBE_ID=\"test.twice\"", "PROBE_EVENTS=\(events)", "PROBE_COMPLETE=2", "PROBE_RESULT=SH_FETCH_NEW_DATA"])
        try host.start()
        let (status, reply) = try host.ctlJSON("push", try host.file("f.json", fetch))
        #expect(status == 0)
        #expect(reply["result"] as? String == "newData")
        let records = host.stop().records
        #expect(
            records.named(.completionTwice).map { [$0.level, $0.source, $0.string("event")] }
                == [["warn", "test.twice", "didReceiveRemoteNotification"]], "\(records.text)")
        let trace = try String(contentsOfFile: host.tracePath, encoding: .utf8)
        #expect(lines(trace, containing: #""completion":"newData""#).count == 1)
    }

    @Test func coldLaunch_optionsArriveInLaunchEvents_thenEachExactlyOnceWhenActive() throws {
        let host = try RunningHost()
        let all =
            "SH_EVENTS_LIFECYCLE|SH_EVENT_BIT(SH_EVENT_OPEN_URL)|SH_EVENT_BIT(SH_EVENT_CONTINUE_USER_ACTIVITY)"
            + "|SH_EVENT_BIT(SH_EVENT_DID_RECEIVE_NOTIFICATION_RESPONSE)"
        try host.probe("a", ["PROBE_ID=\"test.a\"", "PROBE_EVENTS=\(all)"])
        let payload = try host.file("launch.json", alert)
        try host.start([
            "--launch-url", "myapp://item/42", "--launch-activity", "com.example.view,https://example.com/v",
            "--launch-notification", payload,
        ])
        let records = host.stop().records
        let launch = records.probe(1).map(\.message)
        #expect(launch.count == 1)
        #expect(
            launch.first?.contains("url=myapp://item/42 activity=com.example.view notification={") == true, "\(launch)")
        let opened = records.probe(15).map(\.message)
        let continued = records.probe(16).map(\.message)
        let responses = records.probe(11).map(\.message)
        #expect(opened.count == 1)
        #expect(opened.first?.contains("url=myapp://item/42 scheme=myapp host=item launch=1") == true)
        #expect(continued.count == 1)
        #expect(continued.first?.contains("type=com.example.view url=https://example.com/v") == true)
        #expect(responses.count == 1)
        #expect(responses.first?.contains("action=com.apple.UNNotificationDefaultActionIdentifier launch=1") == true)
        // Replayed after didBecomeActive, in the active state.
        #expect(
            Array(host.events.prefix(6)) == [
                "willFinishLaunching test.a", "didFinishLaunching test.a", "didBecomeActive test.a",
                "didReceiveNotificationResponse test.a", "openURL test.a", "continueUserActivity test.a",
            ])
    }

    /// Odd whitespace, keys out of order, unicode escapes, a number written the long way:
    /// what services receive is the file's bytes, whichever way the payload came in.
    private let oddPayload =
        "{ \"zeta\" : 1.50 ,\n\t\"aps\":{\"alert\":\"caf\\u00e9 \\ud83d\\ude00\"} , \"alpha\":[ -0e0 ,true] }\n"

    @Test(arguments: [[], ["--isolation", "process"]])
    func ctlPush_deliversThePayloadsBytes_byteForByte(isolation: [String]) throws {
        let host = try RunningHost()
        try host.probe(
            "a",
            [
                "PROBE_ID=\"test.a\"",
                "PROBE_EVENTS=SH_EVENTS_LIFECYCLE|SH_EVENT_BIT(SH_EVENT_WILL_PRESENT_NOTIFICATION)",
            ])
        try host.start(isolation)
        #expect(try host.ctl("push", try host.file("odd.json", oddPayload)).status == 0)
        let presented = host.stop().records.probe(10).map(\.message)
        // 11 nodes: the object, 3 keys, 1.5, aps {alert: "café 😀"} (3), the array and its 2 elements.
        #expect(presented.count == 1)
        #expect(presented.first?.hasSuffix(" nodes=11 json=" + oddPayload) == true, "\(presented)")
    }

    @Test(arguments: [[], ["--isolation", "process"]])
    func launchNotification_deliversThePayloadsBytes_byteForByte(isolation: [String]) throws {
        let host = try RunningHost()
        try host.probe(
            "a",
            [
                "PROBE_ID=\"test.a\"",
                "PROBE_EVENTS=SH_EVENTS_LIFECYCLE|SH_EVENT_BIT(SH_EVENT_DID_RECEIVE_NOTIFICATION_RESPONSE)",
            ])
        try host.start(isolation + ["--launch-notification", try host.file("odd.json", oddPayload)])
        let records = host.stop().records
        #expect(records.probe(1).first?.message.hasSuffix(" notification=" + oddPayload) == true, "\(records.probe(1))")
        let responses = records.probe(11).map(\.message)
        #expect(responses.count == 1)
        #expect(responses.first?.hasSuffix(" launch=1 nodes=11 json=" + oddPayload) == true, "\(responses)")
    }

    @Test func aPayloadThatIsNotJSON_isRefusedByTheHost_namingTheByteAndTheReason() throws {
        let host = try RunningHost()
        try host.probe(
            "a",
            [
                "PROBE_ID=\"test.a\"",
                "PROBE_EVENTS=SH_EVENTS_LIFECYCLE|SH_EVENT_BIT(SH_EVENT_WILL_PRESENT_NOTIFICATION)",
            ])
        try host.start()
        let result = try host.ctl("push", try host.file("bad.json", #"{"aps":{},"n":01}"#))
        #expect(result.status != 0)
        #expect(
            result.stderr.contains("the push payload is not valid JSON: byte 15: invalid number, leading zero"),
            "\(result.stderr)")
        #expect(try host.ctl("state").stdout.contains("state: active"))  // and it keeps serving
        #expect(host.stop().records.probe(10).isEmpty)
    }

    @Test func token_isRemembered_andBadTokensAreRefused() throws {
        let host = try RunningHost()
        let events =
            "SH_EVENTS_LIFECYCLE|SH_EVENT_BIT(SH_EVENT_DID_REGISTER_FOR_REMOTE_NOTIFICATIONS)"
            + "|SH_EVENT_BIT(SH_EVENT_DID_FAIL_TO_REGISTER_FOR_REMOTE_NOTIFICATIONS)"
        try host.probe("a", ["PROBE_ID=\"test.a\"", "PROBE_EVENTS=\(events)"])
        try host.start()
        #expect(try host.ctl("token", "00FFab12").status == 0)
        #expect(try host.ctl("state").stdout.contains("device token: 00ffab12"))
        let bad = try host.ctl("token", "xyz")
        #expect(bad.status == 1)
        #expect(bad.stderr.contains("\"xyz\""))  // the error names the token
        #expect(try host.ctl("token-error", "no network").status == 0)
        let records = host.stop().records
        #expect(records.probe(13).first?.message.contains("token=00ffab12") == true)
        #expect(records.probe(14).first?.message.contains("error=no network") == true)
    }
}

extension PushTests {
    @Test func aServiceThatAsksForTheToken_getsTheLastOne_aloneAndAfterTheCurrentEvent() throws {
        let host = try RunningHost()
        let events =
            "SH_EVENTS_LIFECYCLE|SH_EVENT_BIT(SH_EVENT_DID_REGISTER_FOR_REMOTE_NOTIFICATIONS)"
            + "|SH_EVENT_BIT(SH_EVENT_DID_RECEIVE_MEMORY_WARNING)"
        try host.probe(
            "a",
            [
                "PROBE_ID=\"test.asks\"", "PROBE_EVENTS=\(events)",
                "PROBE_REGISTER_ON_KIND=SH_EVENT_DID_RECEIVE_MEMORY_WARNING",
            ])
        try host.probe("b", ["PROBE_ID=\"test.other\"", "PROBE_EVENTS=\(events)"])
        try host.start()
        #expect(try host.ctl("memory-warning").status == 0)  // no token yet: nothing to deliver
        #expect(try host.ctl("token", "cafe").status == 0)
        #expect(try host.ctl("memory-warning").status == 0)
        _ = host.stop()
        let tokens = host.events.filter {
            $0.hasPrefix("didRegisterForRemoteNotifications") || $0.hasPrefix("didReceiveMemoryWarning")
        }
        #expect(
            tokens == [
                "didReceiveMemoryWarning test.asks", "didReceiveMemoryWarning test.other",
                "didRegisterForRemoteNotifications test.asks", "didRegisterForRemoteNotifications test.other",
                "didReceiveMemoryWarning test.asks", "didReceiveMemoryWarning test.other",
                "didRegisterForRemoteNotifications test.asks",
            ])
    }
}
