import Dispatch
import Glibc
import ServiceABI

/// One plugin file whose services run in a worker process: its worker, its crashes, its
/// restarts, and the proxies the host dispatches to.
///
/// All of a file's services share its worker, as they share a process in the host: a
/// library's services may share its globals.
@MainActor
final class IsolatedPlugin {
    /// The service ids of a worker's `opened` frame, in its start order (the frame target reads
    /// them as the host does: the worker's bytes).
    nonisolated static func openedServices(_ r: inout WireReader) throws(WireError) -> [String] {
        let count = try r.u32("count")
        var order: [String] = []
        for _ in 0..<count { order.append(try r.string("service id")) }
        try r.finish("opened")
        return order
    }

    enum Status {
        /// The worker runs and its services get events.
        case running
        /// The worker died; a restart is scheduled.
        case restarting
        /// A crash loop: not restarted until the file changes.
        case failed(FailureRecord)
        /// Not running and not coming back by itself (the host is terminating, or the file
        /// no longer loads; a change of the file starts it again).
        case stopped
    }

    let path: String
    private(set) var identity: FileIdentity
    private(set) var proxies: [ServiceProxy] = []
    private(set) var connection: WorkerConnection?
    private(set) var status: Status = .stopped
    private var history: CrashHistory
    private var restarts = 0
    /// The identity a failed or stopped plugin waits to see change.
    private var blockedIdentity: FileIdentity?
    /// The call in progress, for a crash that interrupts it.
    private var current: String?
    /// Whether the file passed the permission rule when the host loaded it: a changed file
    /// must pass it again (unless it never did, which --allow-insecure-plugins allowed).
    private let wasSecure: Bool
    /// The stored copy of the version loaded (`identity`), which every worker opens: a restart
    /// runs that version until a reload, whatever became of the file.
    private var copy: HeldCopy?
    /// While failed: the start again that `restartResetAfter` scheduled.
    private var rearm: ScheduledWork?
    unowned let supervisor: IsolationSupervisor

    init(_ inspected: PluginInspector.Inspected, supervisor: IsolationSupervisor) {
        path = inspected.path
        identity = inspected.identity
        history = CrashHistory(limit: supervisor.settings.crashLimit)
        self.supervisor = supervisor
        if case .success = PluginScanner.check(path: inspected.path, allowInsecure: false) {
            wasSecure = true
        } else {
            wasSecure = false
        }
        proxies = inspected.metadata.services.enumerated().map { index, meta in
            ServiceProxy(metadata: meta, index: index, plugin: self)
        }
    }

    private var log: Log { supervisor.log }
    private var clock: HostClock { supervisor.clock }
    private var ids: [String] { proxies.map(\.id) }

    /// "service a" or "services a, b" for log lines.
    var subject: String { proxies.count == 1 ? "service \(proxies[0].id)" : "services \(ids.joined(separator: ", "))" }

    private func timeout(_ proxy: ServiceProxy) -> Double { supervisor.settings.eventTimeout(for: proxy.id) }
    private var loadTimeout: Double { proxies.map(timeout).max() ?? supervisor.settings.eventTimeout }

    // MARK: Starting

    /// Starts the worker and loads the plugin in it; the services come back in the order the
    /// plugin answered them, as the in-process loader gives them.
    func start() throws(LoadFailure.Reason) -> [LoadedServiceInfo] {
        switch launchWorker() {
        case .refused(let reason): throw reason
        case .crashed(let report):
            throw .worker(
                report.hung ? "\(report.how); its worker process was killed" : "its worker process \(report.reason)")
        case .started(let order):
            proxies = order.map { id in proxies.first { $0.id == id }! }
            status = .running
            publish()
            return proxies.map { $0.loadedInfo(path: path, identity: identity) }
        }
    }

