import ServiceJSON

/// The operating requests: `stats`, `blame`, `list --all`, `service`, `watch`.
extension ControlHandler {
    func handleOperate(
        _ command: ControlRequest.Operate, respond: (consuming ControlReply, After) -> Void, refuse: (String) -> Void
    ) {
        var body = ControlReply.Operated()
        do throws(ServiceControlError) {
            switch command {
            case .stats(let service):
                body.members[.stats] = try host.statistics(of: service)
            case .blame:
                body.members[.blame] = .array(
                    host.blame().map { entry in
                        let cost = entry.cost
                        return .object([
                            "service": .string(entry.service), "total_ns": .number(Double(cost.total)),
                            "inspect_ns": .number(Double(cost.inspect)), "dlopen_ns": .number(Double(cost.dlopen)),
                            "entry_ns": .number(Double(cost.entry)), "attach_ns": .number(Double(cost.attach)),
                            "launch_ns": .number(Double(cost.launch)),
                        ])
                    })
            case .listAll:
                let list = ControlReply.Services(services: listedServices(), skipped: host.skipped.map(\.json))
                return respond(ControlReply(.services(list)), .keepRunning)
            case .service(let action, let id, let force):
                switch action {
                case .stop: try host.stopService(id, force: force)
                case .start: try host.startService(id)
                case .restart:
                    body.members[.restarted] = .array(try host.restartService(id, force: force).map(JSONValue.string))
                case .resetFailed:
                    body.members[.reset] = .array(try host.resetFailedService(id).map(JSONValue.string))
                }
                body.state = host.state.name
                body.services = listedServices().filter { $0.id == id }
            case .watch(let logs):
                body.members[.watching] = true
                return respond(ControlReply(.operated(body)), .watch(logs: logs))
            }
        } catch {
            return refuse(error.description)
        }
        respond(ControlReply(.operated(body)), .keepRunning)
    }

    /// `list`: the running services, then those loaded but not running, with why
    /// (`stopped by request`, `failed to launch`), then the lazy ones not opened yet.
    func listedServices() -> [ControlReply.Service] {
        host.services.map {
            var entry = Self.describe(
                $0, retiredCopies: host.retiredCopies(of: $0.path), isolation: host.isolationFields(for: $0.id))
            if let trigger = host.activatedBy(of: $0.id) {
                entry.activation = "lazy"
                entry.activatedBy = trigger
            }
            return entry
        }
            + host.parkedServices.map { parked in
                var entry = Self.describe(parked.slot, isolation: host.isolationFields(for: parked.slot.id))
                entry.state = parked.reason
                return entry
            }
            + host.dormantServices.map { dormant in
                var entry = Self.describe(dormant.metadata, path: dormant.path, state: "lazy (not loaded)")
                entry.activation = "lazy"
                return entry
            }
    }
}
