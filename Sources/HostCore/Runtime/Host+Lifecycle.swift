import ServiceABI

extension Host {
    /// Moves the app to `target` through the legal path, delivering each step to every
    /// service that handles it. `target == .notRunning` terminates.
    /// Once scenes are in use, the move applies to every connected scene (Host+Scenes).
    public func transition(to target: AppState) throws(TransitionError) {
        if scenes.areInUse { return try transitionScenes(to: target) }
        let steps = try lifecycle.steps(to: target)
        if target == .notRunning { isTerminating = true }
        for kind in steps { deliverLifecycle(kind, options: nil) }
    }

    /// Launches: willFinishLaunching and didFinishLaunching with `request` as launch options,
    /// then didBecomeActive; then delivers each launch option once through its own event
    /// (didReceiveNotificationResponse, openURL, continueUserActivity), so a service never
    /// has to remember a launch option to act on it.
    /// With `request.scene`, the app becomes active through that scene instead (Host+Scenes).
    public func launch(_ request: LaunchRequest = LaunchRequest()) throws(TransitionError) {
        if let scene = request.scene { return try launch(request, connecting: scene) }
        let steps = try lifecycle.steps(to: .active)
        let arena = EventArena()
        let options = arena.launchOptions(request)
        for kind in steps {
            deliverLifecycle(kind, options: kind == .didBecomeActive ? nil : options)
        }
        replayLaunchOptions(request)
    }

    /// Terminates from any running state: willResignActive, didEnterBackground and
    /// willTerminate as needed, each in reverse service order.
    public func terminate() throws(TransitionError) { try transition(to: .notRunning) }

    func deliverLifecycle(_ kind: EventKind, options: UnsafePointer<sh_launch_options>?) {
        if kind.isDeliveredInNewState { applyState(kind) }
        deliver(kind, data: options.map(UnsafeRawPointer.init))
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
