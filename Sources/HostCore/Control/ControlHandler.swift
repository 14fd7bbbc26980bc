import ServiceABI
import ServiceJSON

/// Carries out control requests on the host, on the main thread, and words the replies.
@MainActor
public final class ControlHandler {
    /// How a reply ends: whether the host exits once it is written, or the connection turns
    /// into a `watch` stream (with log lines when `logs`).
    public enum After: Sendable, Equatable {
        case keepRunning, exit
        case watch(logs: Bool)
    }

    let host: Host
    /// Called before a `terminate` request takes the app down (arms the shutdown deadline).
    private let willTerminate: () -> Void
    /// What `state` and `list` answer while the main thread is stuck (issue 5).
    public nonisolated let snapshot: ControlSnapshot
    /// The `watch` clients' hub (the log's).
    nonisolated let watchers: WatchHub?

    /// A handler for `host`; it also carries out the requests services make through
    /// `sh_host.control`, with payloads up to `maxPayload` bytes as on the socket.
    public init(host: Host, maxPayload: Int = 65536, willTerminate: @escaping () -> Void = {}) {
        self.host = host
        self.willTerminate = willTerminate
        watchers = host.log.watchers
        snapshot = ControlSnapshot(tracker: host.tracker, stateCell: host.stateCell, board: host.isolation?.board)
        publishSnapshot()
        // A reload by SIGHUP, or one whose catch-up gets stuck, is not followed by a request's
        // publication; the list changing is.
        host.servicesDidChange = { [weak self] in self?.publishSnapshot() }
        host.requests.accept(from: self, maxPayload: maxPayload)
    }

    /// What the published snapshot shows, to publish again only when it changed: most
    /// requests (every event, `state`, `list`) change none of it, and rebuilding the list
    /// cost more than the request itself. The service list is compared by its storage (held
    /// here, so the same storage is the same list), errors by ServiceSlot's change count.
    private var shown: (services: [ServiceSlot], errors: UInt64, retired: [Int], token: DeviceToken?)?

    private func publishSnapshot() {
        let services = host.services
        let token = host.deviceToken
        // Without retired copies (nearly always) no path needs hashing to compare.
        let retired = host.hasRetiredCopies ? services.map { host.retiredCopies(of: $0.path) } : []
        if let shown, shown.errors == ServiceSlot.errorChanges, shown.token == token, shown.retired == retired,
            shown.services.count == services.count, Self.storage(shown.services) == Self.storage(services)
        {
            return
        }
        shown = (services, ServiceSlot.errorChanges, retired, token)
        // A loop, not `map`: a main-actor closure is checked for the main actor per element.
        var entries: [ControlSnapshot.Service] = []
        entries.reserveCapacity(services.count)
        for (index, slot) in services.enumerated() {
            entries.append(
                ControlSnapshot.Service(
                    metadata: slot.metadata, path: slot.path, lastError: slot.lastError,
                    retiredCopies: retired.isEmpty ? 0 : retired[index]))
        }
        snapshot.publish(services: entries, deviceToken: token?.hex)
    }

    // Nonisolated: a closure made in a main-actor method is checked for the main actor on each call.
    private nonisolated static func storage(_ list: [ServiceSlot]) -> UnsafePointer<ServiceSlot>? {
        list.withUnsafeBufferPointer { $0.baseAddress }
    }

