import ServiceABI

/// The app as UIKit models it (UIApplication's part): its state and the legal moves between
/// states, the launch sequence with its launch options, and which event a push, a URL or an
/// activity becomes. It decides *what* is delivered and when; the dispatcher does the calls.
///
/// Scenes (Scenes/Application+Scenes.swift) drive the app's state once one connects.
@MainActor
final class Application {
    let dispatcher: Dispatcher
    let services: ServiceSet
    let answers: AnswerBook
    /// Requests between services and from `host ctl request`.
    let desk: RequestDesk
    let router: EventRouter
    let bus: NotificationBus
    let log: Log
    /// Saved scene state restoration activities, by scene name.
    let restorations: SceneRestorations
    /// The connected scenes; once one connected, the app's state follows them.
    let scenes: SceneTable
    /// The state machine: where the app is and where it may go.
    private(set) var lifecycle = AppLifecycle()
    /// Whether termination began: requests after it are refused, and no lazy service is opened.
    var isTerminating = false {
        didSet { services.dormant.isClosed = isTerminating }
    }
    /// Told READY after the launch, RELOADING, and STOPPING when termination begins, when
    /// systemd supervises the host.
    var notifier: SystemdNotifier?
    /// Shows pushes on the desktop (the notifications source), when it runs.
    var presenter: (any NotificationPresenter)?
    private let stateCell: AppStateCell

    init(
        dispatcher: Dispatcher, services: ServiceSet, answers: AnswerBook, desk: RequestDesk, router: EventRouter,
        bus: NotificationBus, log: Log, stateCell: AppStateCell, scenes: SceneTable, restorations: SceneRestorations
    ) {
        self.restorations = restorations
        self.dispatcher = dispatcher
        self.services = services
        self.answers = answers
        self.desk = desk
        self.router = router
        self.bus = bus
        self.log = log
        self.stateCell = stateCell
        self.scenes = scenes
    }

    /// Tells systemd `message` (when it supervises the host); a failure to tell it is logged, not fatal.
    func notify(_ message: SystemdNotifier.Message) {
        guard let notifier else { return }
        do { try notifier.send(message) } catch { log.warn("host", "systemd notification failed: \(error)") }
    }

    /// The app's state.
    var state: AppState { lifecycle.state }

    /// Whether the app runs and takes events (launched, not terminating).
    var isRunning: Bool { !isTerminating && state != .notRunning }

    // MARK: Moves

    /// Moves the app to `target` through the legal path, delivering each step to every
    /// service that handles it. `target == .notRunning` terminates. Once scenes are in use,
    /// the move applies to every connected scene.
    func transition(to target: AppState) throws(TransitionError) {
        if target == .notRunning && !lifecycle.hasTerminated && state != .notRunning {
            isTerminating = true
            notify(.stopping)
        }
        if scenes.areInUse { return try transitionScenes(to: target) }
        for kind in try lifecycle.steps(to: target) { deliverLifecycle(kind) }
    }

    /// One lifecycle event to every handler, with the app's state moved before (did-events)
    /// or after (will-events) it, then what services sent meanwhile.
    func deliverLifecycle(_ kind: EventKind) {
        if kind.isDeliveredInNewState { applyState(kind) }
        dispatcher.deliver(kind, data: nil)
        if !kind.isDeliveredInNewState { applyState(kind) }
        log.debug("host", "\(kind.name): app is \(lifecycle.state.name)")
        bus.drain()
    }

    private func applyState(_ kind: EventKind) {
        lifecycle.apply(kind)
        publishState()
    }

    /// Makes the lifecycle's state the one services read (`sh_host.app_state`, `sh_event.app_state`).
    private func publishState() {
        stateCell.value = lifecycle.state
        dispatcher.appState = lifecycle.state
    }

    // MARK: Launch

    /// Launches: willFinishLaunching and didFinishLaunching with `request` as launch options,
    /// then didBecomeActive, or nothing more for a launch into the background
    /// (``LaunchRequest/target``); then delivers each launch option once through its own
    /// event, so a service never has to remember a launch option to act on it. With
    /// `request.scene`, the app becomes active through that scene instead.
    ///
    /// A `policy: required` service whose launch fails (an error, or any answer other than
    /// OK or FALSE) stops the launch after the launch event it failed: nobody becomes active
    /// and no launch option is delivered. The result lists those services; the caller takes
    /// the others down (``transition(to:)`` to notRunning, in reverse).
    func launch(_ request: LaunchRequest) throws(TransitionError) -> [String] {
        let failed = try deliverLaunch(request, background: request.target == .background && request.scene == nil)
        guard failed.isEmpty else { return failed }
        if let scene = request.scene {
            finishLaunching()
            launch(request, connecting: scene)
        } else {
            if request.target == .active { deliverLifecycle(.didBecomeActive) }
            finishLaunching()
            replayLaunchOptions(request)
        }
        return []
    }

