import ServiceABI
import ServiceKit

/// Runs one service class in process, without the `host` binary, on the host's own core: the
/// same `Application`, `Dispatcher` and `AnswerBook` as the `host` executable, on a manual
/// clock. It records what the service logged, posted, stored and asked for.
///
/// Like swift-nio's EmbeddedEventLoop, swift-service-lifecycle's TestKit and swift-log's
/// in-memory handler, it lets a unit test drive a service and assert on what it did:
///
/// ```swift
/// let host = TestHost(GreeterService())
/// host.launch()                                  // willFinishLaunching, didFinishLaunching, didBecomeActive
/// #expect(host.logs.contains(LogLine(.info, "greeter: didBecomeActive")))
/// let fetch = host.fetch(try PushNotification(json: #"{"aps":{"content-available":1}}"#))
/// host.advance(by: 30)                           // the deadline passes: fetch.timedOut
/// ```
///
/// Each call runs on the main thread, as the host calls services, and returns once the host
/// handled what the service left for it (posts, requests, completions from other threads). The
/// service is attached as a plugin listing the events of the capability protocols its class
/// adopts, subscribed to every notification when it adopts NotificationReceiving, and answering
/// the request names a test sends it. So it sees the host's rules: the lifecycle's legal paths,
/// which event a push becomes in the app's state (a `present` while not active reaches no
/// service), the order of delivery, the merge of answers and the deadlines of ``now``.
///
/// The service's `host` is the host's: `host.appState` follows the moves, `host.post` records
/// into ``posts`` and is delivered to the other subscribers (never back to the poster),
/// `host.requestAuthorization` answers with ``authorizationAnswer`` while the status is not
/// determined, `host.request` is carried by the host's request desk, after the event it was
/// made in, and answered from ``requestAnswers`` when no service answers it. `host.store`
/// reads and writes ``store``, in memory.
/// Use a `TestHost` from one thread; the service's completions and `host` calls may come
/// from any.
public final class TestHost<Service: ApplicationService> {
    /// The service under test.
    public let service: Service
    /// Its id, as `host.log` lines and the store would see it.
    public let id: String
    /// How long a completion may take, in seconds of ``now`` (the host's `--fetch-timeout`).
    public var answerDeadline: Double = 30 {
        didSet { onMain { [core, answerDeadline] in core.host.answerTimeout = answerDeadline } }
    }
    /// How long a reply to ``request(_:payload:from:)`` may take, in seconds of ``now`` (the
    /// host's `--request-timeout`).
    public var requestDeadline: Double = 5 {
        didSet { onMain { [core, requestDeadline] in core.host.requestTimeout = requestDeadline } }
    }
    /// The manual clock, in seconds; only ``advance(by:)`` moves it.
    public var now: Double { onMain { [core] in core.clock.now } }
    /// Every event delivered so far, in order (`.didBecomeActive`).
    public var deliveries: [EventKind] { onMain { [core] in core.deliveries } }

    private let recorder = TestRecorder()
    private let core: TestCore
    private var expiring: [(Double) -> Void] = []

    /// Attaches `service` as `id` to a new host; the app is not running until ``launch(_:into:)``.
    public init(_ service: Service, id: String = "test.service") {
        self.service = service
        self.id = id
        let recorder = recorder
        // The service crosses to the main thread once, to be attached there.
        let instance = UncheckedService(service)
        core = onMain { TestCore(instance.service, id: id, recorder: recorder) }
        onMain { [core] in
            core.host.answerTimeout = 30
            core.host.requestTimeout = 5
            core.setCurrentStates([:], previous: [])
        }
    }

    deinit {
        onMain { [core] in core.close() }
    }

    // MARK: - What the service did

