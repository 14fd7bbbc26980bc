/// One service at a time: `host ctl service stop|start|restart|reset-failed ID`, through the same
/// take-down a reload gives a removed service and the one catch-up every late service gets.
extension Application {
    /// Takes service `id` down with the events that take the app down (from the app's state);
    /// it receives nothing afterwards and shows as `stopped by request` until started again.
    /// A `policy: required` service refuses without `force`.
    func stopService(_ id: String, force: Bool) throws(ServiceControlError) {
        let slot = try running(id, to: "stop")
        if slot.configuration?.policy == .required && !force {
            throw ServiceControlError("service \(id) is required (policy: required): stopping it needs --force")
        }
        stopBound(to: id)
        services.takeDown([slot], from: lifecycle)
        dispatcher.setServices(services.slots.filter { $0 !== slot })
        services.parked.append((slot, "stopped by request"))
        bus.drain()
        log.info("host", "service \(id) stopped by request", event: .serviceStoppedByRequest, .string("service", id))
    }

    /// The reason a service stopped with its `bindsTo` provider shows while parked.
    private static func boundReason(_ provider: String) -> String { "stopped with \(provider) (bindsTo)" }

    /// Stops the running services bound to `provider` (`bindsTo`) before it, the last started
    /// first, each with the services bound to it in turn: systemd's BindsTo=.
    private func stopBound(to provider: String) {
        for slot in services.slots.reversed() where slot.configuration?.bindsTo.contains(provider) == true {
            guard services.slot(slot.id) != nil else { continue }
            stopBound(to: slot.id)
            services.takeDown([slot], from: lifecycle)
            dispatcher.setServices(services.slots.filter { $0 !== slot })
            services.parked.append((slot, Self.boundReason(provider)))
            log.info(
                "host", "service \(slot.id) stopped with \(provider) (bindsTo)", event: .serviceStoppedByRequest,
                .string("service", slot.id))
        }
    }

    /// Starts again, in start order, the services stopped with `provider` (`bindsTo`), once it
    /// runs again.
    private func startBound(to provider: String) {
        let bound = services.parked.filter { $0.reason == Self.boundReason(provider) }.map(\.slot.id)
        for id in bound { try? startService(id) }
    }

    /// Restarts the running services that are `partOf` `provider` (systemd's PartOf=), after it.
    private func restartParts(of provider: String, isolation: IsolationSupervisor?) {
        for slot in services.slots where slot.configuration?.partOf.contains(provider) == true {
            do throws(ServiceControlError) {
                _ = try restartService(slot.id, force: true, isolation: isolation)
            } catch {
                log.warn("host", "service \(slot.id) (partOf \(provider)) was not restarted: \(error.description)")
            }
        }
    }

    /// Starts service `id` again (stopped by request, or after a failed launch), or for the
    /// first time when the last load left it out (disabled by the configuration, or not in it
    /// under `--only-configured`) and its file is a loadable plugin: back in its place in the
    /// start order, caught up to the app's state with `SH_LAUNCH_RESTART`. Any other service
    /// `list --all` names is refused with the reason it gives.
    func startService(_ id: String) throws(ServiceControlError) {
        if services.slot(id) != nil { throw ServiceControlError("service \(id) is already running") }
        if services.dormant.wake(id, trigger: "host ctl service start") {
            // Opening it failed: the reason is logged and listed (list --all).
            guard services.slot(id) != nil else { throw unknown(id, to: "start") }
            bus.drain()
            return
        }
        let slot: ServiceSlot
        if let index = services.parked.firstIndex(where: { $0.slot.id == id }) {
            slot = services.parked.remove(at: index).slot
            slot.launchFailed = false
        } else if services.skipped.contains(where: {
            $0.services == [id] && ServiceSet.startableReasons.contains($0.reason)
        }) {
            slot = try services.loadLeftOut(id)
        } else {
            throw unknown(id, to: "start")
        }
        services.insertInStartOrder([slot])
        catchUp([slot])
        if slot.launchFailed { log.warn("host", "service \(id) started again but its launch failed") }
        log.info(
            "host", "service \(id) started by request; caught up to \(state.name)", event: .serviceStartedByRequest,
            .string("service", id))
        startBound(to: id)
    }

