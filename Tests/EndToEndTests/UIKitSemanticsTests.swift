import Foundation
import TestSupport
import Testing

/// Where ServiceHost follows UIKit's order (issue 12): a launch into the background, a tap
/// from the background, a required launch failure, the seq of every trace line, app-level
/// mistakes, notification authorization and scene state restoration.
@Suite struct UIKitSemanticsTests {
    private let fetch = #"{"aps":{"content-available":1},"route":"myapp://item/9"}"#
    private let alert = #"{"aps":{"alert":{"title":"Hi","body":"there"}},"route":"myapp://item/7"}"#
    private let pushEvents =
        "SH_EVENTS_LIFECYCLE|SH_EVENT_BIT(SH_EVENT_WILL_PRESENT_NOTIFICATION)"
        + "|SH_EVENT_BIT(SH_EVENT_DID_RECEIVE_NOTIFICATION_RESPONSE)|SH_EVENT_BIT(SH_EVENT_DID_RECEIVE_REMOTE_NOTIFICATION)"
        + "|SH_EVENT_BIT(SH_EVENT_DID_CHANGE_NOTIFICATION_AUTHORIZATION)"

    // MARK: Launch

    @Test(.timeLimit(.minutes(10)))
    func backgroundPushLaunch_staysInTheBackground_fetchesThenComesForwardWhenAsked() throws {
        let host = try RunningHost()
        try host.probe("a", ["PROBE_ID=\"test.a\"", "PROBE_EVENTS=\(pushEvents)", "PROBE_RESULT=SH_FETCH_NEW_DATA"])
        try host.start(["--launch-notification", try host.file("fetch.json", fetch)], until: "background")
        #expect(
            trace(host.tracePath).map(\.line) == [
                "willFinishLaunching test.a background", "didFinishLaunching test.a background",
                "didReceiveRemoteNotification test.a background",
            ])
        #expect(traceObjects(host.tracePath).contains { $0["completion"] as? String == "newData" })
        try host.ctl("activate")
        let records = host.stop().records
        #expect(
            Array(trace(host.tracePath).map(\.line).dropFirst(3).prefix(2)) == [
                "willEnterForeground test.a inactive", "didBecomeActive test.a active",
            ])
        // The launch push is in the launch options, and its fetch is flagged as from launch.
        #expect(records.probe(2).first?.message.contains(#""content-available":1"#) == true, "\(records.text)")
        #expect(records.probe(12).first?.message.contains("state 3") == true)
        #expect(records.probe(12).first?.message.contains("launch=1") == true)
        #expect(records.probe(11).isEmpty, "a background push is not a tap")
    }

    @Test(.timeLimit(.minutes(10)))
    func launchStateBackground_isHonoured_andContradictionsAreRefused() throws {
        let host = try RunningHost()
        try host.probe("a", ["PROBE_ID=\"test.a\""])
        try host.start(["--launch-state", "background"], until: "background")
        #expect(try host.ctlJSON("foreground").reply["state"] as? String == "inactive")
        _ = host.stop()
        #expect(
            Array(trace(host.tracePath).map(\.line).prefix(3)) == [
                "willFinishLaunching test.a background", "didFinishLaunching test.a background",
                "willEnterForeground test.a inactive",
            ])
        for (extra, message) in [
            (["--launch-scene", "main"], "the launch scene main brings the app to the foreground"),
            (["--launch-notification", try host.file("alert.json", alert)], "without content-available: 1"),
            ([String](), "unknown launch state 'asleep'"),
        ] {
            let state = extra.isEmpty ? "asleep" : "background"
            let result = try Command.run(
                try Repository.product("host"),
                ["--plugins", host.lib, "--launch-state", state, "--state-dir", host.stateDirectory] + extra)
            #expect(result.status == 2)
            #expect(result.stderr.contains(message), "\(result.stderr)")
        }
    }

    @Test(.timeLimit(.minutes(10)))
    func requiredLaunchFailure_stopsBeforeActive_andTakesTheOthersDownInReverse() throws {
        let host = try RunningHost()
        try host.probe("a", ["PROBE_ID=\"test.a\"", "PROBE_PRIORITY=10"])
        try host.probe("b", ["PROBE_ID=\"test.b\"", "PROBE_PRIORITY=5"])
        // 12345 is neither SH_OK nor SH_FALSE: an unknown result, which counts as a failure.
        try host.probe(
            "req",
            ["PROBE_ID=\"test.req\"", "PROBE_FAIL_KIND=SH_EVENT_DID_FINISH_LAUNCHING", "PROBE_FAIL_RESULT=12345"])
        let config = try host.file("services.json", #"{"services": {"test.req": {"policy": "required"}}}"#)
        let result = try Command.run(
            try Repository.product("host"),
            [
                "--plugins", host.lib, "--config", config, "--control", host.control, "--state-dir",
                host.stateDirectory,
                "--trace", host.tracePath, "--log-format", "json",
            ])
        #expect(result.status == 2)
        // The configured service starts first; nobody becomes active; a and b go down in reverse.
        #expect(
            host.events == [
                "willFinishLaunching test.req", "willFinishLaunching test.a", "willFinishLaunching test.b",
                "didFinishLaunching test.req", "didFinishLaunching test.a", "didFinishLaunching test.b",
                "didEnterBackground test.b", "didEnterBackground test.a", "willTerminate test.b",
                "willTerminate test.a",
            ])
        let required = result.records.named(.hostRequiredFailed)
        #expect(required.map { [$0.level, $0.source] } == [["error", "host"]], "\(result.records.text)")
        #expect(required.first?.strings("services") == ["test.req"])
        #expect(
            result.records.named(.eventFailed).map { [$0.level, $0.source, $0.string("event"), $0.string("result")] }
                == [["error", "test.req", "didFinishLaunching", "12345"]], "\(result.records.text)")
    }

    @Test(.timeLimit(.minutes(10)))
    func unknownLaunchResult_stopsAnOptionalServiceToo() throws {
        let host = try RunningHost()
        try host.probe(
            "odd",
            ["PROBE_ID=\"test.odd\"", "PROBE_FAIL_KIND=SH_EVENT_WILL_FINISH_LAUNCHING", "PROBE_FAIL_RESULT=12345"])
        try host.probe("ok", ["PROBE_ID=\"test.ok\""])
        try host.start()
        let services = try host.ctlJSON("list").reply["services"] as? [[String: Any]]
        // test.odd is listed as loaded but stopped: it gets no events.
        #expect(
            services?.filter { $0["state"] as? String == "running" }.compactMap { $0["id"] as? String } == ["test.ok"])
        #expect(services?.first { $0["id"] as? String == "test.odd" }?["state"] as? String == "failed to launch")
        let records = host.stop().records
        #expect(
            records.named(.eventFailed).map { [$0.level, $0.source, $0.string("event"), $0.string("result")] }
                == [["error", "test.odd", "willFinishLaunching", "12345"]], "\(records.text)")
        #expect(!host.events.contains("didBecomeActive test.odd"))
    }

    // MARK: Taps, seq, mistakes

    @Test(.timeLimit(.minutes(10)), arguments: [false, true])
    func tapFromTheBackground_bringsTheAppForward_thenDeliversTheResponse(scenes: Bool) throws {
        let host = try RunningHost()
        let events = pushEvents + (scenes ? "|SH_EVENTS_SCENES" : "")
        try host.probe("a", ["PROBE_ID=\"test.a\"", "PROBE_EVENTS=\(events)"])
        try host.start(scenes ? ["--launch-scene", "main"] : [])
        try host.ctl("background")
        let before = trace(host.tracePath).count
        let (status, reply) = try host.ctlJSON("push", "--tap", try host.file("alert.json", alert))
        #expect(status == 0 && reply["event"] as? String == "didReceiveNotificationResponse")
        #expect(try host.ctlJSON("state").reply["state"] as? String == "active")
        _ = host.stop()
        let after = Array(trace(host.tracePath).dropFirst(before).prefix(scenes ? 5 : 3)).map(\.line)
        #expect(
            after
                == (scenes
                    ? [
                        "sceneWillEnterForeground@main test.a background", "willEnterForeground test.a inactive",
                        // A scene event carries the app's state before the app event it causes.
                        "sceneDidBecomeActive@main test.a inactive", "didBecomeActive test.a active",
                        "didReceiveNotificationResponse test.a active",
                    ]
                    : [
                        "willEnterForeground test.a inactive", "didBecomeActive test.a active",
                        "didReceiveNotificationResponse test.a active",
                    ]))
    }

    @Test(.timeLimit(.minutes(10)))
    func everyTraceLineOfADelivery_carriesThatDeliverysSeq() throws {
        let host = try RunningHost()
        for name in ["a", "b", "c"] {
            try host.probe(name, ["PROBE_ID=\"test.\(name)\"", "PROBE_EVENTS=\(pushEvents)", "PROBE_COMPLETE=3"])
        }
        try host.start()
        #expect(try host.ctl("push", try host.file("fetch.json", fetch)).status == 0)
        _ = host.stop()
        let lines = traceObjects(host.tracePath).filter { $0["event"] as? String == "didReceiveRemoteNotification" }
        let delivered = Dictionary(
            uniqueKeysWithValues: lines.filter { $0["result"] != nil }.map {
                ($0["service"] as! String, $0["seq"] as! Int)
            })
        let completed = Dictionary(
            uniqueKeysWithValues: lines.filter { $0["completion"] != nil }.map {
                ($0["service"] as! String, $0["seq"] as! Int)
            })
        #expect(delivered.count == 3 && Set(delivered.values).count == 3)
        #expect(completed == delivered, "a completion line carries its own delivery's seq")
    }

    @Test(.timeLimit(.minutes(10)))
    func appLevelResignInTheBackground_andForegroundWhileActive_areErrors() throws {
        let host = try RunningHost()
        try host.probe("a", ["PROBE_ID=\"test.a\""])
        try host.start()
        let foreground = try host.ctl("foreground")
        #expect(foreground.status == 1)
        #expect(foreground.stderr.contains("only an app in the background comes to the foreground (the app is active)"))
        try host.ctl("background")
        let resign = try host.ctl("resign")
        #expect(resign.status == 1)
        #expect(resign.stderr.contains("only an active app resigns (the app is in the background)"), "\(resign.stderr)")
        // Nothing moved, and the host keeps serving.
        #expect(try host.ctlJSON("state").reply["state"] as? String == "background")
    }

    // MARK: Notification authorization

    @Test(.timeLimit(.minutes(10)), arguments: ["in-process", "process"])
    func authorization_gatesPresentation_isAnnounced_andPersists(isolation: String) throws {
        let host = try RunningHost()
        try host.probe(
            "a",
            [
                "PROBE_ID=\"test.a\"", "PROBE_EVENTS=\(pushEvents)", "PROBE_RESULT=SH_PRESENT_BANNER|SH_PRESENT_SOUND",
                "PROBE_REQUEST_AUTHORIZATION=SH_AUTHORIZE_ALERT", "PROBE_CONFIGURATION=\"x\"",
            ])
        try host.start(["--notification-authorization", "prompt", "--isolation", isolation])
        #expect(authorization(try host.ctlJSON("authorization").reply) == "notDetermined")
        let push = try host.file("alert.json", alert)
        // Not determined: every service is asked and reported, nothing is presented.
        var reply = try host.ctlJSON("push", push).reply
        #expect(reply["answers"] as? [String: String] == ["test.a": "banner+sound"])
        #expect(reply["presentation"] as? [String] == [])
        let denied = try host.ctlJSON("authorization", "denied")
        #expect(denied.status == 0 && denied.reply["receivers"] as? [String] == ["test.a"])
        #expect(try host.ctlJSON("push", push).reply["presentation"] as? [String] == [])
        try host.ctl("authorization", "authorized")
        reply = try host.ctlJSON("push", push).reply
        #expect(reply["presentation"] as? [String] == ["banner", "sound"])
        // Bad input: a clear error, and nothing changed.
        let bad = try host.ctl("authorization", "maybe")
        #expect(bad.status == 1)
        #expect(bad.stderr.contains(#"unknown status "maybe" (one of notDetermined, denied, authorized, provisional)"#))
        #expect(authorization(try host.ctlJSON("authorization").reply) == "authorized")
        let records = host.stop().records
        #expect(
            records.messages(from: "test.a").filter { $0.contains("authorization request -> 0") }.count == 1,
            "prompt leaves it notDetermined: \(records.text)")
        #expect(
            records.probe(26).map { $0.message.components(separatedBy: " status=")[1] } == [
                "1 allowed=0", "2 allowed=15",
            ])
        // The status is in the state directory: the next host starts authorized.
        let saved = try String(
            contentsOfFile: host.stateDirectory + "/notifications/authorization.json", encoding: .utf8)
        #expect(saved.contains(#""status":"authorized""#))
        try host.start(["--isolation", isolation])
        #expect(authorization(try host.ctlJSON("authorization").reply) == "authorized")
    }

    @Test(.timeLimit(.minutes(10)), arguments: [("grant", "2"), ("deny", "1")])
    func authorizationRequest_isAnsweredByThePolicy(policy: String, status: String) throws {
        let host = try RunningHost()
        try host.probe(
            "a",
            [
                "PROBE_ID=\"test.a\"", "PROBE_EVENTS=\(pushEvents)",
                "PROBE_REQUEST_AUTHORIZATION=SH_AUTHORIZE_ALERT|SH_AUTHORIZE_BADGE",
            ])
        try host.start(["--notification-authorization", policy])
        let reply = try host.ctlJSON("authorization").reply
        #expect(authorization(reply) == (policy == "grant" ? "authorized" : "denied"))
        if policy == "grant" {
            #expect((reply["authorization"] as? [String: Any])?["allowed"] as? [String] == ["banner", "list", "badge"])
        }
        let records = host.stop().records
        #expect(
            records.messages(from: "test.a").filter { $0.contains("authorization request -> \(status)") }.count == 1,
            "\(records.text)")
        #expect(records.probe(26).count == 1)
    }

    @Test(.timeLimit(.minutes(10)))
    func corruptAuthorizationFile_isReported_andCountsAsNotDetermined() throws {
        let host = try RunningHost()
        try host.probe("a", ["PROBE_ID=\"test.a\""])
        try FileManager.default.createDirectory(
            atPath: host.stateDirectory + "/notifications", withIntermediateDirectories: true,
            attributes: [.posixPermissions: 0o700])
        try FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: host.stateDirectory)
        try Data("{\"status\":".utf8).write(
            to: URL(fileURLWithPath: host.stateDirectory + "/notifications/authorization.json"))
        try host.start(["--notification-authorization", "prompt"])
        #expect(authorization(try host.ctlJSON("authorization").reply) == "notDetermined")
        try host.ctl("authorization", "provisional")
        let records = host.stop().records
        let unreadable = records.named(.authorizationUnreadable)
        #expect(unreadable.map { [$0.level, $0.source] } == [["error", "host"]], "\(records.text)")
        #expect(unreadable.first?.string("path")?.hasSuffix("/notifications/authorization.json") == true)
        #expect(unreadable.first?.string("reason") == "corrupt: not a saved authorization", "\(records.text)")
        let saved = try String(
            contentsOfFile: host.stateDirectory + "/notifications/authorization.json", encoding: .utf8)
        #expect(saved.contains(#""status":"provisional""#) && saved.contains(#""allowed":["list"]"#))
    }

    // MARK: Scene state restoration

    @Test(.timeLimit(.minutes(10)), arguments: ["in-process", "process"])
    func restorationActivity_isSaved_thenInTheNextConnectionsOptions_once(isolation: String) throws {
        let host = try RunningHost()
        try host.probe(
            "a",
            [
                "PROBE_ID=\"test.a\"", "PROBE_EVENTS=SH_EVENTS_LIFECYCLE|SH_EVENTS_SCENES",
                #"PROBE_RESTORATION="{\"type\":\"test.edit\",\"url\":\"myapp://item/3\",\"userInfo\":{\"draft\":7}}""#,
            ])
        try host.start(["--launch-scene", "main", "--isolation", isolation])
        try host.ctl("scene", "disconnect", "main")
        let list = try host.ctlJSON("scene", "list").reply
        #expect(list["savedScenes"] as? [String] == ["main"])
        #expect(try host.ctl("scene", "list").stdout.contains("saved state, not connected: main"))
        _ = host.stop()
        // The next launch connects the scene with the activity, once.
        try host.start(["--launch-scene", "main", "--isolation", isolation])
        let entry = (try host.ctlJSON("scene", "list").reply["scenes"] as? [[String: Any]])?.first
        #expect(entry?["savedState"] as? Bool == false, "handed out, so forgotten")
        try host.ctl("scene", "disconnect", "main")
        try host.ctl("scene", "connect", "main")
        let records = host.stop().records
        let connects = records.probe(18).map(\.message)
        #expect(connects.count == 2)
        #expect(
            connects.first?.contains(#"restoration=test.edit restoration-info={"draft":7}"#) == true, "\(records.text)")
        // The second connection of this run: the scene went away again and saved anew.
        #expect(connects.last?.contains("restoration=test.edit") == true)
        #expect(records.messages(from: "test.a").filter { $0.contains("restoration saved -> 0") }.count >= 2)
    }

    @Test(.timeLimit(.minutes(10)))
    func restorationOverTheLimit_andACorruptFile_areErrors_andTheHostGoesOn() throws {
        let host = try RunningHost()
        try host.probe(
            "a",
            [
                "PROBE_ID=\"test.a\"", "PROBE_EVENTS=SH_EVENTS_LIFECYCLE|SH_EVENTS_SCENES",
                "PROBE_RESTORATION=\"unused\"", "PROBE_RESTORATION_PAD=70000",
            ])
        // A restoration file damaged on disk, for the scene the launch connects.
        try FileManager.default.createDirectory(
            atPath: host.stateDirectory + "/scenes", withIntermediateDirectories: true,
            attributes: [.posixPermissions: 0o700])
        try FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: host.stateDirectory)
        try Data([0x7B, 0xFF, 0x00]).write(to: URL(fileURLWithPath: host.stateDirectory + "/scenes/main.json"))
        try host.start(["--launch-scene", "main"])
        try host.ctl("scene", "background", "main")
        #expect(try host.ctlJSON("scene", "list").reply["savedScenes"] as? [String] == [])
        #expect(try host.ctlJSON("scene", "activate", "main").status == 0)
        let records = host.stop().records
        let unreadable = records.named(.sceneRestorationUnreadable).first
        #expect(
            unreadable.map { [$0.level, $0.source, $0.string("scene")] } == ["error", "host", "main"], "\(records.text)"
        )
        #expect(unreadable?.string("path")?.hasSuffix("/scenes/main.json") == true)
        #expect(
            unreadable?.string("reason")?.hasPrefix("corrupt: the restoration activity is not valid JSON") == true,
            "\(records.text)")
        // Refused with a warning each time; what was saved before stays.
        let refused = records.named(.sceneRestorationRefused).first
        #expect(
            refused.map { [$0.level, $0.source, $0.string("scene")] } == ["warn", "test.a", "main"], "\(records.text)")
        #expect(
            refused?.string("reason").map {
                $0.hasPrefix("the restoration activity is ") && $0.contains("bytes, over the limit of 65536 bytes")
            } == true, "\(records.text)")
        // Refused each time (the background move, and the termination's): what was saved stays.
        let saves = records.messages(from: "test.a").filter { $0.contains("restoration saved -> ") }
        #expect(!saves.isEmpty && saves.allSatisfy { $0.hasSuffix("restoration saved -> -3") }, "\(records.text)")
        #expect(records.probe(18).first?.message.contains("restoration=-") == true)
    }

    // MARK: Helpers

    private func authorization(_ reply: [String: Any]) -> String? {
        (reply["authorization"] as? [String: Any])?["status"] as? String
    }
}

/// The trace's deliveries (completion lines left out) as their object and
/// "event[@scene] service state".
private func trace(_ path: String) -> [(object: [String: Any], line: String)] {
    traceObjects(path).compactMap { object in
        guard object["completion"] == nil, let event = object["event"] as? String,
            let service = object["service"] as? String
        else { return nil }
        let scene = (object["scene"] as? String).map { "@" + $0 } ?? ""
        return (object, "\(event)\(scene) \(service) \(object["state"] as? String ?? "?")")
    }
}

/// Every line of the trace, deliveries and completions.
private func traceObjects(_ path: String) -> [[String: Any]] {
    guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return [] }
    return text.split(separator: "\n").compactMap {
        try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
    }
}