    /// The lines it logged, in order.
    public var logs: [LogLine] { recorder.state.withLock { $0.logs } }
    /// The notifications it posted, in order.
    public var posts: [Post] { recorder.state.withLock { $0.posts } }
    /// What else it asked of the host, in order.
    public var requests: [Request] { recorder.state.withLock { $0.requests } }
    /// Its persistent store; set values before ``launch(_:into:)`` to seed it.
    public var store: [String: [UInt8]] {
        get { recorder.state.withLock { $0.store } }
        set { recorder.state.withLock { $0.store = newValue } }
    }
    /// How the service's own `host.request(name, …)` is answered when no service of the host
    /// answers it (the service under test answers the names of ``request(_:payload:from:)``),
    /// by name: the reply, or the error it gets. A name without an entry gets `SH_NOT_FOUND`
    /// ("no service answers NAME"), from the host. As from the host, a reply never arrives
    /// inside the call: it comes on the main thread after the event the service asked in.
    public var requestAnswers: [String: Result<JSONValue, RequestError>] {
        get { recorder.state.withLock { $0.requestAnswers } }
        set { recorder.state.withLock { $0.requestAnswers = newValue } }
    }
    /// The app's state as the service reads it (`host.appState`).
    public var appState: AppState { onMain { [core] in core.host.state } }
    /// The notification authorization the service reads (`host.notificationSettings`).
    public var notificationSettings: NotificationSettings {
        let settings = onMain { [core] in core.host.notificationSettings }
        return NotificationSettings(status: settings.status, allowed: settings.allowed)
    }
    /// What `host.requestAuthorization` decides while the status is not determined (the
    /// host's `--notification-authorization grant`: authorized), as the user at the prompt.
    public var authorizationAnswer: AuthorizationStatus {
        get { recorder.state.withLock { $0.authorizationAnswer } }
        set { recorder.state.withLock { $0.authorizationAnswer = newValue } }
    }

    // MARK: - The lifecycle, in UIKit's order

    /// Launches the app as the host does: willFinishLaunching, didFinishLaunching (the app
    /// inactive, or in the background for `into: .background`), then didBecomeActive for
    /// `into: .active` (for `into: .inactive`, didBecomeActive then willResignActive), then each
    /// launch option once through its own event (a URL through openURL, …). `options` gives the
    /// launch's URL, activity and notification; its flags and settings are the host's (none).
    /// Returns whether both launch events answered `true`.
    @discardableResult
    public func launch(_ options: LaunchOptions = LaunchOptions(), into state: AppState = .active) -> Bool {
        let url = options.url?.string
        let activity = options.userActivity.map { ($0.type, $0.webpageURL, $0.userInfo) }
        let notification = options.notification?.json
        return onMain { [core] in
            precondition(
                core.host.state == .notRunning && core.launchResults.isEmpty, "TestHost: launch() once, from notRunning"
            )
            core.launch(
                url: url, activity: activity, notification: notification,
                into: state == .background ? .background : .active)
            if state == .inactive { try? core.host.transition(to: .inactive) }
            return core.launchResults.allSatisfy { $0 == SH_OK }
        }
    }

    /// Moves the app along UIKit's legal path to `target` (the host's `transition`), delivering
    /// each step's event: active → background is willResignActive, didEnterBackground;
    /// background → active is willEnterForeground, didBecomeActive; `.notRunning` ends with
    /// willTerminate. Before ``launch(_:into:)`` it launches, without launch options, as the
    /// host does; once terminated it does nothing.
    public func move(to target: AppState) {
        onMain { [core] in try? core.host.transition(to: target) }
    }

    /// `host ctl activate`: to active.
    public func activate() { move(to: .active) }
    /// `host ctl background`: to the background.
    public func background() { move(to: .background) }
    /// `host ctl foreground`: from the background to inactive.
    public func foreground() { move(to: .inactive) }
    /// SIGTERM: to the background, then willTerminate.
    public func terminate() { move(to: .notRunning) }

    // MARK: - Background tasks

    /// The names of the background tasks the service has open (`host.beginBackgroundTask`).
    public var backgroundTasks: [String] { onMain { [core] in core.host.backgroundTasks.tasks.map(\.name) } }

    /// The open tasks' time is up, as before the machine sleeps: each expiration handler runs,
    /// and the host ends the tasks still open afterwards.
    public func expireBackgroundTasks() {
        onMain { [core] in core.host.backgroundTasks.expire(reason: "the test expired them") }
    }

    // MARK: - The session and the clock (the `lock` and `time` sources)

    /// The user's session locks, as the host's `lock` source moves the app: protectedDataWillBecomeUnavailable
    /// to a class that adopts ProtectedDataUnavailableObserving, then willResignActive when the app is active.
    public func lockSession() {
        onMain { [core] in core.lockSession() }
    }