    /// Lists the services without starting them: a crash loop marked them failed with this
    /// very file.
    func startBlocked(by record: FailureRecord) -> [LoadedServiceInfo] {
        status = .failed(record)
        blockedIdentity = record.file
        for proxy in proxies {
            supervisor.board.update(proxy.id) {
                $0.state = "failed"
                $0.failure = record
            }
        }
        let resetAt = scheduleRearm()
        log.error(
            "host",
            "\(subject) \(proxies.count == 1 ? "is" : "are") marked failed (\(record.summary));"
                + " not started until \(path) changes" + (resetAt.map { " or \($0) (restartResetAfter)" } ?? ""),
            event: .workerBlocked, .strings("services", ids), .string("path", path),
            .string("resetAt", resetAt ?? "none"))
        watchFile()
        return proxies.map { $0.loadedInfo(path: path, identity: identity) }
    }

    private enum Launch {
        case started([String])
        case refused(LoadFailure.Reason)
        case crashed(CrashReport)
    }

    /// Spawns a worker and has it load the plugin (with the loader's own checks).
    private func launchWorker() -> Launch {
        let settings = supervisor.settings
        // The worker opens the host's copy of the version loaded, never the file itself.
        let copy: HeldCopy
        if let held = self.copy, held.source == identity, held.isThere {
            copy = held
        } else {
            do { copy = try HeldCopy(of: path, identity: identity) } catch { return .refused(error) }
            self.copy = copy
        }
        // Its sandbox (issue 43): the cgroup is made, with its limits, before the worker exists.
        let sandbox = settings.sandbox(forWorkerOf: ids)
        var cgroup: WorkerCgroup?
        if let sandbox, sandbox.limitsResources, let tree = supervisor.cgroupTree(for: ids) {
            do {
                cgroup = try WorkerCgroup(supervisor.cgroupName(for: ids[0]), sandbox: sandbox, tree: tree)
            } catch {
                return .refused(.worker("cannot make its worker's cgroup: \(error)"))
            }
            if let unapplied = cgroup?.unapplied, !unapplied.isEmpty {
                log.warn(
                    "host",
                    "\(subject): \(unapplied.joined(separator: ", ")) not applied: the host's cgroups have no controller for it",
                    event: .sandboxUnavailable, .strings("services", ids), .strings("limits", unapplied),
                    .string("reason", "no controller"))
            }
        }
        let connection: WorkerConnection
        do {
            // Half the event deadline: a worker stopped inside an event (SIGSTOP, a freezer)
            // is then reported as what it is, stalled, before the hang watchdog's deadline.
            connection = try WorkerConnection(
                executable: settings.workerExecutable, pluginPath: path, stallTimeout: max(loadTimeout / 2, 0.5),
                log: log,
                source: proxies.count == 1 ? proxies[0].id : path, services: ids, sandbox: sandbox, cgroup: cgroup,
                onDeath: { [weak self] connection, death in
                    DispatchQueue.main.async { MainActor.assumeIsolated { self?.workerDied(connection, death) } }
                })
        } catch {
            return .refused(.worker("cannot start a worker process: \(error)"))
        }
        self.connection = connection
        var w = WireWriter()
        // Escaped as plugin paths are (PathBytes): the copy's name is the file's escaped name.
        w.string(PathBytes.escape(copy.path))
        w.u64(copy.identity.device)
        w.u64(copy.identity.inode)
        w.i64(copy.identity.size)
        w.i64(copy.identity.modified)
        w.i64(copy.identity.changed)
        w.u8(UInt8(log.level.rawValue))
        w.f64(supervisor.host?.answerTimeout ?? 30)
        switch connection.request(&w, .open, expecting: [.opened, .openFailed], timeout: loadTimeout) {
        case .reply(let frame):
            var r = frame.reader
            do throws(WireError) {
                if frame.type == .openFailed {
                    let reason = try LoadFailureCodec.decode(&r)
                    self.connection = nil
                    connection.close()
                    return .refused(reason)
                }
                let order = try Self.openedServices(&r)
                guard Set(order) == Set(ids), order.count == ids.count else {
                    throw .malformed("the worker loaded services \(order), not \(ids)")
                }
                return .started(order)
            } catch {
                self.connection = nil
                _ = connection.killAndWait()
                return .refused(.worker("its worker process broke the protocol: \(error)"))
            }
        case .died(let death):
            self.connection = nil
            var report = CrashReport(death, during: nil)
            report.when = connection.stage == 0 ? "before loading the plugin" : "in \(Self.stageName(connection.stage))"
            return .crashed(report)
        case .timedOut:
            let stage = connection.stage
            self.connection = nil
            _ = connection.killAndWait()
            var report = CrashReport(hungIn: Self.stageName(stage), deadline: loadTimeout)
            report.how = "\(Self.stageName(stage)) did not return within \(Seconds.text(loadTimeout)) s"
            return .crashed(report)
        }
    }

