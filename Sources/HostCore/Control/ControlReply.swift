import ServiceJSON

/// A reply of the control protocol: what the host (or its snapshot) answers and `host ctl`
/// reads. The envelope (`ok`, `id`, `error`, `snapshot`) is common; what the command answered
/// is one type per command family (``Body``), written by the one writer (`write(to:)`, and
/// `json` for the tests and services).
///
/// ```text
/// {"event":"openURL","handled":true,"handledBy":"dev.servicehost.deeplinks","id":1,"ok":true,"receivers":[…]}
/// ```
public struct ControlReply: Sendable, Equatable {
    /// Whether the request was carried out. Nil only inside a scene's `deliveries`.
    public var ok: Bool?
    /// The request's `id`, echoed.
    public var id: JSONValue?
    /// Why the request failed.
    public var error: String?
    /// True when the snapshot answered, the main thread being stuck in a service.
    public var snapshot = false
    /// What the command answered.
    public var body: Body = .none

    /// The answer of each command family.
    public enum Body: Sendable, Equatable {
        /// A refusal, or a reply with nothing more than its envelope.
        case none
        /// An event's delivery: push, open, activity, token, token-error, post, memory-warning,
        /// request (stored inline: the pipelined path makes these, and boxes none).
        case delivery(Delivery)
        /// `state`.
        indirect case status(Status)
        /// `list` (with `skipped`: `list --all`).
        indirect case services(Services)
        /// `reload`.
        indirect case reload(Reload)
        /// A lifecycle move: `{"handled":true,"state":…}`, the app state after it.
        case moved(state: String)
        /// `scene`.
        indirect case scene(Scene)
        /// `authorization`.
        indirect case authorization(Authorization)
        /// `stats`, `blame`, `service`, `watch`.
        indirect case operated(Operated)
    }

    /// An empty reply; set `ok` for a top-level one.
    public init(ok: Bool? = nil, id: JSONValue? = nil, _ body: Body = .none) {
        self.ok = ok
        self.id = id
        self.body = body
    }

    /// A refusal: `{"ok": false, "error": …}`.
    public init(_ refusal: ControlRefusal) {
        self.init(ok: false, id: refusal.id)
        error = refusal.message
    }

    /// Whether a service handled it: false is exit status 3 for `host ctl`.
    public var handled: Bool? {
        switch body {
        case .delivery(let delivery): delivery.handled
        case .scene(let scene): scene.delivery.handled
        case .authorization(let authorization): authorization.delivery.handled
        case .moved: true
        case .none, .status, .services, .reload, .operated: nil
        }
    }

    /// What came of delivering an event: who received it, who handled it, their answers.
    public struct Delivery: Sendable, Equatable {
        // What most deliveries have is stored here; `answers`, `result` and `presentation` are
        // in `rare`, one shared immutable box (nil when none is set), so making, copying and
        // dropping the reply to a pipelined `memory-warning` touches a few fields (issue 13:
        // copies of the whole reply were ~10% of such a request).

        /// The event delivered.
        public var event: String?
        /// Whether a service handled it (claimed it, for open and activity).
        public var handled: Bool?
        /// The services it was delivered to.
        public var receivers: [String]?
        /// The service that claimed it.
        public var handledBy: String?
        /// Why nothing handled it.
        public var note: String?
        private var rare: Rare?

        /// Each service's answer, by service.
        public var answers: [String: String]? {
            get { rare?.fields.answers }
            set { update { $0.answers = newValue } }
        }
        /// The merged answer of a background fetch; a request's answer.
        public var result: JSONValue? {
            get { rare?.fields.result }
            set { update { $0.result = newValue } }
        }
        /// The united presentation options of willPresentNotification.
        public var presentation: JSONValue? {
            get { rare?.fields.presentation }
            set { update { $0.presentation = newValue } }
        }

        public init(
            event: String? = nil, handled: Bool? = nil, receivers: [String]? = nil, handledBy: String? = nil,
            answers: [String: String]? = nil, result: JSONValue? = nil, presentation: JSONValue? = nil,
            note: String? = nil
        ) {
            self.event = event
            self.handled = handled
            self.receivers = receivers
            self.handledBy = handledBy
            self.note = note
            if answers != nil || result != nil || presentation != nil {
                rare = Rare(RareFields(answers: answers, result: result, presentation: presentation))
            }
        }

        private struct RareFields: Sendable, Equatable {
            var answers: [String: String]?
            var result: JSONValue?
            var presentation: JSONValue?
        }

        // Immutable once made: a change makes a new box.
        private final class Rare: Sendable, Equatable {
            let fields: RareFields
            init(_ fields: RareFields) { self.fields = fields }
            static func == (left: Rare, right: Rare) -> Bool { left.fields == right.fields }
        }

        /// Changes the rare members; none set is no box, so equal deliveries stay equal.
        private mutating func update(_ change: (inout RareFields) -> Void) {
            var fields = rare?.fields ?? RareFields()
            change(&fields)
            rare = fields == RareFields() ? nil : Rare(fields)
        }
    }

