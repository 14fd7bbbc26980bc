import ServiceABI
import ServiceJSON

/// Loading: configuration, inspection, the start plan, opening and attaching; and reload,
/// which does the same again and keeps what did not change.
extension ServiceSet {
    /// Reads the configuration, inspects the plugin directories, plans the start order and
    /// loads the services to start (only those: a disabled service's code never runs).
    ///
    /// Throws when the host cannot start: an unusable directory or configuration, a cycle or
    /// a missing requirement, a `policy: required` service that failed, or any failure under
    /// `strict`. Other failures are logged and returned.
    func load(_ settings: LoadSettings) throws(LoadError) -> LoadReport {
        loadSettings = settings
        // Read once, for this load only: a reload reads the file again.
        loadSettings.configurationRead = nil
        let (plan, inspection) = try prepare(settings)
        var report = LoadReport(failures: inspection.failures)
        let (opened, waiting) = try open(plan: plan, inspection: inspection, keeping: [:], report: &report)
        dispatcher.setServices(opened)
        dormant.replace(with: waiting)
        hasLoaded = true
        report.added = opened.map(\.id)
        if settings.strict && !report.failures.isEmpty {
            throw LoadError(
                description:
                    "--strict: \(report.failures.count) plugin file(s) or service(s) failed to load; exiting before launch"
            )
        }
        return report
    }

    /// What a reload will change, computed without changing anything (so a failure leaves
    /// everything as it was): the new service list and who leaves and arrives.
    struct ReloadChange {
        var slots: [ServiceSlot]
        /// The lazy services that wait for their first event after the reload.
        var dormant: [DormantServices.Entry]
        var leaving: [ServiceSlot]
        var arriving: [ServiceSlot]
        /// Running services kept, told of their new configuration (its settings) by didChangeSettings.
        var reconfiguring: [(slot: ServiceSlot, configuration: ServiceConfiguration?)] = []
        var report: LoadReport
    }

    /// Rescans the plugin directories and the configuration and opens what is new. Running
    /// services whose file is unchanged and that stay enabled with the same configuration are
    /// kept as they are; a changed file is loaded as a new copy from a private path (Swift code
    /// cannot be unloaded). Throws, changing nothing, when the reload cannot go on.
    func prepareReload() throws(LoadError) -> ReloadChange {
        let previousConfiguration = configuration
        let (plan, inspection) = try prepare(loadSettings)
        var report = LoadReport(failures: inspection.failures)
        let wanted = Set(plan.order)
        let onDisk = Dictionary(inspection.services.map { ($0.service.id, $0.plugin) }, uniquingKeysWith: { a, _ in a })
        var keep: [String: ServiceSlot] = [:]
        var reconfiguring: [(slot: ServiceSlot, configuration: ServiceConfiguration?)] = []
        for slot in slots where wanted.contains(slot.id) {
            guard let file = onDisk[slot.id] else { continue }
            if file.path != slot.path {
                // A deploy puts every file in its generation's folder: a service whose file has the
                // same bytes and whose settings did not change is the same service, and keeps running.
                if followsContent && previousConfiguration.services[slot.id] == configuration.services[slot.id]
                    && Self.sameBytes(file.path, slot.path)
                {
                    keep[slot.id] = slot
                }
                continue
            }
            let unchanged =
                onDisk[slot.id]?.identity == slot.identity
                && previousConfiguration.services[slot.id] == configuration.services[slot.id]
            if unchanged {
                keep[slot.id] = slot
            } else if onDisk[slot.id]?.identity == slot.identity, slot.metadata.events.contains(.didChangeSettings),
                Self.onlySettingsDiffer(previousConfiguration.services[slot.id], configuration.services[slot.id])
            {
                // It takes its settings live: kept running, told by didChangeSettings.
                keep[slot.id] = slot
                reconfiguring.append((slot, configuration.services[slot.id]))
            } else if onDisk[slot.id]?.identity == slot.identity {
                // Its settings changed: started again from the library loaded, not a new load.
                attachedContexts[slot.descriptor] = slot.context
            } else if onDisk[slot.id]?.identity != slot.identity
                && retiredCopies[slot.path, default: 0] >= Self.retiredCopyLimit
            {
                // A replacement past the limit would map yet another copy for good: keep the one running.
                keep[slot.id] = slot
                record(
                    LoadFailure(path: slot.path, reason: .replacementLimit(limit: Self.retiredCopyLimit)),
                    report: &report)
            }
        }
        let opened: [ServiceSlot]
        let waiting: [DormantServices.Entry]
        do throws(LoadError) {
            (opened, waiting) = try open(plan: plan, inspection: inspection, keeping: keep, report: &report)
            if loadSettings.strict && !report.failures.isEmpty {
                throw LoadError(
                    description: "--strict: \(report.failures.count) plugin file(s) or service(s) failed to load")
            }
        } catch {
            configuration = previousConfiguration
            throw error
        }
        let leaving = slots.filter { keep[$0.id] == nil }
        let arriving = opened.filter { keep[$0.id] == nil }
        report.removed = leaving.map(\.id).filter { id in !arriving.contains { $0.id == id } }
        report.replaced = leaving.map(\.id).filter { id in arriving.contains { $0.id == id } }
        report.added = arriving.map(\.id).filter { id in !leaving.contains { $0.id == id } }
        // A failed reload above changed nothing: only now does a kept slot take its new configuration.
        let live = reconfiguring.filter { item in opened.contains { $0 === item.slot } }
        report.reconfigured = live.map(\.slot.id)
        report.restartNeeded = startOnlyChanges(in: opened)
        return ReloadChange(
            slots: opened, dormant: waiting, leaving: leaving, arriving: arriving, reconfiguring: live, report: report)
    }

