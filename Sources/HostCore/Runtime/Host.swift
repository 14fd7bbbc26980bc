import ServiceABI
import ServiceJSON

/// The running host: the one object the `host` executable, the control channel and tests
/// talk to. A façade: each job is done by one part, and the parts talk to each other only
/// through their own small interfaces.
///
/// - ``Dispatcher`` calls services (handler tables, the trace, the call tracker);
/// - ``ServiceSet`` loads, reloads, takes down and catches up services;
/// - ``AnswerBook`` hands out completions and merges the answers;
/// - ``Application`` is UIKit's app model: state, launch, moves, scenes, which event a
///   push becomes; ``EventRouter`` offers URLs and activities until one service claims
///   them; ``NotificationBus`` carries service-to-service notifications.
///
/// Every call into a service happens on the main actor (the process's main thread, driven
/// by the main dispatch queue), never two at once and never re-entrantly.
@MainActor
public final class Host {
    /// Where log lines go.
    public let log: Log
    /// What the main thread is doing, for the watchdogs and `ctl state`.
    public let tracker = CallTracker()
    /// Where stores and first-launch marks live; nil runs without persistence.
    public let stateDirectory: StateDirectory?
    /// First-launch detection (seed 004).
    public let firstLaunch: FirstLaunch
    /// Told READY, RELOADING and STOPPING when systemd supervises the host.
    public var notifier: SystemdNotifier? {
        get { application.notifier }
        set { application.notifier = newValue }
    }
    /// Crash and hang isolation (issue 5), once ``startIsolation(_:)`` ran; see Isolation/.
    public internal(set) var isolation: IsolationSupervisor?
    /// The time the host's deadlines and delays run on.
    public let clock: HostClock
    /// Background tasks services opened (UIKit's `beginBackgroundTask`), which the sleep source waits for.
    public let backgroundTasks: BackgroundTasks

    let stateCell = AppStateCell()
    let dispatcher: Dispatcher
    let serviceSet: ServiceSet
    let answers: AnswerBook
    let bus: NotificationBus
    let application: Application
    /// Control requests from services (`sh_host.control`), once a ``ControlHandler`` takes them.
    let requests: ServiceRequests
    /// The start's settings and the deploy in probation (Host+Deploy).
    var deployment = DeployState()
    /// Each checked service's health and next check (Host+Health).
    let health = HealthBoard()

