import HostCore
import ServiceJSON
import Testing

/// The scene state machine, the app state derived from scenes, and scene requests.
// A time limit: these tests start processes (a hang must fail the test, not stall the run).
@Suite(.timeLimit(.minutes(10))) struct SceneModelTests {
    @Test(arguments: [
        (
            SceneState.unattached, SceneState.foregroundActive,
            [EventKind.sceneWillEnterForeground, .sceneDidBecomeActive]
        ),
        (.foregroundActive, .background, [.sceneWillResignActive, .sceneDidEnterBackground]),
        (.background, .foregroundActive, [.sceneWillEnterForeground, .sceneDidBecomeActive]),
        (.foregroundInactive, .background, [.sceneDidEnterBackground]),
        (.background, .foregroundInactive, [.sceneWillEnterForeground]),
        (.foregroundActive, .foregroundInactive, [.sceneWillResignActive]),
        (.foregroundActive, .unattached, [.sceneWillResignActive, .sceneDidEnterBackground, .sceneDidDisconnect]),
        (.background, .unattached, [.sceneDidDisconnect]),
        (.background, .background, []),
    ])
    func steps_takeTheLegalPath(from: SceneState, to: SceneState, expected: [EventKind]) {
        #expect(from.steps(to: to) == expected)
    }

    @Test func everySceneStepLeavesTheStateItNames_andWillEventsSeeTheOldState() {
        #expect(EventKind.sceneWillEnterForeground.sceneStateAfter == .foregroundInactive)
        #expect(EventKind.sceneDidBecomeActive.sceneStateAfter == .foregroundActive)
        #expect(EventKind.sceneWillResignActive.sceneStateAfter == .foregroundInactive)
        #expect(EventKind.sceneDidEnterBackground.sceneStateAfter == .background)
        #expect(EventKind.sceneDidDisconnect.sceneStateAfter == .unattached)
        #expect(EventKind.sceneOpenURLContexts.sceneStateAfter == nil)
        #expect(
            !EventKind.sceneWillResignActive.isDeliveredInNewState
                && EventKind.sceneDidEnterBackground.isDeliveredInNewState)
        #expect(EventKind.sceneDidDisconnect.isTearDown && !EventKind.sceneWillEnterForeground.isTearDown)
        // Scene events are not app lifecycle events: they never move the app by themselves.
        #expect(EventKind.allCases.filter { $0.sceneStateAfter != nil }.allSatisfy { $0.stateAfter == nil })
    }

    @Test func appState_isDerivedFromTheScenes() {
        #expect(AppState.derived(from: [SceneState.background, .foregroundActive]) == .active)
        #expect(AppState.derived(from: [SceneState.background, .foregroundInactive]) == .inactive)
        #expect(AppState.derived(from: [SceneState.background, .background]) == .background)
        // A scene still connecting is not on screen; with no scene the app is in the background.
        #expect(AppState.derived(from: [SceneState.unattached]) == .background)
        #expect(AppState.derived(from: [SceneState]()) == .background)
    }

    @Test func sceneRequests_checkNamesAndRoles() throws {
        #expect(try SceneRequest(name: "car-1", role: "car").role == "car")
        #expect(try SceneRequest(name: "main").role == nil)
        #expect(throws: InputError("unknown scene role \"carplay\" (one of main, car, external)")) {
            try SceneRequest(name: "car", role: "carplay")
        }
        for bad in ["", "a b", "naïve", String(repeating: "x", count: 64)] {
            #expect(throws: InputError.self) { try SceneRequest(name: bad) }
        }
    }

    @Test func ctlScene_buildsTheProtocolRequest() throws {
        let connect = try CtlCommand.parse(
            [
                "scene", "connect", "car", "--role", "car", "--url", "myapp://drive/a",
                "--url", "myapp://drive/b", "--activity", "com.example.drive,https://e.com/1",
            ],
            readInput: { _ in [] }
        ).request
        #expect(
            connect == [
                "command": "scene", "action": "connect", "name": "car", "role": "car",
                "urls": ["myapp://drive/a", "myapp://drive/b"],
                "activities": [["type": "com.example.drive", "url": "https://e.com/1"]],
            ])
        #expect(
            try CtlCommand.parse(["scene", "resign", "main"], readInput: { _ in [] }).request
                == ["command": "scene", "action": "resign", "name": "main"])
        #expect(
            try CtlCommand.parse(
                ["scene", "activity", "main", "t", "--user-info", #"{"a":1}"#], readInput: { _ in [] }
            ).request
                == ["command": "scene", "action": "activity", "name": "main", "type": "t", "userInfo": ["a": 1]])
        for bad in [
            ["scene"], ["scene", "connect"], ["scene", "open", "main"], ["scene", "list", "x"],
            ["scene", "connect", "car", "--role"], ["scene", "connect", "car", "--colour", "red"],
        ] {
            #expect(throws: UsageError.self) { try CtlCommand.parse(bad, readInput: { _ in [] }) }
        }
    }

    @Test func protocolSceneRequests_areValidated() {
        func error(_ line: String) -> String? {
            if case .failure(let refusal) = ControlRequest.parse(Array(line.utf8), maxPayload: 1000) {
                return refusal.message
            }
            return nil
        }
        #expect(
            error(
                #"{"command":"scene","action":"connect","name":"car","role":"car","urls":["myapp://x"],"activities":[{"type":"t"}]}"#
            ) == nil)
        #expect(error(#"{"command":"scene","action":"list"}"#) == nil)
        #expect(error(#"{"command":"scene","action":"open","name":"car"}"#) == #"scene: missing "url""#)
        #expect(error(#"{"command":"scene","action":"activate"}"#) == #"scene: missing "name""#)
        #expect(
            error(#"{"command":"scene","action":"connect","name":"c","activities":["t"]}"#)
                == #"scene: each of "activities" must be an object like {"type":"…"}"#)
        #expect(
            error(#"{"command":"scene","action":"connect","name":"c","urls":["nope"]}"#)?.hasPrefix("invalid URL")
                == true)
    }
}
