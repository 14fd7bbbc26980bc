import Foundation
import TestSupport
import Testing

/// Scenes driven through `host --launch-scene` and `host ctl scene`, as a user would.
// A time limit: these tests start processes (a hang must fail the test, not stall the run).
@Suite(.timeLimit(.minutes(10))) struct SceneTests {
    /// A probe that handles the app lifecycle and every scene event.
    private let sceneEvents = "SH_EVENTS_LIFECYCLE|SH_EVENTS_SCENES"
    /// The same, plus the app-level URL and activity events.
    private let allEvents =
        "SH_EVENTS_LIFECYCLE|SH_EVENTS_SCENES|SH_EVENT_BIT(SH_EVENT_OPEN_URL)"
        + "|SH_EVENT_BIT(SH_EVENT_CONTINUE_USER_ACTIVITY)"

    @Test func launchScene_deliversUIKitsStartUpOrder_andTheChosenConfiguration() throws {
        let host = try RunningHost()
        try host.probe(
            "a",
            [
                "PROBE_ID=\"test.scenes\"", "PROBE_EVENTS=\(sceneEvents)", "PROBE_CONFIGURATION=\"phone\"",
                #"PROBE_CONFIGURATION_SETTINGS="{\"theme\":\"dark\"}""#,
            ])
        try host.start(["--launch-scene", "main"])
        #expect(
            sceneTrace(host.tracePath) == [
                "willFinishLaunching test.scenes", "didFinishLaunching test.scenes",
                "configurationForConnecting@main test.scenes", "sceneWillConnect@main test.scenes",
                "sceneWillEnterForeground@main test.scenes", "sceneDidBecomeActive@main test.scenes",
                "didBecomeActive test.scenes",
            ])
        let list = try host.ctlJSON("scene", "list").reply["scenes"] as? [[String: Any]]
        #expect(list?.count == 1)
        #expect(list?.first?["name"] as? String == "main" && list?.first?["role"] as? String == "main")
        #expect(list?.first?["state"] as? String == "foregroundActive")
        #expect(list?.first?["configuration"] as? String == "phone")
        #expect(list?.first?["configuredBy"] as? String == "test.scenes")
        #expect((list?.first?["settings"] as? [String: Any])?["theme"] as? String == "dark")
        let records = host.stop().records
        // Every scene event sees the scene (and the configuration once it is chosen).
        #expect(
            records.probe(18).first?.message.contains(
                #"scene=main role=main scene-state=0 configuration=phone settings={"theme":"dark"}"#) == true,
            "\(records.text)")
        #expect(records.probe(20).first?.message.contains("scene-state=2") == true)
    }

    @Test func appState_followsTwoScenesMovingIndependently() throws {
        let host = try RunningHost()
        try host.probe("a", ["PROBE_ID=\"test.scenes\"", "PROBE_EVENTS=\(sceneEvents)"])
        try host.start(["--launch-scene", "main"])
        #expect(try host.ctl("scene", "connect", "car", "--role", "car").status == 0)

        /// Runs `scene ACTION NAME`; returns the app state it reports and the events delivered meanwhile.
        func scene(_ action: String, _ name: String) throws -> (state: String?, events: [String]) {
            let before = sceneTrace(host.tracePath).count
            let (status, reply) = try host.ctlJSON("scene", action, name)
            #expect(status == 0, "\(reply)")
            #expect((reply["scene"] as? [String: Any])?["name"] as? String == name)
            return (reply["state"] as? String, Array(sceneTrace(host.tracePath).dropFirst(before)))
        }
        let probe = " test.scenes"
        // The car goes to the background; main is still active, so the app is.
        var step = try scene("background", "car")
        #expect(step.state == "active")
        #expect(step.events == ["sceneWillResignActive@car", "sceneDidEnterBackground@car"].map { $0 + probe })
        // Main follows: the app resigns after main does, and enters the background after it.
        step = try scene("background", "main")
        #expect(step.state == "background")
        #expect(
            step.events
                == [
                    "sceneWillResignActive@main", "willResignActive", "sceneDidEnterBackground@main",
                    "didEnterBackground",
                ].map { $0 + probe })
        // One scene in the foreground but none active: inactive.
        step = try scene("foreground", "car")
        #expect(step.state == "inactive")
        #expect(step.events == ["sceneWillEnterForeground@car", "willEnterForeground"].map { $0 + probe })
        step = try scene("activate", "car")
        #expect(step.state == "active")
        #expect(step.events == ["sceneDidBecomeActive@car", "didBecomeActive"].map { $0 + probe })
        step = try scene("resign", "car")
        #expect(step.state == "inactive")
        #expect(step.events == ["sceneWillResignActive@car", "willResignActive"].map { $0 + probe })
        // Main becoming active makes the app active; car stays inactive.
        step = try scene("activate", "main")
        #expect(step.state == "active")
        #expect(
            step.events
                == ["sceneWillEnterForeground@main", "sceneDidBecomeActive@main", "didBecomeActive"].map { $0 + probe })
        let list = try host.ctlJSON("scene", "list").reply["scenes"] as? [[String: Any]] ?? []
        #expect(list.map { "\($0["name"]!) \($0["state"]!)" } == ["main foregroundActive", "car foregroundInactive"])
        #expect(try host.ctl("state").stdout.contains("state: active"))
    }

    @Test func coldStartURLAndActivity_inALaunchScene_areEachDeliveredExactlyOnce() throws {
        let host = try RunningHost()
        // Handles the scene events and the app-level ones: it must get each link once, in the scene.
        try host.probe("a", ["PROBE_ID=\"test.scenes\"", "PROBE_EVENTS=\(allEvents)"])
        try host.start([
            "--launch-scene", "main", "--launch-url", "myapp://item/1",
            "--launch-activity", "com.example.view,https://example.com/item/1",
        ])
        let trace = sceneTrace(host.tracePath)
        #expect(
            Array(trace.suffix(3)) == [
                "didBecomeActive test.scenes", "sceneOpenURLContexts@main test.scenes",
                "sceneContinueUserActivity@main test.scenes",
            ])
        // Connected later, with options of its own: the same rule.
        let connect = try host.ctlJSON(
            "scene", "connect", "car", "--role", "car", "--url", "myapp://drive/home",
            "--activity", "com.example.drive")
        #expect(connect.status == 0)
        #expect(
            (connect.reply["deliveries"] as? [[String: Any]])?.map { $0["event"] as? String }
                == ["sceneOpenURLContexts", "sceneContinueUserActivity"])
        let records = host.stop().records
        // In the launch options, as UIKit's, and delivered once: through the scene, flagged
        // SH_FROM_LAUNCH|SH_FROM_CONNECTION (3); never again as openURL or continueUserActivity.
        #expect(records.probe(1).first?.message.contains("url=myapp://item/1 activity=com.example.view") == true)
        #expect(
            records.probe(18).first?.message.contains(
                "urls=myapp://item/1 activities=com.example.view options-flags=1 url-flags=3") == true,
            "\(records.text)")
        #expect(
            records.probe(24, 15).map(\.message).filter { $0.contains("url=myapp://item/1") }
                .map { $0.contains("event 24 ") && $0.contains("flags=3") } == [true])
        #expect(
            records.probe(25, 16).map(\.message).filter { $0.contains("type=com.example.view") }
                .map { $0.contains("event 25 ") && $0.contains("flags=3") } == [true])
        #expect(
            records.probe(24).map(\.message).filter { $0.contains("url=myapp://drive/home") }.map {
                $0.contains("flags=2")
            } == [true])
        #expect(records.probe(15, 16).isEmpty)
    }

    @Test func urlsAndActivitiesNoSceneHandlerClaims_fallBackToAppLevelHandlers() throws {
        let host = try RunningHost()
        // A scene handler that passes on every URL and activity, and a service from before scenes.
        try host.probe("a", ["PROBE_ID=\"test.scenes\"", "PROBE_EVENTS=\(sceneEvents)", "PROBE_SCENE_ANSWER=SH_FALSE"])
        try host.probe(
            "b",
            [
                "PROBE_ID=\"test.legacy\"",
                "PROBE_EVENTS=SH_EVENTS_LIFECYCLE|SH_EVENT_BIT(SH_EVENT_OPEN_URL)"
                    + "|SH_EVENT_BIT(SH_EVENT_CONTINUE_USER_ACTIVITY)",
            ])
        try host.start(["--launch-scene", "main", "--launch-url", "myapp://item/1"])
        let open = try host.ctlJSON("scene", "open", "main", "myapp://item/2")
        #expect(open.status == 0)
        #expect(open.reply["event"] as? String == "openURL")
        #expect(open.reply["handledBy"] as? String == "test.legacy")
        #expect(open.reply["receivers"] as? [String] == ["test.scenes", "test.legacy"])
        let activity = try host.ctlJSON(
            "scene", "activity", "main", "com.example.view", "--url", "https://example.com/1")
        #expect(activity.reply["event"] as? String == "continueUserActivity")
        #expect(activity.reply["handledBy"] as? String == "test.legacy")
        let records = host.stop().records
        // The cold-start URL: offered to the scene first, then once to the app-level handler, still flagged.
        let launchURL = records.probe(24, 15).map(\.message).filter { $0.contains(" url=myapp://item/1") }
        #expect(launchURL.count == 2, "\(records.text)")
        #expect(launchURL.first?.hasPrefix("probe test.scenes: event 24 ") == true)
        #expect(
            launchURL.last?.hasPrefix("probe test.legacy: event 15 ") == true
                && launchURL.last?.contains("launch=1") == true)
    }

    @Test func disconnectingOneScene_leavesTheActiveOneAndTheApp_andTheLastOneSendsTheAppToTheBackground() throws {
        let host = try RunningHost()
        try host.probe("a", ["PROBE_ID=\"test.scenes\"", "PROBE_EVENTS=\(sceneEvents)"])
        try host.start(["--launch-scene", "main"])
        #expect(try host.ctl("scene", "connect", "car", "--role", "car").status == 0)
        let before = sceneTrace(host.tracePath).count
        let (status, reply) = try host.ctlJSON("scene", "disconnect", "car")
        #expect(status == 0 && reply["state"] as? String == "active")
        #expect((reply["scene"] as? [String: Any])?["state"] as? String == "unattached")
        #expect(
            Array(sceneTrace(host.tracePath).dropFirst(before))
                == ["sceneWillResignActive@car", "sceneDidEnterBackground@car", "sceneDidDisconnect@car"].map {
                    $0 + " test.scenes"
                })
        let list = try host.ctlJSON("scene", "list").reply["scenes"] as? [[String: Any]] ?? []
        #expect(list.map { "\($0["name"]!) \($0["state"]!)" } == ["main foregroundActive"])

        // The last scene gone, the app is in the background, and app-level activate says why it cannot.
        let last = try host.ctlJSON("scene", "disconnect", "main")
        #expect(last.reply["state"] as? String == "background")
        let activate = try host.ctl("activate")
        #expect(activate.status == 1)
        #expect(
            activate.stderr.contains(
                "the app uses scenes and none is connected (connect one: host ctl scene connect NAME)"))
        // A scene coming back brings the app back; a name may be reused once disconnected.
        let again = try host.ctlJSON("scene", "connect", "main")
        #expect(again.reply["state"] as? String == "active")
        #expect(
            Array(sceneTrace(host.tracePath).suffix(4))
                == [
                    "sceneWillEnterForeground@main", "willEnterForeground",
                    "sceneDidBecomeActive@main", "didBecomeActive",
                ].map { $0 + " test.scenes" })
    }

    @Test func appLevelCommands_moveEveryScene_andTerminationDisconnectsThemLastFirst() throws {
        let host = try RunningHost()
        try host.probe("a", ["PROBE_ID=\"test.scenes\"", "PROBE_EVENTS=\(sceneEvents)"])
        try host.start(["--launch-scene", "main"])
        #expect(try host.ctl("scene", "connect", "car", "--role", "car").status == 0)
        var before = sceneTrace(host.tracePath).count
        #expect(try host.ctlJSON("background").reply["state"] as? String == "background")
        // Every scene resigns (last connected first) before any enters the background.
        #expect(
            Array(sceneTrace(host.tracePath).dropFirst(before))
                == [
                    "sceneWillResignActive@car", "sceneWillResignActive@main", "willResignActive",
                    "sceneDidEnterBackground@car", "sceneDidEnterBackground@main", "didEnterBackground",
                ].map { $0 + " test.scenes" })
        before = sceneTrace(host.tracePath).count
        #expect(try host.ctlJSON("activate").reply["state"] as? String == "active")
        #expect(
            Array(sceneTrace(host.tracePath).dropFirst(before))
                == [
                    "sceneWillEnterForeground@main", "willEnterForeground", "sceneWillEnterForeground@car",
                    "sceneDidBecomeActive@main", "didBecomeActive", "sceneDidBecomeActive@car",
                ].map { $0 + " test.scenes" })
        before = sceneTrace(host.tracePath).count
        let result = host.stop()
        #expect(result.status == 0)
        #expect(
            Array(sceneTrace(host.tracePath).dropFirst(before))
                == [
                    "sceneWillResignActive@car", "sceneWillResignActive@main", "willResignActive",
                    "sceneDidEnterBackground@car", "sceneDidEnterBackground@main", "didEnterBackground",
                    "sceneDidDisconnect@car", "sceneDidDisconnect@main", "willTerminate",
                ].map { $0 + " test.scenes" })
    }

    @Test func badSceneCommands_getClearErrors_fromCtlAndTheProtocol() throws {
        let host = try RunningHost()
        try host.probe("a", ["PROBE_ID=\"test.scenes\"", "PROBE_EVENTS=\(sceneEvents)"])
        try host.start(["--launch-scene", "main"])
        #expect(try host.ctl("scene", "background", "main").status == 0)
        let cases: [([String], String)] = [
            (["scene", "activate", "nowhere"], #"unknown scene "nowhere" (connected: main)"#),
            (
                ["scene", "resign", "main"],
                #"cannot resign scene "main": it is background, and only a foregroundActive scene resigns"#
            ),
            (
                ["scene", "connect", "main"],
                #"a scene named "main" is already connected (disconnect it first, or choose another name)"#
            ),
            (
                ["scene", "connect", "car", "--role", "carplay"],
                #"unknown scene role "carplay" (one of main, car, external)"#
            ),
            (["scene", "connect", "bad name"], #"invalid scene name "bad name""#),
            (["scene", "open", "main", "no scheme"], #"invalid URL "no scheme""#),
            (["scene", "fly", "main"], #"scene: unknown action "fly""#),
        ]
        for (arguments, message) in cases {
            let result = try Command.run(
                try Repository.product("host"), ["ctl", "--control", host.control] + arguments)
            #expect(result.status == 1, "\(arguments)")
            #expect(result.stderr.contains("host ctl: " + message), "\(arguments): \(result.stderr)")
        }
        // Bad ctl arguments are usage errors (exit 2), caught before the host is asked.
        #expect(try host.ctl("scene", "connect").status == 2)
        #expect(try host.ctl("scene", "open", "main").status == 2)

        let socket = try ControlSocket(path: host.control)
        socket.send(
            #"{"id":1,"command":"scene","action":"foreground","name":"main"}"# + "\n"
                + #"{"id":2,"command":"scene","action":"foreground","name":"main"}"# + "\n"
                + #"{"id":3,"command":"scene","action":"resign","name":"ghost"}"# + "\n"
                + #"{"id":4,"command":"scene","name":"main"}"# + "\n"
                + #"{"id":5,"command":"scene","action":"connect","name":"x","urls":"myapp://a"}"# + "\n")
        let replies = (1...5).map { _ in socket.readReply() }
        #expect(replies[0]?["ok"] as? Bool == true && replies[0]?["state"] as? String == "inactive")
        #expect(replies[1]?["ok"] as? Bool == true)  // already in the foreground: nothing to do
        #expect(replies[2]?["ok"] as? Bool == false && replies[2]?["id"] as? Int == 3)
        #expect((replies[2]?["error"] as? String)?.contains(#"unknown scene "ghost""#) == true)
        #expect((replies[3]?["error"] as? String)?.contains(#"scene: missing "action""#) == true)
        #expect((replies[4]?["error"] as? String)?.contains(#"scene: "urls" must be an array"#) == true)
        let activate = try host.ctlJSON("scene", "activate", "main")
        #expect(activate.reply["state"] as? String == "active")
    }

    @Test func appsWithoutScenes_runAsBefore_untilTheFirstSceneConnects() throws {
        let host = try RunningHost()
        try host.probe("a", ["PROBE_ID=\"test.scenes\"", "PROBE_EVENTS=\(sceneEvents)"])
        try host.start()
        #expect(try host.ctl("resign").status == 0)
        #expect(try host.ctl("activate").status == 0)
        #expect(
            sceneTrace(host.tracePath)
                == [
                    "willFinishLaunching", "didFinishLaunching", "didBecomeActive",
                    "willResignActive", "didBecomeActive",
                ].map { $0 + " test.scenes" })
        #expect(try host.ctl("scene", "list").stdout.contains("no scene is connected; app: active"))
        // The first scene to connect into the active app never makes it resign on the way.
        let before = sceneTrace(host.tracePath).count
        #expect(try host.ctlJSON("scene", "connect", "main").reply["state"] as? String == "active")
        #expect(
            Array(sceneTrace(host.tracePath).dropFirst(before))
                == [
                    "configurationForConnecting@main", "sceneWillConnect@main", "sceneWillEnterForeground@main",
                    "sceneDidBecomeActive@main",
                ].map { $0 + " test.scenes" })
    }

    @Test func carDisplay_drivesTheCarScene_andDeepLinksKeepWorkingInEveryScene() throws {
        let host = try RunningHost()
        for name in ["Logger", "DeepLinks", "CarDisplay"] {
            try host.scratch.copy(try Repository.product("lib\(name).so"), to: "lib/lib\(name).so")
        }
        try host.start(["--launch-scene", "car:car", "--launch-url", "myapp://drive/work"])
        let main = try host.ctlJSON("scene", "connect", "main", "--url", "myapp://item/7")
        #expect(main.status == 0)
        #expect((main.reply["scene"] as? [String: Any])?["configuration"] as? String == "default")
        let car = (try host.ctlJSON("scene", "list").reply["scenes"] as? [[String: Any]])?.first
        #expect(
            car?["configuration"] as? String == "car" && car?["configuredBy"] as? String == "dev.servicehost.cardisplay"
        )
        #expect(
            try host.ctlJSON("scene", "open", "car", "myapp://drive/home").reply["handledBy"] as? String
                == "dev.servicehost.cardisplay")
        // Not a drive URL: CarDisplay is not asked; DeepLinks gets it as openURL.
        #expect(
            try host.ctlJSON("scene", "open", "car", "myapp://item/3").reply["handledBy"] as? String
                == "dev.servicehost.deeplinks")
        // A drive URL in the main scene: CarDisplay serves only car scenes.
        #expect(try host.ctl("scene", "open", "main", "myapp://drive/home").status == 3)
        #expect(try host.ctl("scene", "background", "car").status == 0)
        #expect(try host.ctl("scene", "disconnect", "car").status == 0)
        #expect(try host.ctl("state").stdout.contains("state: active"))
        let records = host.stop().records
        let carDisplay = records.messages(from: "dev.servicehost.cardisplay")
        for line in [
            "connects with configuration car, template map (1 URL, 0 activities)", "sceneWillEnterForeground",
            "sceneDidBecomeActive", "drives to work (connection) (launch)", "drives to home",
            "sceneWillResignActive", "sceneDidEnterBackground", "sceneDidDisconnect",
        ] {
            #expect(carDisplay.filter { $0.hasPrefix("cardisplay: car " + line) }.count == 1, "\(line)\n\(carDisplay)")
        }
        #expect(!carDisplay.contains { $0.hasPrefix("cardisplay: main") })
        let deeplinks = records.messages(from: "dev.servicehost.deeplinks")
        #expect(deeplinks.filter { $0 == "deeplinks: open item 7" }.count == 1, "\(deeplinks)")
        #expect(deeplinks.filter { $0 == "deeplinks: open item 3" }.count == 1)
        #expect(
            records.messages(from: "dev.servicehost.logger").contains(
                "scene car sceneDidBecomeActive (foregroundActive)"))
    }
}

