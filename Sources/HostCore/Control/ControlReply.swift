import ServiceJSON

/// A reply of the control protocol: what the host (or its snapshot) answers and `host ctl`
/// reads. Members that do not apply are nil and left out of the JSON.
///
/// ```text
/// {"event":"openURL","handled":true,"handledBy":"dev.servicehost.deeplinks","id":1,"ok":true,"receivers":[…]}
/// ```
public struct ControlReply: Sendable, Equatable {
    // What an event's reply has is stored here; the members of the other replies are in
    // `rare`, one shared immutable box (nil for an event's reply), so making, copying and
    // dropping an event's reply touches a few fields, not every member (issue 13: copies of
    // the whole struct were ~10% of a pipelined `memory-warning`).

    /// Whether the request was carried out. Nil only inside `deliveries`.
    public var ok: Bool?
    /// The request's `id`, echoed.
    public var id: JSONValue?
    /// Why the request failed.
    public var error: String?
    /// True when the snapshot answered, the main thread being stuck in a service.
    public var snapshot = false
    /// The event delivered, and what came of it.
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

    /// The app state after the request.
    public var state: String? {
        get { rare?.fields.state }
        set { update { $0.state = newValue } }
    }
    /// `state`'s answer.
    public var status: Status? {
        get { rare?.fields.status }
        set { update { $0.status = newValue } }
    }
    /// `list`'s answer: every service.
    public var services: [Service]? {
        get { rare?.fields.services }
        set { update { $0.services = newValue } }
    }
    /// `reload`'s answer.
    public var reload: Reload? {
        get { rare?.fields.reload }
        set { update { $0.reload = newValue } }
    }
    /// Each service's answer, by service.
    public var answers: [String: String]? {
        get { rare?.fields.answers }
        set { update { $0.answers = newValue } }
    }
    /// The merged answer of a background fetch.
    public var result: JSONValue? {
        get { rare?.fields.result }
        set { update { $0.result = newValue } }
    }
    /// The united presentation options of willPresentNotification.
    public var presentation: JSONValue? {
        get { rare?.fields.presentation }
        set { update { $0.presentation = newValue } }
    }
    /// The scene after a `scene` request; `.some(nil)` (JSON null) when it is gone.
    public var scene: SceneEntry?? {
        get { rare?.fields.scene }
        set { update { $0.scene = newValue } }
    }
    /// `scene list`'s answer.
    public var scenes: [SceneEntry]? {
        get { rare?.fields.scenes }
        set { update { $0.scenes = newValue } }
    }
    /// `scene connect`: what came of each URL and activity of its options.
    public var deliveries: [ControlReply]? {
        get { rare?.fields.deliveries }
        set { update { $0.deliveries = newValue } }
    }
    /// `scene list`: the names of the scenes with a saved restoration activity.
    public var savedScenes: [String]? {
        get { rare?.fields.savedScenes }
        set { update { $0.savedScenes = newValue } }
    }
    /// `authorization`: the status and the presentation options it allows.
    public var authorization: Authorization? {
        get { rare?.fields.authorization }
        set { update { $0.authorization = newValue } }
    }
    /// The members of the operating replies (`stats`, `blame`, `skipped`, `restarted`,
    /// `watching`), as they go on the wire (ControlHandler+Operate words them).
    public var members: [String: JSONValue] {
        get { rare?.fields.members ?? [:] }
        set { update { $0.members = newValue } }
    }

    /// The members an event's reply does not have.
    private struct RareFields: Sendable, Equatable {
        var state: String?
        var status: Status?
        var services: [Service]?
        var reload: Reload?
        var answers: [String: String]?
        var result: JSONValue?
        var presentation: JSONValue?
        var scene: SceneEntry??
        var scenes: [SceneEntry]?
        var deliveries: [ControlReply]?
        var savedScenes: [String]?
        var authorization: Authorization?
        var members: [String: JSONValue] = [:]
    }

    // Immutable once made: a change makes a new box (these replies are made once, not on a hot path).
    private final class Rare: Sendable, Equatable {
        let fields: RareFields
        init(_ fields: RareFields) { self.fields = fields }
        static func == (left: Rare, right: Rare) -> Bool { left.fields == right.fields }
    }

    /// Changes the rare members; none set is no box, so equal replies stay equal.
    private mutating func update(_ change: (inout RareFields) -> Void) {
        var fields = rare?.fields ?? RareFields()
        change(&fields)
        rare = fields == RareFields() ? nil : Rare(fields)
    }

    /// The notification authorization.
    public struct Authorization: Sendable, Equatable {
        public var status: String
        public var allowed: [String]
    }

    /// An empty reply; set `ok` for a top-level one.
    public init(ok: Bool? = nil, id: JSONValue? = nil) {
        self.ok = ok
        self.id = id
    }

    /// A refusal: `{"ok": false, "error": …}`.
    public init(_ refusal: ControlRefusal) {
        self.init(ok: false, id: refusal.id)
        error = refusal.message
    }