    /// The services of `running` whose configuration's isolation keys now differ from what the
    /// host started with (they are read once, at start), each logged with the keys: a reload
    /// that seemed to move a service into a worker or sandbox it, and did not, says so.
    private func startOnlyChanges(in running: [ServiceSlot]) -> [String] {
        guard let started = isolation?.settings else { return [] }
        var now = started
        now.adopt(configuration)
        var changed: [String] = []
        for slot in running {
            let id = slot.id
            var keys: [String] = []
            if now.isolation(for: id) != started.isolation(for: id) { keys.append("isolation") }
            if now.sandbox(for: id) != started.sandbox(for: id) { keys.append("sandbox") }
            if now.eventTimeout(for: id) != started.eventTimeout(for: id) { keys.append("eventTimeout") }
            if now.restartResetAfter(for: id) != started.restartResetAfter(for: id) { keys.append("restartResetAfter") }
            if now.policies[id]?.trusted != started.policies[id]?.trusted { keys.append("trusted") }
            guard !keys.isEmpty else { continue }
            changed.append(id)
            log.warn(
                "host",
                "service \(id): \(keys.joined(separator: ", ")) changed in the configuration; a reload does not apply "
                    + "\(keys.count == 1 ? "it" : "them"), the host's next start does",
                event: .reloadRestartNeeded, .string("service", id), .strings("keys", keys))
        }
        return changed
    }

    /// Whether two configurations of one service differ in their settings only (any other key
    /// changed needs a restart: isolation, policy, requirements…).
    static func onlySettingsDiffer(_ old: ServiceConfiguration?, _ new: ServiceConfiguration?) -> Bool {
        guard old?.settings != new?.settings else { return false }
        var before = old ?? ServiceConfiguration(id: new?.id ?? "")
        before.setSettings(new?.settings)
        return before == (new ?? ServiceConfiguration(id: old?.id ?? ""))
    }

    /// Whether the files at `a` and `b` hold the same bytes (false when either cannot be read).
    /// One inode (a deploy links an unchanged file to the generation in force's) is the same
    /// file, with nothing read.
    static func sameBytes(_ a: String, _ b: String) -> Bool {
        guard let first = try? ReadOnlyFile(path: a), let second = try? ReadOnlyFile(path: b) else { return false }
        if first.status.st_dev == second.status.st_dev && first.status.st_ino == second.status.st_ino { return true }
        return DeployStage.sameBytes(first, second)
    }