/// The deliveries of a `--trace` file as "event service", or "event@scene service" for a
/// scene event.

/// Services that start or stop while scenes are connected (hot reload, lazy activation) are
/// told of the scenes as a service started with the host would have been, and see them go as
/// at termination: the one catch-up covers scenes too.
@Suite(.timeLimit(.minutes(10))) struct LateSceneTests {
    private let sceneEvents = "SH_EVENTS_LIFECYCLE|SH_EVENTS_SCENES"

    /// What `service`'s probe saw of each scene event 18–23: the event, and the scene's name
    /// and state in the event's data ("20 main 2").
    private func sceneLines(_ records: [LogRecord], _ service: String) -> [String] {
        records.probe(18, 19, 20, 21, 22, 23).filter { $0.source == service }.map { record in
            let fields = record.message.split(separator: " ")
            let value = { (key: String) in
                fields.first { $0.hasPrefix(key + "=") }.map { String($0.dropFirst(key.count + 1)) } ?? "?"
            }
            return "\(fields.dropFirst(3).first ?? "?") \(value("scene")) \(value("scene-state"))"
        }
    }

    @Test(arguments: [false, true])
    func aServiceAddedByReload_isToldOfTheConnectedScenes_andOneRemovedSeesThemGo_asAtTermination(isolated: Bool) throws
    {
        let host = try RunningHost()
        try host.probe("a", ["PROBE_ID=\"test.early\"", "PROBE_EVENTS=\(sceneEvents)"])
        try host.start(["--launch-scene", "main"] + (isolated ? ["--isolation", "process"] : []))
        #expect(try host.ctl("scene", "connect", "car", "--role", "car").status == 0)
        #expect(try host.ctl("scene", "background", "car").status == 0)
        try host.probe("b", ["PROBE_ID=\"test.late\"", "PROBE_EVENTS=\(sceneEvents)"])
        try host.probe("c", ["PROBE_ID=\"test.car\"", "PROBE_EVENTS=\(sceneEvents)", "PROBE_SCENE_ROLE=\"car\""])
        #expect(try host.ctlJSON("reload").reply["added"] as? [String] == ["test.late", "test.car"])
        let trace = { (service: String) in
            sceneTrace(host.tracePath).filter { $0.hasSuffix(" " + service) }.map {
                String($0.dropLast(service.count + 1))
            }
        }
        // Each scene connects and moves to its state, one after the other; the app follows them.
        #expect(
            trace("test.late") == [
                "willFinishLaunching", "didFinishLaunching", "sceneWillConnect@main", "sceneWillEnterForeground@main",
                "sceneDidBecomeActive@main", "didBecomeActive", "sceneWillConnect@car", "sceneWillEnterForeground@car",
                "sceneDidEnterBackground@car",
            ])
        // A service of the car role hears only the car scene (and the app).
        #expect(
            trace("test.car") == [
                "willFinishLaunching", "didFinishLaunching", "didBecomeActive", "sceneWillConnect@car",
                "sceneWillEnterForeground@car", "sceneDidEnterBackground@car",
            ])
        try FileManager.default.removeItem(atPath: host.lib + "/b.so")
        try FileManager.default.removeItem(atPath: host.lib + "/c.so")
        #expect(Set(try host.ctlJSON("reload").reply["removed"] as? [String] ?? []) == ["test.late", "test.car"])
        let goodbye = [
            "sceneWillResignActive@main", "willResignActive", "sceneDidEnterBackground@main", "didEnterBackground",
            "sceneDidDisconnect@car", "sceneDidDisconnect@main", "willTerminate",
        ]
        #expect(Array(trace("test.late").dropFirst(9)) == goodbye)
        #expect(
            Array(trace("test.car").dropFirst(6)) == [
                "willResignActive", "didEnterBackground", "sceneDidDisconnect@car", "willTerminate",
            ])
        let records = host.stop().records
        // The early service's termination is what the removed one saw at the reload.
        #expect(Array(trace("test.early").suffix(goodbye.count)) == goodbye)
        // And the scene each event carries (its state at that point) is the same as for the
        // early service at the same steps: when main connected, and at termination.
        let early = sceneLines(records, "test.early")
        let late = sceneLines(records, "test.late")
        #expect(late.count == 10, "\(late)")
        #expect(Array(late.prefix(3)) == Array(early.prefix(3)))
        #expect(Array(late.suffix(4)) == Array(early.suffix(4)))
    }

    @Test func aLazyServiceOpenedByAURL_isToldOfTheScenesItServes_thenHearsThemAsAnEagerOne() throws {
        /// The trace of `test.links` (lifecycle, openURL, sceneDidBecomeActive, sceneDidEnterBackground)
        /// through a scenario, lazy or not.
        func run(lazy: Bool) throws -> [String] {
            let host = try RunningHost()
            let events =
                "SH_EVENTS_LIFECYCLE|SH_EVENT_BIT(SH_EVENT_OPEN_URL)|SH_EVENT_BIT(SH_EVENT_SCENE_DID_BECOME_ACTIVE)"
                + "|SH_EVENT_BIT(SH_EVENT_SCENE_DID_ENTER_BACKGROUND)"
            try host.probe("a", ["PROBE_ID=\"test.links\"", "PROBE_EVENTS=\(events)", "PROBE_URL_CLAIM=\"myapp\""])
            let config = try host.file(
                "services.json", #"{"services": {"test.links": {"activation": "\#(lazy ? "lazy" : "eager")"}}}"#)
            try host.start(["--config", config])
            #expect(try host.ctl("scene", "connect", "main").status == 0)
            #expect(try host.ctl("scene", "connect", "car", "--role", "car").status == 0)
            #expect(try host.ctl("scene", "background", "car").status == 0)
            #expect(try host.ctlJSON("open", "myapp://x").reply["handledBy"] as? String == "test.links")
            #expect(try host.ctl("scene", "background", "main").status == 0)
            let trace = sceneTrace(host.tracePath).filter { $0.hasSuffix(" test.links") }.map {
                String($0.dropLast(" test.links".count))
            }
            let records = host.stop().records
            #expect(records.named(.serviceActivated).map { $0.string("trigger") } == (lazy ? ["URL myapp://x"] : []))
            return trace
        }
        let after = ["openURL", "willResignActive", "sceneDidEnterBackground@main", "didEnterBackground"]
        let eager = try run(lazy: false)
        #expect(
            eager == [
                "willFinishLaunching", "didFinishLaunching", "didBecomeActive", "sceneDidBecomeActive@main",
                "sceneDidBecomeActive@car", "sceneDidEnterBackground@car",
            ] + after)
        // Opened by the URL: launched, then told of each scene (the shortest way to its state,
        // the app following), then the URL; from there on it hears exactly what the eager one does.
        let lazy = try run(lazy: true)
        #expect(
            lazy == [
                "willFinishLaunching", "didFinishLaunching", "sceneDidBecomeActive@main", "didBecomeActive",
                "sceneDidEnterBackground@car",
            ] + after)
    }
}

private func sceneTrace(_ path: String) -> [String] {
    guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return [] }
    return text.split(separator: "\n").compactMap { line in
        guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
            object["completion"] == nil,
            let event = object["event"] as? String, let service = object["service"] as? String
        else { return nil }
        let scene = (object["scene"] as? String).map { "@" + $0 } ?? ""
        return "\(event)\(scene) \(service)"
    }
}