    /// `state`: the app's state, the number of services, the device token and any call in progress.
    public struct Status: Sendable, Equatable {
        public var state: String
        public var serviceCount: Int
        public var deviceToken: String?
        /// The call in progress.
        public var busy: Call?
        /// The call stuck past its deadline.
        public var stuck: Call?
    }

    /// A call into a service: `service` and `event`, and for a stuck one how long it has run
    /// and its deadline.
    public struct Call: Sendable, Equatable {
        public var service: String
        public var event: String
        public var seconds: Double?
        public var deadline: Double?
    }

    /// `list`: every service; with `list --all`, what was looked at and not started.
    public struct Services: Sendable, Equatable {
        public var services: [Service]
        /// `list --all`'s ``SkippedEntry`` objects.
        public var skipped: [JSONValue]?
    }

    /// One service of `list`.
    public struct Service: Sendable, Equatable {
        public var id: String
        public var name: String
        public var version: String
        public var path: String
        public var priority: Int
        /// `running`, or what isolation says: `restarting`, `failed`, `stopped`, `stuck`.
        public var state: String
        public var events: [String]
        public var urls: [String]
        public var activities: [String]
        public var subscriptions: [String]
        public var sceneRoles: [String]
        /// The request names it answers (`answers` in its manifest, `SH_CLAIM_ANSWER`).
        public var answers: [String] = []
        public var lastError: String?
        /// Earlier copies of its file replaced by reloads and still mapped (code cannot be unloaded).
        public var retiredCopies: Int = 0
        /// `lazy` when it is opened on its first event, `eager` when at start.
        public var activation: String = "eager"
        /// What opened it, when it is lazy and was opened ("URL myapp://x", "push", …).
        public var activatedBy: String?
        /// Where it runs and how its worker fares (``Host/isolationFields(for:)``), which may
        /// override `state`; read back through `stuckIn` and `failure`.
        public var isolation: [String: JSONValue] = [:]

        /// The event it is stuck in.
        public var stuckIn: String? { isolation[.stuckIn]?.stringValue }
        /// The crash loop that marked it failed.
        public var failure: FailureRecord? { isolation[.failure].flatMap(FailureRecord.init(json:)) }
    }

    /// What a reload changed.
    public struct Reload: Sendable, Equatable {
        public var added: [String]
        public var removed: [String]
        public var replaced: [String]
        /// The failures, in words.
        public var failures: [String]
        /// The services told of changed settings by didChangeSettings, not restarted (present
        /// in the reply when not empty; those restarted with new settings are `replaced`).
        public var reconfigured: [String] = []
        /// The services whose isolation keys changed, which the reload did not apply (present
        /// when not empty; ``LoadReport/restartNeeded``).
        public var restartNeeded: [String] = []
    }

    /// A `scene` reply: the app state after it, and the scene, the list, or what came of
    /// delivering the URL or activity.
    public struct Scene: Sendable, Equatable {
        public var state: String
        /// The scene after the request; `.some(nil)` (JSON null) when it is gone.
        public var scene: SceneEntry??
        /// `scene list`'s answer.
        public var scenes: [SceneEntry]?
        /// `scene list`: the names of the scenes with a saved restoration activity.
        public var savedScenes: [String]?
        /// `scene connect`: what came of each URL and activity of its options.
        public var deliveries: [Delivery]?
        /// Whether it was handled, and for `open` and `activity` the event's delivery.
        public var delivery = Delivery()

        public init(
            state: String, scene: SceneEntry?? = nil, scenes: [SceneEntry]? = nil, savedScenes: [String]? = nil,
            deliveries: [Delivery]? = nil, delivery: Delivery = Delivery()
        ) {
            self.state = state
            self.scene = scene
            self.scenes = scenes
            self.savedScenes = savedScenes
            self.deliveries = deliveries
            self.delivery = delivery
        }
    }

    /// A connected scene.
    public struct SceneEntry: Sendable, Equatable {
        public var name: String
        public var role: String
        public var state: String
        public var configuration: String
        public var configuredBy: String?
        public var settings: JSONValue?
        /// Whether a restoration activity is saved under its name.
        public var savedState = false
    }

    /// `authorization`: the status and the presentation options it allows, and the change's
    /// delivery when it set one.
    public struct Authorization: Sendable, Equatable {
        public var status: String
        public var allowed: [String]
        public var delivery = Delivery()
    }

    /// The operating replies (`stats`, `blame`, `service`, `watch`): their members as they go
    /// on the wire (ControlHandler+Operate words them), and for `service` the app state and
    /// the service after it.
    public struct Operated: Sendable, Equatable {
        public var state: String?
        public var services: [Service]?
        public var members: [String: JSONValue] = [:]
    }
}

// MARK: - Encoding