    /// Carries out a reload: what leaves is taken down (reverse start order) from the app's
    /// state, what arrives is caught up to it (start order).
    func apply(_ change: ReloadChange, lifecycle: AppLifecycle) {
        // A service replaced (not removed) hands its state to its replacement (willReload),
        // also to a lazy one, which finds it when an event opens it (``waitingStates``).
        let replaced = change.leaving.filter { slot in
            change.arriving.contains { $0.id == slot.id } || change.dormant.contains { $0.metadata.id == slot.id }
        }
        let handed = replaced.isEmpty ? [:] : askForState(of: replaced, state: lifecycle.state)
        let waiting = Set(change.dormant.map(\.metadata.id))
        // A state waits for the version the reload left dormant, not an older one it replaced.
        waitingStates = waitingStates.filter { waiting.contains($0.key) && handed[$0.key] == nil }
        for (id, state) in handed where waiting.contains(id) { waitingStates[id] = state }
        takeDown(change.leaving, from: lifecycle)
        // Started again later from the same library, a service keeps its context (``attach``).
        for slot in change.leaving { attachedContexts[slot.descriptor] = slot.context }
        dispatcher.setServices(change.slots)
        dormant.replace(with: change.dormant)
        for slot in change.arriving where !handed.isEmpty { slot.restoredState = handed[slot.id] }
        catchUp(change.arriving, to: lifecycle.state)
        deliverSettings(change.reconfiguring, state: lifecycle.state)
        if let isolation {
            // Workers no service runs in any more end now, not at exit.
            let inUse = Set(change.slots.map(\.descriptor) + parked.map(\.slot.descriptor))
            for old in isolation.retire(keeping: inUse) { libraries.forget(old.path, identity: old.identity) }
        }
        let report = change.report
        log.info(
            "host",
            "reloaded: added [\(report.added.joined(separator: ", "))], removed ["
                + report.removed.joined(separator: ", ") + "], replaced [\(report.replaced.joined(separator: ", "))]"
                + ", settings delivered live [\(report.reconfigured.joined(separator: ", "))]",
            event: .reloadDone, .strings("added", report.added), .strings("removed", report.removed),
            .strings("replaced", report.replaced), .strings("reconfigured", report.reconfigured))
    }

    /// didChangeSettings, old and new, to each kept service whose settings changed, in service order.
    private func deliverSettings(
        _ changes: [(slot: ServiceSlot, configuration: ServiceConfiguration?)], state: AppState
    ) {
        for (slot, configuration) in changes { deliverSettings(to: slot, configuration, state: state) }
    }

    /// Gives running service `slot` its new `configuration` (later launch options carry its
    /// settings) and tells it by didChangeSettings, old settings and new; returns its answer.
    /// A negative answer is logged: the settings stay the new ones.
    @discardableResult
    func deliverSettings(to slot: ServiceSlot, _ configuration: ServiceConfiguration?, state: AppState) -> Int32 {
        let old = slot.configuration?.settingsJSON
        slot.configuration = configuration
        guard let index = slots.firstIndex(where: { $0 === slot }) else { return Int32(SH_UNSUPPORTED) }
        let arena = EventArena()
        let data = arena.settingsChange(old: old, new: configuration?.settingsJSON)
        let result = withExtendedLifetime(arena) {
            dispatcher.call(index, .didChangeSettings, UnsafeRawPointer(data), state: state).result
        }
        log.write(
            result < 0 ? .warn : .info, "host",
            "service \(slot.id): its settings changed; told by didChangeSettings, not restarted"
                + (result < 0 ? " (it answered \(result))" : ""),
            event: .serviceSettingsChanged, fields: [.string("service", slot.id), .int("result", result)])
        return result
    }

