import ServiceJSON

// What `host ctl` reads back: a reply object as the host wrote it, its family told by its
// members. Members of the wrong type read as missing (a client shows what it can).

extension ControlReply {
    /// Reads a reply.
    public init(json: JSONValue) {
        self.init(ok: json[.ok]?.boolValue, id: json[.id])
        error = json[.error]?.stringValue
        snapshot = json[.snapshot]?.boolValue ?? false
        body = Self.body(json)
    }

    private static let operatingKeys = [
        ControlKey.stats, .blame, .restarted, .reset, .watching, .generation, .deploy, .bundle, .digests,
    ]
    /// The other members of an operating reply (`deploy`'s, `rollback`'s).
    private static let operatingDetails = [
        ControlKey.directory, .seconds, .added, .removed, .replaced, .kept, .failures, .to, .rolledBack,
    ]
    private static let sceneKeys = [ControlKey.scene, .scenes, .savedScenes, .deliveries]

    private static func body(_ json: JSONValue) -> Body {
        let state = json[.state]?.stringValue
        let services = json[.services]?.arrayValue?.compactMap(Service.init(json:))
        if operatingKeys.contains(where: { json[$0] != nil }) {
            var members: [String: JSONValue] = [:]
            for key in operatingKeys + operatingDetails { members[key] = json[key] }
            return .operated(Operated(state: state, services: services, members: members))
        }
        if let object = json[.authorization], let status = object[.status]?.stringValue {
            return .authorization(
                Authorization(status: status, allowed: object.strings(.allowed), delivery: Delivery(json: json)))
        }
        if sceneKeys.contains(where: { json[$0] != nil }) {
            return .scene(
                Scene(
                    state: state ?? "", scene: json[.scene].map { value -> SceneEntry? in SceneEntry(json: value) },
                    scenes: json[.scenes]?.arrayValue?.compactMap(SceneEntry.init(json:)),
                    savedScenes: json[.savedScenes]?.arrayValue?.compactMap(\.stringValue),
                    deliveries: json[.deliveries]?.arrayValue?.map(Delivery.init(json:)), delivery: Delivery(json: json)
                ))
        }
        if json[.added] != nil {
            return .reload(
                Reload(
                    added: json.strings(.added), removed: json.strings(.removed), replaced: json.strings(.replaced),
                    failures: json.strings(.failures), reconfigured: json.strings(.reconfigured),
                    restartNeeded: json.strings(.restartNeeded)))
        }
        if let count = json[.services]?.intValue {
            return .status(
                Status(
                    state: state ?? "", serviceCount: count, deviceToken: json[.deviceToken]?.stringValue,
                    busy: json[.busy].flatMap(Call.init(json:)), stuck: json[.stuck].flatMap(Call.init(json:))))
        }
        if let services {
            // `service stop` and `start` answer the app state with the service (no operating member).
            if state != nil { return .operated(Operated(state: state, services: services)) }
            return .services(Services(services: services, skipped: json[.skipped]?.arrayValue))
        }
        if let state { return .moved(state: state) }
        let delivery = Delivery(json: json)
        return delivery == Delivery() ? .none : .delivery(delivery)
    }
}

extension ControlReply.Delivery {
    init(json: JSONValue) {
        self.init(
            event: json[.event]?.stringValue, handled: json[.handled]?.boolValue,
            receivers: json[.receivers]?.arrayValue?.compactMap(\.stringValue),
            handledBy: json[.handledBy]?.stringValue,
            answers: json[.answers]?.objectValue?.compactMapValues(\.stringValue), result: json[.result],
            presentation: json[.presentation], note: json[.note]?.stringValue)
    }
}

extension ControlReply.Call {
    init?(json: JSONValue) {
        guard let service = json[.service]?.stringValue, let event = json[.event]?.stringValue else { return nil }
        self.init(
            service: service, event: event, seconds: json[.seconds]?.doubleValue, deadline: json[.deadline]?.doubleValue
        )
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
            sceneRoles: json.strings(.sceneRoles), answers: json.strings(.answers),
            lastError: object[.lastError]?.stringValue, retiredCopies: object[.retiredCopies]?.intValue ?? 0,
            activation: object[.activation]?.stringValue ?? "eager", activatedBy: object[.activatedBy]?.stringValue,
            isolation: object.filter { !Self.ownKeys.contains($0.key) })
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
            settings: json[.settings].flatMap { $0 == .null ? nil : $0 },
            savedState: json[.savedState]?.boolValue ?? false)
    }
}

extension JSONValue {
    fileprivate func strings(_ key: ControlKey) -> [String] { (self[key]?.arrayValue ?? []).compactMap(\.stringValue) }
}

extension ControlReply {
    /// The app state the reply carries: `state`'s, a lifecycle move's, a scene's, `service`'s.
    public var state: String? {
        switch body {
        case .status(let status): status.state
        case .moved(let state): state
        case .scene(let scene): scene.state
        case .operated(let operated): operated.state
        case .none, .delivery, .services, .reload, .authorization: nil
        }
    }

    /// The event's delivery the reply carries (an event's, a scene's, an authorization's);
    /// empty for the other families.
    public var delivery: Delivery {
        switch body {
        case .delivery(let delivery): delivery
        case .scene(let scene): scene.delivery
        case .authorization(let authorization): authorization.delivery
        case .none, .status, .services, .reload, .moved, .operated: Delivery()
        }
    }

    /// The services the reply lists: `list`'s, `service`'s.
    public var services: [Service]? {
        switch body {
        case .services(let list): list.services
        case .operated(let operated): operated.services
        default: nil
        }
    }
}
