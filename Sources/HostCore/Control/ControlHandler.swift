import ServiceJSON

/// Carries out control requests on the host, on the main thread, and words the replies.
@MainActor
public final class ControlHandler {
    /// How a reply ends: whether the host exits once it is written.
    public enum After: Sendable { case keepRunning, exit }

    let host: Host
    /// Called before a `terminate` request takes the app down (arms the shutdown deadline).
    private let willTerminate: () -> Void
    /// What `state` and `list` answer while the main thread is stuck (issue 5).
    public nonisolated let snapshot: ControlSnapshot

    /// A handler for `host`.
    public init(host: Host, willTerminate: @escaping () -> Void = {}) {
        self.host = host
        self.willTerminate = willTerminate
        snapshot = ControlSnapshot(tracker: host.tracker, stateCell: host.stateCell, board: host.isolation?.board)
        publishSnapshot()
    }

    private func publishSnapshot() {
        snapshot.publish(services: host.services.map { Self.describe($0) }, deviceToken: host.deviceToken?.hex)
    }

    /// Carries out `request`; `reply` runs on the main thread, at once or when the answers are in.
    public func handle(_ request: ControlRequest, reply: @escaping (JSONValue, After) -> Void) {
        let respond = { (body: [String: JSONValue], after: After) in
            var body = body
            body["ok"] = true
            if let id = request.id { body["id"] = id }
            reply(.object(body), after)
        }
        if host.isTerminating {
            return reply(Self.refusal(ControlRefusal(id: request.id, message: "the host is terminating")), .keepRunning)
        }
        defer { publishSnapshot() }
        switch request.command {
        case .state:
            respond(stateReply(), .keepRunning)
        case .list:
            respond(["services": .array(host.services.map { Self.describe($0, extra: host.isolationFields(for: $0.id)) })],
                    .keepRunning)
        case .reload:
            do throws(LoadError) {
                let report = try host.reload()
                respond([
                    "added": .array(report.added.map(JSONValue.string)), "removed": .array(report.removed.map(JSONValue.string)),
                    "replaced": .array(report.replaced.map(JSONValue.string)),
                    "failures": .array(report.failures.map { .string($0.description) }),
                ], .keepRunning)
            } catch {
                reply(Self.refusal(ControlRefusal(id: request.id, message: "reload failed, nothing changed: \(error)")), .keepRunning)
            }
        case .lifecycle(let command):
            do throws(TransitionError) {
                let after = try lifecycle(command)
                respond(["state": .string(host.state.name), "handled": true], after)
            } catch {
                reply(Self.refusal(ControlRefusal(id: request.id, message: error.description)), .keepRunning)
            }
        case .memoryWarning:
            respond(Self.describe(host.memoryWarning()), .keepRunning)
        case .push(let payload, let action):
            host.push(payload, tap: action) { outcome in respond(Self.describe(outcome), .keepRunning) }
        case .open(let url):
            respond(Self.describe(host.open(url)), .keepRunning)
        case .activity(let activity):
            respond(Self.describe(host.continueActivity(activity)), .keepRunning)
        case .token(let token):
            respond(Self.describe(host.register(token: token)), .keepRunning)
        case .tokenError(let message):
            respond(Self.describe(host.tokenRegistrationFailed(message)), .keepRunning)
        case .post(let name, let payload):
            do throws(InputError) {
                respond(Self.describe(try host.post(name: name, payload: payload)), .keepRunning)
            } catch {
                reply(Self.refusal(ControlRefusal(id: request.id, message: error.message)), .keepRunning)
            }
        case .scene(let command):
            handleScene(command, respond: respond) { message in
                reply(Self.refusal(ControlRefusal(id: request.id, message: message)), .keepRunning)
            }
        }
    }

    private func lifecycle(_ command: ControlRequest.LifecycleCommand) throws(TransitionError) -> After {
        switch command {
        case .activate: try host.transition(to: .active)
        case .background: try host.transition(to: .background)
        case .resign:
            // Only an active app resigns; anywhere else there is nothing to do.
            if host.state == .active { try host.transition(to: .inactive) }
        case .foreground:
            // Only a background app comes to the foreground.
            if host.state == .background { try host.transition(to: .inactive) }
        case .terminate:
            willTerminate()
            try host.terminate()
            return .exit
        }
        return .keepRunning
    }

    private func stateReply() -> [String: JSONValue] {
        var body: [String: JSONValue] = [
            "state": .string(host.state.name), "services": .number(Double(host.services.count)),
            "deviceToken": host.deviceToken.map { .string($0.hex) } ?? .null,
        ]
        if let (service, event) = host.tracker.current {
            body["busy"] = ["service": .string(service), "event": .string(event)]
        }
        if let stuck = host.tracker.stuck { body["stuck"] = ControlSnapshot.describe(stuck) }
        return body
    }

    /// A refusal as a reply object.
    public nonisolated static func refusal(_ refusal: ControlRefusal) -> JSONValue {
        var body: [String: JSONValue] = ["ok": false, "error": .string(refusal.message)]
        if let id = refusal.id { body["id"] = id }
        return .object(body)
    }

    /// `list`'s object for one service; `extra` (isolation, state, failure) overrides members.
    static func describe(_ service: ServiceSlot, extra: [String: JSONValue] = [:]) -> JSONValue {
        let meta = service.metadata
        let fields: [String: JSONValue] = [
            "id": .string(meta.id), "name": .string(meta.name), "version": .string(meta.version),
            "path": .string(service.path), "priority": .number(Double(meta.priority)), "state": "running",
            "events": .array(InspectCommand.eventNames(meta.events).map(JSONValue.string)),
            "urls": .array(meta.urls.map(JSONValue.string)), "activities": .array(meta.activities.map(JSONValue.string)),
            "subscriptions": .array(meta.subscriptions.map(JSONValue.string)),
            "sceneRoles": .array(meta.sceneRoles.map(JSONValue.string)),
            "lastError": service.lastError.map(JSONValue.string) ?? .null,
        ]
        return .object(fields.merging(extra) { $1 })
    }

    static func describe(_ outcome: EventOutcome) -> [String: JSONValue] {
        var body: [String: JSONValue] = [
            "handled": .bool(outcome.handled), "receivers": .array(outcome.receivers.map(JSONValue.string)),
        ]
        if let event = outcome.event { body["event"] = .string(event.name) }
        if let handledBy = outcome.handledBy { body["handledBy"] = .string(handledBy) }
        if !outcome.answers.isEmpty { body["answers"] = .object(outcome.answers.mapValues(JSONValue.string)) }
        if let merged = outcome.merged {
            body[outcome.event == .willPresentNotification ? "presentation" : "result"] = merged
        }
        if let note = outcome.note { body["note"] = .string(note) }
        return body
    }
}
