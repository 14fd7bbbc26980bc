import ServiceABI
import ServiceJSON

extension Host {
    /// Delivers a push the way iOS would for the app's state (seed 000's three cases):
    /// a tap → didReceiveNotificationResponse; `content-available: 1` →
    /// didReceiveRemoteNotification (a background fetch); otherwise, while active →
    /// willPresentNotification. A plain alert while not active is the system's to show, so
    /// no service hears of it until the user taps it.
    ///
    /// `completion` runs on the main thread once every service answered or timed out.
    public func push(_ payload: PushPayload, tap action: String?, completion: @escaping (EventOutcome) -> Void) {
        if let action {
            respond(to: payload, action: action, fromLaunch: false, completion: completion)
        } else if payload.isContentAvailable {
            fetch(payload, completion: completion)
        } else if state == .active {
            present(payload, completion: completion)
        } else {
            completion(EventOutcome(event: nil, handled: false, note:
                "the app is \(state.name): the system shows the notification, and services hear of it when the user taps it (--tap)"))
        }
    }

    /// didReceiveNotificationResponse: the user acted on a notification.
    func respond(to payload: PushPayload, action: String, fromLaunch: Bool,
                 completion: @escaping (EventOutcome) -> Void) {
        let arena = EventArena()
        let data = arena.push(payload, action: action, fromLaunch: fromLaunch)
        gather(.didReceiveNotificationResponse, data: data, arena: arena, completion: completion) { _ in nil }
    }

    private func fetch(_ payload: PushPayload, completion: @escaping (EventOutcome) -> Void) {
        let arena = EventArena()
        let data = arena.push(payload, action: nil, fromLaunch: false)
        gather(.didReceiveRemoteNotification, data: data, arena: arena, completion: completion) { answers in
            // A missing or invalid answer counts as failed.
            let merged = answers.map { answer in answer.result.flatMap { FetchResult(rawValue: $0) } ?? .failed }.min() ?? .noData
            return .string(merged.name)
        }
    }

    private func present(_ payload: PushPayload, completion: @escaping (EventOutcome) -> Void) {
        let arena = EventArena()
        let data = arena.push(payload, action: nil, fromLaunch: false)
        gather(.willPresentNotification, data: data, arena: arena, completion: completion) { answers in
            let union = answers.reduce(into: PresentationOptions()) { options, answer in
                if let result = answer.result { options.formUnion(PresentationOptions(result)) }
            }
            return .array(union.names.map(JSONValue.string))
        }
    }

    /// Delivers an event with completions to every handler and builds the outcome.
    private func gather(_ kind: EventKind, data: UnsafePointer<some Any>, arena: EventArena,
                        completion: @escaping (EventOutcome) -> Void,
                        merge: @escaping ([(service: String, result: Int32?)]) -> JSONValue?) {
        let indexes = handlerIndexes(kind)
        guard !indexes.isEmpty else {
            return completion(EventOutcome(event: kind, handled: false, note: "no service handles \(kind.name)"))
        }
        let receivers = indexes.map { services[$0].id }
        deliverWithCompletions(kind, data: UnsafeRawPointer(data), to: indexes, arena: arena) { answer in
            var outcome = EventOutcome(event: kind, handled: true)
            outcome.receivers = receivers
            for (service, result) in answer.answers {
                outcome.answers[service] = result.map { ResultCode.answerName($0, for: kind) } ?? "timeout"
            }
            outcome.merged = merge(answer.answers)
            completion(outcome)
        }
        drainMailbox()
    }

    /// didRegisterForRemoteNotifications to every handler; the token is remembered.
    public func register(token: DeviceToken) -> EventOutcome {
        deviceToken = token
        let arena = EventArena()
        return deliverToAll(.didRegisterForRemoteNotifications, data: arena.deviceToken(token))
    }

    /// didFailToRegisterForRemoteNotifications to every handler.
    public func tokenRegistrationFailed(_ message: String) -> EventOutcome {
        let arena = EventArena()
        return deliverToAll(.didFailToRegisterForRemoteNotifications, data: arena.errorInfo(message))
    }

    /// A service asked for the token: give it the last one, if any (else it hears when one arrives).
    func deliverToken(to serviceID: String) {
        guard let token = deviceToken,
              let index = handlerIndexes(.didRegisterForRemoteNotifications).first(where: { services[$0].id == serviceID })
        else { return }
        let arena = EventArena()
        call(index, .didRegisterForRemoteNotifications, UnsafeRawPointer(arena.deviceToken(token)))
    }
}
