import Dispatch
import Glibc
import ServiceABI
import ServiceJSON

/// Crash and hang isolation for one host: decides where each plugin runs, keeps the
/// process-isolated ones' workers alive, and says what `ctl list` shows about them.
///
/// Created by ``Host/startIsolation(_:)`` before plugins are loaded; everything here runs
/// on the main thread, like the dispatcher. The board is the thread-safe part.
@MainActor
public final class IsolationSupervisor {
    /// The settings it runs with.
    public let settings: IsolationSettings
    let log: Log
    weak var host: (any IsolationHost)?
    /// The time restarts and file watching run on (the host's).
    let clock: HostClock
    /// What `ctl list` shows of each process-isolated service, readable from any thread.
    let board = IsolationBoard()
    /// `<state>/failures`.
    let failures: FailureStore
    /// The sentinel, when the state directory took one.
    var sentinel: Sentinel?
    /// The plugins running in workers, in load order.
    private(set) var plugins: [IsolatedPlugin] = []
    /// Where workers' cgroups are made, found when the first sandbox with limits needs it.
    private var cgroups: Result<CgroupTree, SandboxUnavailable>?
    /// Workers' cgroups made so far: each gets a new name.
    private var cgroupCount = 0

    init(settings: IsolationSettings, log: Log, host: any IsolationHost) {
        self.settings = settings
        self.log = log
        self.host = host
        clock = host.clock
        failures = FailureStore(stateDirectory: settings.stateDirectory)
        for id in settings.sandboxesIgnored {
            log.warn(
                "host", "service \(id): its sandbox is not applied: it does not run in a worker (isolation process)",
                event: .sandboxIgnored, .string("service", id))
        }
    }

    /// The loader's placement hook: nil loads the file in the host; services in a worker;
    /// none when safe mode leaves the file out.
    func place(_ inspected: PluginInspector.Inspected) throws(LoadFailure.Reason) -> [LoadedServiceInfo]? {
        sentinel?.loading(inspected.path)
        let services = inspected.metadata.services
        if settings.safeMode {
            let untrusted = settings.untrusted(services, path: inspected.path)
            if !untrusted.isEmpty {
                log.warn(
                    "loader", "\(inspected.path): " + IsolationSettings.safeModeRefusal(untrusted),
                    event: .safeModeSkipped,
                    .string("path", inspected.path), .strings("services", untrusted))
                return []
            }
        }
        guard settings.runsInWorker(services) else { return nil }
        let plugin = IsolatedPlugin(inspected, supervisor: self)
        for service in services { board.update(service.id) { $0.state = "starting" } }
        let infos: [LoadedServiceInfo]
        if let record = blockingRecord(inspected) {
            infos = plugin.startBlocked(by: record)
        } else {
            do {
                infos = try plugin.start()
            } catch {
                for service in services { board.forget(service.id) }
                throw error
            }
        }
        plugins.append(plugin)
        return infos
    }

    /// The failure record that keeps this very file from starting, if any; records of an
    /// older file are removed (the file changed, so it gets a new chance).
    private func blockingRecord(_ inspected: PluginInspector.Inspected) -> FailureRecord? {
        var blocking: FailureRecord?
        for service in inspected.metadata.services {
            guard let record = failures.record(for: service.id) else { continue }
            if record.blocks(path: inspected.path, identity: inspected.identity) {
                var record = record
                if record.file.changed == FailureRecord.unknownChange {
                    // An older host's record: now with the file's change time (kept across an upgrade).
                    record.file = inspected.identity
                    try? failures.save(record)
                }
                blocking = blocking ?? record
            } else {
                log.info(
                    "host",
                    "service \(service.id) was marked failed (\(record.summary)), but \(inspected.path)"
                        + " changed since: starting it again")
                _ = try? failures.remove(service.id)
            }
        }
        return blocking
    }

    /// Retires every plugin none of whose services is in `inUse` (running or parked, by
    /// descriptor): a reload replaced its file or removed its services, so its worker ends
    /// rather than run beside its successor (which `plugin(serving:)` and so `service restart`
    /// would otherwise find first). Returns the retired files and versions, which the loader
    /// forgets: a later load of the same version starts a new worker.
    func retire(keeping inUse: Set<UnsafePointer<sh_service>>) -> [(path: String, identity: FileIdentity)] {
        var retired: [IsolatedPlugin] = []
        plugins.removeAll { plugin in
            guard !plugin.proxies.contains(where: { inUse.contains(UnsafePointer($0.descriptor)) }) else {
                return false
            }
            retired.append(plugin)
            return true
        }
        for old in retired {
            let pid = old.retire()
            var fields: [LogField] = [.strings("services", old.proxies.map(\.id)), .string("path", old.path)]
            if let pid { fields.append(.int("pid", pid)) }
            log.write(
                .info, "host", "\(old.subject) of \(old.path) left by the reload: worker ended",
                event: .workerRetired, fields: fields)
            for proxy in old.proxies where plugin(serving: proxy.id) == nil { board.forget(proxy.id) }
        }
        return retired.map { ($0.path, $0.identity) }
    }