    /// The session is unlocked: protectedDataDidBecomeAvailable to a class that adopts
    /// ProtectedDataAvailableObserving, then didBecomeActive when the app is inactive.
    public func unlockSession() {
        onMain { [core] in core.unlockSession() }
    }

    /// The wall clock was set, the time zone changed or local midnight passed: significantTimeChange;
    /// false when the class does not adopt SignificantTimeChangeObserving.
    @discardableResult
    public func significantTimeChange() -> Bool {
        guard service is any SignificantTimeChangeObserving else { return false }
        onMain { [core] in core.significantTimeChange() }
        return true
    }

    // MARK: - System sources (extension sources/1, and the built-in sources' current state)

    /// The descriptors the service watches (`host.watch`, extension sources/1), in the order it
    /// asked; a descriptor leaves when its watch ends.
    public var watchedDescriptors: [Int32] {
        recorder.state.withLock { state in state.watches.sorted { $0.key < $1.key }.map { $0.value.fd } }
    }

    /// Descriptor `fd` is readable, as the host's main loop would find it: each of the service's
    /// watches of it calls its handler on the main thread. False when the service watches no
    /// such descriptor (the loop does not run under a test: nothing else calls the handlers).
    @discardableResult
    public func descriptorReadable(_ fd: Int32) -> Bool {
        let handlers = recorder.state.withLock { state in
            state.watches.sorted { $0.key < $1.key }.filter { $0.value.fd == fd }.map { $0.value.readable }
        }
        guard !handlers.isEmpty else { return false }
        onMain { for handler in handlers { handler(fd) } }
        return true
    }

    /// What the host answers `network.current` and `power.current` with (the network and power
    /// sources' current state, as in their notifications: `["online": true, "interface": "eth0"]`),
    /// by request name, before any service, as the real host does. A built-in name without an
    /// entry is answered as while its source is off: SH_NOT_FOUND, "the network source is off:
    /// TestHost runs no sources". Post the notification that goes with a change yourself
    /// (``post(_:payload:from:)``).
    public var currentStates: [String: JSONValue] = [:] {
        didSet {
            let (states, previous) = (currentStates, Array(oldValue.keys))
            onMain { [core] in core.setCurrentStates(states, previous: previous) }
        }
    }

    // MARK: - Other events

    /// `host ctl memory-warning`; false when the class does not adopt MemoryWarningHandling.
    @discardableResult
    public func memoryWarning() -> Bool {
        guard service is any MemoryWarningHandling else { return false }
        onMain { [core] in _ = core.host.memoryWarning() }
        return true
    }

    /// A notification posted by `sender` (another service, or `"host"` for `host ctl post`);
    /// false when the class does not adopt NotificationReceiving. The service under test, the
    /// only service, receives it unless it is the sender.
    @discardableResult
    public func post(_ name: String, payload: JSONValue? = nil, from sender: String = "host") -> Bool {
        guard service is any NotificationReceiving else { return false }
        let json = payload.map { Array($0.serialized.utf8) }
        onMain { [core] in core.host.post(name: name, sender: sender, json: json) }
        return true
    }

    /// A request for one of the service's names (`host ctl request NAME`, or another service's
    /// `host.request`), carried by the host's request desk; nil when the class does not adopt
    /// Answering. The answer is the service's reply; it times out ``requestDeadline`` seconds
    /// of ``now`` later, as the host then answers the asker with an error.
    public func request(
        _ name: String, payload: JSONValue? = nil, from sender: String = "host"
    ) -> Answer<Result<JSONValue, RequestError>>? {
        guard service is any Answering else { return nil }
        let answer = pending(Result<JSONValue, RequestError>.self, within: requestDeadline)
        let json = payload.map { Array($0.serialized.utf8) }
        onMain { [core, id] in
            core.host.claimInProcess(answer: name, service: id)
            core.nextCompletion = { result, json in
                let body = json.flatMap { try? JSONValue(parsing: $0) }
                if result == SH_OK {
                    answer.complete(.success(body ?? .null))
                } else {
                    let message = body?["error"]?.stringValue ?? "error \(result)"
                    answer.complete(.failure(RequestError(code: result, message: message)))
                }
            }
            core.request(name, from: sender, json: json)
            core.nextCompletion = nil
        }
        return answer
    }

