import ServiceABI
import ServiceJSON

extension Host {
    /// Starts crash and hang isolation (issue 5), before plugins are loaded:
    ///
    /// - plugins whose services run in a worker process (`--isolation process`, or their
    ///   policy) are loaded there instead of here, and supervised: restarted after a crash,
    ///   marked failed after a crash loop, killed when they miss their event deadline;
    /// - `--safe-mode` leaves untrusted plugins out;
    /// - the sentinel records the call in progress, and the previous run's unclean exit is logged;
    /// - the hang watchdog names an in-process service stuck past its deadline.
    ///
    /// Throws when the thread that samples the hang watchdog cannot be started; the rest is
    /// set up by then.
    public func startIsolation(_ settings: IsolationSettings) throws(SystemError) {
        let supervisor = IsolationSupervisor(settings: settings, log: log, host: self)
        isolation = supervisor
        serviceSet.isolation = supervisor
        do {
            let (sentinel, previous) = try Sentinel.open(stateDirectory: settings.stateDirectory)
            supervisor.sentinel = sentinel
            tracker.attach(sentinel)
            if let previous {
                var fields: [LogField] = [.int("pid", previous.pid), .string("started", previous.started)]
                if let service = previous.service { fields.append(.string("service", service)) }
                if let event = previous.event { fields.append(.string("event", event)) }
                if let loading = previous.loading { fields.append(.string("loading", loading)) }
                log.write(
                    .warn, "host",
                    previous.description
                        + (settings.safeMode ? "" : " (--safe-mode starts only trusted services)"),
                    event: .sentinelUncleanExit,
                    fields: fields)
            }
        } catch {
            log.warn("host", "no crash sentinel: \(error)", event: .sentinelUnavailable)
        }
        if settings.safeMode {
            log.warn(
                "host",
                "safe mode: only trusted services start (bundled plugins, and services the configuration marks \"trusted\": true)",
                event: .safeModeOn)
        }
        let board = supervisor.board
        let shortest = ([settings.eventTimeout] + settings.policies.values.compactMap(\.eventTimeout)).min()!
        try HangWatchdog(
            tracker: tracker, log: log, shortestDeadline: shortest,
            deadline: { settings.eventTimeout(for: $0) }, isIsolated: { board.isIsolated($0) }
        ).start()
    }

    /// What `ctl list` adds about service `id`: where it runs (`isolation`), its `state`
    /// (`running`, `restarting`, `failed`, `stopped`, or `stuck` in an event), its worker's
    /// `pid`, `restarts`, `lastCrash` and `failure`; and its `health` when it is checked.
    public func isolationFields(for id: String) -> [String: JSONValue] {
        var fields = Self.isolationFields(for: id, board: isolation?.board, tracker: tracker)
        fields[.health] = healthFields(for: id)
        return fields
    }

    /// The same, from any thread.
    nonisolated static func isolationFields(for id: String, board: IsolationBoard?, tracker: CallTracker) -> [String:
        JSONValue]
    {
        var fields = board?.fields(for: id) ?? [:]
        if let stuck = tracker.stuck, stuck.service == id {
            fields[.state] = "stuck"
            fields[.stuckIn] = .string(stuck.event)
        }
        return fields
    }
}

extension Host: IsolationHost {
    var isRunning: Bool { application.isRunning }

    func catchUp(_ descriptors: [UnsafePointer<sh_service>]) {
        application.catchUp(services.filter { slot in descriptors.contains(slot.descriptor) })
    }

    func noteCrash(of id: String, _ message: String, cause: String) {
        serviceSet.slot(id)?.lastError = message
        // Its dependents learn it stopped (after the fact: it crashed or hung).
        if let slot = serviceSet.slot(id) {
            serviceSet.tellDependents(.dependencyWillStop, of: [slot], except: [], state: state)
            bus.drain()
        }
        probationFailed(culprit: id, reason: cause)
    }
}