    static func stageName(_ stage: UInt8) -> String {
        switch PluginLoader.LoadStage(rawValue: stage) {
        case .dlopen: "dlopen (the library's ELF constructors)"
        case .entry: "servicehost_entry"
        case nil: "the worker's start"
        }
    }

    // MARK: Calls from the dispatcher

    /// `attach`, forwarded. A failed plugin's services attach without a worker: they are
    /// listed as failed and get no events.
    func attach(_ proxy: ServiceProxy, host table: UnsafePointer<sh_host>) -> Int32 {
        proxy.hostTable = table
        guard case .running = status, let connection else {
            proxy.inHost = true
            return Int32(SH_OK)
        }
        let result = attachInWorker(proxy, connection)
        proxy.inHost = result >= 0
        return result
    }

    private func attachInWorker(_ proxy: ServiceProxy, _ connection: WorkerConnection) -> Int32 {
        guard let functions = HostAdapter.functions(proxy.hostTable) else { return Int32(SH_INVALID) }
        connection.forwarder.setFunctions(functions, for: proxy.index)
        var w = WireWriter()
        w.u32(UInt32(proxy.index))
        current = "attach"
        let outcome = connection.request(&w, .attach, expecting: [.attached], timeout: timeout(proxy))
        current = nil
        switch outcome {
        case .reply(let frame):
            var r = frame.reader
            guard let result = try? r.i32("result") else {
                return brokeProtocol(connection, "a malformed attach answer", during: "attach")
            }
            proxy.attached = result >= 0
            return result
        case .died(let death):
            crashed(connection, CrashReport(death, during: "attach"))
            return Int32(SH_ERROR)
        case .timedOut:
            hung(connection, "attach", deadline: timeout(proxy))
            return Int32(SH_ERROR)
        }
    }

    /// `handle_event`, forwarded: the event goes to the worker and its result comes back.
    /// A service that is not running answers `SH_UNSUPPORTED` (its answer counts as failed).
    func deliver(_ event: UnsafePointer<sh_event>, to proxy: ServiceProxy) -> Int32 {
        guard case .running = status, let connection, proxy.attached else { return Int32(SH_UNSUPPORTED) }
        var completion: UInt32 = 0
        if let record = event.pointee.completion { completion = connection.forwarder.register(record) }
        var w = WireWriter(capacity: 128)
        EventCodec.encode(event, service: UInt32(proxy.index), completion: completion, into: &w)
        let name = EventKind(rawValue: event.pointee.kind)?.name ?? "event \(event.pointee.kind)"
        current = name
        let outcome = connection.request(&w, .event, expecting: [.result], timeout: timeout(proxy))
        current = nil
        switch outcome {
        case .reply(let frame):
            var r = frame.reader
            // configurationForConnecting: the service's answer is copied into the host's out-struct.
            guard let result = try? r.i32("result"), (try? EventCodec.readAnswer(&r, for: event)) != nil,
                (try? r.finish("result")) != nil
            else {
                return brokeProtocol(connection, "a malformed result", during: name)
            }
            if completion != 0 { connection.forwarder.eventReturned(completion: completion, result: result) }
            return result
        case .died(let death):
            crashed(connection, CrashReport(death, during: name))
            return Int32(SH_ERROR)
        case .timedOut:
            hung(connection, name, deadline: timeout(proxy))
            return Int32(SH_ERROR)
        }
    }