    /// willFinishLaunching and didFinishLaunching, each service with its own launch options,
    /// the app inactive (or, launching into the background, in the background). Returns the
    /// `policy: required` services that failed, after the first event one failed in.
    func deliverLaunch(_ request: LaunchRequest, background: Bool) throws(TransitionError) -> [String] {
        _ = try lifecycle.steps(to: .inactive)  // refuses a second launch
        let arena = EventArena()
        // One set of options per service: settings and first-launch flags differ. A loop, not
        // `map`: a main-actor closure is checked for the main actor per element.
        var perService: [UnsafeRawPointer] = []
        perService.reserveCapacity(services.slots.count)
        // Each service's first-launch question, and the host's.
        services.firstLaunch.willAsk(services.slots.count + 1)
        for slot in services.slots {
            perService.append(
                UnsafeRawPointer(services.launchOptions(for: slot, arena: arena, request: request, late: nil)))
        }
        for kind in [EventKind.willFinishLaunching, .didFinishLaunching] {
            if background {
                lifecycle.applyBackgroundLaunch(kind)
                publishState()
            } else {
                applyState(kind)
            }
            for index in dispatcher.handlers(kind) { dispatcher.call(index, kind, perService[index]) }
            let failed = services.stopFailedLaunches(finished: kind == .didFinishLaunching)
            if !failed.isEmpty { return failed }
            bus.drain()
        }
        return []
    }

    /// After a successful launch: the first-launch marks, then READY.
    private func finishLaunching() {
        do { try services.firstLaunch.hostDidLaunch() } catch {
            log.error(
                "host", "cannot record the first launch: \(error)", event: .firstLaunchUnrecorded,
                .string("path", error.path), .int("errno", Int(error.errno ?? 0)))
        }
        notify(.ready)
    }

    func replayLaunchOptions(_ request: LaunchRequest) {
        if let notification = request.notification {
            let report = { [log] (outcome: EventOutcome) in
                if !outcome.handled {
                    log.warn(
                        "host", "the launch notification: \(outcome.note ?? "not handled")",
                        event: .launchUnhandled, .string("what", "notification"))
                }
            }
            // Woken in the background by a background push: its fetch, as iOS calls
            // didReceiveRemoteNotification after launching the app for it. Otherwise the user
            // tapped the notification, which opened the app.
            if request.isBackgroundPush {
                fetch(notification, fromLaunch: true, completion: report)
            } else {
                respond(to: notification, action: SH_ACTION_DEFAULT, fromLaunch: true, completion: report)
            }
        }
        // A launch scene had the URL and the activity in its connection options, and
        // delivered them already: once overall.
        if let url = request.url, request.scene == nil {
            let outcome = open(url, fromLaunch: true)
            if !outcome.handled {
                log.warn(
                    "host", "the launch URL \(url.url): \(outcome.note ?? "not handled")",
                    event: .launchUnhandled, .string("what", "URL \(url.url)"))
            }
        }
        // UIKit hands a launch's quick action to performActionFor after the launch too.
        if let shortcut = request.shortcut {
            let outcome = performAction(shortcut, fromLaunch: true)
            if !outcome.handled {
                log.warn(
                    "host", "the launch quick action \(shortcut): \(outcome.note ?? "not handled")",
                    event: .launchUnhandled, .string("what", "quick action \(shortcut)"))
            }
        }
        if let activity = request.activity, request.scene == nil {
            let outcome = continueActivity(activity, fromLaunch: true)
            if !outcome.handled {
                log.warn(
                    "host", "the launch activity \(activity.type): \(outcome.note ?? "not handled")",
                    event: .launchUnhandled, .string("what", "activity \(activity.type)"))
            }
        }
    }

    // MARK: Late services

    /// Brings services that start while the app runs to its state (the one catch-up), then
    /// handles what they sent.
    func catchUp(_ late: [ServiceSlot]) {
        services.catchUp(late, to: state)
        bus.drain()
    }

    /// Reloads the services: what leaves is taken down, what arrives is caught up.
    func reload() throws(LoadError) -> LoadReport {
        guard !isTerminating else { throw LoadError(description: "the host is terminating") }
        notify(.reloading)
        defer { notify(.ready) }
        let change = try services.prepareReload()
        services.apply(change, lifecycle: lifecycle)
        bus.drain()
        return change.report
    }

    // MARK: Broadcasts

    /// Delivers a data-carrying broadcast event to every handler and reports who got it.
    func deliverToAll(_ kind: EventKind, data: UnsafeRawPointer?) -> EventOutcome {
        services.dormant.wake(kind, kind.name)
        let receivers = dispatcher.receivers(kind)
        var outcome = EventOutcome(
            event: kind, handled: !receivers.isEmpty,
            note: receivers.isEmpty ? "no service handles \(kind.name)" : nil)
        outcome.receivers = receivers
        dispatcher.deliver(kind, data: data)
        bus.drain()
        return outcome
    }

    /// openURL to the services that may claim `url`, in service order, until one claims it.
    func open(_ url: OpenURLInput, fromLaunch: Bool) -> EventOutcome {
        let arena = EventArena()
        return withExtendedLifetime(arena) { router.open(url, data: arena.openURL(url, fromLaunch: fromLaunch)) }
    }

    /// performActionForShortcutItem to the services that claim `id`, until one handles it.
    func performAction(_ id: String, fromLaunch: Bool) -> EventOutcome {
        router.performAction(id, fromLaunch: fromLaunch)
    }

    /// continueUserActivity, routed like openURL by activity type.
    func continueActivity(_ activity: UserActivityInput, fromLaunch: Bool) -> EventOutcome {
        let arena = EventArena()
        return withExtendedLifetime(arena) {
            router.continueActivity(activity, data: arena.activity(activity, fromLaunch: fromLaunch))
        }
    }
}