    /// Reads the configuration, inspects the directories and plans the start order (the
    /// planner `host check` shares), logging what it found; throws at the first problem that
    /// stops a load.
    private func prepare(_ settings: LoadSettings) throws(LoadError) -> (StartPlan, PluginLoader.Inspection) {
        let planner = LoadPlanner(settings)
        var newConfiguration: HostConfiguration
        let inspection: PluginLoader.Inspection
        let plan: StartPlan
        do { newConfiguration = try planner.configuration.get() } catch {
            throw LoadError(description: error.description, key: error.keyPath.flatMap { $0.isEmpty ? nil : $0 })
        }
        do { inspection = try planner.inspection.get() } catch { throw LoadError(description: error.description) }
        for failure in inspection.failures { logFailure(failure) }
        skipped = inspection.failures.map(SkippedEntry.init)
        // The planner plans whenever the configuration and the inspection succeeded.
        do { plan = try planner.plan!.get() } catch { throw LoadError(description: error.description) }
        skipped += plan.disabled.map {
            SkippedEntry(service: $0, reason: .disabled, message: "disabled by the configuration")
        }
        skipped += plan.notConfigured.map {
            SkippedEntry(service: $0, reason: .notConfigured, message: "not in the configuration (--only-configured)")
        }
        for id in plan.disabled {
            log.info("host", "\(id) is disabled by the configuration", event: .serviceDisabled, .string("service", id))
        }
        for id in plan.notConfigured {
            log.info(
                "host", "\(id) is not in the configuration: not started (--only-configured)",
                event: .serviceNotConfigured, .string("service", id))
        }
        if let id = planner.requiredButMissing.first {
            throw LoadError(description: "required service \(id) is in the configuration but no plugin provides it")
        }
        if let unmet = planner.requiredButUnmet.first {
            throw LoadError(description: "required service \(unmet.service) cannot start: \(unmet)")
        }
        for unmet in plan.unmet {
            skipped.append(SkippedEntry(service: unmet.service, reason: .requirementFailed, message: unmet.description))
            log.error(
                "host", "\(unmet.service) is not started: \(unmet)", event: .serviceRequirementFailed,
                .string("service", unmet.service), .string("requires", unmet.requirementID))
        }
        for id in plan.missing {
            log.warn(
                "host", "\(id) is in the configuration but no plugin provides it", event: .serviceMissing,
                .string("service", id))
        }
        // Settings schemas: defaults filled in; a value that breaks one is refused by key and
        // rule, and the service keeps the settings in force (the schema's defaults at a start).
        // Only the services that declare a schema are handed over: `inspection.services` made two
        // arrays per file at every start, for none in most plugin sets.
        var schematic: [(service: ServiceMetadata, plugin: PluginInspector.Inspected)] = []
        // By index: `for plugin in` copied every file's inspection (a retain and release of each
        // of its references) to look at its services.
        for index in inspection.plugins.indices {
            for service in inspection.plugins[index].metadata.services where service.settingsSchema != nil {
                schematic.append((service, inspection.plugins[index]))
            }
        }
        for refusal in newConfiguration.applySettingsSchemas(of: schematic, previous: configuration) {
            log.error(
                "host",
                "service \(refusal.service): \(refusal.violation); it keeps "
                    + (refusal.kept == "previous" ? "the settings it had" : "its schema's defaults"),
                event: .serviceSettingsRefused, .string("service", refusal.service),
                .string("key", refusal.violation.key), .string("reason", refusal.violation.reason),
                .string("kept", refusal.kept))
        }
        configuration = newConfiguration
        // A service stopped by request stays stopped across reloads.
        let stoppedIDs = Set(parked.map(\.slot.id))
        // One answerer per request name: the planner's conflicts, which `host check` reports.
        for conflict in planner.answerConflicts {
            let id = conflict.service
            skipped.append(SkippedEntry(service: id, reason: .answerConflict, message: conflict.description))
            log.error(
                "host", "\(id) is not started: it \(conflict)", event: .requestConflict, .string("service", id),
                .string("name", conflict.name), .string("answerer", conflict.answerer))
        }
        var kept = plan
        kept.order = planner.startOrder ?? plan.order
        if !stoppedIDs.isEmpty { kept.order.removeAll(where: stoppedIDs.contains) }
        startOrder = plan.order
        requirements = plan.requirements
        return (kept, inspection)
    }

