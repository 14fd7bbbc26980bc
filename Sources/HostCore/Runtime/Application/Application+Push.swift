import ServiceABI
import ServiceJSON

/// Pushes the way iOS delivers them for the app's state (seed 000's three cases).
extension Application {
    /// A tap → didReceiveNotificationResponse; `content-available: 1` →
    /// didReceiveRemoteNotification (a background fetch); otherwise, while active →
    /// willPresentNotification. A plain alert while not active is the system's to show, so
    /// no service hears of it until the user taps it.
    ///
    /// With the notifications source running (``presenter``), the desktop shows what services
    /// answered `.banner`, `.list` or `.sound` while active, and an alert that arrives while
    /// not active, as far as the authorization allows.
    ///
    /// `completion` runs on the main thread once every service answered or timed out.
    func push(_ payload: PushPayload, tap action: String?, completion: @escaping (EventOutcome) -> Void) {
        if let action {
            bringForwardForTap(action)
            respond(to: payload, action: action, fromLaunch: false, completion: completion)
        } else if payload.isContentAvailable {
            fetch(payload, fromLaunch: false, completion: completion)
        } else if state == .active {
            // Every service is asked and its answer reported; what is shown is what the
            // authorization allows (denied or not determined: nothing).
            let settings = bus.authorization.current
            gather(
                .willPresentNotification, payload,
                merge: { answers in
                    AnswerBook.mergePresentation(answers, allowed: settings.allowed)
                },
                completion: { [weak self] outcome in
                    var outcome = outcome
                    if let presenter = self?.presenter, let names = outcome.merged?.arrayValue {
                        let options = PresentationOptions(names: names.compactMap(\.stringValue))
                        if !options.isDisjoint(with: [.banner, .list, .sound]) {
                            _ = presenter.present(payload, options: options)
                        }
                    }
                    if outcome.handled, settings.allowed != .all {
                        outcome.note =
                            "notification authorization is \(settings.status.name): presented within "
                            + (settings.allowed.names.isEmpty
                                ? "nothing" : settings.allowed.names.joined(separator: ", "))
                    }
                    completion(outcome)
                })
        } else {
            let allowed = bus.authorization.current.allowed
            let shown =
                !allowed.isDisjoint(with: [.banner, .list])
                && presenter?.present(payload, options: allowed.intersection([.banner, .list, .sound])) == true
            completion(
                EventOutcome(
                    event: nil, handled: false,
                    note:
                        "the app is \(state.name): the system shows the notification"
                        + (shown ? " (on the desktop)" : "")
                        + ", and services hear of it when the user taps it (--tap)"
                ))
        }
    }

    /// A tap opens the app: from the background (or inactive) UIKit brings it to the
    /// foreground first (willEnterForeground, didBecomeActive, with the scene events when
    /// scenes are in use), then delivers the response. Dismissing it opens nothing.
    private func bringForwardForTap(_ action: String) {
        guard state != .active, action != SH_ACTION_DISMISS else { return }
        do { try transition(to: .active) } catch {
            log.warn(
                "host", "a tapped notification could not bring the app forward: \(error)",
                event: .pushNotBroughtForward, .string("reason", error.reason))
        }
    }

    /// didReceiveRemoteNotification (a background fetch): the answers merged, newData first.
    func fetch(_ payload: PushPayload, fromLaunch: Bool, completion: @escaping (EventOutcome) -> Void) {
        gather(
            .didReceiveRemoteNotification, payload, fromLaunch: fromLaunch, merge: AnswerBook.mergeFetch,
            completion: completion)
    }

    /// didReceiveNotificationResponse: the user acted on a notification.
    func respond(
        to payload: PushPayload, action: String, fromLaunch: Bool,
        completion: @escaping (EventOutcome) -> Void
    ) {
        gather(
            .didReceiveNotificationResponse, payload, action: action, fromLaunch: fromLaunch,
            merge: { _ in nil }, completion: completion)
    }

    private func gather(
        _ kind: EventKind, _ payload: PushPayload, action: String? = nil, fromLaunch: Bool = false,
        merge: @escaping ([(service: String, result: Int32?)]) -> JSONValue?,
        completion: @escaping (EventOutcome) -> Void
    ) {
        services.dormant.wake(kind, "push")
        let arena = EventArena()
        let data = arena.push(payload, action: action, fromLaunch: fromLaunch)
        answers.gather(kind, data: UnsafeRawPointer(data), arena: arena, merge: merge, completion: completion)
        bus.drain()
    }

    /// didRegisterForRemoteNotifications to every handler; the token is remembered.
    func register(token: DeviceToken) -> EventOutcome {
        bus.deviceToken = token
        let arena = EventArena()
        return withExtendedLifetime(arena) {
            deliverToAll(.didRegisterForRemoteNotifications, data: arena.deviceToken(token))
        }
    }

    /// didFailToRegisterForRemoteNotifications to every handler.
    func tokenRegistrationFailed(_ message: String) -> EventOutcome {
        let arena = EventArena()
        return withExtendedLifetime(arena) {
            deliverToAll(.didFailToRegisterForRemoteNotifications, data: arena.errorInfo(message))
        }
    }
}