    private func brokeProtocol(_ connection: WorkerConnection, _ what: String, during event: String) -> Int32 {
        let death = connection.killAndWait() ?? WorkerDeath(exit: .signaled(SIGKILL), cause: .killedByHost)
        var report = CrashReport(death, during: event)
        report.how = "broke the worker protocol (\(what)) and was killed"
        crashed(connection, report)
        return Int32(SH_ERROR)
    }

    // MARK: Crashes

    /// A missed deadline: the worker is killed, which counts as a crash.
    private func hung(_ connection: WorkerConnection, _ event: String, deadline: Double) {
        _ = connection.killAndWait()
        crashed(connection, CrashReport(hungIn: event, deadline: deadline))
    }

    /// The reader thread saw the worker die (between calls, or after the call that saw it).
    private func workerDied(_ connection: WorkerConnection, _ death: WorkerDeath) {
        guard connection === self.connection, !connection.exitWasExpected else { return }
        crashed(connection, CrashReport(death, during: current))
    }

    /// Counts a crash, says so, and restarts the worker after its backoff, or marks the
    /// services failed when the crash limit is reached. Once per worker.
    private func crashed(_ connection: WorkerConnection?, _ report: CrashReport) {
        if let connection {
            guard connection === self.connection else { return }
            self.connection = nil
            connection.forwarder.failOutstanding()
            supervisor.host?.backgroundTasks.endAll(of: ids, reason: "its worker crashed")
        }
        for proxy in proxies { proxy.attached = false }
        let pid = connection.map { " (pid \($0.pid))" } ?? ""
        let what =
            report.hung
            ? "\(subject) \(report.how): its worker\(pid) was killed"
            : "\(subject) crashed: its worker\(pid) \(report.reason)"
        for proxy in proxies { supervisor.noteCrash(proxy.id, what, cause: report.cause) }
        let limitReached = history.record(at: clock.now)
        let fields =
            [LogField.strings("services", ids), .string("reason", report.reason)] + report.logFields
            + (connection.map { [LogField.int("pid", $0.pid)] } ?? [])
        guard let host = supervisor.host, host.isRunning else {
            status = .stopped
            publish()
            return log.write(
                .error, "host", what + "; not restarted: the host is terminating", event: .workerCrashed,
                fields: fields + [.string("restart", "none")])
        }
        if limitReached { return markFailed(report, what, fields) }
        status = .restarting
        publish()
        let delay = history.restartDelay
        log.write(
            .error, "host", what + "; restarting it in \(Seconds.text(delay)) s", event: .workerCrashed,
            fields: fields + [.string("restart", Seconds.text(delay))])
        clock.schedule(after: delay) { [weak self] in self?.restart() }
    }

    private func markFailed(_ report: CrashReport, _ what: String, _ fields: [LogField]) {
        let limit = supervisor.settings.crashLimit
        var saved: [String] = []
        var problems: [String] = []
        var first: FailureRecord?
        for proxy in proxies {
            let record = FailureRecord(
                serviceID: proxy.id, path: path, file: identity, reason: report.reason,
                signal: report.signal, status: report.status, event: report.event,
                time: Clock.isoNow(), limit: limit)
            first = first ?? record
            do {
                try supervisor.failures.save(record)
                saved.append(supervisor.failures.path(for: proxy.id))
            } catch {
                problems.append("\(error)")
            }
            supervisor.board.update(proxy.id) {
                $0.state = "failed"
                $0.failure = record
                $0.pid = nil
            }
        }
        status = .failed(first!)
        blockedIdentity = identity
        let kept =
            saved.isEmpty
            ? "the reason could not be recorded: \(problems.joined(separator: "; "))"
            : "the reason is in \(saved.joined(separator: ", "))"
        let resetAt = scheduleRearm()
        let until = "\(path) changes" + (resetAt.map { " or \($0) (restartResetAfter)" } ?? "")
        log.write(
            .error, "host",
            what + "; that is \(limit): marked failed, and not restarted until \(until) (\(kept))",
            event: .workerFailed,
            fields: fields + [
                .string("path", path), .strings("records", saved),
                .string("record", saved.isEmpty ? "unsaved" : "saved"), .string("resetAt", resetAt ?? "none"),
            ])
        watchFile()
    }