    /// A host with no services, logging to `log` and tracing to `trace`, keeping state in
    /// `stateDirectory` (none: stores answer "unsupported" and every launch is a first one
    /// unless `firstLaunch` says otherwise), timing deadlines on `clock`.
    /// `notificationAuthorization` answers services' authorization requests while the saved
    /// status (in `stateDirectory`) is not determined.
    public init(
        log: Log, trace: TraceWriter? = nil, stateDirectory: StateDirectory? = nil,
        firstLaunch: FirstLaunch = .neverFirst(), clock: HostClock = SystemClock(),
        notificationAuthorization: AuthorizationPolicy = .grant
    ) {
        self.log = log
        self.stateDirectory = stateDirectory
        // Where plugin copies go when the store of copies cannot take them.
        if let stateDirectory { CopyStore.stateDirectory = stateDirectory.path }
        self.firstLaunch = firstLaunch
        self.clock = clock
        backgroundTasks = BackgroundTasks(log: log)
        // The parts in dependency order, each given what it needs; only isolation, a start step of
        // its own that can fail, is handed over later (startIsolation).
        dispatcher = Dispatcher(log: log, trace: trace, tracker: tracker)
        let authorization = NotificationAuthorization(policy: notificationAuthorization, stateDirectory: stateDirectory)
        {
            log.error("host", $0, event: .authorizationUnreadable, .string("path", $1), .string("reason", $2))
        }
        let dormant = DormantServices()
        requests = ServiceRequests(log: log)
        let requestAnswers = AnswerBook(dispatcher: dispatcher, log: log, clock: clock)
        requestAnswers.timeout = 5
        let desk = RequestDesk(
            dispatcher: dispatcher, dormant: dormant, answers: requestAnswers, requests: requests, log: log)
        bus = NotificationBus(
            dispatcher: dispatcher, authorization: authorization, dormant: dormant, desk: desk, log: log)
        let scenes = SceneTable()
        let restorations = SceneRestorations(stateDirectory: stateDirectory, log: log)
        let pluginSources = PluginSources()
        let shared = SharedServices(
            authorization: authorization, requests: requests, backgroundTasks: backgroundTasks,
            pluginSources: pluginSources
        ) { service, id, json in
            guard let scene = scenes.records.first(where: { $0.id == id }) else { return Int32(SH_NOT_FOUND) }
            return restorations.save(json, scene: scene.name, service: service)
        }
        serviceSet = ServiceSet(
            dispatcher: dispatcher, log: log, stateDirectory: stateDirectory, firstLaunch: firstLaunch,
            mailbox: bus.mailbox, stateCell: stateCell, shared: shared, dormant: dormant, scenes: scenes)
        answers = AnswerBook(dispatcher: dispatcher, log: log, clock: clock)
        application = Application(
            dispatcher: dispatcher, services: serviceSet, answers: answers, desk: desk,
            router: EventRouter(dispatcher: dispatcher, bus: bus, dormant: dormant, log: log), bus: bus, log: log,
            stateCell: stateCell,
            scenes: scenes, restorations: restorations)
        // Health checks follow the service list (a reload, a restart, a service started).
        dispatcher.listDidChange = { [weak self] in self?.syncHealthChecks() }
        pluginSources.host = self
    }

    // MARK: State

    /// The app's state.
    public var state: AppState { application.state }
    /// Whether termination began: requests after it are refused.
    public var isTerminating: Bool { application.isTerminating }
    /// The services, in dispatch order: priority (higher first), then load order.
    public var services: [ServiceSlot] { dispatcher.services }
    /// Told on the main thread each time ``services`` changed (a load, a reload however asked
    /// for, a service stopped or started), before the new services are caught up: the control
    /// channel republishes its snapshot then, so a reload whose catch-up gets stuck is listed.
    public var servicesDidChange: (() -> Void)? {
        get { dispatcher.servicesDidChange }
        set { dispatcher.servicesDidChange = newValue }
    }
    /// The configuration file in force (empty without one).
    public var configuration: HostConfiguration { serviceSet.configuration }
    /// What `reload` rescans.
    public var loadSettings: LoadSettings { serviceSet.loadSettings }
    /// The connected scenes; once one connected, the app's state follows them.
    public var scenes: SceneTable { application.scenes }
    /// The names of the scenes with a saved state restoration activity.
    public var savedSceneStates: [String] { application.restorations.savedNames() }
    /// The last device token delivered, shown by `ctl state` and given to services that ask.
    public var deviceToken: DeviceToken? { bus.deviceToken }
    /// How long the host waits for a completion (background fetch and every other answer).
    public var answerTimeout: Double {
        get { answers.timeout }
        set { answers.timeout = newValue }
    }

    // MARK: Services

    /// Reads the configuration, inspects the plugin directories, plans the start order and
    /// loads the services to start (only those: a disabled service's code never runs).
    ///
    /// Throws when the host cannot start: an unusable directory or configuration, a cycle or
    /// a missing requirement, a `policy: required` service that failed, or any failure under
    /// `strict`. Other failures are logged and returned.
    @discardableResult
    public func load(_ settings: LoadSettings) throws(LoadError) -> LoadReport { try serviceSet.load(settings) }

    /// Rescans the plugin directories and the configuration (SIGHUP, `host ctl reload`).
    ///
    /// New or newly enabled services are loaded and caught up to the app's state with the
    /// events a service started with the host would have had; removed or disabled services get
    /// the events that take them down and nothing afterwards; a changed file is loaded as a new
    /// copy from a private path (Swift code cannot be unloaded) and the old copy retired. A
    /// reload that fails (a broken configuration, a cycle, a bad plugin under `strict`) changes
    /// nothing.
    public func reload() throws(LoadError) -> LoadReport { try application.reload() }

