import Dispatch
import Locking
import ServiceKit
import ServiceKitTesting
import TestSupport
import Testing

/// TestHost (ServiceKitTesting) against services written for it: UIKit's order, the manual
/// clock's deadlines, what a service did through `host`, and requests in both directions.
@Suite struct TestHostTests {
    @Test func launch_deliversUIKitsOrder_andAppStateFollows() {
        let service = LifecycleProbe()
        let host = TestHost(service, id: "com.example.probe")
        #expect(host.launch())
        #expect(host.deliveries == [.willFinishLaunching, .didFinishLaunching, .didBecomeActive])
        // What the service read through host.appState during each event.
        #expect(
            service.seen == [
                "willFinishLaunching": .inactive, "didFinishLaunching": .inactive, "didBecomeActive": .active,
            ])
        host.terminate()
        #expect(host.deliveries.suffix(3) == [.willResignActive, .didEnterBackground, .willTerminate])
        #expect(host.appState == .notRunning)

        let background = TestHost(LifecycleProbe())
        background.launch(into: .background)
        #expect(background.appState == .background)
        #expect(background.deliveries == [.willFinishLaunching, .didFinishLaunching])
    }

    @Test func aLockedSession_isProtectedDataThenResign_andUnlockIsTheReverse_andTheClockIsObserved() {
        let host = TestHost(SessionProbe())
        host.launch()
        host.lockSession()
        #expect(host.appState == .inactive)
        host.unlockSession()
        #expect(host.appState == .active)
        #expect(host.significantTimeChange())
        #expect(
            Array(host.deliveries.dropFirst(3)) == [
                .protectedDataWillBecomeUnavailable, .willResignActive, .protectedDataDidBecomeAvailable,
                .didBecomeActive, .significantTimeChange,
            ])
        // A class that does not observe the clock is not asked.
        #expect(!TestHost(LifecycleProbe()).significantTimeChange())
    }

    @Test func aSettingsChange_reachesASettingsObserver_oldAndNew_withoutARestart() {
        let service = SettingsProbe()
        let host = TestHost(service)
        host.launch()
        #expect(host.changeSettings(to: ["level": "debug"]))
        #expect(host.changeSettings(to: nil))
        #expect(service.changes == [[nil, ["level": "debug"]], [["level": "debug"], nil]])
        #expect(host.deliveries.filter { $0 == .didChangeSettings }.count == 2)
        #expect(host.deliveries.filter { $0 == .willFinishLaunching }.count == 1)
        // A class that does not adopt SettingsObserving would be restarted instead: nothing delivered.
        #expect(!TestHost(LifecycleProbe()).changeSettings(to: ["level": "debug"]))
    }

    @Test func healthChecks_recordTheAnswer_timeOutAsUnhealthy_andRestartAfterTheRun() {
        let service = HealthProbe()
        let host = TestHost(service)
        host.launch()
        #expect(host.health == HealthRecord(status: nil, reason: nil, unhealthyChecks: 0, restarts: 0))
        #expect(host.checkHealth()?.value == .healthy)
        service.answer = (.degraded, "cache cold")
        #expect(host.checkHealth()?.value == .degraded)
        #expect(host.health.reason == "cache cold" && host.health.unhealthyChecks == 0)

        // Silent: pending until the deadline, then unhealthy, for the host's reason.
        service.answer = nil
        host.healthDeadline = 2
        let silent = host.checkHealth()
        #expect(silent != nil && silent?.value == nil && silent?.timedOut == false)
        #expect(host.checkHealth() == nil)  // one check at a time
        host.advance(by: 2)
        #expect(silent?.value == .unhealthy)
        #expect(
            host.health
                == HealthRecord(status: .unhealthy, reason: "no answer within 2 s", unhealthyChecks: 1, restarts: 0))

        // The run's end restarts it (in process: taken down and caught up), and the run starts over.
        service.answer = (.unhealthy, "queue stuck")
        host.unhealthyAfter = 2
        host.restartsWhenUnhealthy = true
        #expect(host.checkHealth()?.value == .unhealthy)
        #expect(host.health.restarts == 1 && host.health.unhealthyChecks == 0)
        #expect(host.deliveries.filter { $0 == .willFinishLaunching }.count == 2)
        #expect(TestHost(LifecycleProbe()).checkHealth() == nil)
    }

    @Test func aHealthReport_fromAnyThread_countsAsACheck() throws {
        let service = Reporter()
        let host = TestHost(service)
        host.launch()
        try service.report(.degraded, "cache cold")
        #expect(host.health == HealthRecord(status: .degraded, reason: "cache cold", unhealthyChecks: 0, restarts: 0))
        DispatchQueue.global().sync { try? service.report(.unhealthy, "queue stuck") }
        #expect(host.health.unhealthyChecks == 1 && host.health.reason == "queue stuck")
        try service.report(.healthy, nil)
        #expect(host.health == HealthRecord(status: .healthy, reason: nil, unhealthyChecks: 0, restarts: 0))
    }

    @Test func aRestart_handsTheStateFromWillReload_toTheNextLaunch() {
        let service = StateKeeper()
        let host = TestHost(service, id: "test.keeper")
        host.launch()
        #expect(service.restored == [nil])
        service.count = 7
        #expect(host.restart())
        #expect(service.restored.last == RestoredState(bytes: [7], serviceID: "test.keeper", version: "0.0.0"))
        #expect(host.deliveries.filter { $0 == .willReload }.count == 1)
        #expect(host.appState == .active)
        // Over 1 MiB: refused, the next launch has none.
        service.oversized = true
        #expect(host.restart())
        #expect(service.restored.count == 3 && service.restored.last == .some(nil))
        // A class that does not adopt StateHandingOver is restarted without one.
        let plain = TestHost(LifecycleProbe())
        plain.launch()
        #expect(plain.restart() && !plain.deliveries.contains(.willReload))
    }

    @Test func moves_followTheHostsLifecycle_andATerminatedAppNeverMovesAgain() {
        let host = TestHost(LifecycleProbe())
        // Before launch, a move launches (without launch options), as the host's transition does.
        host.move(to: .background)
        #expect(host.deliveries == [.willFinishLaunching, .didFinishLaunching, .didEnterBackground])
        host.move(to: .active)
        #expect(host.deliveries.suffix(2) == [.willEnterForeground, .didBecomeActive])
        host.move(to: .inactive)
        host.terminate()
        #expect(host.deliveries.suffix(3) == [.willResignActive, .didEnterBackground, .willTerminate])
        let delivered = host.deliveries.count
        host.activate()
        #expect(host.deliveries.count == delivered)
        #expect(host.appState == .notRunning)
    }

    @Test func aCompletionNeverCalled_timesOutAtTheDeadline_andASecondCallIsCounted() throws {
        let service = Fetcher()
        let host = TestHost(service)
        host.launch(into: .background)
        let push = try PushNotification(json: #"{"aps":{"content-available":1}}"#)
        let silent = try #require(host.fetch(push))
        host.advance(by: 29.9)
        #expect(!silent.timedOut && silent.value == nil)
        host.advance(by: 0.1)
        #expect(silent.timedOut)

        service.answerTwice = true
        let answered = try #require(host.fetch(push))
        #expect(answered.value == .newData)
        #expect(answered.calls == 2)
        // A class that does not adopt the event's protocol gets nothing.
        #expect(TestHost(LifecycleProbe()).fetch(push) == nil)
    }

    @Test func aResponse_bringsTheAppForward_unlessDismissed() throws {
        let host = TestHost(Responder())
        host.launch(into: .background)
        let push = try PushNotification(json: #"{"aps":{"alert":"hi"}}"#)
        _ = host.respond(
            NotificationResponse(actionIdentifier: NotificationResponse.dismissActionIdentifier, notification: push))
        #expect(host.appState == .background)
        _ = host.respond(NotificationResponse(notification: push))
        #expect(host.appState == .active)
        #expect(host.deliveries.suffix(3) == [.willEnterForeground, .didBecomeActive, .didReceiveNotificationResponse])
    }

    @Test func storePostsAndAuthorization_areRecorded() {
        let host = TestHost(Counter())
        host.store["count"] = Array("41".utf8)
        host.authorizationAnswer = .denied
        host.launch()
        #expect(host.store["count"] == Array("42".utf8))
        #expect(host.posts == [Post("counter.changed", payload: ["count": 42])])
        #expect(host.requests == [.authorization([.alert])])
        #expect(host.notificationSettings.status == .denied)
    }

    /// `setNotificationCategories` (issue 39) goes through the host's notifications extension:
    /// recorded as the JSON the host got; one the host refuses throws `invalid`.
    @Test func notificationCategories_areRecorded_andOneTheHostRefusesThrows() {
        let service = CategoryRegistrar()
        let host = TestHost(service)
        host.launch()
        #expect(service.errors == [nil, .invalid])
        #expect(
            host.requests == [
                .notificationCategories(["invite": [["id": "accept", "title": "Accept"]]]),
                .notificationCategories(["invite": [["id": "default", "title": "Go"]]]),
            ])
    }

    @Test func aPresentWhileNotActive_reachesNoService_asInTheHost() throws {
        let host = TestHost(Presenter())
        host.launch(into: .background)
        let push = try PushNotification(json: #"{"aps":{"alert":"hi"}}"#)
        let unseen = try #require(host.present(push))
        // The system shows it; no service hears of it until the user taps it.
        #expect(!host.deliveries.contains(.willPresentNotification))
        host.advance(by: 30)
        #expect(unseen.timedOut)
        host.activate()
        let shown = try #require(host.present(push))
        #expect(host.deliveries.last == .willPresentNotification)
        #expect(shown.value == [.banner, .sound])
    }

    @Test func aLaunchURL_isDeliveredAgainAfterTheLaunch_asTheHostDoes() throws {
        let service = Opener()
        let host = TestHost(service)
        let url = try #require(OpenURL("myapp://item/7"))
        #expect(host.launch(LaunchOptions(url: url)))
        #expect(host.deliveries == [.willFinishLaunching, .didFinishLaunching, .didBecomeActive, .openURL])
        #expect(service.opened == ["launch myapp://item/7", "myapp://item/7 fromLaunch"])
        #expect(host.open("other://x") == false)
    }

    @Test func aQuickAction_reachesAShortcutHandler_withItsAnswer() {
        let service = Composer()
        let host = TestHost(service)
        host.launch()
        #expect(host.performAction("compose") == true)
        #expect(host.performAction("search") == false)
        #expect(host.deliveries.suffix(2) == [.performActionForShortcutItem, .performActionForShortcutItem])
        #expect(service.performed == ["compose compose", "search search"])
        #expect(TestHost(Opener()).performAction("compose") == nil)
    }

    @Test func aPost_reachesTheServiceUnlessItIsTheSender() {
        let service = Listener()
        let host = TestHost(service, id: "com.example.listener")
        host.launch()
        #expect(host.post("ping", payload: ["n": 1], from: "com.example.other"))
        #expect(host.post("ping", from: "com.example.listener"))
        #expect(service.heard == ["ping from com.example.other"])
        #expect(host.deliveries.filter { $0 == .notification }.count == 1)
    }

    // MARK: Requests

    @Test func aRequest_reachesAnAnsweringService_andItsReplyOrFailureIsTheAnswer() throws {
        let host = TestHost(QueueCounter())
        host.launch()
        let count = try #require(host.request("queue.count", payload: ["of": "outbox"]))
        #expect(host.deliveries.last == .request)
        #expect(count.value == .success(["count": 3, "of": "outbox", "from": "host"]))
        let refused = try #require(host.request("queue.drop", from: "com.example.other"))
        #expect(refused.value == .failure(RequestError(code: -1, message: "read-only")))
        // A class that is not Answering is not asked.
        #expect(TestHost(LifecycleProbe()).request("queue.count") == nil)
    }

    @Test func aReplyNeverSent_timesOutAtTheRequestDeadline() throws {
        let service = QueueCounter()
        service.silent = true
        let host = TestHost(service)
        host.launch()
        let answer = try #require(host.request("queue.count"))
        host.advance(by: 4.9)
        #expect(answer.value == nil && !answer.timedOut)
        host.advance(by: 0.1)
        #expect(answer.timedOut)
    }

    @Test func theServicesOwnRequest_isRecorded_andAnsweredAfterTheEvent() throws {
        let service = Asker()
        let host = TestHost(service)
        host.requestAnswers = ["geo.locate": .success(["city": "Seoul"])]
        host.launch()
        #expect(
            host.requests == [
                .request("geo.locate", payload: ["precise": true]), .request("weather.now", payload: nil),
            ])
        // Never inside the call: both replies came after didBecomeActive returned.
        #expect(service.repliesDuringEvent == 0)
        #expect(service.replies["geo.locate"] == .success(["city": "Seoul"]))
        let missing = try #require(service.replies["weather.now"])
        guard case .failure(let error) = missing else {
            Issue.record("weather.now was answered: \(missing)")
            return
        }
        #expect(error.isNotFound)
    }

    @Test func aRequestMadeOutsideAnEvent_isAnsweredOnTheMainThread_beforeTheNextCall() throws {
        let service = Asker()
        let host = TestHost(service)
        host.requestAnswers = ["later": .failure(RequestError(code: -1, message: "busy"))]
        host.launch()
        // From the test's thread: the host's main thread carries it as soon as it is free, and
        // every TestHost call returns only once the main thread handled what was queued before.
        try service.host.request("later") { service.record("later", $0) }
        host.advance(by: 0)
        #expect(service.replies["later"] == .failure(RequestError(code: -1, message: "busy")))
    }
}

