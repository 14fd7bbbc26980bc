import HostCore
import Testing

@Suite struct AppLifecycleTests {
    private func run(_ targets: [AppState]) throws -> [EventKind] {
        var lifecycle = AppLifecycle()
        var delivered: [EventKind] = []
        for target in targets {
            for kind in try lifecycle.steps(to: target) {
                lifecycle.apply(kind)
                delivered.append(kind)
            }
            #expect(lifecycle.state == target)
        }
        return delivered
    }

    @Test func launch_goesThroughBothLaunchEventsThenBecomesActive() throws {
        #expect(try run([.active]) == [.willFinishLaunching, .didFinishLaunching, .didBecomeActive])
    }

    @Test func activeToBackground_synthesizesWillResignActive() throws {
        #expect(try run([.active, .background]).suffix(2) == [.willResignActive, .didEnterBackground])
    }

    @Test func backgroundToActive_passesThroughWillEnterForeground() throws {
        #expect(try run([.active, .background, .active]).suffix(2) == [.willEnterForeground, .didBecomeActive])
    }

    @Test(arguments: [
        (AppState.active, [EventKind.willResignActive, .didEnterBackground, .willTerminate]),
        (.inactive, [.didEnterBackground, .willTerminate]),
        (.background, [.willTerminate]),
    ])
    func terminate_fromEveryRunningState_takesTheLegalPath(from state: AppState, expected: [EventKind]) throws {
        var lifecycle = AppLifecycle()
        for kind in try lifecycle.steps(to: state) { lifecycle.apply(kind) }
        #expect(try lifecycle.steps(to: .notRunning) == expected)
    }

    @Test func launchIntoBackground_isLegal() throws {
        #expect(try run([.background]) == [.willFinishLaunching, .didFinishLaunching, .didEnterBackground])
    }

    @Test func sameState_deliversNothing() throws {
        var lifecycle = AppLifecycle()
        for kind in try lifecycle.steps(to: .active) { lifecycle.apply(kind) }
        #expect(try lifecycle.steps(to: .active).isEmpty)
    }

    @Test func terminateBeforeLaunch_deliversNothing() throws {
        #expect(try AppLifecycle().steps(to: .notRunning).isEmpty)
    }

    @Test func afterTermination_everyRequestIsRefused() throws {
        var lifecycle = AppLifecycle()
        for kind in try lifecycle.steps(to: .active) + [.willResignActive, .didEnterBackground, .willTerminate] {
            lifecycle.apply(kind)
        }
        #expect(lifecycle.hasTerminated)
        for target in [AppState.active, .inactive, .background, .notRunning] {
            #expect(throws: TransitionError.self) { try lifecycle.steps(to: target) }
        }
        do {
            _ = try lifecycle.steps(to: .active)
            Issue.record("a terminated app was given steps to active")
        } catch {
            #expect(error.description == "cannot move from notRunning to active: the app has terminated")
        }
    }

    @Test func everyStepLeavesTheStateUIKitDocuments() {
        #expect(EventKind.willFinishLaunching.stateAfter == .inactive)
        #expect(EventKind.didBecomeActive.stateAfter == .active)
        #expect(EventKind.willResignActive.stateAfter == .inactive)
        #expect(EventKind.didEnterBackground.stateAfter == .background)
        #expect(EventKind.willEnterForeground.stateAfter == .inactive)
        #expect(EventKind.willTerminate.stateAfter == .notRunning)
    }
}