    /// Opens and attaches the services of `plan` that are not in `keeping`; returns every
    /// service to run, in start order, and the lazy ones that wait for their first event. A
    /// service whose requirement failed is not started.
    private func open(
        plan: StartPlan, inspection: PluginLoader.Inspection, keeping: [String: ServiceSlot],
        report: inout LoadReport
    ) throws(LoadError) -> (slots: [ServiceSlot], dormant: [DormantServices.Entry]) {
        let wanted = WantedServices(plan.order, keeping: keeping, found: inspection.plugins)
        let lazy = lazyServices(plan: plan, inspection: inspection, wanted: wanted)
        let before = Dictionary(dormant.entries.map { ($0.metadata.id, $0) }, uniquingKeysWith: { a, _ in a })
        var waiting: [String: DormantServices.Entry] = [:]
        waiting.reserveCapacity(lazy.count)
        // In file order: the plan's order is usually that order (equal priorities, nothing
        // required), and then ``OpenedSlots`` hands them out without hashing an id.
        var opened = OpenedSlots()
        opened.slots.reserveCapacity(wanted.count - lazy.count)
        var failed = Set<String>()
        // Refused by safe mode: not failures, but a service that requires one cannot start.
        var refused = Set<String>()
        StoredCopy.expectLoads(inspection.plugins.count)
        for plugin in inspection.plugins {
            let services = plugin.metadata.services
            // A file of lazy services only is not opened at all; one waiting since before
            // keeps the descriptor it already has. (Asked before listing the file's ids: most
            // files of a lazy set are that, and the lists cost two arrays per file.)
            // (`lazy` is asked only when it holds something: even an empty set hashes the id.)
            if !Self.opensAtStart(services, wanted: wanted, lazy: lazy) {
                for service in services where wanted.contains(service.id) {
                    let previous = before[service.id].flatMap {
                        $0.plugin.identity == plugin.identity && $0.plugin.path == plugin.path ? $0.opened : nil
                    }
                    waiting[service.id] = DormantServices.Entry(metadata: service, plugin: plugin, opened: previous)
                }
                continue
            }
            // The file's wanted ids, listed only for a refusal (two arrays and a set per file were
            // a cost of every start).
            let ids = { services.map(\.id).filter { wanted.contains($0) } }
            do throws(LoadFailure.Reason) {
                var cost = StartupCost(inspect: plugin.inspectNanoseconds)
                let infos = try openPlugin(plugin, cost: &cost)
                if infos.isEmpty {
                    // Only safe mode places a file nowhere.
                    skipped.append(
                        SkippedEntry(
                            path: plugin.path, services: ids(), reason: .safeMode,
                            message: "not trusted: refused by safe mode"))
                    refused.formUnion(ids())
                }
                for info in infos where wanted.contains(info.metadata.id) && Self.declares(services, info.metadata.id) {
                    if !lazy.isEmpty && lazy.contains(info.metadata.id) {
                        // Opened for an eager sibling: its descriptor waits, unattached.
                        waiting[info.metadata.id] = DormantServices.Entry(
                            metadata: info.metadata, plugin: plugin, opened: info)
                        continue
                    }
                    var failure: LoadFailure?
                    if let slot = attach(info, cost: cost, failure: &failure) {
                        opened.slots.append(slot)
                    } else if let failure {
                        record(failure, report: &report)
                        failed.insert(info.metadata.id)
                    }
                }
            } catch {
                record(LoadFailure(path: plugin.path, reason: error), report: &report)
                failed.formUnion(ids())
            }
        }
        var result: [ServiceSlot] = []
        var resting: [DormantServices.Entry] = []
        var unavailable = failed.union(plan.missing).union(refused)
        // Empty tables are not asked: this runs for every service of the plan at every start.
        for id in plan.order {
            if !plan.requirements.isEmpty, let missing = plan.requirements[id]?.first(where: unavailable.contains) {
                unavailable.insert(id)
                let why = refused.contains(missing) ? "which safe mode did not start" : "which failed to load"
                skipped.append(
                    SkippedEntry(service: id, reason: .requirementFailed, message: "requires \(missing), \(why)"))
                log.error(
                    "host", "\(id) is not started: it requires \(missing), \(why)",
                    event: .serviceRequirementFailed, .string("service", id), .string("requires", missing))
                failed.insert(id)
                continue
            }
            if let slot = (keeping.isEmpty ? nil : keeping[id]) ?? opened.take(id) {
                result.append(slot)
            } else if !waiting.isEmpty, let entry = waiting[id] {
                resting.append(entry)
            }
        }
        if let required = plan.order.first(where: {
            failed.contains($0) && configuration.services[$0]?.policy == .required
        }) {
            throw LoadError(description: "required service \(required) failed to load (policy: required)")
        }
        return (result, resting)
    }

    /// The slots a load opened, in the order opened, handed out by id in start order: while the
    /// ids come in the order opened (a plan of equal priorities), each is the next slot, compared
    /// and not hashed (a dictionary of the slots cost an insert and a lookup per plugin at every
    /// start, ~1 k instructions, callgrind); at the first that does not, the slots not yet
    /// handed out go in a dictionary.
    @MainActor struct OpenedSlots {
        var slots: [ServiceSlot] = []
        private var next = 0
        private var byID: [String: ServiceSlot]?