    /// How many earlier copies of the plugin file at `path` reloads replaced; they stay mapped
    /// (code cannot be unloaded), and past ``retiredCopyLimit`` the file is not replaced again.
    public func retiredCopies(of path: String) -> Int { serviceSet.retiredCopies[path, default: 0] }

    /// Whether any plugin file has a retired copy.
    var hasRetiredCopies: Bool { !serviceSet.retiredCopies.isEmpty }

    /// The most copies of one plugin file a host retires before refusing to replace it again.
    public static var retiredCopyLimit: Int { ServiceSet.retiredCopyLimit }

    // MARK: The app's lifecycle

    /// Moves the app to `target` through the legal path, delivering each step to every
    /// service that handles it. `target == .notRunning` terminates. Once scenes are in use,
    /// the move applies to every connected scene.
    public func transition(to target: AppState) throws(TransitionError) { try application.transition(to: target) }

    /// Launches: willFinishLaunching and didFinishLaunching with `request` as launch options,
    /// then didBecomeActive (or, with `request.scene`, the scene's connection; or nothing for
    /// a launch into the background, ``LaunchRequest/target``); then each launch option once
    /// through its own event. Each service's launch options carry its settings and
    /// first-launch flags. A service whose launch fails is stopped (`policy: optional`, the
    /// default); a `policy: required` one stops the launch before anyone becomes active, and
    /// the result lists those (the caller then terminates, taking the others down in reverse).
    @discardableResult
    public func launch(_ request: LaunchRequest = LaunchRequest()) throws(TransitionError) -> [String] {
        let launched = try application.launch(request)
        syncHealthChecks()
        return launched
    }

    /// Terminates from any running state: willResignActive, didEnterBackground and
    /// willTerminate as needed, each in reverse service order.
    public func terminate() throws(TransitionError) {
        health.stopAll()
        try application.transition(to: .notRunning)
    }

    // MARK: Events

    /// Delivers a push the way iOS would for the app's state (seed 000's three cases);
    /// `completion` runs on the main thread once every service answered or timed out.
    public func push(_ payload: PushPayload, tap action: String?, completion: @escaping (EventOutcome) -> Void) {
        application.push(payload, tap: action, completion: completion)
    }

    /// openURL to the services that may claim `url`, in service order, until one claims it.
    public func open(_ url: OpenURLInput, fromLaunch: Bool = false) -> EventOutcome {
        application.open(url, fromLaunch: fromLaunch)
    }

    /// continueUserActivity, routed like openURL by activity type.
    public func continueActivity(_ activity: UserActivityInput, fromLaunch: Bool = false) -> EventOutcome {
        application.continueActivity(activity, fromLaunch: fromLaunch)
    }

    /// performActionForShortcutItem to the services that claim the quick action `id`, in service
    /// order, until one handles it.
    public func performAction(_ id: String, fromLaunch: Bool = false) -> EventOutcome {
        application.performAction(id, fromLaunch: fromLaunch)
    }

    /// didRegisterForRemoteNotifications to every handler; the token is remembered.
    public func register(token: DeviceToken) -> EventOutcome { application.register(token: token) }

    /// didFailToRegisterForRemoteNotifications to every handler.
    public func tokenRegistrationFailed(_ message: String) -> EventOutcome {
        application.tokenRegistrationFailed(message)
    }

    /// How long the answerer of a request may take to answer it (`--request-timeout`).
    public var requestTimeout: Double {
        get { application.desk.answers.timeout }
        set { application.desk.answers.timeout = newValue }
    }

    /// Asks the service that answers `name` (`host ctl request`), as `sh_host.request` does,
    /// from "host": `reply` runs once on the main thread with its answer or why there is none.
    public func request(_ name: String, json: [UInt8]?, reply: @escaping (RequestReply) -> Void) {
        let target = MainThreadReply(reply)
        let request = ServiceRequest(name: name, from: "host", json: json) { target.reply($0) }
        if application.desk.answer(request) { bus.drain() }
    }