    // MARK: Lifting a crash loop

    /// The file's `restartResetAfter`: the shortest its services' policies set (they share a
    /// worker); nil when none sets one.
    private var resetAfter: Double? { proxies.compactMap { supervisor.settings.restartResetAfter(for: $0.id) }.min() }

    /// While failed, with `restartResetAfter`: schedules the start again on the host's clock and
    /// returns when it falls due (wall time, ISO 8601 UTC, for `ctl list` and the log).
    private func scheduleRearm() -> String? {
        rearm?.cancel()
        rearm = nil
        guard let seconds = resetAfter else { return nil }
        rearm = clock.schedule(after: seconds) { [weak self] in self?.resetFailed(by: .timer) }
        let resetAt = Clock.iso(seconds: time(nil) + Int(seconds.rounded(.up)))
        for proxy in proxies { supervisor.board.update(proxy.id) { $0.resetAt = resetAt } }
        return resetAt
    }

    /// What lifted a crash loop's failure.
    enum Reset {
        /// `host ctl service reset-failed`.
        case request
        /// `restartResetAfter` passed.
        case timer
    }

    /// Lifts the failure of a crash loop: removes the records, forgets the crashes and starts
    /// a new worker on the version loaded (its stored copy: the file need not change), caught
    /// up to the app's state by the one catch-up. False when the services are not failed.
    @discardableResult
    func resetFailed(by trigger: Reset) -> Bool {
        guard case .failed = status, let host = supervisor.host, host.isRunning else { return false }
        let after = resetAfter
        forgetFailure()
        switch trigger {
        case .request:
            log.info(
                "host", "\(subject): the crash loop's failure is reset by request; starting again",
                event: .workerResetFailed, .strings("services", ids), .string("path", path))
        case .timer:
            log.info(
                "host",
                "\(subject): restartResetAfter (\(Seconds.text(after ?? 0)) s) passed since the crash loop;"
                    + " starting again", event: .workerRearmed, .strings("services", ids), .string("path", path),
                .string("after", Seconds.text(after ?? 0)))
        }
        status = .restarting
        restart()
        return true
    }

    /// Removes the failure records, the board's failure and the scheduled re-arm, and the crashes.
    private func forgetFailure() {
        rearm?.cancel()
        rearm = nil
        for proxy in proxies { _ = try? supervisor.failures.remove(proxy.id) }
        for proxy in proxies {
            supervisor.board.update(proxy.id) {
                $0.failure = nil
                $0.resetAt = nil
            }
        }
        blockedIdentity = nil
        history.reset()
    }

    // MARK: Restarting

    /// `status` in `ctl list`'s words.
    var statusName: String {
        switch status {
        case .running: "running"
        case .restarting: "restarting"
        case .failed: "failed"
        case .stopped: "stopped"
        }
    }

    /// Ends the running worker on purpose and starts a new one (`host ctl service restart`),
    /// which the one catch-up brings to the app's state. False when no worker is running.
    func replaceWorker() -> Bool {
        guard case .running = status, let connection else { return false }
        self.connection = nil
        connection.close()
        _ = connection.killAndWait()
        for proxy in proxies { proxy.attached = false }
        status = .restarting
        restart()
        return true
    }

    /// Ends the worker for good: a reload replaced or removed every service of this version
    /// (their take-down events went through it first). Nothing restarts it; its stored copy is
    /// let go. Returns the worker's pid, when one was running.
    func retire() -> Int32? {
        let pid = connection?.pid
        if let connection {
            self.connection = nil
            connection.close()
            _ = connection.killAndWait()
        }
        for proxy in proxies { proxy.attached = false }
        rearm?.cancel()
        rearm = nil
        blockedIdentity = nil  // no file watch starts it again
        status = .stopped
        copy = nil
        return pid
    }