    /// A push while the app is active (willPresentNotification); nil when the class does not
    /// adopt PushPresenting. As in the host, a push that is not a background fetch, while the
    /// app is not active, is the system's to show: no service hears of it, and the answer stays
    /// pending until it times out.
    public func present(_ push: PushNotification) -> Answer<PresentationOptions>? {
        guard service is any PushPresenting else { return nil }
        let answer = pending(PresentationOptions.self)
        deliver(push, tap: nil) { result, _ in
            answer.complete(PresentationOptions(rawValue: UInt32(bitPattern: result)))
        }
        return answer
    }

    /// A background fetch (didReceiveRemoteNotification: the push should carry
    /// `content-available: 1`, or the host makes it another event); nil when the class does not
    /// adopt BackgroundFetching.
    public func fetch(_ push: PushNotification) -> Answer<FetchResult>? {
        guard service is any BackgroundFetching else { return nil }
        let answer = pending(FetchResult.self)
        deliver(push, tap: nil) { result, _ in
            if let fetched = FetchResult(rawValue: result) { answer.complete(fetched) }
        }
        return answer
    }

    /// The user acted on a notification. As in UIKit, anything but a dismissal first brings
    /// the app forward (willEnterForeground, didBecomeActive); nil when the class does not
    /// adopt NotificationResponseHandling.
    public func respond(_ response: NotificationResponse) -> Answer<Void>? {
        guard service is any NotificationResponseHandling else { return nil }
        let answer = pending(Void.self)
        deliver(response.notification, tap: response.actionIdentifier) { _, _ in answer.complete(()) }
        return answer
    }

    /// `host ctl open URL`: whether the service claimed it; nil when the class does not adopt
    /// URLHandling (or `url` is not a URL).
    public func open(_ url: String) -> Bool? {
        guard service is any URLHandling else { return nil }
        return onMain { [core] in core.open(url) }
    }

    /// `host ctl action ID`: whether the service handled the quick action; nil when the class
    /// does not adopt ShortcutHandling. The item's title is its id (a TestHost service declares
    /// no quick actions, so it is asked for every id, as a service without claims is).
    public func performAction(_ shortcut: String) -> Bool? {
        guard service is any ShortcutHandling else { return nil }
        return onMain { [core] in core.performAction(shortcut) }
    }

    /// `host ctl activity TYPE`: whether the service claimed it; nil when the class does not
    /// adopt UserActivityHandling.
    public func continueActivity(_ activity: UserActivity) -> Bool? {
        guard service is any UserActivityHandling else { return nil }
        let (type, webpage, userInfo) = (activity.type, activity.webpageURL, activity.userInfo)
        return onMain { [core] in core.continueActivity(type: type, webpageURL: webpage, userInfo: userInfo) }
    }

    /// `host ctl token HEX`; false when the class does not adopt DeviceTokenReceiving.
    @discardableResult
    public func register(deviceToken: DeviceToken) -> Bool {
        guard service is any DeviceTokenReceiving else { return false }
        let hex = deviceToken.hex
        onMain { [core] in core.register(hex: hex) }
        return true
    }

    /// `host ctl token-error MESSAGE`; false when the class does not adopt DeviceTokenErrorHandling.
    @discardableResult
    public func failToRegister(error: String) -> Bool {
        guard service is any DeviceTokenErrorHandling else { return false }
        onMain { [core] in _ = core.host.tokenRegistrationFailed(error) }
        return true
    }

    /// `host ctl authorization STATUS`: the host saves the status (the presentation options
    /// are those it allows) and, when it changed, delivers didChangeNotificationAuthorization to
    /// a class that adopts AuthorizationObserving.
    public func authorize(_ settings: NotificationSettings) {
        let status = settings.status
        onMain { [core] in _ = core.host.setNotificationAuthorization(status) }
    }

    /// A reload of a settings edit (`services.json`): the host gives the service `settings`
    /// and delivers didChangeSettings (old and new) without a restart; false when the class does
    /// not adopt SettingsObserving (the host would restart it with the new settings instead).
    @discardableResult
    public func changeSettings(to settings: [String: JSONValue]?) -> Bool {
        guard service is any SettingsObserving else { return false }
        let id = self.id
        return onMain { [core] in core.host.changeSettings(of: id, to: settings) }
    }