extension ControlReply {
    /// The reply as a JSON object.
    public var json: JSONValue {
        var object: [String: JSONValue] = [:]
        if let ok { object[.ok] = .bool(ok) }
        if let id { object[.id] = id }
        if let error { object[.error] = .string(error) }
        if snapshot { object[.snapshot] = true }
        switch body {
        case .none:
            break
        case .delivery(let delivery):
            delivery.encode(into: &object)
        case .status(let status):
            object[.state] = .string(status.state)
            object[.services] = .number(Double(status.serviceCount))
            object[.deviceToken] = status.deviceToken.map(JSONValue.string) ?? .null
            if let busy = status.busy { object[.busy] = busy.json }
            if let stuck = status.stuck { object[.stuck] = stuck.json }
        case .services(let list):
            object[.services] = .array(list.services.map(\.json))
            if let skipped = list.skipped { object[.skipped] = .array(skipped) }
        case .reload(let reload):
            object[.added] = .strings(reload.added)
            object[.removed] = .strings(reload.removed)
            object[.replaced] = .strings(reload.replaced)
            object[.failures] = .strings(reload.failures)
            if !reload.reconfigured.isEmpty { object[.reconfigured] = .strings(reload.reconfigured) }
            if !reload.restartNeeded.isEmpty { object[.restartNeeded] = .strings(reload.restartNeeded) }
        case .moved(let state):
            object[.state] = .string(state)
            object[.handled] = true
        case .scene(let scene):
            scene.delivery.encode(into: &object)
            object[.state] = .string(scene.state)
            if let entry = scene.scene { object[.scene] = entry?.json ?? .null }
            if let scenes = scene.scenes { object[.scenes] = .array(scenes.map(\.json)) }
            if let saved = scene.savedScenes { object[.savedScenes] = .strings(saved) }
            if let deliveries = scene.deliveries {
                object[.deliveries] = .array(
                    deliveries.map { delivery in
                        var members: [String: JSONValue] = [:]
                        delivery.encode(into: &members)
                        return .object(members)
                    })
            }
        case .authorization(let authorization):
            authorization.delivery.encode(into: &object)
            object[.authorization] = .object([
                ControlKey.status.rawValue: .string(authorization.status),
                ControlKey.allowed.rawValue: .strings(authorization.allowed),
            ])
        case .operated(let operated):
            if let state = operated.state { object[.state] = .string(state) }
            if let services = operated.services { object[.services] = .array(services.map(\.json)) }
            object.merge(operated.members) { $1 }
        }
        return .object(object)
    }
}

extension ControlReply.Delivery {
    func encode(into object: inout [String: JSONValue]) {
        if let event { object[.event] = .string(event) }
        if let handled { object[.handled] = .bool(handled) }
        if let receivers { object[.receivers] = .strings(receivers) }
        if let handledBy { object[.handledBy] = .string(handledBy) }
        if let answers { object[.answers] = .object(answers.mapValues(JSONValue.string)) }
        if let result { object[.result] = result }
        if let presentation { object[.presentation] = presentation }
        if let note { object[.note] = .string(note) }
    }
}

extension ControlReply.Call {
    var json: JSONValue {
        var object: [String: JSONValue] = [:]
        object[.service] = .string(service)
        object[.event] = .string(event)
        if let seconds { object[.seconds] = .number(seconds) }
        if let deadline { object[.deadline] = .number(deadline) }
        return .object(object)
    }
}

extension ControlReply.Service {
    var json: JSONValue {
        var object: [String: JSONValue] = [:]
        object[.id] = .string(id)
        object[.name] = .string(name)
        object[.version] = .string(version)
        object[.path] = .string(path)
        object[.priority] = .number(Double(priority))
        object[.state] = .string(state)
        object[.events] = .strings(events)
        object[.urls] = .strings(urls)
        object[.activities] = .strings(activities)
        object[.subscriptions] = .strings(subscriptions)
        object[.sceneRoles] = .strings(sceneRoles)
        object[.answers] = .strings(answers)
        object[.lastError] = lastError.map(JSONValue.string) ?? .null
        object[.retiredCopies] = .number(Double(retiredCopies))
        object[.activation] = .string(activation)
        object[.activatedBy] = activatedBy.map(JSONValue.string) ?? .null
        return .object(object.merging(isolation) { $1 })
    }
}

extension ControlReply.SceneEntry {
    var json: JSONValue {
        var object: [String: JSONValue] = [:]
        object[.name] = .string(name)
        object[.role] = .string(role)
        object[.state] = .string(state)
        object[.configuration] = .string(configuration)
        object[.configuredBy] = configuredBy.map(JSONValue.string) ?? .null
        object[.settings] = settings ?? .null
        object[.savedState] = .bool(savedState)
        return .object(object)
    }
}

extension JSONValue {
    fileprivate static func strings(_ texts: [String]) -> JSONValue { .array(texts.map(JSONValue.string)) }
}