    /// The plugin whose worker runs service `id`, if it runs in one.
    func plugin(serving id: String) -> IsolatedPlugin? { plugins.first { $0.proxies.contains { $0.id == id } } }

    /// Notes a crash of service `id` (`cause` as `worker.crashed` gives it) for `ctl list`, the
    /// service's last error and a deploy in probation.
    func noteCrash(_ id: String, _ what: String, cause: String) {
        board.update(id) { $0.lastCrash = what }
        // After the dispatcher reported the failed call (which sets lastError itself).
        DispatchQueue.main.async { [weak self] in
            MainActor.assumeIsolated { self?.host?.noteCrash(of: id, what, cause: cause) }
        }
    }

    // MARK: Sandboxes (issue 43)

    /// The cgroup tree workers' limits go in; nil, said once in the log, when there is none.
    func cgroupTree(for services: [String]) -> CgroupTree? {
        if cgroups == nil {
            let found = CgroupTree.discover()
            cgroups = found
            if case .success(let tree) = found { tree.sweep() }
            if case .failure(let reason) = found {
                log.warn(
                    "host", "resource limits are not applied: \(reason)", event: .sandboxUnavailable,
                    .strings("services", services),
                    .strings("limits", ["memoryMax", "cpuQuota", "tasksMax", "ioWeight"]),
                    .string("reason", reason.description))
            }
        }
        return try? cgroups?.get()
    }

    /// Why Landlock cannot hold `writablePaths` on this machine (nil: it can), said once in the
    /// log: the workers then run without the rule, never silently.
    func landlockUnavailable(for services: [String]) -> String? {
        if landlock == nil {
            let reason = WorkerSandbox.landlockUnavailable
            landlock = .some(reason)
            if let reason {
                log.warn(
                    "host", "writablePaths is not applied: \(reason)", event: .sandboxUnavailable,
                    .strings("services", services), .strings("limits", ["writablePaths"]), .string("reason", reason))
            }
        }
        return landlock ?? nil
    }
    private var landlock: String??

    /// A system call a worker with `"audit": true` reported refused: logged once per call and
    /// service (`sandbox.refused`), whatever worker of the service made it.
    func noteRefused(_ call: String, services: [String]) {
        let new = services.filter { refusedCalls.insert($0 + " " + call).inserted }
        guard !new.isEmpty else { return }
        log.warn(
            "host",
            "\(new.count == 1 ? "service" : "services") \(new.joined(separator: ", ")): its sandbox refused \(call) (EPERM)",
            event: .sandboxRefused, .strings("services", new), .string("syscall", call))
    }
    /// `SERVICE CALL` of each refused call logged.
    private var refusedCalls: Set<String> = []

    /// Ends every worker (servicehost-bench's start-up rows, which start many hosts in one process).
    package func endWorkers() {
        for plugin in plugins { plugin.connection?.end(within: 1) }
    }

    /// Ends the sandboxed workers when the host terminates (after willTerminate), so that each
    /// is reaped and its cgroup removed: the others simply read the end of their channel.
    func endSandboxedWorkers() {
        for plugin in plugins { plugin.connection.map { if $0.cgroup != nil { $0.end(within: 1) } } }
    }

    /// A new worker cgroup's name: the host's pid, the first service's id and a count.
    func cgroupName(for id: String) -> String {
        cgroupCount += 1
        return "servicehost-\(getpid())-\(id)-\(cgroupCount)"
    }

    /// What `ctl stats` shows of each sandboxed worker's cgroup: its services, pid, memory,
    /// CPU and tasks, with its limits.
    func workerStatistics() -> [JSONValue] {
        plugins.compactMap { plugin in
            guard let connection = plugin.connection, let cgroup = connection.cgroup else { return nil }
            var fields = cgroup.statistics()
            fields["services"] = .array(plugin.proxies.map { .string($0.id) })
            fields["pid"] = .number(Double(connection.pid))
            return .object(fields)
        }
    }
}