    // MARK: - Health

    /// How ``checkHealth()`` is judged, as the configuration's `healthCheck` would: the seconds
    /// of ``now`` the service has to answer (`timeout`; a missed one is unhealthy), the unhealthy
    /// answers in a row after which the host acts (`unhealthyAfter`), and whether it then
    /// restarts the service (`onUnhealthy: restart`) or reports it (the default).
    public var healthDeadline: Double = 5
    /// `unhealthyAfter` (see ``healthDeadline``).
    public var unhealthyAfter = 3
    /// `onUnhealthy: restart` when true (see ``healthDeadline``).
    public var restartsWhenUnhealthy = false

    /// One health check, as the host's interval sends it (`healthCheck`): the status the host
    /// recorded, the service's answer, or `unhealthy` once ``healthDeadline`` passed without one
    /// (``advance(by:)``). Nil when the class does not adopt HealthChecking, or a check is
    /// still pending.
    public func checkHealth() -> Answer<HealthStatus>? {
        guard service is any HealthChecking else { return nil }
        let answer = Answer<HealthStatus>(deadline: now + healthDeadline)
        let (timeout, after, restart) = (healthDeadline, unhealthyAfter, restartsWhenUnhealthy)
        let asked = onMain { [core] in
            core.checkHealth(timeout: timeout, unhealthyAfter: after, restart: restart) { status in
                answer.complete(HealthStatus(rawValue: status) ?? .unhealthy)
            }
        }
        return asked ? answer : nil
    }

    /// What the host knows of the service's health after the checks so far.
    public var health: HealthRecord {
        let record = onMain { [core] in core.health }
        return HealthRecord(
            status: record.status.flatMap(HealthStatus.init(rawValue:)), reason: record.reason,
            unhealthyChecks: record.unhealthyChecks, restarts: record.restarts)
    }

    // MARK: - Reload hand-over

    /// A restart by request (`host ctl service restart`), which hands the service's state over
    /// as a reload that replaces it does: willReload first (``StateHandingOver``: what it
    /// returns), then the events that take it down, then the launch events of its new start
    /// (`isRestart`), whose ``LaunchOptions/restoredState`` carries that state with this
    /// service's id and version (nil when it returned none, or more than
    /// ``RestoredState/largest`` bytes). False when the host did not restart it (not launched).
    @discardableResult
    public func restart() -> Bool {
        let id = self.id
        return onMain { [core] in (try? core.host.restartService(id, force: true)) != nil }
    }

    // MARK: - Time

    /// Moves the manual clock on by `seconds`: the host's deadlines that fall due pass (it
    /// answers for a service that did not complete in time), and every answer still pending at
    /// its deadline times out.
    public func advance(by seconds: Double) {
        precondition(seconds >= 0, "TestHost: time only moves forward")
        let now = onMain { [core] in
            core.clock.advance(by: seconds)
            core.host.drainMailbox()
            return core.clock.now
        }
        for expire in expiring { expire(now) }
    }

    // MARK: - Helpers

    /// A push through the host (`host ctl push`), with `observe` told of the service's completion.
    private func deliver(
        _ push: PushNotification, tap: String?, observe: @escaping @Sendable (Int32, [UInt8]?) -> Void
    ) {
        let json = push.json
        onMain { [core] in
            core.nextCompletion = observe
            core.push(json: json, tap: tap)
            core.nextCompletion = nil
        }
    }

    private func pending<Value: Sendable>(_: Value.Type, within seconds: Double? = nil) -> Answer<Value> {
        let answer = Answer<Value>(deadline: now + (seconds ?? answerDeadline))
        expiring.append { answer.expire(at: $0) }
        return answer
    }
}

/// The service under test, handed to the main thread once to be attached (the host calls it
/// only there afterwards, as it calls every service).
private struct UncheckedService: @unchecked Sendable {
    // @unchecked: crosses to the main thread once, in TestHost.init, while the test waits.
    let service: any ApplicationService
    init(_ service: any ApplicationService) { self.service = service }
}
