import Glibc

/// Where the host finds its services: what `load` uses at start and `reload` again later.
public struct LoadSettings: Sendable {
    /// Plugin directories, in order.
    public var directories: [String]
    /// Load files and directories others can write to.
    public var allowInsecure = false
    /// `--config FILE`; nil looks for `services.json` in the first plugin directory.
    public var configurationPath: String?
    /// Start only services the configuration lists.
    public var onlyConfigured = false
    /// Any load failure is fatal (at start: exit 2; on reload: the reload fails).
    public var strict = false

    /// Settings for `directories`.
    public init(directories: [String]) { self.directories = directories }
}

/// A load or reload that cannot go on: at start the host exits 2; a reload changes nothing.
public struct LoadError: Error, CustomStringConvertible {
    /// What went wrong, naming the file, directory or services.
    public let description: String
}

/// What `load` or `reload` did.
public struct LoadReport: Sendable {
    /// Files and services that failed (each already logged).
    public var failures: [LoadFailure] = []
    /// Services started (load) or added (reload).
    public var added: [String] = []
    /// Services taken down because they were removed or disabled (reload).
    public var removed: [String] = []
    /// Services whose file changed and were replaced by a new copy (reload).
    public var replaced: [String] = []
}

extension Host {
    /// Reads the configuration, inspects the plugin directories, plans the start order and
    /// loads the services to start (only those: a disabled service's code never runs).
    ///
    /// Throws when the host cannot start: an unusable directory or configuration, a cycle or
    /// a missing requirement, a `policy: required` service that failed, or any failure under
    /// `strict`. Other failures are logged and returned.
    @discardableResult
    public func load(_ settings: LoadSettings) throws(LoadError) -> LoadReport {
        loadSettings = settings
        let (plan, inspection) = try prepare(settings)
        var report = LoadReport(failures: inspection.failures)
        let slots = try open(plan: plan, inspection: inspection, keeping: [:], report: &report)
        setServices(slots)
        report.added = slots.map(\.id)
        if settings.strict && !report.failures.isEmpty {
            throw LoadError(description: "--strict: \(report.failures.count) plugin file(s) or service(s) failed to load; exiting before launch")
        }
        return report
    }

    /// Rescans the plugin directories and the configuration (SIGHUP, `host ctl reload`).
    ///
    /// New or newly enabled services are loaded and caught up to the app's state with the
    /// events a service started with the host would have had; removed or disabled services get
    /// the events that take them down and nothing afterwards; a changed file is loaded as a new
    /// copy from a private path (Swift code cannot be unloaded) and the old copy retired. A
    /// reload that fails (a broken configuration, a cycle, a bad plugin under `strict`) changes
    /// nothing.
    public func reload() throws(LoadError) -> LoadReport {
        guard !isTerminating else { throw LoadError(description: "the host is terminating") }
        notify(.reloading)
        defer { notify(.ready) }
        let previousConfiguration = configuration
        let (plan, inspection) = try prepare(loadSettings)
        var report = LoadReport(failures: inspection.failures)

        // Running services whose file is unchanged and that stay enabled are kept as they are.
        let wanted = Set(plan.order)
        let current = Dictionary(uniqueKeysWithValues: services.map { ($0.id, $0) })
        let onDisk = Dictionary(inspection.services.map { ($0.service.id, $0.plugin) }, uniquingKeysWith: { a, _ in a })
        var keep: [String: ServiceSlot] = [:]
        for (id, slot) in current where wanted.contains(id) && onDisk[id]?.identity == slot.identity
            && onDisk[id]?.path == slot.path && previousConfiguration.services[id] == configuration.services[id] {
            keep[id] = slot
        }
        let slots: [ServiceSlot]
        do throws(LoadError) {
            slots = try open(plan: plan, inspection: inspection, keeping: keep, report: &report)
            if loadSettings.strict && !report.failures.isEmpty {
                throw LoadError(description: "--strict: \(report.failures.count) plugin file(s) or service(s) failed to load")
            }
        } catch {
            configuration = previousConfiguration
            throw error
        }

        // Take down what leaves (reverse start order), then start what arrives (start order).
        let leaving = services.filter { keep[$0.id] == nil }
        for slot in leaving.reversed() { takeDown(slot) }
        let arriving = slots.filter { keep[$0.id] == nil }
        setServices(slots)
        for slot in arriving { catchUp(slot) }
        report.removed = leaving.map(\.id).filter { id in !arriving.contains { $0.id == id } }
        report.replaced = leaving.map(\.id).filter { id in arriving.contains { $0.id == id } }
        report.added = arriving.map(\.id).filter { id in !leaving.contains { $0.id == id } }
        log.info("host", "reloaded: added [\(report.added.joined(separator: ", "))], removed ["
            + report.removed.joined(separator: ", ") + "], replaced [\(report.replaced.joined(separator: ", "))]")
        return report
    }