        /// The slot opened for `id`, if any; each id is asked once.
        mutating func take(_ id: String) -> ServiceSlot? {
            if byID == nil {
                if next < slots.count && slots[next].id == id {
                    next += 1
                    return slots[next - 1]
                }
                guard next < slots.count else { return nil }
                var rest: [String: ServiceSlot] = [:]
                rest.reserveCapacity(slots.count - next)
                for slot in slots[next...] { rest[slot.id] = slot }
                byID = rest
            }
            return byID?[id]
        }
    }

    /// The services of `wanted` to leave dormant (``LazyServices``), each lazy one opened at
    /// start all the same logged with its reason.
    private func lazyServices(plan: StartPlan, inspection: PluginLoader.Inspection, wanted: WantedServices) -> Set<
        String
    > {
        let decision = LazyServices(
            plan: plan, plugins: inspection.plugins, configuration: configuration, wanted: wanted)
        for refusal in decision.refusals {
            switch refusal {
            case .lifecycleOnly(let service):
                log.warn(
                    service,
                    "is lazy but handles only lifecycle events, which never open a lazy service: opened at start",
                    event: .serviceLazyRefused, .string("service", service), .string("reason", "lifecycleOnly"))
            case .required(let service, let requiredBy):
                log.info(
                    service, "is lazy but \(requiredBy) requires it: opened at start", event: .serviceLazyRefused,
                    .string("service", service), .string("reason", "requiredBy"), .string("requiredBy", requiredBy))
            }
        }
        return decision.lazy
    }

    /// Opens `plugin` (always from its stored copy, see ``StoredCopy``), or hands back the
    /// services of the library loaded from this very version already (``libraries``): a
    /// version is loaded once per process. A new version of a file loaded before retires the
    /// copy loaded (it stays mapped), up to ``retiredCopyLimit``: past it the file is refused
    /// (``LoadFailure/Reason/replacementLimit(limit:)``), on every path that opens a file.
    /// `cost` gets the time of `dlopen` and of `servicehost_entry` (a worker's whole start
    /// counts as its `dlopen`).
    func openPlugin(
        _ plugin: PluginInspector.Inspected,
        cost: inout StartupCost
    ) throws(LoadFailure.Reason) -> [LoadedServiceInfo] {
        // Not asked at the first load: nothing is loaded yet, and it hashes no path.
        let earlier = hasLoaded ? libraries.find(plugin.path) : nil
        if let earlier, earlier.identity == plugin.identity { return earlier.services }
        // Said for a worker's plugin too: the host makes the copies its workers open.
        defer {
            if let refusal = CopyStore.takeRefusal() {
                log.warn(
                    "host",
                    "the store of plugin copies \(refusal.path) is unsafe (\(refusal.reason)): copies go to a private directory",
                    event: .copiesStoreRefused, .string("path", refusal.path), .string("reason", refusal.reason))
            }
            if let fallback = CopyStore.takeFallback() { logFallback(fallback) }
        }
        var start = Clock.nanoseconds()
        if let elsewhere = try isolation?.place(plugin) {
            cost.dlopen = Clock.nanoseconds() &- start
            // A worker's services, started again, stay in that worker: each new placement was a
            // new worker, and the one before kept running (a worker per settings edit).
            if !elsewhere.isEmpty {
                libraries.record(
                    LoadedLibraries.Entry(path: plugin.path, identity: plugin.identity, services: elsewhere))
            }
            return elsewhere
        }
        if earlier != nil && retiredCopies[plugin.path, default: 0] >= Self.retiredCopyLimit {
            throw .replacementLimit(limit: Self.retiredCopyLimit)
        }
        var dlopenTime: UInt64 = 0
        defer {
            cost.dlopen = dlopenTime
            cost.entry = Clock.nanoseconds() &- start
        }
        // The marks as a closure literal, not a closure value: `willRun` does not escape, so the
        // times it writes stay on the stack (a stored closure boxed them: three allocations per
        // plugin at every start).
        let infos = try PluginLoader.open(plugin) { stage in
            let now = Clock.nanoseconds()
            if stage == .entry { dlopenTime = now &- start }
            start = now
        }
        if earlier != nil { retiredCopies[plugin.path, default: 0] += 1 }
        libraries.record(LoadedLibraries.Entry(path: plugin.path, identity: plugin.identity, services: infos))
        return infos
    }

