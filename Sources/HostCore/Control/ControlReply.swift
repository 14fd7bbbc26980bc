import ServiceJSON

/// A reply of the control protocol: what the host (or its snapshot) answers and `host ctl`
/// reads. Members that do not apply are nil and left out of the JSON.
///
/// ```text
/// {"event":"openURL","handled":true,"handledBy":"dev.servicehost.deeplinks","id":1,"ok":true,"receivers":[…]}
/// ```
public struct ControlReply: Sendable, Equatable {
    /// Whether the request was carried out. Nil only inside `deliveries`.
    public var ok: Bool?
    /// The request's `id`, echoed.
    public var id: JSONValue?
    /// Why the request failed.
    public var error: String?
    /// True when the snapshot answered, the main thread being stuck in a service.
    public var snapshot = false
    /// The app state after the request.
    public var state: String?
    /// `state`'s answer.
    public var status: Status?
    /// `list`'s answer: every service.
    public var services: [Service]?
    /// `reload`'s answer.
    public var reload: Reload?
    /// The event delivered, and what came of it.
    public var event: String?
    /// Whether a service handled it (claimed it, for open and activity).
    public var handled: Bool?
    /// The services it was delivered to.
    public var receivers: [String]?
    /// The service that claimed it.
    public var handledBy: String?
    /// Each service's answer, by service.
    public var answers: [String: String]?
    /// The merged answer of a background fetch.
    public var result: JSONValue?
    /// The united presentation options of willPresentNotification.
    public var presentation: JSONValue?
    /// Why nothing handled it.
    public var note: String?
    /// The scene after a `scene` request; `.some(nil)` (JSON null) when it is gone.
    public var scene: SceneEntry??
    /// `scene list`'s answer.
    public var scenes: [SceneEntry]?
    /// `scene connect`: what came of each URL and activity of its options.
    public var deliveries: [ControlReply]?
    /// `scene list`: the names of the scenes with a saved restoration activity.
    public var savedScenes: [String]?
    /// `authorization`: the status and the presentation options it allows.
    public var authorization: Authorization?

    /// The notification authorization.
    public struct Authorization: Sendable, Equatable {
        public var status: String
        public var allowed: [String]
    }
    /// The members of the operating replies (`stats`, `blame`, `skipped`, `restarted`,
    /// `watching`), as they go on the wire (ControlHandler+Operate words them).
    public var members: [String: JSONValue] = [:]

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
        public var lastError: String?
        /// Earlier copies of its file replaced by reloads and still mapped (code cannot be unloaded).
        public var retiredCopies: Int = 0
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
        object[.lastError] = lastError.map(JSONValue.string) ?? .null
        object[.retiredCopies] = .number(Double(retiredCopies))
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
            sceneRoles: json.strings(.sceneRoles), lastError: object[.lastError]?.stringValue,
            retiredCopies: object[.retiredCopies]?.intValue ?? 0,
            isolation: object.filter { !Self.ownKeys.contains($0.key) })
    }

    /// The members this type reads itself; the others are isolation's.
    private static let ownKeys: Set<String> = Set(
        [
            ControlKey.id, .name, .version, .path, .priority, .state, .events, .urls,
            .activities, .subscriptions, .sceneRoles, .lastError, .retiredCopies,
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
