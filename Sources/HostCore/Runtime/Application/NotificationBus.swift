import Dispatch
import ServiceABI
import ServiceJSON

/// Service-to-service notifications and what services ask for from any thread (the device
/// token): messages wait in the mailbox and are handled on the main thread after the event
/// being handled, never re-entrantly, in the order sent.
@MainActor
final class NotificationBus {
    private let dispatcher: Dispatcher
    /// Where services' other threads leave messages; each first message wakes the main thread
    /// to drain this bus. A `let` (not made lazily, to capture the bus): `drain` runs after every
    /// lifecycle event, and a lazy property's getter cost it an access check and a retain there.
    let mailbox = Mailbox()
    /// The last device token delivered, shown by `ctl state` and given to services that ask.
    var deviceToken: DeviceToken?
    /// The notification authorization, saved and announced here when it changes.
    let authorization: NotificationAuthorization
    /// Lazy services a notification or an authorization change may open first.
    let dormant: DormantServices
    /// Carries requests between services to their answerers.
    private let desk: RequestDesk
    private let log: Log
    /// The host's health board, told of each report (the health extension); set once in `Host.init`.
    var healthReported: ((_ service: String, _ status: Int32, _ reason: String?) -> Void)?

    init(
        dispatcher: Dispatcher, authorization: NotificationAuthorization, dormant: DormantServices, desk: RequestDesk,
        log: Log
    ) {
        self.dispatcher = dispatcher
        self.dormant = dormant
        self.desk = desk
        self.authorization = authorization
        self.log = log
        mailbox.wake { [weak self] in
            DispatchQueue.main.async { MainActor.assumeIsolated { self?.drain() } }
        }
    }

    /// Handles what services sent: notifications and token requests, in the order sent.
    /// Messages sent while draining wait for the next round, so a chatty pair of services
    /// cannot starve the main queue.
    func drain() {
        for message in mailbox.takeAll() {
            switch message {
            case .post(let name, let sender, let json):
                _ = deliver(name: name, sender: sender, json: json)
            case .tokenRequest(let service):
                deliverToken(to: service)
            case .authorizationChanged:
                _ = authorizationChanged()
            case .request(let request):
                // What the answerer sent meanwhile is handled now, after its question.
                if desk.answer(request) { drain() }
            case .health(let service, let status, let reason):
                healthReported?(service, status, reason)
            }
        }
    }

    /// A notification posted by the host (a control client): delivered now to every
    /// subscribed service, in service order.
    func post(name: String, payload: JSONValue?) throws(InputError) -> EventOutcome {
        guard !name.isEmpty else { throw InputError("a notification needs a name") }
        return deliver(name: name, sender: "host", json: payload.map { Array($0.serialized.utf8) })
    }

    private func deliver(name: String, sender: String, json: [UInt8]?) -> EventOutcome {
        dormant.wake(.notification, "notification \(name)") { service in
            service.id != sender && (service.subscriptions.contains(name) || service.subscriptions.contains("*"))
        }
        let services = dispatcher.services
        let indexes = dispatcher.handlers(.notification).filter { index in
            services[index].id != sender && services[index].isSubscribed(to: name)
        }
        var outcome = EventOutcome(
            event: .notification, handled: !indexes.isEmpty,
            note: indexes.isEmpty ? "no service subscribes to \(name)" : nil)
        outcome.receivers = indexes.map { services[$0].id }
        guard !indexes.isEmpty else { return outcome }
        // Parsed once for every receiver (sh_notification.parsed); text that is not JSON is
        // still delivered as it was posted, without a tape.
        var tape: JSONTape?
        if let json {
            do { tape = try JSONTape(parsing: json) } catch {
                log.warn(
                    sender,
                    "notification \(name): the payload is not valid JSON (\(error)); delivered without a parsed tape",
                    event: .notificationInvalidJSON, .string("name", name), .string("reason", error.description))
            }
        }
        let arena = EventArena()
        let data = UnsafeRawPointer(arena.notification(name: name, sender: sender, json: json, tape: tape))
        for index in indexes { dispatcher.call(index, .notification, data) }
        return outcome
    }

    /// The authorization changed: saves it, then delivers didChangeNotificationAuthorization
    /// to every handler, in service order (a failure to save is logged: the change holds).
    func authorizationChanged() -> EventOutcome {
        let settings = authorization.current
        do { try authorization.save() } catch {
            log.error(
                "host", "cannot save the notification authorization: \(error)", event: .authorizationSaveFailed,
                .string("path", authorization.path ?? error.path), .int("errno", Int(error.errno ?? 0)))
        }
        log.info(
            "host", "notification authorization: \(settings.status.name)", event: .authorizationChanged,
            .string("status", settings.status.name))
        dormant.wake(.didChangeNotificationAuthorization, "notification authorization \(settings.status.name)")
        let indexes = dispatcher.handlers(.didChangeNotificationAuthorization)
        var outcome = EventOutcome(event: .didChangeNotificationAuthorization, handled: true)
        outcome.receivers = indexes.map { dispatcher.services[$0].id }
        let arena = EventArena()
        withExtendedLifetime(arena) {
            dispatcher.deliver(
                .didChangeNotificationAuthorization, data: UnsafeRawPointer(arena.notificationSettings(settings)))
        }
        return outcome
    }

    /// A service asked for the token: give it the last one, if any (else it hears when one arrives).
    private func deliverToken(to serviceID: String) {
        guard let token = deviceToken,
            let index = dispatcher.handlers(.didRegisterForRemoteNotifications).first(where: {
                dispatcher.services[$0].id == serviceID
            })
        else { return }
        let arena = EventArena()
        dispatcher.call(index, .didRegisterForRemoteNotifications, UnsafeRawPointer(arena.deviceToken(token)))
    }
}
