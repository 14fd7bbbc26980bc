/// Lazy services opened on their first event (``DormantServices``).
extension ServiceSet {
    /// Opens and attaches `woken` (and the lazy services they require, first), puts them in
    /// their places in the start order and catches them up to the app's state with
    /// `SH_LAUNCH_LAZY`, so the event that woke them reaches them as if they had been eager.
    /// A service that fails to open is logged and listed as skipped; the event goes on
    /// without it, and without the services that require it (`requirement-failed`, as at start).
    func activate(_ woken: [DormantServices.Entry], trigger: String) {
        var entries = woken
        // What a woken service requires and is still waiting is opened with it.
        var index = 0
        while index < entries.count {
            for required in requirements[entries[index].metadata.id] ?? [] {
                if let entry = dormant.take(required), !entries.contains(where: { $0.metadata.id == required }) {
                    entries.append(entry)
                }
            }
            index += 1
        }
        // In start order, which puts every service after what it requires: a requirement is
        // opened, attached and caught up before its dependents (and known failed before them).
        if entries.count > 1 {
            let order = Dictionary(startOrder.enumerated().map { ($1, $0) }, uniquingKeysWith: { a, _ in a })
            entries = entries.enumerated().sorted { a, b in
                (order[a.element.metadata.id] ?? order.count, a.offset)
                    < (order[b.element.metadata.id] ?? order.count, b.offset)
            }.map(\.element)
        }
        var report = LoadReport()
        var arrived: [ServiceSlot] = []
        // Files opened by this activation, by path: two services of one file open it once.
        var files: [String: [LoadedServiceInfo]] = [:]
        for entry in entries {
            let id = entry.metadata.id
            // A requirement that is neither running nor opened just now failed (to open, to
            // attach, or its own requirement): the service is not attached, as at start.
            if let missing = requirements[id]?.first(where: { required in
                !arrived.contains { $0.id == required } && slot(required) == nil
            }) {
                skipped.append(
                    SkippedEntry(
                        service: id, reason: .requirementFailed, message: "requires \(missing), which failed to load"))
                log.error(
                    "host", "\(id) is not started: it requires \(missing), which failed to load",
                    event: .serviceRequirementFailed, .string("service", id), .string("requires", missing))
                continue
            }
            do throws(LoadFailure.Reason) {
                let info: LoadedServiceInfo
                // What opening the file cost goes to the service whose first event opened it.
                var cost = StartupCost()
                if let opened = entry.opened {
                    info = opened
                } else {
                    let infos: [LoadedServiceInfo]
                    if let known = files[entry.plugin.path] {
                        infos = known
                    } else {
                        infos = try openPlugin(entry.plugin, cost: &cost)
                        files[entry.plugin.path] = infos
                        // Services of the file still waiting keep these descriptors: no second open.
                        dormant.hold(infos, from: entry.plugin)
                    }
                    guard let found = infos.first(where: { $0.metadata.id == id }) else {
                        throw .invalidMetadata(
                            "the entry point did not return service \(id), which the metadata declares")
                    }
                    info = found
                }
                var failure: LoadFailure?
                if let slot = attach(info, cost: cost, failure: &failure) {
                    arrived.append(slot)
                } else if let failure {
                    record(failure, report: &report)
                }
            } catch {
                record(LoadFailure(path: entry.plugin.path, reason: error), report: &report)
            }
        }
        guard !arrived.isEmpty else { return }
        insertInStartOrder(arrived)
        for slot in arrived {
            activatedBy[slot.id] = trigger
            log.info(
                slot.id, "opened (lazy) by \(trigger)", event: .serviceActivated, .string("service", slot.id),
                .string("trigger", trigger))
        }
        // The state the version it replaced handed over at a reload, for this first launch.
        for slot in arrived {
            if let state = waitingStates.removeValue(forKey: slot.id) { slot.restoredState = state }
        }
        catchUp(arrived, to: dispatcher.appState, why: .lazy)
    }
}