// MARK: - Services under test

@Suite struct BackgroundTaskTests {
    /// issue 38: a service opens a task in didEnterBackground; it stays open until the service
    /// ends it, and the expiration handler runs (on the main thread) when its time is up.
    @Test func aTaskOpensInTheBackground_endsOrExpires() {
        let service = Saver()
        let host = TestHost(service)
        host.launch()
        host.background()
        #expect(host.backgroundTasks == ["save"])
        #expect(service.task?.isOpen == true)
        // The service ends it on the main thread, where it handles events (twice: the second does nothing).
        #expect(host.post("save.done"))
        #expect(host.backgroundTasks.isEmpty && service.task?.isOpen == false)
        #expect(host.post("save.done"))

        host.foreground()
        host.background()
        #expect(host.backgroundTasks == ["save"])
        host.expireBackgroundTasks()
        #expect(service.expired == ["save"])
        #expect(host.backgroundTasks.isEmpty && service.task?.isOpen == false)
    }

    @Test func beforeAttach_orWithAnEmptyName_noTaskOpens() {
        let service = Saver()
        #expect(throws: HostError.notAttached) { try service.host.beginBackgroundTask("save") { _ in } }
        let host = TestHost(service)
        host.launch()
        #expect(throws: HostError.invalid) { try service.host.beginBackgroundTask("") { _ in } }
        #expect(host.backgroundTasks.isEmpty)
    }
}

