import ServiceABI

extension Host {
    /// Moves the app to `target` through the legal path, delivering each step to every
    /// service that handles it. `target == .notRunning` terminates.
    /// Once scenes are in use, the move applies to every connected scene (Host+Scenes).
    public func transition(to target: AppState) throws(TransitionError) {
        if target == .notRunning && !lifecycle.hasTerminated && state != .notRunning {
            isTerminating = true
            notify(.stopping)
        }
        if scenes.areInUse { return try transitionScenes(to: target) }
        for kind in try lifecycle.steps(to: target) { deliverLifecycle(kind) }
    }

    /// Launches: willFinishLaunching and didFinishLaunching with `request` as launch options,
    /// then didBecomeActive; then delivers each launch option once through its own event
    /// (didReceiveNotificationResponse, openURL, continueUserActivity), so a service never
    /// has to remember a launch option to act on it. With `request.scene`, the app becomes
    /// active through that scene instead (Host+Scenes).
    ///
    /// Each service's launch options carry its settings and its first-launch flags. A service
    /// whose launch fails is stopped (`policy: optional`, the default) or stops the host: the
    /// result lists the `policy: required` services that failed.
    @discardableResult
    public func launch(_ request: LaunchRequest = LaunchRequest()) throws(TransitionError) -> [String] {
        if let scene = request.scene {
            try launch(request, connecting: scene)
        } else {
            try deliverLaunch(to: .active, request)
            replayLaunchOptions(request)
        }
        return services.filter { $0.launchFailed && $0.configuration?.policy == .required }.map(\.id)
    }

    /// The launch events up to `target` (inactive, or active), each service with its own
    /// launch options; then the first-launch marks and READY.
    func deliverLaunch(to target: AppState, _ request: LaunchRequest) throws(TransitionError) {
        let steps = try lifecycle.steps(to: target)
        let arena = EventArena()
        // One set of options per service: settings and first-launch flags differ.
        let perService = services.map { UnsafeRawPointer(launchOptions(for: $0, arena: arena, request: request, restart: false)) }
        for kind in steps {
            if kind.isDeliveredInNewState { applyState(kind) }
            if kind == .willFinishLaunching || kind == .didFinishLaunching {
                for index in handlerIndexes(kind) { call(index, kind, perService[index]) }
            } else {
                deliver(kind, data: nil)
            }
            if !kind.isDeliveredInNewState { applyState(kind) }
            if kind == .didFinishLaunching { finishLaunch() }
            drainMailbox()
        }
        do { try firstLaunch.hostDidLaunch() } catch { log.error("host", "cannot record the first launch: \(error)") }
        notify(.ready)
    }

    /// The launch options of one service: its settings and first-launch flags.
    func launchOptions(for slot: ServiceSlot, arena: EventArena, request: LaunchRequest,
                       restart: Bool) -> UnsafePointer<sh_launch_options> {
        var flags: UInt32 = restart ? UInt32(SH_LAUNCH_RESTART) : 0
        do {
            if try firstLaunch.isFirstHostLaunch() { flags |= UInt32(SH_LAUNCH_FIRST_HOST_LAUNCH) }
            if try firstLaunch.isFirstServiceLaunch(slot.id) { flags |= UInt32(SH_LAUNCH_FIRST_SERVICE_LAUNCH) }
        } catch {
            log.error("host", "cannot read the first-launch marks: \(error); launching as not first")
        }
        return arena.launchOptions(request, flags: flags, settings: slot.configuration?.settingsJSON)
    }

    /// After didFinishLaunching: marks services launched, and stops optional services that
    /// failed to launch (they receive nothing more).
    private func finishLaunch() {
        for slot in services where !slot.launchFailed { markLaunched(slot) }
        // A process-isolated service's failures are its supervisor's: restarts, crash loops.
        let failed = services.filter { slot in
            slot.launchFailed && slot.configuration?.policy != .required && !(isolation?.board.isIsolated(slot.id) ?? false)
        }
        for slot in failed {
            log.error(slot.id, "failed to launch; stopped (policy: optional): it receives no more events")
        }
        if !failed.isEmpty { setServices(services.filter { slot in !failed.contains { $0 === slot } }) }
    }

    /// Records a service's successful launch for first-launch detection.
    func markLaunched(_ slot: ServiceSlot) {
        do { try firstLaunch.serviceDidLaunch(slot.id) } catch {
            log.error("host", "cannot record the first launch of \(slot.id): \(error)")
        }
    }

    /// Terminates from any running state: willResignActive, didEnterBackground and
    /// willTerminate as needed, each in reverse service order.
    public func terminate() throws(TransitionError) { try transition(to: .notRunning) }

    func deliverLifecycle(_ kind: EventKind) {
        if kind.isDeliveredInNewState { applyState(kind) }
        deliver(kind, data: nil)
        if !kind.isDeliveredInNewState { applyState(kind) }
        log.debug("host", "\(kind.name): app is \(lifecycle.state.name)")
        drainMailbox()
    }

    private func applyState(_ kind: EventKind) {
        lifecycle.apply(kind)
        stateCell.value = lifecycle.state
    }

    func replayLaunchOptions(_ request: LaunchRequest) {
        if let notification = request.notification {
            respond(to: notification, action: SH_ACTION_DEFAULT, fromLaunch: true) { [log] outcome in
                if !outcome.handled { log.warn("host", "the launch notification: \(outcome.note ?? "not handled")") }
            }
        }
        // A launch scene had the URL and the activity in its connection options, and
        // delivered them already: once overall.
        if let url = request.url, request.scene == nil {
            let outcome = open(url, fromLaunch: true)
            if !outcome.handled { log.warn("host", "the launch URL \(url.url): \(outcome.note ?? "not handled")") }
        }
        if let activity = request.activity, request.scene == nil {
            let outcome = continueActivity(activity, fromLaunch: true)
            if !outcome.handled { log.warn("host", "the launch activity \(activity.type): \(outcome.note ?? "not handled")") }
        }
    }

    /// Delivers didReceiveMemoryWarning to every service that handles it.
    public func memoryWarning() -> EventOutcome {
        deliverToAll(.didReceiveMemoryWarning, data: nil)
    }

    /// Delivers a data-carrying broadcast event to every handler and reports who got it.
    func deliverToAll(_ kind: EventKind, data: UnsafeRawPointer?) -> EventOutcome {
        let indexes = handlerIndexes(kind)
        var outcome = EventOutcome(event: kind, handled: !indexes.isEmpty,
                                   note: indexes.isEmpty ? "no service handles \(kind.name)" : nil)
        outcome.receivers = indexes.map { services[$0].id }
        deliver(kind, data: data)
        drainMailbox()
        return outcome
    }
}