    /// Carries out `request`; `reply` runs on the main thread, at once or when the answers are in.
    public func handle(_ request: ControlRequest, reply: @escaping (ControlReply, After) -> Void) {
        // The reply is consumed (moved in, completed, passed on), not copied.
        let respond = { (body: consuming ControlReply, after: After) in
            body.ok = true
            body.id = request.id
            reply(body, after)
        }
        let refuse = { (message: String) in
            reply(ControlReply(ControlRefusal(id: request.id, message: message)), .keepRunning)
        }
        if host.isTerminating { return refuse("the host is terminating") }
        defer { publishSnapshot() }
        switch request.command {
        case .state:
            let status = ControlReply.Status(
                state: host.state.name, serviceCount: host.services.count, deviceToken: host.deviceToken?.hex,
                busy: host.tracker.current.map { ControlReply.Call(service: $0.0, event: $0.1) },
                stuck: host.tracker.stuck.map(ControlSnapshot.describe))
            respond(ControlReply(.status(status)), .keepRunning)
        case .list:
            respond(ControlReply(.services(ControlReply.Services(services: listedServices()))), .keepRunning)
        case .reload:
            do throws(LoadError) {
                let report = try host.reload()
                let reload = ControlReply.Reload(
                    added: report.added, removed: report.removed, replaced: report.replaced,
                    failures: report.failures.map(\.description), reconfigured: report.reconfigured,
                    restartNeeded: report.restartNeeded)
                respond(ControlReply(.reload(reload)), .keepRunning)
            } catch {
                refuse("reload failed, nothing changed: \(error)")
            }
        case .lifecycle(let command):
            do throws(TransitionError) {
                let after = try lifecycle(command)
                respond(ControlReply(.moved(state: host.state.name)), after)
            } catch {
                refuse(error.description)
            }
        case .memoryWarning:
            respond(Self.describe(host.memoryWarning()), .keepRunning)
        case .push(let payload, let action):
            host.push(payload, tap: action) { outcome in respond(Self.describe(outcome), .keepRunning) }
        case .open(let url):
            respond(Self.describe(host.open(url)), .keepRunning)
        case .activity(let activity):
            respond(Self.describe(host.continueActivity(activity)), .keepRunning)
        case .action(let id):
            respond(Self.describe(host.performAction(id)), .keepRunning)
        case .token(let token):
            respond(Self.describe(host.register(token: token)), .keepRunning)
        case .tokenError(let message):
            respond(Self.describe(host.tokenRegistrationFailed(message)), .keepRunning)
        case .post(let name, let payload):
            do throws(InputError) {
                respond(Self.describe(try host.post(name: name, payload: payload)), .keepRunning)
            } catch {
                refuse(error.message)
            }
        case .request(let name, let payload):
            host.request(name, json: payload) { answer in
                // Nobody answering is "not handled" (exit 3); a failure or a timeout is an error.
                if answer.result != SH_OK && answer.result != SH_NOT_FOUND {
                    return refuse(answer.error ?? "the request failed")
                }
                var delivery = ControlReply.Delivery(event: EventKind.request.name, handled: answer.result == SH_OK)
                if answer.result == SH_OK {
                    delivery.result = answer.json.isEmpty ? .null : (try? JSONValue(parsing: answer.json)) ?? .null
                } else {
                    delivery.note = answer.error
                }
                respond(ControlReply(.delivery(delivery)), .keepRunning)
            }
        case .scene(let command):
            handleScene(command, respond: respond, refuse: refuse)
        case .authorization(let status):
            var delivery = ControlReply.Delivery()
            if let status { delivery = Self.delivery(host.setNotificationAuthorization(status)) }
            delivery.handled = true
            let settings = host.notificationSettings
            let authorization = ControlReply.Authorization(
                status: settings.status.name, allowed: settings.allowed.names, delivery: delivery)
            respond(ControlReply(.authorization(authorization)), .keepRunning)
        case .operate(let command):
            handleOperate(command, respond: respond, refuse: refuse)
        }
    }

    private func lifecycle(_ command: ControlRequest.LifecycleCommand) throws(TransitionError) -> After {
        switch command {
        case .activate: try host.transition(to: .active)
        case .background: try host.transition(to: .background)
        case .resign:
            // As `scene resign`: only an app in the foreground resigns (from inactive there is
            // nothing to do); in the background it is a mistake, and said so.
            if host.state == .background {
                throw TransitionError(
                    from: host.state, to: .inactive, reason: "only an active app resigns (the app is in the background)"
                )
            }
            if host.state == .active { try host.transition(to: .inactive) }
        case .foreground:
            // As `scene foreground`: only an app in the background comes to the foreground.
            if host.state == .active {
                throw TransitionError(
                    from: host.state, to: .inactive,
                    reason: "only an app in the background comes to the foreground (the app is active)")
            }
            if host.state == .background { try host.transition(to: .inactive) }
        case .terminate:
            willTerminate()
            try host.terminate()
            return .exit
        }
        return .keepRunning
    }

    /// `list`'s entry for one service; `isolation` (where it runs, its state, failure) is
    /// added over it.
    static func describe(_ service: ServiceSlot, retiredCopies: Int = 0, isolation: [String: JSONValue] = [:])
        -> ControlReply.Service
    {
        var entry = describe(service.metadata, path: service.path, state: "running")
        entry.lastError = service.lastError
        entry.retiredCopies = retiredCopies
        entry.isolation = isolation
        return entry
    }

    /// `list`'s entry for a service from its static metadata alone (a lazy one not opened yet).
    nonisolated static func describe(_ meta: ServiceMetadata, path: String, state: String) -> ControlReply.Service {
        ControlReply.Service(
            id: meta.id, name: meta.name, version: meta.version, path: path, priority: Int(meta.priority),
            state: state, events: InspectCommand.eventNames(meta.events), urls: meta.urls, activities: meta.activities,
            subscriptions: meta.subscriptions, sceneRoles: meta.sceneRoles, answers: meta.answers, lastError: nil)
    }

    /// An event's reply: who received it, who handled it, their answers.
    static func describe(_ outcome: EventOutcome) -> ControlReply { ControlReply(.delivery(delivery(outcome))) }

    /// What came of delivering an event.
    static func delivery(_ outcome: EventOutcome) -> ControlReply.Delivery {
        var delivery = ControlReply.Delivery(
            event: outcome.event?.name, handled: outcome.handled, receivers: outcome.receivers,
            handledBy: outcome.handledBy, note: outcome.note)
        if !outcome.answers.isEmpty { delivery.answers = outcome.answers }
        if let merged = outcome.merged {
            if outcome.event == .willPresentNotification {
                delivery.presentation = merged
            } else {
                delivery.result = merged
            }
        }
        return delivery
    }
}