private final class Saver: NotificationReceiving {
    var task: BackgroundTask?
    var expired: [String] = []
    func didEnterBackground() {
        task = try? host.beginBackgroundTask("save") { [unowned self] task in
            expired.append(task.name)
        }
    }
    func didReceive(_ notification: ServiceNotification) {
        if notification.name == "save.done" { task?.end() }
    }
}

private final class LifecycleProbe: ApplicationService {
    var seen: [String: AppState] = [:]
    func willFinishLaunching(_ options: LaunchOptions) -> Bool {
        seen["willFinishLaunching"] = host.appState
        return true
    }
    func didFinishLaunching(_ options: LaunchOptions) -> Bool {
        seen["didFinishLaunching"] = host.appState
        return true
    }
    func didBecomeActive() { seen["didBecomeActive"] = host.appState }
}

private final class Fetcher: BackgroundFetching {
    var answerTwice = false
    func didReceiveRemoteNotification(_ notification: PushNotification, completion: FetchCompletion) {
        guard answerTwice else { return }
        completion(.newData)
        completion(.failed)
    }
}

private final class Presenter: PushPresenting {
    func willPresent(_ notification: PushNotification, completion: PresentationCompletion) {
        completion([.banner, .sound])
    }
}

private final class Opener: URLHandling {
    var opened: [String] = []
    func didFinishLaunching(_ options: LaunchOptions) -> Bool {
        if let url = options.url { opened.append("launch \(url.string)") }
        return true
    }
    func open(_ url: OpenURL) -> Bool {
        opened.append(url.string + (url.isFromLaunch ? " fromLaunch" : ""))
        return url.scheme == "myapp"
    }
}