    /// Delivers didReceiveMemoryWarning to every service that handles it.
    public func memoryWarning() -> EventOutcome { application.deliverToAll(.didReceiveMemoryWarning, data: nil) }

    /// Delivers `kind`, an event without data outside the lifecycle (protectedDataWillBecomeUnavailable,
    /// protectedDataDidBecomeAvailable, significantTimeChange), to every service that handles it.
    public func deliverToAll(_ kind: EventKind) -> EventOutcome {
        precondition(kind.data == .none && kind.group == nil, "\(kind.name) carries data or belongs to a group")
        return application.deliverToAll(kind, data: nil)
    }

    /// Posts a notification from the host (a control client): delivered now to every
    /// subscribed service, in service order.
    public func post(name: String, payload: JSONValue?) throws(InputError) -> EventOutcome {
        try bus.post(name: name, payload: payload)
    }

    /// The notification authorization status and the presentation options it allows.
    public var notificationSettings: (status: AuthorizationStatus, allowed: PresentationOptions) {
        let settings = bus.authorization.current
        return (settings.status, settings.allowed)
    }

    /// The user sets the notification authorization (`host ctl authorization STATUS`): it is
    /// saved and, when it changed, didChangeNotificationAuthorization is delivered.
    public func setNotificationAuthorization(_ status: AuthorizationStatus) -> EventOutcome {
        guard bus.authorization.set(status) else {
            return EventOutcome(event: nil, handled: true, note: "the authorization is \(status.name) already")
        }
        let outcome = bus.authorizationChanged()
        bus.drain()
        return outcome
    }

    /// Handles what services sent from other threads (notifications, token requests).
    public func drainMailbox() { bus.drain() }

    // MARK: Scenes

    /// Connects a scene: configurationForConnecting, sceneWillConnect, the moves to
    /// foregroundActive (with the app events they imply), then each URL and activity of the
    /// connection options once.
    public func connectScene(_ request: SceneRequest) throws(SceneError) -> SceneConnection {
        try application.connectScene(request)
    }

    /// Moves one scene and returns it as it is afterwards (unattached after a disconnect).
    @discardableResult
    public func moveScene(named name: String, _ move: SceneMove) throws(SceneError) -> SceneInfo {
        try application.moveScene(named: name, move)
    }

    /// sceneOpenURLContexts in the scene named `name`, falling back to openURL.
    public func open(_ url: OpenURLInput, inScene name: String) throws(SceneError) -> EventOutcome {
        try application.open(url, inScene: name)
    }

    /// sceneContinueUserActivity in the scene named `name`, falling back to continueUserActivity.
    public func continueActivity(_ activity: UserActivityInput, inScene name: String) throws(SceneError) -> EventOutcome
    {
        try application.continueActivity(activity, inScene: name)
    }

    // MARK: systemd

    /// Tells systemd (when it supervises the host); a failure to tell it is logged, not fatal.
    public func notify(_ message: SystemdNotifier.Message) { application.notify(message) }
}

extension Host {
    /// Delivers `kind` `times` times without moving the app's state: the dispatcher's cost
    /// alone, for `scripts/bench`. Not for services: real events go through `transition(to:)`.
    @_spi(Benchmark)
    public func benchmarkDeliver(_ kind: EventKind, times: Int) {
        for _ in 0..<times { dispatcher.deliver(kind, data: nil) }
    }
}

/// A reply closure of the main thread, carried in a request that crosses no thread.
private final class MainThreadReply: @unchecked Sendable {
    // @unchecked: `reply` is only ever called on the main thread, where a request's every
    // reply is made (Application.answer), and where it was made.
    let reply: (RequestReply) -> Void
    init(_ reply: @escaping (RequestReply) -> Void) { self.reply = reply }
}