    /// Says once that the store of copies could not take a copy and which store takes them now.
    func logFallback(_ fallback: (from: String, to: String?, reason: String, errno: Int32)) {
        let fields: [LogField] = [
            .string("path", fallback.from), .string("to", fallback.to ?? ""), .string("reason", fallback.reason),
            .int("errno", fallback.errno),
        ]
        if let to = fallback.to {
            log.write(
                .warn, "host",
                "the store of plugin copies \(fallback.from) cannot take a copy (\(fallback.reason)): copies go to \(to)",
                event: .copiesStoreFallback, fields: fields)
        } else {
            log.write(
                .error, "host",
                "the store of plugin copies \(fallback.from) cannot take a copy (\(fallback.reason)), and no other place can",
                event: .copiesStoreFallback, fields: fields)
        }
    }

    /// Whether one of `services` is wanted and not lazy: its file is opened now.
    private nonisolated static func opensAtStart(
        _ services: [ServiceMetadata], wanted: WantedServices, lazy: Set<String>
    ) -> Bool {
        for service in services where wanted.contains(service.id) && (lazy.isEmpty || !lazy.contains(service.id)) {
            return true
        }
        return false
    }

    /// Whether `id` is one of `services` (a file's few: a scan, no hashing). Nonisolated: a
    /// closure made in a main-actor method is checked for the main actor on each call.
    private nonisolated static func declares(_ services: [ServiceMetadata], _ id: String) -> Bool {
        for service in services where service.id == id { return true }
        return false
    }

    /// Why a load leaves out a service whose file is fine: `host ctl service start` loads those.
    static let startableReasons: Set<SkippedEntry.Reason> = [.disabled, .notConfigured]

    /// Loads service `id`, which the last load or reload left out for one of the
    /// ``startableReasons``: its file inspected again and opened as a reload opens one (a
    /// private copy when the file is already loaded), then attached. Returns its slot, not yet
    /// running: the caller places it and catches it up. Errors name the service and the file.
    func loadLeftOut(_ id: String) throws(ServiceControlError) -> ServiceSlot {
        var inspection: PluginLoader.Inspection
        do {
            inspection = try PluginLoader.inspect(
                directories: loadSettings.directories, allowInsecure: loadSettings.allowInsecure,
                registry: loadSettings.registry)
        } catch {
            throw ServiceControlError("service \(id) cannot be loaded: \(error)")
        }
        // The pins and signatures of the configuration in force, as at a load (issue 40).
        PluginTrust.apply(configuration, to: &inspection)
        guard let plugin = inspection.plugins.first(where: { $0.metadata.services.contains { $0.id == id } }) else {
            let failure = inspection.failures.first { SkippedEntry($0).services.contains(id) }
            throw ServiceControlError(
                "service \(id) cannot be loaded: " + (failure?.description ?? "no plugin file provides it any more"))
        }
        var cost = StartupCost(inspect: plugin.inspectNanoseconds)
        let infos: [LoadedServiceInfo]
        do { infos = try openPlugin(plugin, cost: &cost) } catch {
            throw ServiceControlError(
                "service \(id) cannot be loaded: \(LoadFailure(path: plugin.path, reason: error))")
        }
        guard let info = infos.first(where: { $0.metadata.id == id }) else {
            throw ServiceControlError(
                "service \(id) cannot be loaded: \(plugin.path) is not trusted: refused by safe mode")
        }
        var failure: LoadFailure?
        guard let slot = attach(info, cost: cost, failure: &failure) else {
            throw ServiceControlError(
                "service \(id) cannot be loaded: \(failure.map(\.description) ?? "its attach failed")")
        }
        skipped.removeAll { $0.services == [id] && Self.startableReasons.contains($0.reason) }
        log.info(
            "loader", "loaded \(id) from \(plugin.path), which the last load left out", event: .serviceLoadedByRequest,
            .string("service", id), .string("path", plugin.path))
        return slot
    }

    func record(_ failure: LoadFailure, report: inout LoadReport) {
        logFailure(failure)
        report.failures.append(failure)
        skipped.append(SkippedEntry(failure))
    }

    private func logFailure(_ failure: LoadFailure) {
        // A directory or FIFO named *.so is skipped, not a broken plugin.
        if case .notRegularFile = failure.reason {
            log.warn(
                "loader", failure.description, event: .loadSkipped, .string("path", failure.path),
                .string("reason", failure.message))
        } else {
            log.error(
                "loader", failure.description, event: .loadFailed, .string("path", failure.path),
                .string("reason", failure.message))
        }
    }
}
