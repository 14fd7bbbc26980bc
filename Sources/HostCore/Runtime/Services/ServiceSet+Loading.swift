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
        let (plan, inspection) = try prepare(settings)
        var report = LoadReport(failures: inspection.failures)
        let opened = try open(plan: plan, inspection: inspection, keeping: [:], report: &report)
        dispatcher.setServices(opened)
        report.added = opened.map(\.id)
        if settings.strict && !report.failures.isEmpty {
            throw LoadError(description: "--strict: \(report.failures.count) plugin file(s) or service(s) failed to load; exiting before launch")
        }
        return report
    }

    /// What a reload will change, computed without changing anything (so a failure leaves
    /// everything as it was): the new service list and who leaves and arrives.
    struct ReloadChange {
        var slots: [ServiceSlot]
        var leaving: [ServiceSlot]
        var arriving: [ServiceSlot]
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
        for slot in slots where wanted.contains(slot.id) && onDisk[slot.id]?.path == slot.path {
            let unchanged =
                onDisk[slot.id]?.identity == slot.identity
                && previousConfiguration.services[slot.id] == configuration.services[slot.id]
            if unchanged {
                keep[slot.id] = slot
            } else if onDisk[slot.id]?.identity != slot.identity && retiredCopies[slot.path, default: 0] >= Self.retiredCopyLimit {
                // A replacement past the limit would map yet another copy for good: keep the one running.
                keep[slot.id] = slot
                record(LoadFailure(path: slot.path, reason: .replacementLimit(limit: Self.retiredCopyLimit)), report: &report)
            }
        }
        let opened: [ServiceSlot]
        do throws(LoadError) {
            opened = try open(plan: plan, inspection: inspection, keeping: keep, report: &report)
            if loadSettings.strict && !report.failures.isEmpty {
                throw LoadError(description: "--strict: \(report.failures.count) plugin file(s) or service(s) failed to load")
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
        return ReloadChange(slots: opened, leaving: leaving, arriving: arriving, report: report)
    }

    /// Carries out a reload: what leaves is taken down (reverse start order) from the app's
    /// state, what arrives is caught up to it (start order).
    func apply(_ change: ReloadChange, lifecycle: AppLifecycle) {
        takeDown(change.leaving, from: lifecycle)
        dispatcher.setServices(change.slots)
        catchUp(change.arriving, to: lifecycle.state)
        let report = change.report
        log.info(
            "host",
            "reloaded: added [\(report.added.joined(separator: ", "))], removed ["
                + report.removed.joined(separator: ", ") + "], replaced [\(report.replaced.joined(separator: ", "))]",
            event: "reload.done", .strings("added", report.added), .strings("removed", report.removed),
            .strings("replaced", report.replaced))
    }

    /// Reads the configuration, inspects the directories and plans the start order.
    private func prepare(_ settings: LoadSettings) throws(LoadError) -> (StartPlan, PluginLoader.Inspection) {
        let newConfiguration: HostConfiguration
        do {
            if let path = settings.configurationPath {
                newConfiguration = try HostConfiguration.load(path: path, allowInsecure: settings.allowInsecure)
            } else if let path = HostConfiguration.defaultPath(pluginDirectories: settings.directories) {
                newConfiguration = try HostConfiguration.loadIfPresent(path: path, allowInsecure: settings.allowInsecure) ?? HostConfiguration()
            } else {
                newConfiguration = HostConfiguration()
            }
        } catch {
            throw LoadError(description: error.description)
        }
        let inspection: PluginLoader.Inspection
        do {
            inspection = try PluginLoader.inspect(directories: settings.directories, allowInsecure: settings.allowInsecure)
        } catch {
            throw LoadError(description: error.description)
        }
        for failure in inspection.failures { logFailure(failure) }
        skipped = inspection.failures.map(SkippedEntry.init)
        let found = inspection.services.map { FoundService(id: $0.service.id, priority: $0.service.priority) }
        let plan: StartPlan
        do {
            plan = try StartPlan.compute(found: found, configuration: newConfiguration, onlyConfigured: settings.onlyConfigured)
        } catch {
            throw LoadError(description: error.description)
        }
        skipped += plan.disabled.map { SkippedEntry(service: $0, reason: .disabled, message: "disabled by the configuration") }
        skipped += plan.notConfigured.map { SkippedEntry(service: $0, reason: .notConfigured, message: "not in the configuration (--only-configured)") }
        for id in plan.disabled { log.info("host", "\(id) is disabled by the configuration", event: "service.disabled", .string("service", id)) }
        for id in plan.notConfigured {
            log.info(
                "host", "\(id) is not in the configuration: not started (--only-configured)",
                event: "service.notConfigured", .string("service", id))
        }
        for id in plan.missing {
            if newConfiguration.services[id]?.policy == .required {
                throw LoadError(description: "required service \(id) is in the configuration but no plugin provides it")
            }
            log.warn("host", "\(id) is in the configuration but no plugin provides it", event: "service.missing", .string("service", id))
        }
        configuration = newConfiguration
        // A service stopped by request stays stopped across reloads.
        let stoppedIDs = Set(parked.map(\.slot.id))
        var kept = plan
        kept.order = plan.order.filter { !stoppedIDs.contains($0) }
        startOrder = plan.order
        return (kept, inspection)
    }

    /// Opens and attaches the services of `plan` that are not in `keeping`; returns every
    /// service to run, in start order. A service whose requirement failed is not started.
    private func open(
        plan: StartPlan, inspection: PluginLoader.Inspection, keeping: [String: ServiceSlot],
        report: inout LoadReport
    ) throws(LoadError) -> [ServiceSlot] {
        let wanted = Set(plan.order).subtracting(keeping.keys)
        var opened: [String: ServiceSlot] = [:]
        var failed = Set<String>()
        for plugin in inspection.plugins {
            let ids = plugin.metadata.services.map(\.id).filter(wanted.contains)
            guard !ids.isEmpty else { continue }
            do throws(LoadFailure.Reason) {
                let changed = slots.contains { $0.path == plugin.path }
                var cost = StartupCost(inspect: inspection.inspectNanoseconds[plugin.path] ?? 0)
                let infos = try openCopy(plugin, privately: changed, cost: &cost)
                if infos.isEmpty {
                    // Only safe mode places a file nowhere.
                    skipped.append(
                        SkippedEntry(
                            path: plugin.path, services: ids, reason: .safeMode,
                            message: "not trusted: refused by safe mode"))
                }
                for info in infos where ids.contains(info.metadata.id) {
                    var failure: LoadFailure?
                    dispatcher.stats.startup[info.metadata.id] = cost
                    if let slot = attach(info, failure: &failure) {
                        opened[info.metadata.id] = slot
                    } else if let failure {
                        record(failure, report: &report)
                        failed.insert(info.metadata.id)
                    }
                }
            } catch {
                record(LoadFailure(path: plugin.path, reason: error), report: &report)
                failed.formUnion(ids)
            }
        }
        var result: [ServiceSlot] = []
        var unavailable = failed.union(plan.missing)
        for id in plan.order {
            let requires = configuration.services[id]?.requires ?? []
            if let missing = requires.first(where: unavailable.contains) {
                unavailable.insert(id)
                skipped.append(SkippedEntry(service: id, reason: .requirementFailed, message: "requires \(missing), which failed to load"))
                log.error(
                    "host", "\(id) is not started: it requires \(missing), which failed to load",
                    event: "service.requirementFailed", .string("service", id), .string("requires", missing))
                failed.insert(id)
                continue
            }
            if let slot = keeping[id] ?? opened[id] { result.append(slot) }
        }
        if let required = plan.order.first(where: { failed.contains($0) && configuration.services[$0]?.policy == .required }) {
            throw LoadError(description: "required service \(required) failed to load (policy: required)")
        }
        return result
    }

    /// Opens `plugin`; a file already loaded under its path is copied to a private path first,
    /// because `dlopen` of the same path would return the old copy.
    /// `cost` gets the time of `dlopen` and of `servicehost_entry` (a worker's whole start
    /// counts as its `dlopen`).
    private func openCopy(
        _ plugin: PluginInspector.Inspected, privately: Bool,
        cost: inout StartupCost
    ) throws(LoadFailure.Reason) -> [LoadedServiceInfo] {
        var start = Clock.nanoseconds()
        if let elsewhere = try placement?(plugin) {
            cost.dlopen = Clock.nanoseconds() &- start
            return elsewhere
        }
        var dlopenTime: UInt64 = 0
        let mark = { (stage: PluginLoader.LoadStage) in
            let now = Clock.nanoseconds()
            if stage == .entry { dlopenTime = now &- start }
            start = now
        }
        defer {
            cost.dlopen = dlopenTime
            cost.entry = Clock.nanoseconds() &- start
        }
        guard privately else { return try PluginLoader.open(plugin, willRun: mark) }
        let copy = try PrivateCopy(of: plugin.path)
        defer { copy.remove() }  // the mapping stays valid once loaded
        let infos = try PluginLoader.open(plugin, loadPath: copy.path, willRun: mark)
        // The copy in use until now stays mapped for good: one more retired copy of this file.
        retiredCopies[plugin.path, default: 0] += 1
        return infos
    }

    private func record(_ failure: LoadFailure, report: inout LoadReport) {
        logFailure(failure)
        report.failures.append(failure)
        skipped.append(SkippedEntry(failure))
    }

    private func logFailure(_ failure: LoadFailure) {
        // A directory or FIFO named *.so is skipped, not a broken plugin.
        if case .notRegularFile = failure.reason {
            log.warn(
                "loader", failure.description, event: "load.skipped", .string("path", failure.path),
                .string("reason", failure.message))
        } else {
            log.error(
                "loader", failure.description, event: "load.failed", .string("path", failure.path),
                .string("reason", failure.message))
        }
    }
}