private final class Composer: ShortcutHandling {
    var performed: [String] = []
    func perform(_ item: ShortcutItem) -> Bool {
        performed.append("\(item.id) \(item.title)")
        return item.id == "compose"
    }
}

private final class Listener: NotificationReceiving {
    var heard: [String] = []
    func didReceive(_ notification: ServiceNotification) {
        heard.append("\(notification.name) from \(notification.sender)")
    }
}

private final class Responder: NotificationResponseHandling {
    func didReceive(_ response: NotificationResponse, completion: ResponseCompletion) { completion() }
}

private final class Counter: ApplicationService {
    func didBecomeActive() {
        let count = ((try? host.store.string("count")).flatMap { $0.flatMap { Int($0) } } ?? 0) + 1
        try? host.store.set("count", String(count))
        try? host.post("counter.changed", payload: ["count": .number(Double(count))])
        _ = try? host.requestAuthorization([.alert])
    }
}

private final class CategoryRegistrar: ApplicationService {
    var errors: [HostError?] = []
    func didFinishLaunching(_ options: LaunchOptions) -> Bool {
        for action in [NotificationCategory.Action(id: "accept", title: "Accept"), .init(id: "default", title: "Go")] {
            do throws(HostError) {
                try host.setNotificationCategories([NotificationCategory(id: "invite", actions: [action])])
                errors.append(nil)
            } catch { errors.append(error) }
        }
        return true
    }
}

