import ServiceABI
import ServiceKit

// The host's own state machine and event rules (HostCore), not a copy: only these, so the
// host's other public names (its DeviceToken, Log, …) do not meet the SDK's in a test.
internal import struct HostCore.AppLifecycle

/// Runs one service class in process, without the `host` binary: delivers events in UIKit's
/// order, answers its completions, records what it logged, posted, stored and asked for, and
/// keeps a manual clock for the completions' deadlines.
///
/// Like swift-service-lifecycle's TestKit and swift-log's in-memory handler, it lets a unit
/// test drive a service and assert on what it did:
///
/// ```swift
/// let host = TestHost(GreeterService())
/// host.launch()                                  // willFinishLaunching, didFinishLaunching, didBecomeActive
/// #expect(host.logs.contains(LogLine(.info, "greeter: didBecomeActive")))
/// let fetch = host.fetch(try PushNotification(json: #"{"aps":{"content-available":1}}"#))
/// host.advance(by: 30)                           // the deadline passes: fetch.timedOut
/// ```
///
/// The service's `host` works as under the real host: `host.appState` follows the moves,
/// `host.store` reads and writes ``store``, `host.post` records into ``posts`` (never
/// delivered back: the poster does not get its own), `host.requestAuthorization` answers
/// with ``authorizationAnswer`` while the status is not determined, `host.request` gets
/// its reply from ``requestAnswers`` after the event it was made in. Events reach only the
/// capability protocols the class adopts; one it does not adopt is not delivered (nil).
/// Use a `TestHost` from one thread; the service's completions and `host` calls may come
/// from any.
public final class TestHost<Service: ApplicationService> {
    /// The service under test.
    public let service: Service
    /// Its id, as `host.log` lines and the store would see it.
    public let id: String
    /// How long a completion may take, in seconds of ``now`` (the host's `--fetch-timeout`).
    public var answerDeadline: Double = 30
    /// How long a reply to ``request(_:payload:from:)`` may take, in seconds of ``now`` (the
    /// host's `--request-timeout`).
    public var requestDeadline: Double = 5
    /// The manual clock, in seconds; only ``advance(by:)`` moves it.
    public private(set) var now: Double = 0
    /// Every event delivered so far, in order (`.didBecomeActive`).
    public private(set) var deliveries: [EventKind] = []

    private let recorder = TestRecorder()
    private let table: UnsafeMutablePointer<sh_host>
    private var expiring: [(Double) -> Void] = []
    /// Where the app is and where it may go: the host's own lifecycle.
    private var lifecycle = AppLifecycle()

    /// Attaches `service` as `id`; the app is not running until ``launch(_:into:)``.
    public init(_ service: Service, id: String = "test.service") {
        self.service = service
        self.id = id
        table = TestHostTable.make(for: recorder)
        TestAttachments.attach(service, id: id, to: table)
    }

