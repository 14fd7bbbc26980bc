import ServiceJSON

extension ControlMessage {
    /// The requests that operate the host rather than drive the app:
    ///
    /// ```text
    /// {"command":"stats","service":"dev.servicehost.logger"}   service optional
    /// {"command":"blame"}
    /// {"command":"list","all":true}
    /// {"command":"service","action":"restart","service":"dev.servicehost.logger","force":false}
    /// {"command":"watch","logs":true}
    /// ```
    public enum Operate: Sendable, Equatable {
        /// Figures per service and event kind; one service's with `service`.
        case stats(service: String?)
        /// Start-up cost per service, slowest first.
        case blame
        /// `list` plus every file and service looked at and not started.
        case listAll
        /// Stops, starts or restarts one service.
        case service(ServiceAction, id: String, force: Bool)
        /// Streams trace records (and log lines with `logs`) until the client goes away.
        case watch(logs: Bool)

        /// `service`'s actions.
        public enum ServiceAction: String, Sendable, CaseIterable { case stop, start, restart }

        /// The command names these use (`list` is the plain command's, with `all`).
        static let names = ["stats", "blame", "service", "watch"]

        /// The command's name on the wire.
        var name: String {
            switch self {
            case .stats: "stats"
            case .blame: "blame"
            case .listAll: "list"
            case .service: "service"
            case .watch: "watch"
            }
        }

        func encode(into object: inout [String: JSONValue]) {
            switch self {
            case .stats(let service):
                if let service { object[.service] = .string(service) }
            case .blame:
                break
            case .listAll:
                object[.all] = true
            case .service(let action, let id, let force):
                object[.action] = .string(action.rawValue)
                object[.service] = .string(id)
                if force { object[.force] = true }
            case .watch(let logs):
                if logs { object[.logs] = true }
            }
        }

        /// The request named `name`, or nil when it is not one of these.
        init?(_ name: String, _ members: Members) throws(InputError) {
            switch name {
            case "stats":
                self = .stats(service: try members.string(.service))
            case "blame":
                self = .blame
            case "list":
                guard try members.bool(.all) == true else { return nil }
                self = .listAll
            case "service":
                let actions = ServiceAction.allCases.map(\.rawValue)
                let text = try members.requiredString(.action)
                guard let action = ServiceAction(rawValue: text) else {
                    throw InputError("service: unknown action \"\(text)\" (one of \(actions.joined(separator: ", ")))")
                }
                self = .service(action, id: try members.requiredString(.service), force: try members.bool(.force) ?? false)
            case "watch":
                self = .watch(logs: try members.bool(.logs) ?? false)
            default:
                return nil
            }
        }
    }
}