private final class QueueCounter: Answering {
    var silent = false
    func answer(_ request: ServiceRequest, reply: ReplyCompletion) {
        if silent { return }
        guard request.name == "queue.count" else { return reply.fail("read-only") }
        reply(["count": 3, "of": request.payload?["of"] ?? .null, "from": .string(request.from)])
    }
}

private final class Asker: ApplicationService, @unchecked Sendable {
    // Written on the main thread, where the host delivers replies; read by the test after a
    // TestHost call, which returns only once the main thread handled what was queued for it.
    var replies: [String: Result<JSONValue, RequestError>] = [:]
    var repliesDuringEvent = 0

    func record(_ name: String, _ result: Result<JSONValue, RequestError>) { replies[name] = result }

    func didBecomeActive() {
        try? host.request("geo.locate", ["precise": true]) { self.record("geo.locate", $0) }
        try? host.request("weather.now") { self.record("weather.now", $0) }
        repliesDuringEvent = replies.count
    }
}

/// Records each settings change it is told of.
private final class SettingsProbe: SettingsObserving {
    var changes: [[JSONValue?]] = []
    func didChangeSettings(from old: JSONValue?, to new: JSONValue?) { changes.append([old, new]) }
}

/// Answers health checks with `answer`, or not at all while it is nil.
private final class HealthProbe: HealthChecking, @unchecked Sendable {
    // Set by the test between TestHost calls, read on the main thread during them.
    var answer: (status: HealthStatus, reason: String?)? = (.healthy, nil)
    func checkHealth(completion: HealthCompletion) {
        guard let answer else { return }
        completion(answer.status, reason: answer.reason)
    }
}

private final class Reporter: ApplicationService, Sendable {
    func report(_ status: HealthStatus, _ reason: String?) throws(HostError) {
        try host.reportHealth(status, reason: reason)
    }
}

private final class StateKeeper: StateHandingOver, @unchecked Sendable {
    // Set by the test between TestHost calls, read on the main thread during them.
    var count: UInt8 = 0
    var oversized = false
    private(set) var restored: [RestoredState?] = []
    func willFinishLaunching(_ options: LaunchOptions) -> Bool {
        restored.append(options.restoredState)
        return true
    }
    func willReload() -> [UInt8]? { oversized ? Array(repeating: 1, count: RestoredState.largest + 1) : [count] }
}

/// Observes the session's lock and the clock (the lock and time sources' events).
private final class SessionProbe: ProtectedDataUnavailableObserving, ProtectedDataAvailableObserving,
    SignificantTimeChangeObserving
{
    func protectedDataWillBecomeUnavailable() {}
    func protectedDataDidBecomeAvailable() {}
    func significantTimeChange() {}
}

@Suite struct DeployRequestTests {
    /// issue 40: `HostContext.deploy` checks its arguments before the host sees them, and a
    /// deploy the host refuses (a TestHost takes no control requests, so it deploys nothing)
    /// reaches the completion as `.refused`, with why.
    @Test func badArgumentsThrow_andARefusalReachesTheCompletion() throws {
        let service = Deployer()
        #expect(throws: HostError.notAttached) { try service.host.deploy("/srv/release-2") { _ in } }
        let host = TestHost(service)
        host.launch()
        #expect(throws: HostError.invalid) { try service.host.deploy("release-2") { _ in } }
        #expect(throws: HostError.invalid) {
            try service.host.deploy("/srv/release-2", probation: .seconds(86_401)) { _ in }
        }
        let outcome = OutcomeBox()
        try service.host.deploy("/srv/release-2", probation: .seconds(5)) { result in
            outcome.value.withLock { $0 = result }
        }
        #expect(eventually { outcome.value.withLock { $0 } != nil })
        let refused = try #require(outcome.value.withLock { $0 })
        #expect(
            refused.result == .refused && refused.generation == nil && refused.error?.isEmpty == false, "\(refused)")
    }
}

