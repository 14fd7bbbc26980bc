/// Lazy services opened on their first event (``DormantServices``).
extension ServiceSet {
    /// Opens and attaches `woken` (and the lazy services they require, first), puts them in
    /// their places in the start order and catches them up to the app's state with
    /// `SH_LAUNCH_LAZY`, so the event that woke them reaches them as if they had been eager.
    /// A service that fails to open is logged and listed as skipped; the event goes on
    /// without it.
    func activate(_ woken: [DormantServices.Entry], trigger: String) {
        var entries = woken
        // What a woken service requires and is still waiting goes first.
        var index = 0
        while index < entries.count {
            for required in requirements[entries[index].metadata.id] ?? [] {
                if let entry = dormant.take(required), !entries.contains(where: { $0.metadata.id == required }) {
                    entries.append(entry)
                }
            }
            index += 1
        }
        var report = LoadReport()
        var arrived: [ServiceSlot] = []
        // Files opened by this activation, by path: two services of one file open it once.
        var files: [String: [LoadedServiceInfo]] = [:]
        for entry in entries {
            let id = entry.metadata.id
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
        catchUp(arrived, to: dispatcher.appState, why: .lazy)
    }
}