    deinit {
        TestAttachments.detach(service)
        TestHostTable.release(table)
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
    /// How the service's own `host.request(name, …)` is answered, by name: the reply, or the
    /// error it gets. A name without an entry gets `SH_NOT_FOUND` ("no service answers
    /// NAME"), as from a host where nobody answers it. As from the host, a reply never
    /// arrives inside the call: it comes after the event the service asked in (a request
    /// made outside an event, from another thread, at the next ``advance(by:)``), on the
    /// test's thread.
    public var requestAnswers: [String: Result<JSONValue, RequestError>] {
        get { recorder.state.withLock { $0.requestAnswers } }
        set { recorder.state.withLock { $0.requestAnswers = newValue } }
    }
    /// The app's state as the service reads it (`host.appState`).
    public var appState: AppState { recorder.state.withLock { $0.appState } }
    /// The notification authorization the service reads (`host.notificationSettings`).
    public var notificationSettings: NotificationSettings { recorder.state.withLock { $0.settings } }
    /// What `host.requestAuthorization` decides while the status is not determined
    /// (the host's `--notification-authorization grant`: authorized).
    public var authorizationAnswer: AuthorizationStatus {
        get { recorder.state.withLock { $0.authorizationAnswer } }
        set { recorder.state.withLock { $0.authorizationAnswer = newValue } }
    }

    // MARK: - The lifecycle, in UIKit's order

    /// Launches the app: willFinishLaunching, didFinishLaunching (the app inactive, or in
    /// the background for `into: .background`), then didBecomeActive for `into: .active`.
    /// Returns whether both launch events answered `true`.
    @discardableResult
    public func launch(_ options: LaunchOptions = LaunchOptions(), into state: AppState = .active) -> Bool {
        precondition(appState == .notRunning && !lifecycle.hasTerminated, "TestHost: launch() once, from notRunning")
        var launched = true
        // As the host launches: each launch event in the state it leaves the app in.
        for kind in [EventKind.willFinishLaunching, .didFinishLaunching] {
            if state == .background {
                lifecycle.applyBackgroundLaunch(kind)
                setState(lifecycle.state)
            } else {
                apply(kind)
            }
            let answered = deliver(kind) {
                kind == .willFinishLaunching
                    ? service.willFinishLaunching(options) : service.didFinishLaunching(options)
            }
            launched = answered && launched
        }
        if state == .active { move(to: .active) }
        return launched
    }

    /// Moves the app along UIKit's legal path to `target` (the host's ``AppLifecycle``),
    /// delivering each step's event: active → background is willResignActive,
    /// didEnterBackground; background → active is willEnterForeground, didBecomeActive;
    /// `.notRunning` ends with willTerminate. Before ``launch(_:into:)`` it launches, without
    /// launch options, as the host does; once terminated it does nothing.
    public func move(to target: AppState) {
        guard let steps = try? lifecycle.steps(to: target) else { return }
        for kind in steps {
            // Did-events see the new state, will-events the old one (EventKind.isDeliveredInNewState).
            if kind.isDeliveredInNewState { apply(kind) }
            deliverLifecycle(kind)
            if !kind.isDeliveredInNewState { apply(kind) }
        }
    }

    /// `host ctl activate`: to active.
    public func activate() { move(to: .active) }
    /// `host ctl background`: to the background.
    public func background() { move(to: .background) }
    /// `host ctl foreground`: from the background to inactive.
    public func foreground() { move(to: .inactive) }
    /// SIGTERM: to the background, then willTerminate.
    public func terminate() { move(to: .notRunning) }

    // MARK: - Other events

    /// `host ctl memory-warning`; false when the class does not adopt MemoryWarningHandling.
    @discardableResult
    public func memoryWarning() -> Bool {
        guard let handler = service as? any MemoryWarningHandling else { return false }
        deliver(.didReceiveMemoryWarning) { handler.didReceiveMemoryWarning() }
        return true
    }

    /// A notification posted by `sender`; false when the class does not adopt NotificationReceiving.
    @discardableResult
    public func post(_ name: String, payload: JSONValue? = nil, from sender: String = "host") -> Bool {
        guard let handler = service as? any NotificationReceiving else { return false }
        deliver(.notification) { handler.didReceive(ServiceNotification(name: name, sender: sender, payload: payload)) }
        return true
    }

    /// A request for one of the service's names (`host ctl request NAME`, or another service's
    /// `host.request`); nil when the class does not adopt Answering. The answer times out
    /// ``requestDeadline`` seconds of ``now`` later, as the host answers the asker with an
    /// error when the reply does not come in time.
    public func request(
        _ name: String, payload: JSONValue? = nil, from sender: String = "host"
    ) -> Answer<Result<JSONValue, RequestError>>? {
        guard let handler = service as? any Answering else { return nil }
        let answer = pending(Result<JSONValue, RequestError>.self, within: requestDeadline)
        deliver(.request) {
            handler.answer(ServiceRequest(name: name, from: sender, payload: payload), reply: ReplyCompletion { answer.complete($0) })
        }
        return answer
    }

    /// A push while the app is active (willPresentNotification); nil when the class does not
    /// adopt PushPresenting.
    public func present(_ push: PushNotification) -> Answer<PresentationOptions>? {
        guard let handler = service as? any PushPresenting else { return nil }
        let answer = pending(PresentationOptions.self)
        deliver(.willPresentNotification) {
            handler.willPresent(push, completion: PresentationCompletion { answer.complete($0) })
        }
        return answer
    }

    /// A background fetch (didReceiveRemoteNotification); nil when the class does not adopt
    /// BackgroundFetching.
    public func fetch(_ push: PushNotification) -> Answer<FetchResult>? {
        guard let handler = service as? any BackgroundFetching else { return nil }
        let answer = pending(FetchResult.self)
        deliver(.didReceiveRemoteNotification) {
            handler.didReceiveRemoteNotification(push, completion: FetchCompletion { answer.complete($0) })
        }
        return answer
    }

    /// The user acted on a notification. As in UIKit, anything but a dismissal first brings
    /// the app forward (willEnterForeground, didBecomeActive); nil when the class does not
    /// adopt NotificationResponseHandling.
    public func respond(_ response: NotificationResponse) -> Answer<Void>? {
        guard let handler = service as? any NotificationResponseHandling else { return nil }
        if !response.isDismissAction { move(to: .active) }
        let answer = pending(Void.self)
        deliver(.didReceiveNotificationResponse) {
            handler.didReceive(response, completion: ResponseCompletion { answer.complete(()) })
        }
        return answer
    }

    /// `host ctl open URL`: whether the service claimed it; nil when the class does not adopt
    /// URLHandling (or `url` is not a URL).
    public func open(_ url: String) -> Bool? {
        guard let handler = service as? any URLHandling, let url = OpenURL(url) else { return nil }
        return deliver(.openURL) { handler.open(url) }
    }

    /// `host ctl activity TYPE`: whether the service claimed it; nil when the class does not
    /// adopt UserActivityHandling.
    public func continueActivity(_ activity: UserActivity) -> Bool? {
        guard let handler = service as? any UserActivityHandling else { return nil }
        return deliver(.continueUserActivity) { handler.continueUserActivity(activity) }
    }

    /// `host ctl token HEX`; false when the class does not adopt DeviceTokenReceiving.
    @discardableResult
    public func register(deviceToken: DeviceToken) -> Bool {
        guard let handler = service as? any DeviceTokenReceiving else { return false }
        deliver(.didRegisterForRemoteNotifications) {
            handler.didRegisterForRemoteNotifications(deviceToken: deviceToken)
        }
        return true
    }

    /// `host ctl token-error MESSAGE`; false when the class does not adopt DeviceTokenErrorHandling.
    @discardableResult
    public func failToRegister(error: String) -> Bool {
        guard let handler = service as? any DeviceTokenErrorHandling else { return false }
        deliver(.didFailToRegisterForRemoteNotifications) {
            handler.didFailToRegisterForRemoteNotifications(error: error)
        }
        return true
    }

    /// `host ctl authorization STATUS`: stores the settings, then delivers
    /// didChangeNotificationAuthorization to a class that adopts AuthorizationObserving.
    public func authorize(_ settings: NotificationSettings) {
        recorder.state.withLock { $0.settings = settings }
        guard let handler = service as? any AuthorizationObserving else { return }
        deliver(.didChangeNotificationAuthorization) { handler.didChangeNotificationAuthorization(settings) }
    }

    // MARK: - Time

    /// Moves the manual clock on by `seconds`: every answer still pending at its deadline
    /// times out, as the host answers for a service that did not complete in time.
    public func advance(by seconds: Double) {
        precondition(seconds >= 0, "TestHost: time only moves forward")
        now += seconds
        for expire in expiring { expire(now) }
        answerRequests()
    }

    // MARK: - Helpers

    private func setState(_ state: AppState) {
        recorder.state.withLock { $0.appState = state }
    }

    /// Records that lifecycle event `kind` moved the app, and shows the service its new state.
    private func apply(_ kind: EventKind) {
        lifecycle.apply(kind)
        setState(lifecycle.state)
    }

    /// Calls the service's method for lifecycle event `kind`.
    private func deliverLifecycle(_ kind: EventKind) {
        deliver(kind) {
            switch kind {
            case .willFinishLaunching: _ = service.willFinishLaunching(LaunchOptions())
            case .didFinishLaunching: _ = service.didFinishLaunching(LaunchOptions())
            case .didBecomeActive: service.didBecomeActive()
            case .willResignActive: service.willResignActive()
            case .didEnterBackground: service.didEnterBackground()
            case .willEnterForeground: service.willEnterForeground()
            case .willTerminate: service.willTerminate()
            default: preconditionFailure("TestHost: \(kind.name) is not a lifecycle event")
            }
        }
    }

    @discardableResult
    private func deliver<T>(_ event: EventKind, _ call: () -> T) -> T {
        deliveries.append(event)
        let result = call()
        answerRequests()
        return result
    }

    /// Replies to the requests the service made, in order, as the host does after an event
    /// (a reply that asks again is answered in the same pass).
    private func answerRequests() {
        while true {
            let (asked, answers) = recorder.state.withLock { state in
                defer { state.asked = [] }
                return (state.asked, state.requestAnswers)
            }
            if asked.isEmpty { return }
            for request in asked {
                let (code, body): (Int32, JSONValue?) =
                    if let refusal = request.refusal {
                        (Int32(SH_INVALID), ["error": .string(refusal)])
                    } else {
                        switch answers[request.name] {
                        case .success(let reply)?: (Int32(SH_OK), reply)
                        case .failure(let error)?: (error.code, ["error": .string(error.message)])
                        case nil: (Int32(SH_NOT_FOUND), ["error": .string("no service answers \(request.name)")])
                        }
                    }
                let text = body.map(\.serialized) ?? ""
                text.withCString { request.reply(request.context, code, $0, text.utf8.count) }
            }
        }
    }

    private func pending<Value: Sendable>(_: Value.Type, within seconds: Double? = nil) -> Answer<Value> {
        let answer = Answer<Value>(deadline: now + (seconds ?? answerDeadline))
        expiring.append { answer.expire(at: $0) }
        return answer
    }
}