private final class Deployer: ApplicationService {}

private final class OutcomeBox: Sendable {
    let value = Locked<DeployOutcome?>(nil)
}

@Suite struct SourcesInTestHostTests {
    /// issue 38: a system source written as a service (extension sources/1) watches a
    /// descriptor, sets its current state and moves the app; TestHost records each call, makes the
    /// descriptor readable when the test says so, carries out the moves and answers the state.
    @Test func aSourceService_watchesSetsItsStateAndMovesTheApp_recorded() throws {
        let service = Ignition()
        let host = TestHost(service)
        host.launch()
        #expect(host.watchedDescriptors == [42])
        // A built-in source's name is the host's own.
        #expect(service.refused == .invalid)
        #expect(!host.descriptorReadable(7))
        #expect(host.descriptorReadable(42))
        #expect(host.appState == .background)
        #expect(host.descriptorReadable(42))
        #expect(host.appState == .active)
        #expect(
            host.deliveries.suffix(4) == [
                .willResignActive, .didEnterBackground, .willEnterForeground, .didBecomeActive,
            ])

        // The host answers the state the source set, to any service that asks.
        let asker = Asker()
        try service.host.request("ignition.current") { asker.record("ignition.current", $0) }
        host.advance(by: 0)
        #expect(asker.replies["ignition.current"] == .success(["on": true]))

        #expect(host.post("ignition.stop"))
        #expect(host.watchedDescriptors.isEmpty)
        #expect(!host.descriptorReadable(42))
        #expect(
            host.requests == [
                .watch(42), .currentState("network.current", ["online": true]),
                .currentState("ignition.current", ["on": false]), .moveApp(.enterBackground),
                .currentState("ignition.current", ["on": true]), .moveApp(.becomeActive),
                .request("ignition.current", payload: nil), .unwatch(42),
            ])
    }

    /// issue 38: `network.current` and `power.current` answer with what the test set, and as
    /// while the source is off without it.
    @Test func networkAndPowerCurrent_answerTheTestsValues_elseAsWhileTheSourceIsOff() throws {
        let service = Asker()
        let host = TestHost(service)
        host.launch()
        func ask(_ name: String) throws -> Result<JSONValue, RequestError>? {
            try service.host.request(name) { service.record(name, $0) }
            host.advance(by: 0)
            return service.replies.removeValue(forKey: name)
        }
        for name in ["network.current", "power.current"] {
            let error = try ask(name)?.failure
            #expect(error?.isNotFound == true)
            #expect(error?.message == "the \(name.prefix { $0 != "." }) source is off: TestHost runs no sources")
        }
        host.currentStates = [
            "network.current": ["online": true, "interface": "eth0"],
            "power.current": ["onBattery": true, "low": false, "percentage": 80],
        ]
        #expect(try ask("network.current") == .success(["online": true, "interface": "eth0"]))
        #expect(try ask("power.current") == .success(["onBattery": true, "low": false, "percentage": 80]))
        host.currentStates["network.current"] = nil
        #expect(try ask("network.current")?.failure?.isNotFound == true)
        #expect(try ask("power.current") == .success(["onBattery": true, "low": false, "percentage": 80]))
    }
}

extension Result where Success == JSONValue, Failure == RequestError {
    fileprivate var failure: RequestError? {
        if case .failure(let error) = self { return error }
        return nil
    }
}

/// A system source written as a service (extension sources/1): descriptor 42 is its ignition
/// line, each time it is readable the ignition turns, its state is set and the app moves.
private final class Ignition: NotificationReceiving, @unchecked Sendable {
    // Main thread only: the host calls it there, and the test reads it between TestHost calls.
    var on = true
    var watch: SourceWatch?
    var refused: HostError?

    func didFinishLaunching(_ options: LaunchOptions) -> Bool {
        watch = try? host.watch(42) { [unowned self] _ in turn() }
        do throws(HostError) { try host.setCurrentState("network.current", ["online": true]) } catch {
            refused = error
        }
        return true
    }

    func turn() {
        on.toggle()
        try? host.setCurrentState("ignition.current", ["on": .bool(on)])
        try? host.moveApp(on ? .becomeActive : .enterBackground)
    }

    func didReceive(_ notification: ServiceNotification) {
        if notification.name == "ignition.stop" { watch?.end() }
    }
}