    /// Stops and starts service `id`; a process-isolated one gets a new worker, and so do the
    /// other services of its file, which share that worker. Returns the services restarted.
    func restartService(_ id: String, force: Bool, isolation: IsolationSupervisor?) throws(ServiceControlError)
        -> [String]
    {
        if let plugin = isolation?.plugin(serving: id) {
            if case .failed(let record) = plugin.status {
                throw ServiceControlError(
                    "service \(id) is marked failed after a crash loop (\(record.summary));"
                        + " it starts again when \(plugin.path) changes")
            }
            _ = try running(id, to: "restart")
            let siblings = services.slots.filter { slot in plugin.proxies.contains { $0.id == slot.id } }
            if !force, let required = siblings.first(where: { $0.configuration?.policy == .required }) {
                throw ServiceControlError(
                    "service \(required.id) is required (policy: required): restarting it needs --force")
            }
            for sibling in siblings { stopBound(to: sibling.id) }
            // Their state goes to the new worker's instances, caught up when it attaches.
            let handed = services.askForState(of: siblings, state: state)
            for sibling in siblings { sibling.restoredState = handed[sibling.id] }
            services.takeDown(siblings, from: lifecycle)
            guard plugin.replaceWorker() else {
                throw ServiceControlError(
                    "service \(id)'s worker is not running (\(plugin.statusName)); try again once it is")
            }
            bus.drain()
            // Its new worker is caught up when it attaches; those bound to it or part of it
            // start again now, and hear of it by dependencyDidStart then.
            for sibling in siblings {
                startBound(to: sibling.id)
                restartParts(of: sibling.id, isolation: isolation)
            }
            return siblings.map(\.id)
        }
        let slot = try running(id, to: "restart")
        if slot.configuration?.policy == .required && !force {
            throw ServiceControlError("service \(id) is required (policy: required): restarting it needs --force")
        }
        // Its state goes to its own next launch (willReload), as across a reload.
        slot.restoredState = services.askForState(of: [slot], state: state)[id]
        try stopService(id, force: force)
        try startService(id)
        restartParts(of: id, isolation: isolation)
        return [id]
    }

    /// Lifts the crash loop's failure of service `id` (systemd's `reset-failed`): its record is
    /// removed and its worker started again on the version loaded, with the other services of
    /// its file, caught up to the app's state. Returns the services started again. A service
    /// that is not marked failed is refused, naming it and what it is.
    func resetFailedService(_ id: String, isolation: IsolationSupervisor?) throws(ServiceControlError) -> [String] {
        guard let plugin = isolation?.plugin(serving: id) else {
            if services.slot(id) != nil {
                throw ServiceControlError(
                    "service \(id) is not marked failed after a crash loop: it runs in the host's process"
                        + " (only a service in a worker process is); nothing to reset")
            }
            _ = try running(id, to: "reset")
            throw unknown(id, to: "reset")
        }
        guard case .failed = plugin.status else {
            throw ServiceControlError(
                "service \(id) is not marked failed after a crash loop (it is \(plugin.statusName)); nothing to reset")
        }
        guard plugin.resetFailed(by: .request) else {
            throw ServiceControlError("service \(id) cannot be started again: the host is not running its services")
        }
        bus.drain()
        return plugin.proxies.map(\.id)
    }

    /// The running service `id`, or an error saying what it is instead.
    private func running(_ id: String, to verb: String) throws(ServiceControlError) -> ServiceSlot {
        if let slot = services.slot(id) { return slot }
        if let parked = services.parked.first(where: { $0.slot.id == id }) {
            throw ServiceControlError("service \(id) is not running (\(parked.reason)); nothing to \(verb)")
        }
        throw unknown(id, to: verb)
    }

    private func unknown(_ id: String, to verb: String) -> ServiceControlError {
        if let skipped = services.skipped.first(where: { $0.services.contains(id) }) {
            return ServiceControlError(
                "service \(id) is not loaded (\(skipped.reason.rawValue)): \(skipped.message) (fix that, then host ctl reload)"
            )
        }
        let known = services.slots.map(\.id) + services.parked.map(\.slot.id)
        return ServiceControlError(
            "cannot \(verb) unknown service \(id)" + Suggestion.didYouMean(id, among: known)
                + " (known: \(known.isEmpty ? "none" : known.joined(separator: ", ")))")
    }
}

/// A `service stop|start|restart|reset-failed` request the host refuses, saying why.
public struct ServiceControlError: Error, CustomStringConvertible, Sendable {
    /// What is wrong, naming the service.
    public let description: String
    init(_ description: String) { self.description = description }
}