    /// Reads the configuration, inspects the directories and plans the start order.
    private func prepare(_ settings: LoadSettings) throws(LoadError) -> (StartPlan, PluginLoader.Inspection) {
        let newConfiguration: HostConfiguration
        do {
            if let path = settings.configurationPath {
                newConfiguration = try HostConfiguration.load(path: path)
            } else if let path = HostConfiguration.defaultPath(pluginDirectories: settings.directories) {
                newConfiguration = try HostConfiguration.loadIfPresent(path: path) ?? HostConfiguration()
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
        let found = inspection.services.map { FoundService(id: $0.service.id, priority: $0.service.priority) }
        let plan: StartPlan
        do {
            plan = try StartPlan.compute(found: found, configuration: newConfiguration, onlyConfigured: settings.onlyConfigured)
        } catch {
            throw LoadError(description: error.description)
        }
        for id in plan.disabled { log.info("host", "\(id) is disabled by the configuration") }
        for id in plan.notConfigured { log.info("host", "\(id) is not in the configuration: not started (--only-configured)") }
        for id in plan.missing {
            if newConfiguration.services[id]?.policy == .required {
                throw LoadError(description: "required service \(id) is in the configuration but no plugin provides it")
            }
            log.warn("host", "\(id) is in the configuration but no plugin provides it")
        }
        configuration = newConfiguration
        return (plan, inspection)
    }

    /// Opens and attaches the services of `plan` that are not in `keeping`; returns every
    /// service to run, in start order. A service whose requirement failed is not started.
    private func open(plan: StartPlan, inspection: PluginLoader.Inspection, keeping: [String: ServiceSlot],
                      report: inout LoadReport) throws(LoadError) -> [ServiceSlot] {
        let wanted = Set(plan.order).subtracting(keeping.keys)
        var opened: [String: ServiceSlot] = [:]
        var failed = Set<String>()
        for plugin in inspection.plugins {
            let ids = plugin.metadata.services.map(\.id).filter(wanted.contains)
            guard !ids.isEmpty else { continue }
            do throws(LoadFailure.Reason) {
                let changed = services.contains { $0.path == plugin.path }
                for info in try openCopy(plugin, privately: changed) where ids.contains(info.metadata.id) {
                    var failure: LoadFailure?
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
        var slots: [ServiceSlot] = []
        var unavailable = failed.union(plan.missing)
        for id in plan.order {
            let requires = configuration.services[id]?.requires ?? []
            if let missing = requires.first(where: unavailable.contains) {
                unavailable.insert(id)
                log.error("host", "\(id) is not started: it requires \(missing), which failed to load")
                failed.insert(id)
                continue
            }
            if let slot = keeping[id] ?? opened[id] { slots.append(slot) }
        }
        if let required = plan.order.first(where: { failed.contains($0) && configuration.services[$0]?.policy == .required }) {
            throw LoadError(description: "required service \(required) failed to load (policy: required)")
        }
        return slots
    }

    /// Opens `plugin`; a file already loaded under its path is copied to a private path first,
    /// because `dlopen` of the same path would return the old copy.
    private func openCopy(_ plugin: PluginInspector.Inspected, privately: Bool) throws(LoadFailure.Reason) -> [LoadedServiceInfo] {
        if let elsewhere = try placement?(plugin) { return elsewhere }
        guard privately else { return try PluginLoader.open(plugin) }
        let copy = try PrivateCopy(of: plugin.path)
        defer { copy.remove() }  // the mapping stays valid once loaded
        return try PluginLoader.open(plugin, loadPath: copy.path)
    }

    private func record(_ failure: LoadFailure, report: inout LoadReport) {
        logFailure(failure)
        report.failures.append(failure)
    }

    /// Tells systemd (when it supervises the host); a failure to tell it is logged, not fatal.
    public func notify(_ message: SystemdNotifier.Message) {
        guard let notifier else { return }
        do { try notifier.send(message) } catch { log.warn("host", "systemd notification failed: \(error)") }
    }

    func logFailure(_ failure: LoadFailure) {
        // A directory or FIFO named *.so is skipped, not a broken plugin.
        if case .notRegularFile = failure.reason { log.warn("loader", failure.description) } else {
            log.error("loader", failure.description)
        }
    }

    /// Brings a service that arrives while the app runs to the app's state, with the events a
    /// service started with the host would have had.
    private func catchUp(_ slot: ServiceSlot) {
        guard let index = services.firstIndex(where: { $0 === slot }) else { return }
        var fresh = AppLifecycle()
        let steps = (try? fresh.steps(to: lifecycle.state)) ?? []
        let arena = EventArena()
        for kind in steps {
            fresh.apply(kind)
            guard slot.metadata.events.contains(kind) else { continue }
            let data = kind == .willFinishLaunching || kind == .didFinishLaunching
                ? UnsafeRawPointer(launchOptions(for: slot, arena: arena, request: LaunchRequest(), restart: true)) : nil
            let result = call(index, kind, data)
            if kind == .didFinishLaunching && result >= 0 { markLaunched(slot) }
        }
    }

    /// Takes a leaving service down from the app's state; it receives nothing afterwards.
    private func takeDown(_ slot: ServiceSlot) {
        guard let index = services.firstIndex(where: { $0 === slot }) else { return }
        for kind in (try? lifecycle.steps(to: .notRunning)) ?? [] where slot.metadata.events.contains(kind) {
            call(index, kind, nil)
        }
    }
}

/// A private copy of a plugin file in a new 0700 directory, for loading a changed file again.
private struct PrivateCopy {
    let directory: String
    let path: String

    init(of source: String) throws(LoadFailure.Reason) {
        let temporary = getenv("TMPDIR").map { String(cString: $0) }.flatMap { $0.hasPrefix("/") ? $0 : nil } ?? "/tmp"
        var template = Array((temporary + "/servicehost-reload-XXXXXX").utf8CString)
        guard let made = mkdtemp(&template) else { throw .system(.current("mkdtemp", temporary)) }
        directory = String(cString: made)
        path = directory + "/" + (source.split(separator: "/").last.map(String.init) ?? "plugin.so")
        let input = Glibc.open(source, O_RDONLY | O_CLOEXEC)
        guard input >= 0 else { throw .system(.current("open", source)) }
        defer { close(input) }
        let output = Glibc.open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o700)
        guard output >= 0 else { throw .system(.current("open", path)) }
        defer { close(output) }
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let n = read(input, &buffer, buffer.count)
            if n < 0 && errno == EINTR { continue }
            if n < 0 { throw .system(.current("read", source)) }
            if n == 0 { break }
            guard write(output, buffer, n) == n else { throw .system(.current("write", path)) }
        }
    }

    func remove() {
        unlink(path)
        rmdir(directory)
    }
}