    /// Starts a new worker on the version loaded (its stored copy: the file may have been
    /// replaced since, which only a reload loads), or, with `reading`, on the file as it is
    /// now (it changed while the services were failed or stopped).
    private func restart(reading: Bool = false) {
        guard let host = supervisor.host, host.isRunning else {
            status = .stopped
            return publish()
        }
        if reading {
            if wasSecure, case .failure(let failure) = PluginScanner.check(path: path, allowInsecure: false) {
                return stop(because: "it no longer loads: \(failure.message)")
            }
            switch PluginInspector.inspect(path: path) {
            case .failure(let failure):
                return stop(because: "it no longer loads: \(failure.message)")
            case .success(let inspected):
                let newIDs = inspected.metadata.services.map(\.id)
                guard Set(newIDs) == Set(ids) else {
                    return stop(
                        because:
                            "the file now declares services \(newIDs.joined(separator: ", ")), not \(ids.joined(separator: ", "))"
                    )
                }
                identity = inspected.identity
            }
        }
        switch launchWorker() {
        case .refused(let reason):
            return stop(because: "it no longer loads: \(LoadFailure(path: path, reason: reason).message)")
        case .crashed(let report):
            return crashed(nil, report)
        case .started:
            break
        }
        guard let connection else { return }
        for proxy in proxies where proxy.inHost {
            _ = attachInWorker(proxy, connection)
            guard self.connection === connection else { return }  // it died attaching; handled
        }
        status = .running
        restarts += 1
        publish()
        // The host's one catch-up: the launch events up to the app's state, flagged SH_LAUNCH_RESTART.
        host.catchUp(proxies.filter(\.attached).map { UnsafePointer($0.descriptor) })
        guard case .running = status else { return }
        log.info(
            "host", "\(subject) restarted (worker pid \(connection.pid)); caught up to \(host.state.name)",
            event: .workerRestarted, .strings("services", ids), .int("pid", connection.pid))
    }

    private func stop(because reason: String) {
        status = .stopped
        blockedIdentity = identity
        publish()
        log.error(
            "host", "\(subject) cannot be restarted: \(reason); it starts again when \(path) changes",
            event: .workerStopped, .strings("services", ids), .string("path", path))
        watchFile()
    }

    /// While failed or stopped: checks the file every second and starts the services again
    /// once it changed (a new build, a `touch`).
    private func watchFile() {
        clock.schedule(after: 1) { [weak self] in self?.checkFile() }
    }

    private func checkFile() {
        guard let blocked = blockedIdentity, let host = supervisor.host, host.isRunning else { return }
        switch status {
        case .failed, .stopped: break
        case .running, .restarting: return
        }
        var info = stat()
        guard stat(path, &info) == 0, FileIdentity(info) != blocked else { return watchFile() }
        log.info(
            "host", "\(path) changed: starting \(subject) again", event: .workerFileChanged,
            .strings("services", ids), .string("path", path))
        forgetFailure()
        self.status = .restarting
        restart(reading: true)
    }

    /// Puts the services' state on the board `ctl list` reads.
    private func publish() {
        let state: String
        var failure: FailureRecord?
        switch status {
        case .running: state = "running"
        case .restarting: state = "restarting"
        case .failed(let record):
            state = "failed"
            failure = record
        case .stopped: state = "stopped"
        }
        let pid = connection?.pid
        for proxy in proxies {
            supervisor.board.update(proxy.id) { entry in
                entry.state = state
                entry.pid = state == "running" ? pid : nil
                entry.restarts = restarts
                if failure != nil { entry.failure = failure }
            }
        }
    }
}

extension CrashReport {
    /// The crash for the log's fields: `cause` (signal, exit, hang or killed), the `signal` or
    /// exit `status`, and the `event` it was handling.
    /// `hang`, `signal`, `exit` or `killed`: the `cause` of `worker.crashed`.
    var cause: String { hung ? "hang" : signal != nil ? "signal" : status != nil ? "exit" : "killed" }

    fileprivate var logFields: [LogField] {
        var fields: [LogField] = [.string("cause", cause)]
        if let signal { fields.append(.int("signal", signal)) }
        if let status { fields.append(.int("status", status)) }
        if let event { fields.append(.string("event", event)) }
        if let memoryMax { fields += [.string("limit", "memoryMax"), .int("memoryMax", Int(memoryMax))] }
        return fields
    }
}