    /// The app's state, the number of services, the device token and any call in progress.
    public struct Status: Sendable, Equatable {
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
        if let state { object[.state] = .string(state) }
        if let status {
            object[.services] = .number(Double(status.serviceCount))
            object[.deviceToken] = status.deviceToken.map(JSONValue.string) ?? .null
            if let busy = status.busy { object[.busy] = busy.json }
            if let stuck = status.stuck { object[.stuck] = stuck.json }
        }
        if let services { object[.services] = .array(services.map(\.json)) }
        if let reload {
            object[.added] = .strings(reload.added)
            object[.removed] = .strings(reload.removed)
            object[.replaced] = .strings(reload.replaced)
            object[.failures] = .strings(reload.failures)
        }
        if let event { object[.event] = .string(event) }
        if let handled { object[.handled] = .bool(handled) }
        if let receivers { object[.receivers] = .strings(receivers) }
        if let handledBy { object[.handledBy] = .string(handledBy) }
        if let answers { object[.answers] = .object(answers.mapValues(JSONValue.string)) }
        if let result { object[.result] = result }
        if let presentation { object[.presentation] = presentation }
        if let note { object[.note] = .string(note) }
        if let scene { object[.scene] = scene?.json ?? .null }
        if let scenes { object[.scenes] = .array(scenes.map(\.json)) }
        if let deliveries { object[.deliveries] = .array(deliveries.map(\.json)) }
        if let savedScenes { object[.savedScenes] = .strings(savedScenes) }
        if let authorization {
            object[.authorization] = .object([
                ControlKey.status.rawValue: .string(authorization.status),
                ControlKey.allowed.rawValue: .strings(authorization.allowed),
            ])
        }
        return .object(object.merging(members) { $1 })
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

// MARK: - Decoding

extension ControlReply {
    /// Reads a reply; members of the wrong type read as missing (a client shows what it can).
    public init(json: JSONValue) {
        ok = json[.ok]?.boolValue
        id = json[.id]
        error = json[.error]?.stringValue
        snapshot = json[.snapshot]?.boolValue ?? false
        state = json[.state]?.stringValue
        if let count = json[.services]?.intValue {
            status = Status(
                serviceCount: count, deviceToken: json[.deviceToken]?.stringValue,
                busy: json[.busy].flatMap(Call.init(json:)), stuck: json[.stuck].flatMap(Call.init(json:)))
        }
        services = json[.services]?.arrayValue?.compactMap(Service.init(json:))
        if json[.added] != nil {
            reload = Reload(
                added: json.strings(.added), removed: json.strings(.removed), replaced: json.strings(.replaced),
                failures: json.strings(.failures))
        }
        event = json[.event]?.stringValue
        handled = json[.handled]?.boolValue
        receivers = json[.receivers]?.arrayValue?.compactMap(\.stringValue)
        handledBy = json[.handledBy]?.stringValue
        answers = json[.answers]?.objectValue?.compactMapValues(\.stringValue)
        result = json[.result]
        presentation = json[.presentation]
        note = json[.note]?.stringValue
        if let scene = json[.scene] { self.scene = .some(SceneEntry(json: scene)) }
        scenes = json[.scenes]?.arrayValue?.compactMap(SceneEntry.init(json:))
        deliveries = json[.deliveries]?.arrayValue?.map(ControlReply.init(json:))
        savedScenes = json[.savedScenes]?.arrayValue?.compactMap(\.stringValue)
        if let object = json[.authorization], let status = object[.status]?.stringValue {
            authorization = Authorization(status: status, allowed: object.strings(.allowed))
        }
        for key in [ControlKey.stats, .blame, .skipped, .restarted, .watching] { members[key] = json[key] }
    }
}

extension ControlReply.Call {
    init?(json: JSONValue) {
        guard let service = json[.service]?.stringValue, let event = json[.event]?.stringValue else { return nil }
        self.init(service: service, event: event, seconds: json[.seconds]?.doubleValue, deadline: json[.deadline]?.doubleValue)
    }
}

extension ControlReply.Service {
    init?(json: JSONValue) {
        guard case .object(let object) = json, let id = object[.id]?.stringValue else { return nil }
        self.init(
            id: id, name: object[.name]?.stringValue ?? "", version: object[.version]?.stringValue ?? "",
            path: object[.path]?.stringValue ?? "", priority: object[.priority]?.intValue ?? 0,
            state: object[.state]?.stringValue ?? "", events: json.strings(.events), urls: json.strings(.urls),
            activities: json.strings(.activities), subscriptions: json.strings(.subscriptions),
            sceneRoles: json.strings(.sceneRoles), answers: json.strings(.answers), lastError: object[.lastError]?.stringValue,
            retiredCopies: object[.retiredCopies]?.intValue ?? 0, activation: object[.activation]?.stringValue ?? "eager",
            activatedBy: object[.activatedBy]?.stringValue, isolation: object.filter { !Self.ownKeys.contains($0.key) })
    }

    /// The members this type reads itself; the others are isolation's.
    private static let ownKeys: Set<String> = Set(
        [
            ControlKey.id, .name, .version, .path, .priority, .state, .events, .urls,
            .activities, .subscriptions, .sceneRoles, .answers, .lastError, .retiredCopies, .activation, .activatedBy,
        ].map(\.rawValue))
}

extension ControlReply.SceneEntry {
    init?(json: JSONValue) {
        guard let name = json[.name]?.stringValue else { return nil }
        self.init(
            name: name, role: json[.role]?.stringValue ?? "", state: json[.state]?.stringValue ?? "",
            configuration: json[.configuration]?.stringValue ?? "", configuredBy: json[.configuredBy]?.stringValue,
            settings: json[.settings].flatMap { $0 == .null ? nil : $0 }, savedState: json[.savedState]?.boolValue ?? false)
    }
}

extension JSONValue {
    fileprivate func strings(_ key: ControlKey) -> [String] { (self[key]?.arrayValue ?? []).compactMap(\.stringValue) }
}
