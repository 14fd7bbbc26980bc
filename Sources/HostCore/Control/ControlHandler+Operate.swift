import ServiceJSON

/// The operating requests: `stats`, `blame`, `list --all`, `service`, `configure`, `deploy`, `rollback`,
/// `watch`.
extension ControlHandler {
    func handleOperate(
        _ command: ControlRequest.Operate, respond: @escaping (consuming ControlReply, After) -> Void,
        refuse: (String) -> Void
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
            case .deploy(let directory, let probation):
                let outcome: Host.DeployOutcome
                do throws(Host.DeployError) { outcome = try host.deploy(from: directory, probation: probation) } catch {
                    return refuse(error.description)
                }
                let report = outcome.report
                body.members[.generation] = .number(Double(outcome.generation))
                body.members[.directory] = .string(outcome.directory)
                body.members[.seconds] = .number(outcome.probation)
                body.members[.added] = .array(report.added.map(JSONValue.string))
                body.members[.removed] = .array(report.removed.map(JSONValue.string))
                body.members[.replaced] = .array(report.replaced.map(JSONValue.string))
                body.members[.kept] = .array(outcome.kept.map(JSONValue.string))
                body.members[.failures] = .array(report.failures.map { .string($0.description) })
                // Switched to, and back at once: the reply says so, not "in probation".
                if let culprit = outcome.rolledBackBy { body.members[.rolledBack] = .string(culprit) }
                body.state = host.state.name
            case .deployStatus:
                do throws(Host.DeployError) { body.members[.deploy] = try host.deployStatus() } catch {
                    return refuse(error.description)
                }
            case .deployVerify(let path, let size, let sha256, let signature):
                // Answered when the check (off the main thread) is done; other requests go on meanwhile.
                return host.verifyBundle(file: path, size: size, sha256: sha256, signature: signature) { verdict in
                    var body = ControlReply.Operated()
                    body.members[.bundle] = verdict.json
                    respond(ControlReply(.operated(body)), .keepRunning)
                }
            case .deployDigests:
                body.members[.digests] = .object(host.serviceDigests().mapValues(JSONValue.string))
            case .deployCancel:
                do throws(Host.DeployError) {
                    body.members[.generation] = .number(Double(try host.cancelDeploy()))
                } catch {
                    return refuse(error.description)
                }
            case .configure(let id, let settings):
                switch try host.configureService(id, settings: settings) {
                case .reconfigured: body.members[.reconfigured] = .array([.string(id)])
                case .restarted(let ids): body.members[.restarted] = .array(ids.map(JSONValue.string))
                }
                body.state = host.state.name
                body.services = listedServices().filter { $0.id == id }
            case .rollback:
                do throws(Host.DeployError) {
                    let (from, to) = try host.rollBackByHand()
                    body.members[.generation] = .number(Double(from))
                    body.members[.to] = to.map { .number(Double($0)) } ?? .null
                } catch {
                    return refuse(error.description)
                }
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
                // Its reason is its state: the worker's own (`running`, when it serves its other
                // services) must not override it.
                var isolation = host.isolationFields(for: parked.slot.id)
                isolation[.state] = nil
                var entry = Self.describe(parked.slot, isolation: isolation)
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
